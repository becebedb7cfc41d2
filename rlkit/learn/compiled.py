"""Compiled functions called without ``tf.function``'s per-call dispatch cost.

Each call of a ``tf.function`` whose graph captures many variables matches its arguments
against the traced signatures, hashing every captured variable, before any graph work.
Calling the traced ``ConcreteFunction`` directly skips that; calling the graph it wraps
with the flat tensors and the captured variables (what ``ConcreteFunction`` does itself
when no gradient tape is recording) skips binding the arguments to the Python signature
as well. What each saves is measured in docs/performance.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.python.eager import context, record
from tensorflow.python.framework import constant_op
from tensorflow.python.framework.ops import EagerTensor


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
        self._graphs: dict[tuple, tuple[Any, list]] = {}  # key -> (the graph, its captures)

    def __call__(self, *args):
        tensors = [a if isinstance(a, tf.Tensor) else _as_tensor(a) for a in args]
        key = tuple((t.dtype, t._shape_tuple()) for t in tensors)  # noqa: SLF001 (cheap)
        return self._run(key, tensors, tensors)

    def _run(self, key: tuple, args, flat: list):
        """The concrete function of ``key`` called on ``args`` (``flat``: its tensors in
        order), tracing it the first time."""
        graph = self._graphs.get(key)
        if graph is None:
            concrete = self._concrete[key] = self.function.get_concrete_function(*args)
            # (ConcreteFunction._call_flat runs this when no tape records: the same graph);
            # captures computed at call time (none in rlkit's graphs) take TensorFlow's path
            deferred = any(callable(c) for c in concrete._captured_inputs)  # noqa: SLF001
            graph = self._graphs[key] = (
                None if deferred else concrete._inference_function,  # noqa: SLF001
                concrete.captured_inputs,
            )
        function, captured = graph
        if function is None or record.could_possibly_record() or not tf.executing_eagerly():
            return self._concrete[key](*args)  # a tape or a graph: TensorFlow's own path
        return function.call_preflattened(flat + captured)

    @property
    def tracing_count(self) -> int:
        """How many times the Python function has been traced (each trace compiles once)."""
        return self.function.experimental_get_tracing_count()


class NestedCompiledFunction(CompiledFunction):
    """A :class:`CompiledFunction` whose arguments may be dicts, tuples or lists of tensors
    (a ``Dict`` or ``Tuple`` observation); a new structure, shape or dtype traces anew."""

    def __call__(self, *args):
        tensors = tf.nest.map_structure(_as_tensor, args)
        return self._run(_signature(tensors), tensors, tf.nest.flatten(tensors))


def _as_tensor(value) -> tf.Tensor:
    """``tf.convert_to_tensor(value)``; eagerly, without its dispatch (a copy of an array)."""
    if isinstance(value, tf.Tensor):
        return value
    if not tf.executing_eagerly():
        return tf.convert_to_tensor(value)
    return constant_op.convert_to_eager_tensor(value, context.context())


def _signature(value) -> tuple:
    """A hashable key of a structure of tensors: its keys, order, dtypes and shapes."""
    if isinstance(value, dict):
        return ("dict", tuple((k, _signature(v)) for k, v in sorted(value.items())))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_signature(v) for v in value))
    return (value.dtype, tuple(value.shape))


def block_range(rewards: tf.Tensor):
    """What a fused block's update loop runs over, inside its graph: ``tf.range(K)`` for the
    ``K`` updates of ``rewards`` (``[K, B]``), or ``range(1)`` where ``K`` is 1 when traced
    (the same update, with no graph loop and its per-call cost around it)."""
    if rewards.shape[0] == 1:
        return range(1)
    return tf.range(tf.shape(rewards)[0])


def fresh_tensor(array: np.ndarray) -> tf.Tensor:
    """``tf.convert_to_tensor(array)`` for an array made for it, without its dispatch and
    its defensive copy (about half the cost; docs/performance.md). The tensor may share
    the array's memory: the array must never be written again."""
    if not tf.executing_eagerly():
        return tf.convert_to_tensor(array)
    return EagerTensor(array, context.context().device_name, None)


def pack(arrays: list[np.ndarray], lead: tuple[int, ...]) -> tf.Tensor:
    """One float32 tensor ``[*lead, W]`` of arrays ``[*lead]`` or ``[*lead, w]`` side by
    side (a minibatch's fields in one conversion; values cast as ``np.float32`` casts them,
    exact for integers below 2**24); :func:`unpack` takes it apart."""
    parts = [np.reshape(a, (*lead, -1)) for a in arrays]
    return fresh_tensor(np.concatenate(parts, axis=-1, dtype=np.float32))


def unpack(stacked: tf.Tensor, widths: list[int]) -> list[tf.Tensor]:
    """The arrays of :func:`pack` back: ``[*lead, w]`` for each width ``w``, ``[*lead]`` for
    a width of 0 (one value per row)."""
    out, start = [], 0
    for width in widths:
        out.append(stacked[..., start] if width == 0 else stacked[..., start : start + width])
        start += max(width, 1)
    return out
