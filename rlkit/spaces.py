"""Observation encoding, action-space checks and space (de)serialisation.

Nothing here imports TensorFlow, so the CLI can reject a mismatched agent and
environment before paying for that import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from rlkit.errors import UsageError

Encoder = Callable[[np.ndarray], np.ndarray]


def observation_encoder(space: spaces.Space, agent: str = "this agent") -> tuple[Encoder, int]:
    """A function mapping observations to float32 vectors, and the vector length.

    ``Box`` observations are flattened; ``Discrete`` ones one-hot encoded. The
    encoder takes one observation or a batch (leading axis) and keeps that axis.
    """
    if isinstance(space, spaces.Box):
        shape = tuple(space.shape)
        dim = int(np.prod(shape)) if shape else 1

        def encode_box(obs: np.ndarray) -> np.ndarray:
            obs = np.asarray(obs, dtype=np.float32)
            if obs.shape == shape:
                return obs.reshape(dim)
            return obs.reshape(-1, dim)

        return encode_box, dim
    if isinstance(space, spaces.Discrete):
        n, start = int(space.n), int(space.start)
        eye = np.eye(n, dtype=np.float32)
        return (lambda obs: eye[np.asarray(obs, dtype=np.int64) - start]), n
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
    """A JSON-friendly description of a Box or Discrete space."""
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "low": space.low.tolist(),
            "high": space.high.tolist(),
            "shape": list(space.shape),
            "dtype": str(space.dtype),
        }
    raise UsageError(f"cannot save an agent for space {space}")


def space_from_dict(data: dict[str, Any]) -> spaces.Space:
    """Inverse of :func:`space_to_dict`."""
    if data["type"] == "Discrete":
        return spaces.Discrete(data["n"], start=data["start"])
    if data["type"] == "Box":
        return spaces.Box(
            low=np.array(data["low"], dtype=data["dtype"]),
            high=np.array(data["high"], dtype=data["dtype"]),
            shape=tuple(data["shape"]),
            dtype=data["dtype"],
        )
    raise ValueError(f"unknown space type {data['type']!r}")
