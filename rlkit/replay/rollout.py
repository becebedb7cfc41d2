"""Rollout: the on-policy store, the counterpart of the shared replay for PPO.

It lives in the replay room (not in PPO's family folder) because it is experience storage
on the experience protocol's seam, as :class:`~rlkit.replay.memory.ReplayMemory` is: it
takes the same calls an agent's ``observe_first`` / ``observe_next`` /
``observe_transition`` make (``start``, ``start_batch``, ``append``, ``append_batch``,
``in_progress``, ``continue_or_start(_batch)``, ``__len__``, ``state_dict`` /
``load_state_dict``), and any on-policy agent (REINFORCE's heirs: A2C) may keep its
rollouts here without reaching into a family folder.

Layout: ``n_steps`` rows of ``N`` streams, ``[T, N, ...]`` in time order, each stream
filling its own column (a vector env's streams advance together). A step keeps its
observation, action (as the agent stores it: PPO's unclipped Gaussian sample), reward,
``terminated`` and ``truncated`` (never merged) and its next observation. The next
observation is kept for every step (``next_obs [T, N, ...]``): GAE reads it where an
episode ended by truncation (gymnasium's final observation) and at the rollout's last step.
That doubles the observations' memory: small for vectors, and for images kept in their own
dtype (``obs_dtype``: uint8 frames, MinAtar's bool boards, 1 byte a pixel) still small at
PPO's sizes: 8 streams x 128 steps of 84x84x4 frames are 28.9 MB an array, 57.8 MB both
(:attr:`Rollout.nbytes`). A store of only the ended and last steps' next observations would
halve it; not built.

A stream whose episode is cut before it ended (``start`` again, or ``continue_or_start``
with another observation) gets its last step marked ``truncated``: its advantage then
bootstraps from that step's own next observation instead of running on into the new one.

``N`` is fixed by the first ``start`` / ``start_batch`` (the streams it names); a
checkpoint (``state_dict``) keeps a half-filled rollout and each stream's current
observation, so that a run resumed mid-rollout goes on exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np


class RolloutBatch(NamedTuple):
    """A full rollout, ``[T, N, ...]`` arrays in time order (views of the store's arrays).

    Attributes:
        obs, next_obs: ``[T, N, *obs_shape]``.
        actions: ``[T, N, *action_shape]``.
        rewards: ``[T, N]`` float32.
        terminated, truncated: ``[T, N]`` bool.
    """

    obs: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_obs: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray


class Rollout:
    """``n_steps`` steps of each of ``N`` streams (see the module's docstring).

    Args:
        n_steps: ``T``, the steps each stream contributes to one rollout.
        obs_shape, obs_dtype: one observation as stored (encoded: a float32 vector, or an
            image in its own dtype, e.g. uint8 ``(84, 84, 4)``).
        action_shape, action_dtype: one action as stored (``()`` int64 for Discrete).
        mask_width: keep each step's invalid-action mask, ``width`` booleans, in
            ``action_masks [T, N, width]`` (0: none, ``action_masks`` None;
            :meth:`put_masks` writes them before the step's :meth:`append`).

    Attributes:
        filled: ``[N]`` int, the steps each stream has in the rollout so far.
    """

    _ARRAYS = RolloutBatch._fields  # (obs, actions, rewards, next_obs, terminated, truncated)

    def __init__(
        self,
        n_steps: int,
        obs_shape: tuple[int, ...],
        obs_dtype: Any = np.float32,
        action_shape: tuple[int, ...] = (),
        action_dtype: Any = np.int64,
        mask_width: int = 0,
    ) -> None:
        if n_steps < 1:
            raise ValueError(f"n_steps must be >= 1, got {n_steps}")
        self.n_steps = int(n_steps)
        self.obs_shape, self.obs_dtype = tuple(obs_shape), obs_dtype
        self.action_shape, self.action_dtype = tuple(action_shape), action_dtype
        self.mask_width = int(mask_width)
        self.num_streams = 0  # N, set by the first start
        self._allocate(0)

    def _allocate(self, streams: int) -> None:
        t, n = self.n_steps, streams
        self.num_streams = n
        self.obs = np.zeros((t, n, *self.obs_shape), self.obs_dtype)
        self.next_obs = np.zeros((t, n, *self.obs_shape), self.obs_dtype)
        self.actions = np.zeros((t, n, *self.action_shape), self.action_dtype)
        self.rewards = np.zeros((t, n), np.float32)
        self.terminated = np.zeros((t, n), bool)
        self.truncated = np.zeros((t, n), bool)
        self.action_masks = np.ones((t, n, self.mask_width), bool) if self.mask_width else None
        self.filled = np.zeros(n, np.int64)
        self.current = np.zeros((n, *self.obs_shape), self.obs_dtype)
        self.has_current = np.zeros(n, bool)

    @property
    def nbytes(self) -> int:
        """Bytes the rollout's arrays take (observations and next observations in their own
        dtype, actions, rewards, flags, each stream's current observation)."""
        arrays = (*self.batch(), self.action_masks, self.filled, self.current, self.has_current)
        return int(sum(a.nbytes for a in arrays if a is not None))

    def __len__(self) -> int:
        """Steps stored, over all streams."""
        return int(self.filled.sum())

    @property
    def full(self) -> bool:
        """Every stream has its ``n_steps`` steps: the rollout is ready for an update."""
        return self.num_streams > 0 and bool(np.all(self.filled == self.n_steps))

    # -- writing: the experience protocol ----------------------------------------------------
    def start(self, stream: int, obs) -> None:
        """Stream ``stream`` begins an episode at ``obs`` (the first start fixes ``N`` as
        ``stream + 1`` streams). An episode it had in progress is cut: its last step in the
        rollout is marked ``truncated``."""
        self._ensure(stream + 1)
        self._cut(stream)
        self.current[stream] = obs
        self.has_current[stream] = True

    def start_batch(self, obs, streams: Sequence[int]) -> None:
        """:meth:`start` for several streams: row ``j`` of ``obs`` starts ``streams[j]``."""
        streams = [int(s) for s in streams]
        if streams:
            self._ensure(max(streams) + 1)
        rows = np.asarray(obs)
        for j, stream in enumerate(streams):
            self.start(stream, rows[j])

    def put_masks(self, masks) -> None:
        """The invalid-action masks of the coming step: ``[width]`` (stream 0) or ``[N,
        width]`` (streams ``0..N-1``), each written where that stream's next :meth:`append`
        goes (a store made without ``mask_width`` takes none)."""
        if self.action_masks is None:
            raise ValueError("this rollout keeps no action masks (made with mask_width 0)")
        rows = np.asarray(masks, bool).reshape(-1, self.mask_width)
        for stream, row in enumerate(rows):
            t = int(self.filled[stream])
            if t < self.n_steps:
                self.action_masks[t, stream] = row

    def append(self, stream: int, action, reward, next_obs, terminated, truncated) -> None:
        """Stream ``stream``'s next step, from its current observation to ``next_obs``."""
        if not self.in_progress(stream):
            raise ValueError(
                f"stream {stream} has no episode in progress: start it (an agent's "
                "observe_first) before its first step"
            )
        t = int(self.filled[stream])
        if t >= self.n_steps:
            raise ValueError(
                f"stream {stream} already has its {self.n_steps} steps in this rollout: "
                "update (and clear) before adding more"
            )
        self.obs[t, stream] = self.current[stream]
        self.actions[t, stream] = action
        self.rewards[t, stream] = reward
        self.terminated[t, stream] = terminated
        self.truncated[t, stream] = truncated
        self.next_obs[t, stream] = next_obs
        self.filled[stream] = t + 1
        if terminated or truncated:
            self.has_current[stream] = False
        else:
            self.current[stream] = next_obs

    def append_batch(self, actions, rewards, next_obs, terminated, truncated) -> None:
        """:meth:`append` for streams ``0..N-1`` at once (row ``j`` is stream ``j``): where
        every stream has an episode in progress at the same step (a vector env's usual case)
        one row of each array is written whole, the same values :meth:`append` would write
        stream by stream; otherwise stream by stream."""
        next_rows = np.asarray(next_obs)
        if self._same_step(len(rewards), next_rows, actions):
            self._append_row(actions, rewards, next_rows, terminated, truncated)
            return
        for j in range(len(rewards)):
            self.append(j, actions[j], rewards[j], next_rows[j], bool(terminated[j]),
                        bool(truncated[j]))  # fmt: skip

    def _same_step(self, count: int, next_rows: np.ndarray, actions) -> bool:
        """Whether ``count`` steps fill one row: all ``N`` streams in progress, each with the
        same steps, fewer than ``n_steps``, and the observations and actions ``[N, ...]``."""
        n = self.num_streams
        if count != n or n == 0 or next_rows.shape != (n, *self.obs_shape):
            return False
        if np.ndim(actions) != 1 + len(self.action_shape) or len(actions) != n:
            return False
        t = self.filled[0]
        return t < self.n_steps and bool(self.has_current.all()) and bool((self.filled == t).all())

    def _append_row(self, actions, rewards, next_rows, terminated, truncated) -> None:
        """Row ``t`` (the streams' common fill) of every array at once: :meth:`append`'s
        writes for streams ``0..N-1``."""
        t = int(self.filled[0])
        ended = np.logical_or(np.asarray(terminated, bool), np.asarray(truncated, bool))
        self.obs[t] = self.current
        self.actions[t] = actions
        self.rewards[t] = rewards
        self.terminated[t] = np.asarray(terminated, bool)
        self.truncated[t] = np.asarray(truncated, bool)
        self.next_obs[t] = next_rows
        self.filled += 1
        self.has_current[ended] = False
        going = ~ended
        self.current[going] = next_rows[going]

    def in_progress(self, stream: int) -> bool:
        """Has ``stream`` an episode in progress (started, and not ended since)?"""
        return 0 <= stream < self.num_streams and bool(self.has_current[stream])

    def continue_or_start(self, stream: int, obs) -> None:
        """Where ``obs`` is bit for bit the stream's current observation its episode goes
        on; else :meth:`start` (which cuts the episode in progress)."""
        if self.in_progress(stream):
            given = np.asarray(obs, self.obs_dtype).reshape(self.obs_shape)
            if given.tobytes() == self.current[stream].tobytes():
                return
        self.start(stream, obs)

    def continue_or_start_batch(self, obs) -> None:
        """:meth:`continue_or_start` for streams ``0..N-1`` (row ``j`` of ``obs``)."""
        rows = np.asarray(obs)
        self._ensure(len(rows))
        for j in range(len(rows)):
            self.continue_or_start(j, rows[j])

    def _ensure(self, streams: int) -> None:
        if self.num_streams == 0:
            self._allocate(streams)
        elif streams > self.num_streams:
            raise ValueError(
                f"this rollout has {self.num_streams} streams (fixed by its first start); "
                f"got stream {streams - 1}"
            )

    def _cut(self, stream: int) -> None:
        t = int(self.filled[stream]) - 1
        if self.has_current[stream] and t >= 0:
            self.truncated[t, stream] = True  # (its next_obs is kept: GAE bootstraps there)

    # -- reading -----------------------------------------------------------------------------
    def batch(self) -> RolloutBatch:
        """The rollout's arrays ``[T, N, ...]`` (views; meaningful when :attr:`full`)."""
        return RolloutBatch(*(getattr(self, name) for name in self._ARRAYS))

    def clear(self) -> None:
        """Forget the rollout's steps; each stream's episode in progress goes on from its
        current observation."""
        self.filled[:] = 0
        self.terminated[:] = False
        self.truncated[:] = False

    # -- checkpoints -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """The arrays (a half-filled rollout included), each stream's fill and current
        observation: what :meth:`load_state_dict` needs to go on exactly."""
        state = {name: getattr(self, name).copy() for name in self._ARRAYS}
        if self.action_masks is not None:
            state["action_masks"] = self.action_masks.copy()
        state.update(filled=self.filled.copy(), current=self.current.copy(),
                     has_current=self.has_current.copy())  # fmt: skip
        return state

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`state_dict` returned; ValueError where shapes do not fit."""
        streams = int(np.asarray(state["filled"]).shape[0])
        self._allocate(streams)
        masks = ("action_masks",) if self.action_masks is not None else ()
        for name in (*self._ARRAYS, *masks, "filled", "current", "has_current"):
            target, value = getattr(self, name), np.asarray(state[name])
            if value.shape != target.shape:
                raise ValueError(f"rollout {name} has shape {value.shape}, expected {target.shape}")
            target[...] = value
