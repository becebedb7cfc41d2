"""ReplayMemory: the one experience store every rlkit agent uses.

A preallocated numpy ring buffer. Observations keep their shape and dtype (an uint8
image stays uint8); actions, rewards and the two episode-end flags sit in arrays of
their own: ``terminated`` (the MDP ended, do not bootstrap) and ``truncated`` (a time
limit cut the episode, bootstrap as usual) are never merged.

Each observation is stored once. The next observation of a transition is, in a stream
of experience, the observation of the stream's next transition: when that transition
arrives with exactly that observation, the first one points at it (``LINKED``).
Otherwise (the episode ended and the environment was reset, or the caller's transitions
do not chain) the next observation is kept apart in a small growable side store
(``STORED``), so every ``next_obs`` comes back exactly as it was given. One stream is
one environment: :meth:`ReplayMemory.add` writes stream 0, :meth:`ReplayMemory.add_batch`
streams ``0..N-1`` (the sub-environments of a vector env). For 84x84x4 uint8 Atari
observations that is ~28.3 kB per transition instead of two copies' 56.4 kB.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

LINKED, STORED = 0, 1
#: the side store starts with capacity // SIDE_FRACTION slots (at least 1) and doubles
SIDE_FRACTION = 1024
#: state_dict layout version (1: next_obs as a second full array, before the side store)
STATE_FORMAT = 2


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

    Attributes:
        obs: ``[capacity, *obs_shape]``, the observation of each transition.
        actions, rewards, terminated, truncated: ``[capacity, ...]``.
        next_kind, next_ref: where each transition's next observation is: ``obs[ref]``
            (``LINKED``) or the side store's slot ``ref`` (``STORED``).
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
        if capacity >= 2**31:
            raise ValueError(f"ReplayMemory capacity must be < 2**31, got {capacity}")
        self.capacity = int(capacity)
        self.obs_shape, self.obs_dtype = obs_shape, obs_dtype
        self.obs = self._allocate(capacity)
        self.actions = np.zeros((capacity, *action_shape), dtype=action_dtype)
        self.rewards = np.zeros((capacity,), dtype=np.float32)
        self.terminated = np.zeros((capacity,), dtype=bool)
        self.truncated = np.zeros((capacity,), dtype=bool)
        self.next_kind = np.zeros((capacity,), dtype=np.int8)
        self.next_ref = np.zeros((capacity,), dtype=np.int32)
        self.rng = np.random.default_rng(seed)
        self._side = self._allocate(self._side_start(capacity))
        self._free = list(range(len(self._side) - 1, -1, -1))  # side slots, a stack
        self._open: dict[int, int] = {}  # stream -> slot of its newest transition
        self._stream_of: dict[int, int] = {}  # the inverse of _open
        self._next = 0  # index the next transition is written to
        self._size = 0

    @staticmethod
    def _side_start(capacity: int) -> int:
        return max(1, capacity // SIDE_FRACTION)

    def _allocate(self, rows: int) -> np.ndarray:
        """``rows`` zero observations, ``[rows, *obs_shape]`` (the observation store and
        the side store; :class:`~rlkit.replay.structured.StructuredReplay` keeps one array
        per part)."""
        return np.zeros((rows, *self.obs_shape), dtype=self.obs_dtype)

    @classmethod
    def from_spaces(cls, capacity: int, observation_space, action_space, seed=None) -> ReplayMemory:
        """Size the arrays from gymnasium spaces (``Box`` or ``Discrete``)."""
        if observation_space.shape is None:  # a Dict or Tuple space
            raise ValueError(f"{observation_space} has parts: use rlkit.replay.structured."
                             "StructuredReplay.from_spaces")  # fmt: skip
        return cls(
            capacity,
            obs_shape=tuple(observation_space.shape),
            obs_dtype=observation_space.dtype,
            action_shape=tuple(action_space.shape),
            action_dtype=action_space.dtype,
            seed=seed,
        )

    @staticmethod
    def bytes_needed(
        capacity: int, obs_shape, obs_dtype, action_shape=(), action_dtype=np.int64
    ) -> int:
        """What :attr:`nbytes` will be for these arguments, without allocating anything."""
        per_obs = int(np.prod(obs_shape, dtype=np.int64)) * np.dtype(obs_dtype).itemsize
        per_action = int(np.prod(action_shape, dtype=np.int64)) * np.dtype(action_dtype).itemsize
        per_transition = per_obs + per_action + 4 + 1 + 1 + 1 + 4  # reward, flags, next_*
        return capacity * per_transition + ReplayMemory._side_start(capacity) * per_obs

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (the side store at its current size)."""
        arrays = (self.obs, self.actions, self.rewards, self.terminated, self.truncated)
        extra = (self.next_kind, self.next_ref, self._side)
        return sum(a.nbytes for a in arrays) + sum(a.nbytes for a in extra)

    @property
    def next_obs(self) -> np.ndarray:
        """Every slot's next observation, ``[capacity, *obs_shape]`` (a copy, for inspection;
        zeros past the filled slots)."""
        out = self._allocate(self.capacity)
        out[: self._size] = self._next_obs_of(np.arange(self._size))
        return out

    # -- writing -----------------------------------------------------------------------------
    def add(self, obs, action, reward, next_obs, terminated, truncated) -> None:
        """Store one transition (stream 0), overwriting the oldest when full."""
        i = self._next
        if i < self._size:
            self._release(i)
        self.obs[i] = obs
        self.actions[i] = action
        self.rewards[i] = reward
        self.terminated[i] = terminated
        self.truncated[i] = truncated
        self._chain(0, i, next_obs)
        self._next = (i + 1) % self.capacity
        self._size = min(self._size + 1, self.capacity)

    def add_batch(self, obs, actions, rewards, next_obs, terminated, truncated) -> None:
        """Store ``N`` transitions at once (leading axis ``N``; row ``j`` is stream ``j``)."""
        n = len(rewards)
        if n > self.capacity:
            raise ValueError(f"cannot add {n} transitions to a memory of capacity {self.capacity}")
        idx = (self._next + np.arange(n)) % self.capacity
        for i in idx:
            if i < self._size:
                self._release(int(i))
        self.obs[idx] = obs
        self.actions[idx] = actions
        self.rewards[idx] = rewards
        self.terminated[idx] = terminated
        self.truncated[idx] = truncated
        for j, i in enumerate(idx):
            self._chain(j, int(i), next_obs[j])
        self._next = int((self._next + n) % self.capacity)
        self._size = min(self._size + n, self.capacity)

    def _release(self, i: int) -> None:
        """Slot ``i`` is about to be overwritten: free what its transition held apart."""
        if self.next_kind[i] == STORED:
            self._free.append(int(self.next_ref[i]))
        stream = self._stream_of.pop(i, None)
        if stream is not None:
            del self._open[stream]

    def _chain(self, stream: int, i: int, next_obs) -> None:
        """Link the stream's previous transition to slot ``i`` if ``obs[i]`` is its next
        observation, then keep transition ``i``'s next observation apart until the stream's
        next transition arrives."""
        previous = self._open.pop(stream, None)
        if previous is not None:
            del self._stream_of[previous]
            ref = int(self.next_ref[previous])
            # bit for bit (np.array_equal would take -0.0 for 0.0)
            if self._side[ref].tobytes() == self.obs[i].tobytes():
                self._free.append(ref)
                self.next_kind[previous] = LINKED
                self.next_ref[previous] = i
        ref = self._free.pop() if self._free else self._grow()
        self._side[ref] = next_obs
        self.next_kind[i] = STORED
        self.next_ref[i] = ref
        self._open[stream] = i
        self._stream_of[i] = stream

    def _grow(self) -> int:
        """Double the side store (up to capacity); returns a free slot of it."""
        old = len(self._side)
        # never more than capacity: each stored transition holds at most one side slot
        grown = self._allocate(min(2 * old, self.capacity))
        grown[:old] = self._side
        self._side = grown
        self._free = list(range(len(grown) - 1, old - 1, -1))
        return self._free.pop()

    # -- reading -----------------------------------------------------------------------------
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

    def _next_obs_of(self, idx: np.ndarray) -> np.ndarray:
        ref = self.next_ref[idx]
        out = self.obs[ref]  # right where LINKED (a side slot number is < capacity too)
        stored = self.next_kind[idx] == STORED
        if stored.any():
            out[stored] = self._side[ref[stored]]
        return out

    def _gather(self, idx: np.ndarray) -> Batch:
        return Batch(
            self.obs[idx],
            self.actions[idx],
            self.rewards[idx],
            self._next_obs_of(idx),
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
        self._free = list(range(len(self._side) - 1, -1, -1))
        self._open.clear()
        self._stream_of.clear()

    # -- checkpoints -------------------------------------------------------------------------
    _ARRAYS = ("obs", "actions", "rewards", "terminated", "truncated")

    def state_dict(self) -> dict[str, np.ndarray]:
        """The filled part of the arrays, position and generator state, for checkpoints.

        The side store is written compacted: ``side_obs[k]`` is the next observation of
        the ``k``-th STORED transition in slot order.
        """
        size = self._size
        kind, ref = self.next_kind[:size].copy(), self.next_ref[:size].copy()
        stored = np.flatnonzero(kind == STORED)
        side_obs = self._side[ref[stored]]
        ref[stored] = np.arange(len(stored))
        # slots [0, size) are the filled ones, whether or not the ring has wrapped
        return {
            **{name: getattr(self, name)[:size] for name in self._ARRAYS},
            "next_kind": kind,
            "next_ref": ref,
            "side_obs": side_obs,
            "open_streams": np.array(sorted(self._open.items()), np.int64).reshape(-1, 2),
            "format": np.array([STATE_FORMAT], np.int64),
            "position": np.array([self._next, size], dtype=np.int64),
            "rng_state": np.array([repr(self.rng.bit_generator.state)]),
        }

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`state_dict` returned (shapes must match).

        A state written before the side store (with a ``next_obs`` array) loads too: each
        of its next observations is kept apart.
        """
        next_index, size = (int(v) for v in state["position"])
        if size > self.capacity:
            raise ValueError(f"replay holds {size} transitions, more than capacity {self.capacity}")
        for name in self._ARRAYS:
            target = getattr(self, name)
            expected = (size, *target.shape[1:])
            if state[name].shape != expected:
                raise ValueError(
                    f"replay {name} has shape {state[name].shape}, expected {expected}"
                )
            target[:size] = state[name]
        if "next_obs" in state:  # format 1
            side_obs = state["next_obs"]
            kind = np.full(size, STORED, np.int8)
            ref = np.arange(size, dtype=np.int32)
            open_streams = np.zeros((0, 2), np.int64)
        else:
            side_obs, kind, ref = state["side_obs"], state["next_kind"], state["next_ref"]
            open_streams = state["open_streams"]
        if side_obs.shape[1:] != self.obs.shape[1:]:
            raise ValueError(f"replay next observations have shape {side_obs.shape[1:]}")
        used = len(side_obs)
        self._side = self._allocate(max(used, self._side_start(self.capacity)))
        self._side[:used] = side_obs
        self._free = list(range(len(self._side) - 1, used - 1, -1))
        self.next_kind[:size], self.next_ref[:size] = kind, ref
        self._open = {int(s): int(i) for s, i in open_streams}
        self._stream_of = {i: s for s, i in self._open.items()}
        self._next, self._size = next_index, size
        self.rng.bit_generator.state = ast.literal_eval(str(state["rng_state"][0]))
