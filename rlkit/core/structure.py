"""Structured observations: ``Dict`` and ``Tuple`` spaces as named or numbered parts.

A structured observation is a dict (``Dict`` space) or a tuple (``Tuple`` space) of
arrays, one per part, each in its space's own shape and dtype (an uint8 image part stays
uint8). A batch is the same structure with a leading axis on every part, as gymnasium's
vector environments give it (``{"position": [N, 2], "goal": [N, 2]}``).

Nothing here imports TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from rlkit.core.errors import UsageError

#: observation kinds of structured spaces
DICT, TUPLE = "dict", "tuple"


@dataclass(frozen=True)
class Part:
    """One part of a structured observation.

    Attributes:
        key: its key in the dict (``Dict``) or its index in the tuple (``Tuple``).
        shape: one observation's part, e.g. ``(2,)`` or ``(84, 84, 3)``.
        dtype: its dtype (the part's space's own).
    """

    key: str | int
    shape: tuple[int, ...]
    dtype: np.dtype


def is_structured(space: spaces.Space) -> bool:
    """Is ``space`` a ``Dict`` or a ``Tuple``?"""
    return isinstance(space, (spaces.Dict, spaces.Tuple))


def parts_of(space: spaces.Space, agent: str = "this agent") -> tuple[str, tuple[Part, ...]]:
    """``(kind, parts)`` of a ``Dict`` or ``Tuple`` space whose parts are ``Box`` or
    ``Discrete`` spaces (a ``Discrete`` part is its integer, shape ``()``); UsageError for
    anything else (a nested ``Dict``, a ``MultiBinary`` part...)."""
    items: list[tuple[str | int, spaces.Space]]
    if isinstance(space, spaces.Dict):
        kind, items = DICT, list(space.spaces.items())
    elif isinstance(space, spaces.Tuple):
        kind, items = TUPLE, list(enumerate(space.spaces))
    else:
        raise UsageError(f"{agent}: {space} is not a Dict or Tuple space")
    if not items:
        raise UsageError(f"{agent} cannot take an empty {type(space).__name__} observation space")
    parts = []
    for key, sub in items:
        if not isinstance(sub, (spaces.Box, spaces.Discrete)):
            raise UsageError(
                f"{agent} takes Box and Discrete parts in a {type(space).__name__} observation, "
                f"but part {key!r} is {sub}; flatten it (gymnasium.wrappers.FlattenObservation)"
            )
        assert sub.shape is not None  # a Box's or a Discrete's shape is always set
        parts.append(Part(key, tuple(sub.shape), np.dtype(sub.dtype)))
    return kind, tuple(parts)


def assemble(kind: str, parts: tuple[Part, ...], arrays) -> dict | tuple:
    """The structure of ``kind`` holding ``arrays`` (one per part, in order)."""
    if kind == DICT:
        return {part.key: array for part, array in zip(parts, arrays, strict=True)}
    return tuple(arrays)


def leaves(parts: tuple[Part, ...], obs) -> list:
    """``obs``'s arrays in part order (a dict by key, a tuple or list by position)."""
    return [obs[part.key] for part in parts]


def encoder(kind: str, parts: tuple[Part, ...]) -> Callable[[Any], dict | tuple]:
    """``obs -> obs`` with each part an array of its dtype (one observation or a batch)."""

    def encode(obs):
        try:
            arrays = [np.asarray(obs[part.key], part.dtype) for part in parts]
        except (KeyError, IndexError, TypeError):
            raise UsageError(f"expected a {describe(kind, parts)} observation, got "
                             f"{type(obs).__name__}") from None  # fmt: skip
        return assemble(kind, parts, arrays)

    return encode


def is_single(parts: tuple[Part, ...], obs) -> bool:
    """Is ``obs`` one observation (not a batch with a leading axis)?"""
    first = parts[0]
    return np.ndim(obs[first.key]) == len(first.shape)


def batch_size(parts: tuple[Part, ...], obs) -> int:
    """The leading size of a batch of structured observations."""
    return len(obs[parts[0].key])


def zeros(kind: str, parts: tuple[Part, ...], rows: int) -> dict | tuple:
    """A batch of ``rows`` zero observations ``[rows, *part.shape]`` per part."""
    return assemble(kind, parts, [np.zeros((rows, *p.shape), p.dtype) for p in parts])


def describe(kind: str, parts: tuple[Part, ...], batch: bool = False) -> str:
    """E.g. ``Dict {position: [batch, 2] float32, goal: [batch, 2] float32}``."""
    lead = ["batch"] if batch else []

    def one(part: Part) -> str:
        dims = [*lead, *part.shape]  # (a scalar part, e.g. a Discrete one: its dtype alone)
        shape = "[" + ", ".join(map(str, dims)) + "] " if dims else ""
        return (f"{part.key}: " if kind == DICT else "") + shape + part.dtype.name

    text = ", ".join(one(part) for part in parts)
    return f"Dict {{{text}}}" if kind == DICT else f"Tuple ({text})"


def with_rows(obs: dict | tuple, rows: dict[int, Any]) -> dict | tuple:
    """A copy of the batch ``obs`` (a dict or tuple of ``[N, ...]`` arrays) with row ``i``
    replaced by the observation ``rows[i]`` (a vector env's ``final_obs``)."""
    keys = obs.keys() if isinstance(obs, dict) else range(len(obs))
    copies = {key: np.array(obs[key], copy=True) for key in keys}
    for i, row in rows.items():
        for key in keys:
            copies[key][i] = row[key]
    return copies if isinstance(obs, dict) else tuple(copies[key] for key in keys)


def take_rows(obs: dict | tuple, rows: list[int]) -> dict | tuple:
    """Rows ``rows`` of the batch ``obs`` (a dict or tuple of ``[N, ...]`` arrays)."""
    if isinstance(obs, dict):
        return {key: np.asarray(value)[rows] for key, value in obs.items()}
    return tuple(np.asarray(value)[rows] for value in obs)


def to_json(obs) -> Any:
    """An observation (or a batch) as JSON values: a dict of lists, a list of lists, or
    the nested list of an array."""
    if isinstance(obs, dict):
        return {str(key): np.asarray(value).tolist() for key, value in obs.items()}
    if isinstance(obs, tuple):
        return [np.asarray(value).tolist() for value in obs]
    return np.asarray(obs).tolist()


def from_json(data: Any, space: spaces.Space) -> Any:
    """Inverse of :func:`to_json`, in the dtypes of ``space`` (a vector env's batched
    space for a batch)."""
    if isinstance(space, spaces.Dict):
        return {key: from_json(data[str(key)], sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(from_json(d, sub) for d, sub in zip(data, space.spaces, strict=True))
    return np.asarray(data, dtype=space.dtype)
