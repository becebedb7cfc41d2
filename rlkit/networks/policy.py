"""REINFORCE's networks: a policy (logits, or a Gaussian's mean) and a value baseline;
rlkit's own MLP, or a user's Keras model (see :mod:`rlkit.networks.custom`).

A ``Dict`` or ``Tuple`` observation takes the user's models only (rlkit's MLP refuses it,
:func:`refuse_builtin`): they receive its structure, each part ``[B, *part_shape]`` in its
own dtype, and act through one compiled call (:mod:`rlkit.networks.structured`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import keras
import numpy as np

from rlkit.core.errors import UsageError
from rlkit.core.spaces import ObservationFormat
from rlkit.core.structure import Part, describe
from rlkit.networks.builders import NumpyMLP, apply_layers, dense, layer_weights, mlp_layers
from rlkit.networks.custom import (
    UserNetwork,
    build_model,
    check_output,
    compiled_policy,
    dense_stack,
)
from rlkit.networks.structured import Sample, flat_sample, structured_policy

_softmax = keras.activations.softmax


class PolicyMLP:
    """A ReLU MLP ``[B, in_dim] -> [B, out_dim]`` whose output layer starts at exactly zero.

    Hidden layers use He-normal kernels (the source's ``he_normal``; layer ``i`` seeded
    ``seed + i``) and zero biases. The zero output kernel and bias make every softmax
    output equal at the start (each action equally likely), a Gaussian mean start at the
    centre of the action box, a value start at 0.
    """

    def __init__(
        self, in_dim: int, out_dim: int, hidden_sizes: Sequence[int], seed: int, name: str
    ) -> None:
        self.hidden = mlp_layers(hidden_sizes, seed, name, init="he_normal")
        self.head = dense(out_dim, None, seed, f"{name}_out", init="zeros")
        inputs = keras.Input((in_dim,), name=f"{name}_obs")
        self.model = keras.Model(inputs, self.head(apply_layers(inputs, self.hidden)), name=name)

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    def layer_weights(self) -> list:
        """``[kernel_0, bias_0, ..., kernel_out, bias_out]``, the order :meth:`to_numpy` takes."""
        return layer_weights([*self.hidden, self.head])

    @staticmethod
    def to_numpy(arrays: Sequence[np.ndarray]) -> NumpyMLP:
        """A :class:`NumpyMLP` from the arrays of :meth:`layer_weights`, in that order."""
        return NumpyMLP.from_arrays(arrays)

    def numpy_snapshot(self) -> NumpyMLP:
        """A numpy copy of the current weights computing the same outputs."""
        return NumpyMLP.from_layers(self.hidden, [self.head])


# -- a policy and a baseline of one's own --------------------------------------------------------
class KerasPolicyNetwork(UserNetwork):
    """A user's Keras model in the place of :class:`PolicyMLP`: the same ``model``,
    ``variables``, ``layer_weights()``, ``to_numpy(arrays)`` and ``numpy_snapshot()``.

    A plain stack of Dense layers (ReLU hidden layers, an output among ``outputs``) acts
    through the same numpy copy as :class:`PolicyMLP` (refreshed after each update from the
    arrays the update returns); any other model through one compiled call per (batched)
    call, reading the live weights (``layer_weights()`` is then empty).

    Args:
        model: ``[B, obs_dim] -> [B, out_dim]`` (a policy) or ``[B, 1]`` / ``[B]`` (a value).
        sample: a batch of encoded observations ``[2, obs_dim]`` it was checked on (a
            ``Dict``'s or ``Tuple``'s structure of ``[2, *part_shape]`` arrays with ``parts``).
        outputs: the output activations a numpy copy may reproduce (``"linear"``, ``"tanh"``).
        parts: those of a ``Dict`` or ``Tuple`` observation: no numpy copy, one compiled
            call taking the structure (one observation or a batch).
    """

    def __init__(
        self, model: keras.Model, sample: Sample,
        outputs: tuple[str, ...] = ("linear",), parts: tuple[Part, ...] = (),
    ) -> None:  # fmt: skip
        self.model = model
        self._compiled: Callable[[np.ndarray], np.ndarray] | None
        if parts:
            self.layers, self._output = None, None
            self._compiled = structured_policy(model, parts)
            return
        flat = flat_sample(sample)
        stack = dense_stack(model, flat, outputs)
        self.layers, self._output = (None, None) if stack is None else stack
        self._compiled = None if stack is not None else compiled_policy(model, flat.ndim - 1)

    def layer_weights(self) -> list:
        """The Dense stack's ``[kernel_0, bias_0, ...]`` (empty for a compiled model)."""
        return [] if self.layers is None else layer_weights(self.layers)

    def to_numpy(self, arrays: Sequence[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        """What acting reads, from the arrays of :meth:`layer_weights` (the compiled call
        when the model is not a Dense stack)."""
        if self._compiled is not None:  # (set exactly when there is no Dense stack)
            return self._compiled
        return NumpyMLP.from_arrays(arrays, output=self._output)

    def numpy_snapshot(self) -> Callable[[np.ndarray], np.ndarray]:
        return self.to_numpy([w.numpy() for w in self.layer_weights()])


def make_policy(
    source: Any, spaces: tuple[Any, Any], obs_format: ObservationFormat, out_dim: int,
    discrete: bool, seed: int,
) -> KerasPolicyNetwork:  # fmt: skip
    """REINFORCE's policy from a user's model or builder, checked: ``[B, obs] -> [B, out_dim]``
    (logits per action for Discrete actions; the Gaussian's mean in the action box scaled to
    ``[-1, 1]`` for Box actions, a linear or tanh output). A ``Dict`` or ``Tuple``
    observation: its declared Inputs are checked against the parts, the structure goes in."""
    model = build_model(source, *spaces, "policy", seed)
    last = model.layers[-1] if model.layers else None
    if discrete and isinstance(last, keras.layers.Dense) and last.activation is _softmax:
        raise UsageError("policy returns softmax probabilities but needs logits (a linear output)")
    sample = check_output(model, obs_format, (out_dim,), "policy")
    outputs = ("linear",) if discrete else ("linear", "tanh")
    return KerasPolicyNetwork(model, sample, outputs, obs_format.parts)


def make_baseline(
    source: Any, spaces: tuple[Any, Any], obs_format: ObservationFormat, seed: int
) -> KerasPolicyNetwork:
    """REINFORCE's value baseline from a user's model or builder, checked: ``[B, obs] ->
    [B, 1]`` or ``[B]`` (one value per observation; a ``Dict`` or ``Tuple`` observation as
    for :func:`make_policy`)."""
    model = build_model(source, *spaces, "baseline", seed)
    sample = check_output(model, obs_format, (1,), "baseline", ((),))
    return KerasPolicyNetwork(model, sample, parts=obs_format.parts)


def refuse_builtin(obs_format: ObservationFormat, missing: Sequence[str]) -> None:
    """UsageError in one line: rlkit's MLP (the ``missing`` networks: ``"policy"``, and
    ``"baseline"`` when the baseline is on) takes flat vectors or one-hot observations, not
    a ``Dict`` or ``Tuple`` one; it says which networks of one's own to pass."""
    names = " and ".join(missing)
    python = ", ".join(f"{name}=build_{name}" for name in missing)
    keys = {"policy": "policy", "baseline": "baseline_network"}
    cli = " ".join(f"--set {keys[name]}=module:function" for name in missing)
    mine = " and ".join(f"a {name}" for name in missing)
    off = "; or no baseline: baseline=False, --set baseline=false" if "baseline" in missing else ""
    raise UsageError(
        f"reinforce's built-in {names} cannot take a "
        f"{describe(obs_format.kind, obs_format.parts)} observation: pass {mine} of your own "
        f"that take{'s' if len(missing) == 1 else ''} it, Reinforce(..., {python}) in Python "
        f"or {cli} on the command line{off}"
    )
