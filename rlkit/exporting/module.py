"""What every export builder of :mod:`rlkit.exporting.signatures` is made of: the
:class:`PolicyModule` that holds the networks and the traced signatures, the networks read
live or frozen (TFLite), the action box's bounds and the cast back to the space, and the
noise input of a ``sample`` signature drawn from given noise (PPO, A2C, SAC)."""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf
from gymnasium import spaces

from rlkit.exporting.inputs import input_names


class PolicyModule(tf.Module):
    """The networks an exported policy reads (tracked, so that their weights are saved) and
    its signature functions (:attr:`serving`: name -> concrete function)."""

    def __init__(self, networks: dict[str, Any]) -> None:
        super().__init__(name="rlkit_policy")
        self.networks = networks
        self.serving: dict[str, Any] = {}

    def add(self, name: str, function, specs: dict[str, tf.TensorSpec], extra=None) -> None:
        """Trace ``function(inputs: dict) -> dict`` as signature ``name`` on ``specs``
        (``extra``: more named inputs, e.g. ``{"seed": spec}``)."""
        specs = {**specs, **(extra or {})}
        traced = tf.function(function, input_signature=[specs])
        self.serving[name] = traced.get_concrete_function()
        setattr(self, f"_{name}", traced)


def action_box(space: spaces.Box) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(low, high)`` float32 ``[act_dim]`` and, from float64 bounds as REINFORCE's acting
    computes them, ``(centre, half-range)`` float64."""
    low64 = np.asarray(space.low, np.float64).reshape(-1)
    high64 = np.asarray(space.high, np.float64).reshape(-1)
    low, high = low64.astype(np.float32), high64.astype(np.float32)
    return low, high, (high64 + low64) / 2, (high64 - low64) / 2


def to_space(action, space: spaces.Box | spaces.MultiDiscrete):
    """``[B, act_dim]`` -> ``[B, *shape]`` in the space's dtype."""
    return tf.reshape(tf.cast(action, tf.as_dtype(space.dtype)), [-1, *space.shape])


def network(model, frozen: bool):
    """``inputs -> model(inputs)``: reading the model's variables (a SavedModel keeps them),
    or, ``frozen``, its current weights as constants (``stateless_call``; what TFLite's
    converter needs: it leaves Keras 3's variables unread)."""
    if not frozen:
        return model
    trainable = [tf.constant(v.numpy()) for v in model.trainable_variables]
    fixed = [tf.constant(v.numpy()) for v in model.non_trainable_variables]
    return lambda inputs: model.stateless_call(trainable, fixed, inputs)[0]


def noise_input(agent) -> tuple[str, dict[str, Any]] | None:
    """PPO's (and A2C's) ``sample`` noise: ``(input name, {"distribution", "shape"})``;
    None for an agent whose export draws no sample from given noise. The name is
    ``noise`` (``noise_`` ... where an observation input has it)."""
    spec = getattr(agent, "sample_noise_spec", None)
    if spec is None:
        return None
    if spec() is None:
        return None
    distribution, width = spec()
    return free_name(agent, "noise"), {"distribution": distribution, "shape": [None, width]}


def free_name(agent, name: str, taken_too: tuple[str, ...] = ()) -> str:
    """``name``, with ``_`` appended while an observation input (or ``taken_too``) has it."""
    taken = {n for _, n in input_names(agent.observation_space)} | set(taken_too)
    while name in taken:
        name += "_"
    return name


def mask_input(agent) -> tuple[str, int] | None:
    """An agent made with invalid-action masks (PPO's and A2C's ``action_masks``): the
    ``(input name, width)`` of its signatures' mask input, bool ``[B, width]``
    (``action_mask``, ``action_mask_`` ... where an observation input has it); else None."""
    width = int(getattr(agent, "action_mask_width", 0) or 0)
    if not width:
        return None
    noise = noise_input(agent)
    return free_name(agent, "action_mask", (noise[0],) if noise else ()), width
