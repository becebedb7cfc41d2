"""A user's network for ``Dict`` and ``Tuple`` observations: the checks and the acting call.

The network receives the observation's structure: for a ``Dict``, a dict of ``[batch,
*shape]`` tensors keyed as the space (a Keras functional model with a dict of named
``keras.Input``, or a list of Inputs named as the keys); for a ``Tuple``, a tuple of them
in order (a functional model with a list of Inputs). Each part comes in its space's own
dtype (an uint8 image part as uint8: scale it inside the network). DDPG's critic receives
``[observation, action]``, the observation being that structure (:func:`critic_sample`).
Acting goes through one compiled call per (batched) step; there is no numpy fast path for
these.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import keras
import numpy as np

from rlkit.core.errors import UsageError
from rlkit.core.spaces import ObservationFormat
from rlkit.core.structure import DICT, Part, describe, is_single, zeros
from rlkit.learn.compiled import NestedCompiledFunction

#: a batch of encoded observations a user's model was checked on: an array, or a ``Dict``'s
#: or ``Tuple``'s structure of ``[batch, *part_shape]`` arrays
Sample = np.ndarray | dict | tuple


def flat_sample(sample: Sample) -> np.ndarray:
    """``sample`` as the array of an observation without parts; TypeError for a structure
    (that goes with its parts, to :func:`structured_policy`)."""
    if not isinstance(sample, np.ndarray):
        raise TypeError(f"an observation without parts: expected an array, got {type(sample)}")
    return sample


def _declared(model: keras.Model):
    """The structure of a functional model's Inputs (a dict, a list, or one Input); None
    for a subclassed model (it declares none)."""
    try:
        return model.input
    except (AttributeError, ValueError):
        inputs = getattr(model, "inputs", None)
        if not inputs:
            return None
        return inputs[0] if len(inputs) == 1 else list(inputs)


def _shape(tensor) -> str:
    return "[" + ", ".join(["batch", *map(str, tuple(tensor.shape)[1:])]) + "]"


def _check_part(key: str, part: Part, tensor, got: str) -> None:
    if tuple(tensor.shape)[1:] != part.shape:
        where = f"input {part.key!r}" if isinstance(part.key, str) else f"input {part.key}"
        want = "[" + ", ".join(["batch", *map(str, part.shape)]) + "]"
        raise UsageError(f"{key}'s {where} takes {_shape(tensor)} but that part of the "
                         f"observation is {want}; the observation is {got}")  # fmt: skip


def check_inputs(model: keras.Model, obs_format: ObservationFormat, key: str) -> None:
    """UsageError unless the Inputs ``model`` declares fit the structured observation: one
    named Input per key of a ``Dict`` (a dict of Inputs, or a list named as the keys), one
    Input per part of a ``Tuple`` (a list), each of its part's shape. A subclassed model
    declares none and is only called."""
    declared = _declared(model)
    if declared is not None:
        check_declared(declared, obs_format, key)


def check_declared(declared, obs_format: ObservationFormat, key: str) -> None:
    """:func:`check_inputs` for a structure of declared Inputs (a dict, a list, or one)."""
    parts, got = obs_format.parts, describe(obs_format.kind, obs_format.parts, batch=True)
    if obs_format.kind == DICT:
        keys = [part.key for part in parts]
        if isinstance(declared, (list, tuple)):
            declared = {tensor.name: tensor for tensor in declared}
        if not isinstance(declared, dict):
            raise UsageError(f"{key} takes one input {_shape(declared)} but the observation "
                             f"is {got}: give it a dict of keras.Input, one per key")  # fmt: skip
        if sorted(declared) != sorted(keys):
            raise UsageError(f"{key} takes inputs named {sorted(declared)} but the observation "
                             f"is {got}: name one keras.Input per key")  # fmt: skip
        for part in parts:
            _check_part(key, part, declared[part.key], got)
        return
    if not isinstance(declared, (list, tuple)) or len(declared) != len(parts):
        count = len(declared) if isinstance(declared, (list, tuple)) else 1
        raise UsageError(f"{key} takes {count} input(s) but the observation is {got}: give it "
                         f"a list of {len(parts)} keras.Input, one per part")  # fmt: skip
    for part, tensor in zip(parts, declared, strict=True):
        _check_part(key, part, tensor, got)


def structured_sample(
    model: keras.Model, obs_format: ObservationFormat, key: str
) -> tuple[dict | tuple, str]:
    """After :func:`check_inputs`, a batch of two zero observations to call ``model`` on,
    and the words for the observation in an error (its structure, parts and dtypes)."""
    check_inputs(model, obs_format, key)
    sample = zeros(obs_format.kind, obs_format.parts, 2)
    return sample, describe(obs_format.kind, obs_format.parts, batch=True)


def first_line(exc: Exception) -> str:
    """An exception's first non-empty line, without Keras' terminal colour codes."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else ""


def structured_policy(model: keras.Model, parts: tuple[Part, ...]) -> Callable:
    """``obs -> model(obs)`` for one structured observation (returns ``[A]``) or a batch
    (``[N, A]``), through one compiled call; it reads the live weights."""
    compiled = NestedCompiledFunction(lambda obs: model(obs))

    def forward(obs) -> np.ndarray:
        if not is_single(parts, obs):
            return compiled(obs).numpy()
        if isinstance(obs, dict):
            return compiled({k: v[None] for k, v in obs.items()}).numpy()[0]
        return compiled(tuple(v[None] for v in obs)).numpy()[0]

    return forward


def critic_sample(
    model: keras.Model, obs_format: ObservationFormat, act_dim: int, key: str
) -> tuple[list, str]:
    """UsageError unless a critic's declared Inputs are ``[observation, action]``: the
    observation's structure (as :func:`check_inputs`) and one action Input ``[batch,
    act_dim]``. Returns ``[observation, action]`` of a batch of two zeros to call it on (the
    observation that structure of ``[2, *part_shape]`` arrays, the action ``[2, act_dim]``
    float32) and the words for them in an error."""
    got = describe(obs_format.kind, obs_format.parts, batch=True)
    needs = f"[observation {got}, action [batch, {act_dim}]]"
    declared = _declared(model)
    if declared is not None:
        if not isinstance(declared, (list, tuple)) or len(declared) != 2:
            count = len(declared) if isinstance(declared, (list, tuple, dict)) else 1
            raise UsageError(f"{key} takes {count} input(s) but needs two: {needs}")
        if obs_format.kind == DICT and isinstance(declared[0], (list, tuple)):  # (not by name)
            raise UsageError(f"{key} takes its observation as a list but the observation is "
                             f"{got}: give it a dict of keras.Input, one per key")  # fmt: skip
        check_declared(declared[0], obs_format, key)
        action = declared[1]
        if not hasattr(action, "shape") or tuple(action.shape)[1:] != (act_dim,):
            takes = _shape(action) if hasattr(action, "shape") else type(action).__name__
            raise UsageError(f"{key}'s second input (the action) takes {takes} but the action "
                             f"is [batch, {act_dim}]; {key} needs {needs}")  # fmt: skip
    sample = [zeros(obs_format.kind, obs_format.parts, 2), np.zeros((2, act_dim), np.float32)]
    return sample, needs
