"""ReplayMemory: the one experience store every rlkit agent uses.

A preallocated numpy ring buffer. Observations keep their shape and dtype (an uint8
image stays uint8); actions, rewards and the two episode-end flags sit in arrays of
their own: ``terminated`` (the MDP ended, do not bootstrap) and ``truncated`` (a time
limit cut the episode, bootstrap as usual) are never merged.

Experience arrives in streams, one per environment (a vector env's are ``0..N-1``):
:meth:`ReplayMemory.start` at an episode's start (``observe_first``), then
:meth:`ReplayMemory.append` for each step (``observe``); :meth:`ReplayMemory.add` takes a
transition given whole. Each observation is stored once: within an episode a transition's
next observation *is* that of the stream's next transition, and the first points at it
(``LINKED``). The last transition of an episode (and a stream's newest, until its next
one arrives) keeps its next observation apart in a small growable side store
(``STORED``): for 84x84x4 uint8 Atari observations ~28.3 kB a transition, not 56.4 kB.

A sampler (:mod:`rlkit.replay.samplers`) chooses the slots of a minibatch; the memory
gathers them, with n-step returns along the links (:mod:`rlkit.replay.nstep`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rlkit.core.errors import UsageError
from rlkit.replay.batch import Batch
from rlkit.replay.nstep import n_step
from rlkit.replay.samplers import Sampler, UniformSampler
from rlkit.replay.saved import LINKED, STORED, SavedState

#: the side store starts with capacity // SIDE_FRACTION slots (at least 1) and doubles
SIDE_FRACTION = 1024


class ReplayMemory(SavedState):
    """Fixed-capacity ring buffer of transitions, sampled by a seeded sampler.

    Args:
        capacity: the most transitions kept; the oldest are overwritten first.
        obs_shape, obs_dtype: shape and dtype of one observation.
        action_shape, action_dtype: shape and dtype of one action (``()`` for discrete).
        seed: seed of the sampling generator (anything ``np.random.default_rng`` takes).
        sampler: chooses the slots of a minibatch (:mod:`rlkit.replay.samplers`; default
            uniform with replacement, DQN3.0's).
        n_step: the horizon of the returns a minibatch holds (:mod:`rlkit.replay.nstep`).
        gamma: the discount of those returns; given, a minibatch carries each example's
            bootstrap discount (``Batch.discount``); needed for ``n_step > 1``.

    Its checkpoint (``state_dict`` / ``load_state_dict``) is :class:`~rlkit.replay.saved.
    SavedState`'s.

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
        *,
        sampler: Sampler | None = None,
        n_step: int = 1,
        gamma: float | None = None,
    ) -> None:
        if n_step < 1 or (n_step > 1 and gamma is None):
            raise UsageError(f"n_step must be >= 1 (and needs gamma above 1), got {n_step}")
        if not 0 < capacity < 2**31:
            raise UsageError(f"ReplayMemory capacity must lie in [1, 2**31), got {capacity}")
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
        self.sampler = UniformSampler() if sampler is None else sampler
        self.n_step, self.gamma = int(n_step), gamma
        self._side = self._allocate(self._side_start(capacity))
        self._free = list(range(len(self._side) - 1, -1, -1))  # side slots, a stack
        # a stream's current observation is the side slot of its newest transition's next
        # observation (_open: stream -> that transition) or, where no transition leads to it
        # (the episode's start), a side slot of its own (_first: stream -> slot)
        self._open: dict[int, int] = {}
        self._stream_of: dict[int, int] = {}  # the inverse of _open
        self._first: dict[int, int] = {}
        self._scratch = self._allocate(1)  # an observation as stored, to compare
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
        return cls(capacity, tuple(observation_space.shape), observation_space.dtype,
                   tuple(action_space.shape), action_space.dtype, seed)  # fmt: skip

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

    # -- writing: the experience protocol ----------------------------------------------------
    def start(self, stream: int, obs) -> None:
        """Stream ``stream`` (one environment) begins an episode at ``obs``.

        The stream's next :meth:`append` is a transition from ``obs``. An episode the stream
        had in progress is cut here: its last transition keeps its own next observation and
        is marked ``truncated`` (it did not terminate; a return computed over it ends there).
        """
        self._start(stream, obs, cut=True)

    def _start(self, stream: int, obs, cut: bool) -> None:
        """:meth:`start`; ``cut`` False leaves an episode in progress unmarked (for add)."""
        self._close(stream, cut)
        ref = self._side_slot()
        self._side[ref] = obs
        self._first[stream] = ref

    def start_batch(self, obs, streams: Sequence[int]) -> None:
        """:meth:`start` for several streams: row ``j`` of ``obs`` starts ``streams[j]``."""
        rows = self._rows(obs)
        for j, stream in enumerate(streams):
            self.start(int(stream), rows[j])

    def append(self, stream: int, action, reward, next_obs, terminated, truncated) -> None:
        """Store the stream's next transition: from its current observation (where it
        started, or the last transition's ``next_obs``, linked to it) to ``next_obs``.
        Overwrites the oldest transition when full."""
        self._require(stream)
        i = self._next
        if i < self._size:
            self._release(i)
        self._continue(stream, i)
        self.actions[i] = action
        self.rewards[i] = reward
        self.terminated[i] = terminated
        self.truncated[i] = truncated
        self._hold_next(stream, i, next_obs, bool(terminated or truncated))
        self._next = (i + 1) % self.capacity
        self._size = min(self._size + 1, self.capacity)
        self.sampler.written(np.array([i]))

    def append_batch(self, actions, rewards, next_obs, terminated, truncated) -> None:
        """:meth:`append` for streams ``0..N-1`` at once (leading axis ``N``; row ``j`` is
        stream ``j``, written in that order)."""
        n = len(rewards)
        if n > self.capacity:
            raise ValueError(f"cannot add {n} transitions to a memory of capacity {self.capacity}")
        for stream in range(n):
            self._require(stream)
        idx = (self._next + np.arange(n)) % self.capacity
        for i in idx:
            if i < self._size:
                self._release(int(i))
        self.actions[idx] = actions
        self.rewards[idx] = rewards
        self.terminated[idx] = terminated
        self.truncated[idx] = truncated
        ended = np.logical_or(terminated, truncated)
        next_rows = self._rows(next_obs)
        for j, i in enumerate(idx):
            self._continue(j, int(i))
            self._hold_next(j, int(i), next_rows[j], bool(ended[j]))
        self._next = int((self._next + n) % self.capacity)
        self._size = min(self._size + n, self.capacity)
        self.sampler.written(idx)

    def in_progress(self, stream: int) -> bool:
        """Has ``stream`` an episode in progress (started, and its last transition did not
        end it)?"""
        return stream in self._open or stream in self._first

    # -- writing whole transitions (a loop of one's own) -------------------------------------
    def add(self, obs, action, reward, next_obs, terminated, truncated, stream: int = 0) -> None:
        """Store one transition given whole: :meth:`continue_or_start`, then :meth:`append`.
        Every ``next_obs`` comes back exactly as it was given."""
        self.continue_or_start(stream, obs)
        self.append(stream, action, reward, next_obs, terminated, truncated)

    def add_batch(self, obs, actions, rewards, next_obs, terminated, truncated) -> None:
        """:meth:`add` for ``N`` transitions at once (row ``j`` is stream ``j``)."""
        self.continue_or_start_batch(obs)
        self.append_batch(actions, rewards, next_obs, terminated, truncated)

    def continue_or_start_batch(self, obs) -> None:
        """:meth:`continue_or_start` for streams ``0..N-1`` (row ``j`` of ``obs``)."""
        rows = self._rows(obs)
        for j in range(len(rows)):
            self.continue_or_start(j, rows[j])

    def continue_or_start(self, stream: int, obs) -> None:
        """Where ``obs`` is bit for bit the stream's current observation, the stream's
        episode goes on (its next transition links to its last); else :meth:`start`."""
        if not self._continues(stream, obs):
            self._start(stream, obs, cut=False)

    def _continues(self, stream: int, obs) -> bool:
        ref = self._current(stream)
        if ref is None:
            return False
        self._scratch[0] = obs  # as stored (dtype), compared bit for bit (-0.0 is not 0.0)
        return self._scratch[0].tobytes() == self._side[ref].tobytes()

    # -- the links ---------------------------------------------------------------------------
    def _rows(self, obs):
        """A batch of observations as rows to index (StructuredReplay: its parts)."""
        return np.asarray(obs)

    def _current(self, stream: int) -> int | None:
        """The side slot of the stream's current observation (None: no episode)."""
        if stream in self._open:
            return int(self.next_ref[self._open[stream]])
        return self._first.get(stream)

    def _require(self, stream: int) -> None:
        if not self.in_progress(stream):
            raise ValueError(
                f"stream {stream} has no episode in progress: start it (an agent's "
                "observe_first) before its first transition"
            )

    def _continue(self, stream: int, i: int) -> None:
        """Slot ``i`` takes the stream's current observation; the stream's last transition
        (if any) now links to it."""
        previous = self._open.pop(stream, None)
        if previous is None:
            ref = self._first.pop(stream)
        else:
            del self._stream_of[previous]
            ref = int(self.next_ref[previous])
            self.next_kind[previous] = LINKED
            self.next_ref[previous] = i
        self.obs[i] = self._side[ref]
        self._free.append(ref)

    def _hold_next(self, stream: int, i: int, next_obs, ended: bool) -> None:
        """Keep transition ``i``'s next observation apart; it is the stream's current one
        until the stream's next transition links to it (unless the episode ended)."""
        ref = self._side_slot()
        self._side[ref] = next_obs
        self.next_kind[i] = STORED
        self.next_ref[i] = ref
        if not ended:
            self._open[stream] = i
            self._stream_of[i] = stream

    def _release(self, i: int) -> None:
        """Slot ``i`` is about to be overwritten: free what its transition held apart (a
        stream's current observation stays the stream's)."""
        stream = self._stream_of.pop(i, None)
        if stream is not None:
            del self._open[stream]
            self._first[stream] = int(self.next_ref[i])
        elif self.next_kind[i] == STORED:
            self._free.append(int(self.next_ref[i]))

    def _close(self, stream: int, cut: bool = False) -> None:
        """End the stream's episode in progress, if any (``cut``: mark its last transition
        truncated)."""
        previous = self._open.pop(stream, None)
        if previous is not None:
            del self._stream_of[previous]
            if cut:
                self.truncated[previous] = True
        ref = self._first.pop(stream, None)
        if ref is not None:
            self._free.append(ref)

    def _side_slot(self) -> int:
        return self._free.pop() if self._free else self._grow()

    def _grow(self) -> int:
        """Double the side store; returns a free slot of it."""
        old = len(self._side)
        # each stored transition holds at most one side slot, each started stream one more
        grown = self._allocate(max(old + 1, min(2 * old, self.capacity + len(self._first) + 1)))
        grown[:old] = self._side
        self._side = grown
        self._free = list(range(len(grown) - 1, old - 1, -1))
        return self._free.pop()

    # -- reading -----------------------------------------------------------------------------
    def sample(self, batch_size: int, num_batches: int | None = None) -> Batch:
        """Sample transitions as the sampler chooses them (uniformly with replacement by
        default, as DQN3.0 does).

        Returns arrays of leading shape ``[batch_size]``, or
        ``[num_batches, batch_size]`` when ``num_batches`` is given (one draw of
        several minibatches for a fused update), with the slots, their importance weights
        and, with ``gamma``, each example's discount (n-step returns with ``n_step``).
        """
        if batch_size <= 0:
            raise ValueError(f"batch_size must be > 0, got {batch_size}")
        if batch_size > self._size:
            raise ValueError(
                f"cannot sample {batch_size} transitions: the memory holds {self._size}; "
                "collect more experience first (or lower the batch size)"
            )
        shape = (batch_size,) if num_batches is None else (num_batches, batch_size)
        return self._gather(*self.sampler.sample(self.rng, self._size, shape))

    def update_priorities(self, indices: np.ndarray, td_errors) -> None:
        """What the learner measured of the sampled slots ``indices`` (their TD errors, a
        numpy array or a tensor of the same shape), for the sampler."""
        self.sampler.update_priorities(indices, td_errors)

    def _next_obs_of(self, idx: np.ndarray) -> np.ndarray:
        ref = self.next_ref[idx]
        stored = self.next_kind[idx] == STORED
        out = self.obs[np.where(stored, 0, ref)]  # right where LINKED
        if stored.any():
            out[stored] = self._side[ref[stored]]
        return out

    def _returns(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(last, rewards, discount)`` of the slots ``idx``: the n-step walk's last slot,
        the return and the bootstrap's discount (None without ``gamma``)."""
        if self.gamma is None:
            return idx, self.rewards[idx], None
        walk = n_step(idx, self.n_step, self.gamma, self.rewards, self.terminated,
                      self.next_kind, self.next_ref)  # fmt: skip
        return walk.last, walk.returns, walk.discount

    def _gather(self, idx: np.ndarray, weights: np.ndarray | None = None) -> Batch:
        last, rewards, discount = self._returns(idx)
        next_obs = self._next_obs_of(last)
        return Batch(self.obs[idx], self.actions[idx], rewards, next_obs, self.terminated[last],
                     self.truncated[last], idx, weights, discount)  # fmt: skip

    def ordered(self) -> Batch:
        """Every stored transition, oldest first (for on-policy episode stores)."""
        start = self._next if self._size == self.capacity else 0
        return self._gather((start + np.arange(self._size)) % self.capacity)

    def clear(self) -> None:
        """Forget every transition (the arrays stay allocated); each stream's episode in
        progress goes on from its current observation."""
        heads: dict[int, int] = {}
        for stream in [*self._open, *self._first]:
            slot = self._current(stream)
            assert slot is not None  # (a stream in _open or _first is in an episode)
            heads[stream] = slot
        self._next = 0
        self._size = 0
        kept = set(heads.values())
        self._free = [r for r in range(len(self._side) - 1, -1, -1) if r not in kept]
        self._open.clear()
        self._stream_of.clear()
        self._first = heads
