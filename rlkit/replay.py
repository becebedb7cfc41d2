"""ReplayMemory: the one experience store every rlkit agent uses.

A preallocated numpy ring buffer. Observations, actions, rewards, next
observations and the two episode-end flags are kept in separate arrays:
``terminated`` (the MDP ended, do not bootstrap) and ``truncated`` (a time limit
cut the episode, bootstrap as usual) must never be merged.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Batch:
    """A minibatch of transitions; leading shape ``[B]`` or ``[K, B]``.

    obs, next_obs: ``[..., *obs_shape]`` in the observation dtype.
    actions: ``[..., *action_shape]``; rewards: float32 ``[...]``;
    terminated, truncated: bool ``[...]``.
    """

    obs: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_obs: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray


class ReplayMemory:
    """Fixed-capacity ring buffer of transitions with seeded uniform sampling.

    Args:
        capacity: the most transitions kept; the oldest are overwritten first.
        obs_shape, obs_dtype: shape and dtype of one observation.
        action_shape, action_dtype: shape and dtype of one action (``()`` for discrete).
        seed: seed of the sampling generator (anything ``np.random.default_rng`` takes).
    """

    def __init__(
        self,
        capacity: int,
        obs_shape: tuple[int, ...],
        obs_dtype: Any = np.float32,
        action_shape: tuple[int, ...] = (),
        action_dtype: Any = np.int64,
        seed: int | Sequence[int] | None = None,
    ) -> None:
        if capacity <= 0:
            raise ValueError(f"ReplayMemory capacity must be > 0, got {capacity}")
        self.capacity = int(capacity)
        self.obs = np.zeros((capacity, *obs_shape), dtype=obs_dtype)
        self.next_obs = np.zeros((capacity, *obs_shape), dtype=obs_dtype)
        self.actions = np.zeros((capacity, *action_shape), dtype=action_dtype)
        self.rewards = np.zeros((capacity,), dtype=np.float32)
        self.terminated = np.zeros((capacity,), dtype=bool)
        self.truncated = np.zeros((capacity,), dtype=bool)
        self.rng = np.random.default_rng(seed)
        self._next = 0  # index the next transition is written to
        self._size = 0

    @classmethod
    def from_spaces(cls, capacity: int, observation_space, action_space, seed=None) -> ReplayMemory:
        """Size the arrays from gymnasium spaces (``Box`` or ``Discrete``)."""
        return cls(
            capacity,
            obs_shape=tuple(observation_space.shape),
            obs_dtype=observation_space.dtype,
            action_shape=tuple(action_space.shape),
            action_dtype=action_space.dtype,
            seed=seed,
        )

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        """Bytes held by the preallocated arrays."""
        arrays = (self.obs, self.next_obs, self.actions, self.rewards)
        return sum(a.nbytes for a in arrays) + self.terminated.nbytes + self.truncated.nbytes

    def add(self, obs, action, reward, next_obs, terminated, truncated) -> None:
        """Store one transition, overwriting the oldest when full."""
        i = self._next
        self.obs[i] = obs
        self.actions[i] = action
        self.rewards[i] = reward
        self.next_obs[i] = next_obs
        self.terminated[i] = terminated
        self.truncated[i] = truncated
        self._next = (i + 1) % self.capacity
        self._size = min(self._size + 1, self.capacity)

    def add_batch(self, obs, actions, rewards, next_obs, terminated, truncated) -> None:
        """Store ``N`` transitions at once (leading axis ``N``), e.g. from vector envs."""
        n = len(rewards)
        if n > self.capacity:
            raise ValueError(f"cannot add {n} transitions to a memory of capacity {self.capacity}")
        idx = (self._next + np.arange(n)) % self.capacity
        self.obs[idx] = obs
        self.actions[idx] = actions
        self.rewards[idx] = rewards
        self.next_obs[idx] = next_obs
        self.terminated[idx] = terminated
        self.truncated[idx] = truncated
        self._next = int((self._next + n) % self.capacity)
        self._size = min(self._size + n, self.capacity)

    def sample(self, batch_size: int, num_batches: int | None = None) -> Batch:
        """Uniformly sample transitions (with replacement, as DQN3.0 does).

        Returns arrays of leading shape ``[batch_size]``, or
        ``[num_batches, batch_size]`` when ``num_batches`` is given (one draw of
        several minibatches for a fused update).
        """
        if batch_size <= 0:
            raise ValueError(f"batch_size must be > 0, got {batch_size}")
        if batch_size > self._size:
            raise ValueError(
                f"cannot sample {batch_size} transitions: the memory holds {self._size}; "
                "collect more experience first (or lower the batch size)"
            )
        shape = (batch_size,) if num_batches is None else (num_batches, batch_size)
        return self._gather(self.rng.integers(0, self._size, size=shape))

    def _gather(self, idx: np.ndarray) -> Batch:
        return Batch(
            self.obs[idx],
            self.actions[idx],
            self.rewards[idx],
            self.next_obs[idx],
            self.terminated[idx],
            self.truncated[idx],
        )

    def ordered(self) -> Batch:
        """Every stored transition, oldest first (for on-policy episode stores)."""
        start = self._next if self._size == self.capacity else 0
        return self._gather((start + np.arange(self._size)) % self.capacity)

    def clear(self) -> None:
        """Forget every transition (the arrays stay allocated)."""
        self._next = 0
        self._size = 0

    _ARRAYS = ("obs", "next_obs", "actions", "rewards", "terminated", "truncated")

    def state_dict(self) -> dict[str, np.ndarray]:
        """The filled part of the arrays, position and generator state, for checkpoints."""
        # slots [0, size) are the filled ones, whether or not the ring has wrapped
        return {
            **{name: getattr(self, name)[: self._size] for name in self._ARRAYS},
            "position": np.array([self._next, self._size], dtype=np.int64),
            "rng_state": np.array([repr(self.rng.bit_generator.state)]),
        }

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`state_dict` returned (shapes must match)."""
        next_index, size = (int(v) for v in state["position"])
        for name in self._ARRAYS:
            target = getattr(self, name)
            expected = (size, *target.shape[1:])
            if state[name].shape != expected or size > self.capacity:
                raise ValueError(
                    f"replay {name} has shape {state[name].shape}, expected {expected}"
                )
            target[:size] = state[name]
        self._next, self._size = next_index, size
        self.rng.bit_generator.state = ast.literal_eval(str(state["rng_state"][0]))
