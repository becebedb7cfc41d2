"""Compiled functions called without ``tf.function``'s per-call dispatch cost.

Each call of a ``tf.function`` whose graph captures many variables matches its arguments
against the traced signatures, hashing every captured variable, before any graph work.
Calling the traced ``ConcreteFunction`` directly skips that (what it saves is measured in
docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf


class CompiledFunction:
    """``tf.function(fn)`` traced once per input signature, then called directly.

    Every argument must be a ``tf.Tensor`` (or convertible to one); a new combination of
    shapes and dtypes traces a new concrete function, as ``tf.function`` would.

    Attributes:
        function: the underlying ``tf.function``.
    """

    def __init__(self, fn: Callable, jit_compile: bool | None = None) -> None:
        self.function = tf.function(fn, jit_compile=jit_compile)
        self._concrete: dict[tuple, Callable] = {}

    def __call__(self, *args):
        tensors = [a if isinstance(a, tf.Tensor) else tf.convert_to_tensor(a) for a in args]
        key = tuple((t.dtype, tuple(t.shape)) for t in tensors)
        concrete = self._concrete.get(key)
        if concrete is None:
            concrete = self._concrete[key] = self.function.get_concrete_function(*tensors)
        return concrete(*tensors)

    @property
    def tracing_count(self) -> int:
        """How many times the Python function has been traced (each trace compiles once)."""
        return self.function.experimental_get_tracing_count()


class NestedCompiledFunction(CompiledFunction):
    """A :class:`CompiledFunction` whose arguments may be dicts, tuples or lists of tensors
    (a ``Dict`` or ``Tuple`` observation); a new structure, shape or dtype traces anew."""

    def __call__(self, *args):
        tensors = tf.nest.map_structure(_as_tensor, args)
        key = _signature(tensors)
        concrete = self._concrete.get(key)
        if concrete is None:
            concrete = self._concrete[key] = self.function.get_concrete_function(*tensors)
        return concrete(*tensors)


def _as_tensor(value) -> tf.Tensor:
    return value if isinstance(value, tf.Tensor) else tf.convert_to_tensor(value)


def _signature(value) -> tuple:
    """A hashable key of a structure of tensors: its keys, order, dtypes and shapes."""
    if isinstance(value, dict):
        return ("dict", tuple((k, _signature(v)) for k, v in sorted(value.items())))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_signature(v) for v in value))
    return (value.dtype, tuple(value.shape))
