"""Observation encoding, action-space checks and space (de)serialisation.

Nothing here imports TensorFlow, so the CLI can reject a mismatched agent and
environment before paying for that import.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from rlkit.core import structure
from rlkit.core.errors import UsageError

#: one observation or a batch -> its stored form: an array, or for a ``Dict`` or ``Tuple``
#: space the same structure of arrays (:func:`rlkit.core.structure.encoder`)
Encoder = Callable[[Any], "np.ndarray | dict | tuple"]

#: network inputs of these kinds
VECTOR, ONE_HOT, IMAGE = "vector", "one_hot", "image"


@dataclass(frozen=True)
class ObservationFormat:
    """How observations are stored in replay and fed to a network.

    Attributes:
        kind: ``"vector"`` (a Box flattened to ``[D]``), ``"one_hot"`` (a Discrete space
            as ``[n]`` float32) or ``"image"`` (a 3-D Box ``[H, W, C]``, channels last, kept
            as it is: an uint8 image stays uint8 in replay, 1 byte per pixel).
        shape: one stored observation, e.g. ``(4,)`` or ``(84, 84, 4)``.
        dtype: the stored dtype: float32 for vectors and one-hot, the space's own dtype for
            images.
        encode: maps one observation or a batch (leading axis) to ``shape`` / ``dtype``.
        parts: the parts of a ``"dict"`` or ``"tuple"`` observation (a ``Dict`` or
            ``Tuple`` space, :mod:`rlkit.core.structure`), each kept in its own shape and
            dtype; ``shape`` and ``dtype`` are then the same structure of the parts' shapes
            and dtypes, and ``encode`` returns that structure of arrays. Empty otherwise.
    """

    kind: str
    shape: Any
    dtype: Any
    encode: Encoder
    parts: tuple[structure.Part, ...] = ()

    @property
    def size(self) -> int:
        """Numbers in one observation (the input width of an MLP)."""
        return int(np.prod(self.shape))

    def batch_rows(self, x) -> int | None:
        """None for one encoded observation, ``N`` for a batch ``[N, ...]``."""
        if self.parts:
            single = structure.is_single(self.parts, x)
            return None if single else structure.batch_size(self.parts, x)
        return None if np.ndim(x) == len(self.shape) else len(x)

    @property
    def scale(self) -> float:
        """What the network divides inputs by: 255 for uint8 images, else 1."""
        return 255.0 if self.kind == IMAGE and self.dtype == np.uint8 else 1.0


def _reshaper(shape: tuple[int, ...], dtype, space_shape: tuple[int, ...]) -> Encoder:
    def encode(obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=dtype)
        if obs.shape == space_shape:
            return obs.reshape(shape)
        return obs.reshape((-1, *shape))

    return encode


def observation_format(
    space: spaces.Space, agent: str = "this agent", images: bool = False,
    structured: bool = False,
) -> ObservationFormat:  # fmt: skip
    """The :class:`ObservationFormat` of ``space``.

    ``Box`` observations are flattened to float32 vectors, ``Discrete`` ones one-hot
    encoded; with ``images=True`` (agents with a convolutional torso) a 3-D ``Box`` is kept
    as an ``[H, W, C]`` image in its own dtype; with ``structured=True`` (agents that take a
    network of one's own for them) a ``Dict`` or ``Tuple`` of ``Box`` and ``Discrete`` parts
    keeps each part as it is. Anything else raises :class:`UsageError`.
    """
    if structured and structure.is_structured(space):
        kind, parts = structure.parts_of(space, agent)
        return ObservationFormat(
            kind,
            structure.assemble(kind, parts, [p.shape for p in parts]),
            structure.assemble(kind, parts, [p.dtype for p in parts]),
            structure.encoder(kind, parts),
            parts,
        )
    if isinstance(space, spaces.Box):
        shape = tuple(space.shape)
        if len(shape) == 3:
            if not images:
                raise UsageError(
                    f"{agent} takes vector observations, but the environment gives images "
                    f"{shape}; use dqn for pixels, or flatten them "
                    "(gymnasium.wrappers.FlattenObservation)"
                )
            return ObservationFormat(
                IMAGE, shape, np.dtype(space.dtype), _reshaper(shape, space.dtype, shape)
            )
        dim = int(np.prod(shape)) if shape else 1
        dtype = np.dtype(np.float32)
        return ObservationFormat(VECTOR, (dim,), dtype, _reshaper((dim,), dtype, shape))
    if isinstance(space, spaces.Discrete):
        n, start = int(space.n), int(space.start)
        eye = np.eye(n, dtype=np.float32)
        return ObservationFormat(
            ONE_HOT,
            (n,),
            np.dtype(np.float32),
            lambda obs: eye[np.asarray(obs, dtype=np.int64) - start],
        )
    raise UsageError(
        f"{agent} needs a Box or Discrete observation space, got {space}; "
        "wrap the environment to flatten its observations (gymnasium.wrappers.FlattenObservation)"
    )


def require_discrete_actions(
    space: spaces.Space, agent: str, env_id: str = "the environment"
) -> None:
    """UsageError unless ``space`` is ``Discrete`` (e.g. DQN on Pendulum-v1)."""
    if not isinstance(space, spaces.Discrete):
        raise UsageError(
            f"{agent} needs a discrete action space, but {env_id} has {space}; "
            f"use ddpg for continuous actions: rlkit train ddpg --env {env_id}"
        )


def require_box_actions(space: spaces.Space, agent: str, env_id: str = "the environment") -> None:
    """UsageError unless ``space`` is a bounded ``Box`` (e.g. DDPG on CartPole-v1)."""
    if not isinstance(space, spaces.Box):
        raise UsageError(
            f"{agent} needs a continuous (Box) action space, but {env_id} has {space}; "
            f"use dqn or reinforce for discrete actions: rlkit train dqn --env {env_id}"
        )
    if not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
        raise UsageError(f"{agent} needs finite action bounds, but {env_id} has {space}")


def space_to_dict(space: spaces.Space) -> dict[str, Any]:
    """A JSON-friendly description of a Box, Discrete or MultiDiscrete space (or a Dict or
    Tuple of them)."""
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiDiscrete):
        return {
            "type": "MultiDiscrete",
            "nvec": np.asarray(space.nvec).tolist(),
            "start": np.asarray(space.start).tolist(),
            "dtype": str(space.dtype),
        }
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "low": space.low.tolist(),
            "high": space.high.tolist(),
            "shape": list(space.shape),
            "dtype": str(space.dtype),
        }
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": [[k, space_to_dict(s)] for k, s in space.spaces.items()]}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [space_to_dict(s) for s in space.spaces]}
    raise UsageError(f"cannot save an agent for space {space}")


def space_from_dict(data: dict[str, Any]) -> spaces.Space:
    """Inverse of :func:`space_to_dict`."""
    if data["type"] == "Discrete":
        return spaces.Discrete(data["n"], start=data["start"])
    if data["type"] == "MultiDiscrete":
        return spaces.MultiDiscrete(np.array(data["nvec"], dtype=data["dtype"]),
                                    dtype=data["dtype"], start=np.array(data["start"]))  # fmt: skip
    if data["type"] == "Box":
        return spaces.Box(
            low=np.array(data["low"], dtype=data["dtype"]),
            high=np.array(data["high"], dtype=data["dtype"]),
            shape=tuple(data["shape"]),
            dtype=data["dtype"],
        )
    if data["type"] == "Dict":  # an OrderedDict keeps the saved key order (a dict is sorted)
        return spaces.Dict(OrderedDict((k, space_from_dict(s)) for k, s in data["spaces"]))
    if data["type"] == "Tuple":
        return spaces.Tuple([space_from_dict(s) for s in data["spaces"]])
    raise ValueError(f"unknown space type {data['type']!r}")


def vector_format(dim: int) -> ObservationFormat:
    """The format of float32 vector observations of width ``dim``."""
    shape = (int(dim),)
    return ObservationFormat(
        VECTOR, shape, np.dtype(np.float32), _reshaper(shape, np.float32, shape)
    )
