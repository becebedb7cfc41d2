"""FrameReplay: a replay memory for stacks of frames that stores each frame once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rlkit.replay.memory import Batch, ReplayMemory

#: redraws of the incomplete stacks in one sample before checking that complete ones exist
MAX_REDRAWS = 1000


class FrameReplay(ReplayMemory):
    """A :class:`ReplayMemory` for stacks of frames that stores each frame once.

    Observations are ``[..., history]`` stacks (e.g. ``[84, 84, 4]`` uint8: the last axis
    holds the frames, newest last, zero-padded at an episode start, as
    ``FrameStackObservation(padding_type="zero")`` makes them). Each transition keeps only
    its newest frame and how far back, in the same stream and episode, its previous
    transition is; stacks are rebuilt when sampled, frames from before the episode start
    as zeros (DQN3.0's ``TransitionTable`` and Dopamine's circular buffer do the same).
    A transition whose stack would reach frames already overwritten is never sampled
    (DQN3.0 samples them; Dopamine does not). The next observation is the stack shifted by
    one with the next frame, which is linked or kept apart as in :class:`ReplayMemory`.
    1M Atari transitions take ~7.07 GB instead of ~28 GB for whole stacks.

    A stream's episode starts (:meth:`start`) with a zero-padded stack and goes on as the
    protocol says, one frame per transition. ``add`` (a transition given whole) checks
    that each stack continues the previous one of its stream or starts an episode with
    zeros, and raises ValueError otherwise: such observations are not frame stacks, use
    :class:`ReplayMemory`.
    """

    def __init__(
        self,
        capacity: int,
        obs_shape: tuple[int, ...],
        obs_dtype: Any = np.uint8,
        action_shape: tuple[int, ...] = (),
        action_dtype: Any = np.int64,
        seed: int | Sequence[int] | None = None,
        **options: Any,
    ) -> None:
        """``options``: :class:`ReplayMemory`'s ``sampler``, ``n_step`` and ``gamma``."""
        self.history = int(obs_shape[-1])
        self.stack_shape = tuple(obs_shape)
        super().__init__(capacity, tuple(obs_shape[:-1]), obs_dtype, action_shape,
                         action_dtype, seed, **options)  # fmt: skip
        self.prev_gap = np.zeros((capacity,), dtype=np.int32)  # 0: the episode starts here
        self._total = 0  # transitions ever added (the global index of the next one)
        self._last: dict[int, tuple[int, bool]] = {}  # stream -> (global index, episode ended)
        self._gap_next: dict[int, int] = {}  # stream -> the gap of its next transition, if set

    @staticmethod
    def bytes_needed(capacity: int, obs_shape, obs_dtype, action_shape=(), action_dtype=np.int64):
        frames = ReplayMemory.bytes_needed(capacity, obs_shape[:-1], obs_dtype, action_shape,
                                           action_dtype)  # fmt: skip
        return frames + capacity * 4  # prev_gap

    @property
    def nbytes(self) -> int:
        return super().nbytes + self.prev_gap.nbytes

    @property
    def next_obs(self) -> np.ndarray:
        out = np.zeros((self.capacity, *self.stack_shape), self.obs.dtype)
        out[: self._size] = self._gather(np.arange(self._size)).next_obs
        return out

    # -- writing -----------------------------------------------------------------------------
    def _start(self, stream: int, obs, cut: bool) -> None:
        """Stream ``stream`` begins an episode at the stack ``obs``: zero-padded (every frame
        but the newest is zero, as FrameStackObservation(padding_type="zero") starts)."""
        obs = np.asarray(obs)
        if np.any(obs[..., :-1]):
            raise ValueError(
                "a stack that starts an episode must be zero-padded (FrameStackObservation"
                "(padding_type='zero')); for observations that are not frame stacks use "
                "ReplayMemory"
            )
        super()._start(stream, obs[..., -1], cut)
        self._gap_next[stream] = 0

    def append(self, stream: int, action, reward, next_obs, terminated, truncated) -> None:
        self._require(stream)
        gap = self._gap_of(stream)
        i = self._next
        super().append(stream, action, reward, np.asarray(next_obs)[..., -1], terminated,
                       truncated)  # fmt: skip
        self.prev_gap[i] = gap
        self._last[stream] = (self._total, bool(terminated or truncated))
        self._total += 1

    def append_batch(self, actions, rewards, next_obs, terminated, truncated) -> None:
        n = len(rewards)
        for stream in range(n):
            self._require(stream)
        gaps = [self._gap_of(j, offset=j) for j in range(n)]  # row j: transition _total + j
        idx = (self._next + np.arange(n)) % self.capacity
        super().append_batch(actions, rewards, np.asarray(next_obs)[..., -1], terminated,
                             truncated)  # fmt: skip
        self.prev_gap[idx] = gaps
        ended = np.logical_or(terminated, truncated)
        for j in range(n):
            self._last[j] = (self._total + j, bool(ended[j]))
        self._total += n

    def _gap_of(self, stream: int, offset: int = 0) -> int:
        """How far back (global index) the stream's previous transition is from the one
        written at ``_total + offset``: 0 where the episode starts."""
        gap = self._gap_next.pop(stream, None)
        if gap is not None:
            return gap
        return self._total + offset - self._last[stream][0]  # (overwritten: never sampled)

    # -- writing whole transitions (a loop of one's own) -------------------------------------
    def continue_or_start(self, stream: int, obs) -> None:
        """Make the stack ``obs`` the stream's current one: an episode's start where it is
        zero-padded, else the continuation of the stream's previous stack (ValueError where
        it is neither)."""
        obs = np.asarray(obs)
        if not np.any(obs[..., :-1]):
            self._start(stream, obs, cut=False)
            return
        last = self._last.get(stream)
        if last is None or last[1]:
            self._start(stream, obs, cut=False)  # (raises: not zero-padded)
        assert last is not None  # (_start raised)
        held = last[0] >= self._total - self._size
        if held and obs[..., -2].tobytes() != self.obs[last[0] % self.capacity].tobytes():
            raise ValueError(
                "this stack does not continue the previous one of its stream: frame replay "
                "needs consecutive frame stacks (use ReplayMemory otherwise)"
            )
        if not self._continues(stream, obs[..., -1]):  # its newest frame is not the one held
            ReplayMemory._start(self, stream, obs[..., -1], cut=False)
            self._gap_next.pop(stream, None)  # (the gap is to the stream's last transition)

    # -- reading -----------------------------------------------------------------------------
    def _global(self, idx: np.ndarray) -> np.ndarray:
        """The global index of the transition in each slot."""
        newest = self._total - 1
        return newest - ((newest - idx) % self.capacity)

    def _frames(self, idx: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        """``(frames, valid)``: the ``history`` frames of each slot's stack, oldest first, each
        ``[*idx.shape, *frame_shape]`` (zeros before the episode start), and whether all the
        frames a stack needs are still held.

        Each frame is gathered whole and contiguous; :func:`numpy.stack` then interleaves
        them into the last axis in one pass (writing into strided stack slices, or shifting
        a stack by one with ``concatenate``, costs ~3x as much for 84x84 frames).
        """
        oldest = self._total - self._size
        frames = [self.obs[idx]]
        g = self._global(idx)
        alive = np.ones(idx.shape, bool)  # the chain has not reached an episode start
        valid = np.ones(idx.shape, bool)
        for _ in range(2, self.history + 1):
            gap = self.prev_gap[g % self.capacity]
            alive &= gap > 0
            g = g - gap
            held = g >= oldest
            valid &= ~alive | held
            take = alive & held
            frame = self.obs[np.where(take, g % self.capacity, 0)]
            frame[~take] = 0
            frames.insert(0, frame)
            alive &= held
        return frames, valid

    def _history(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(stacks [..., history], valid)``: each slot's stack rebuilt from its frames, and
        whether all the frames it needs are still held."""
        frames, valid = self._frames(idx)
        return np.stack(frames, axis=-1), valid

    def _gather(self, idx: np.ndarray, weights: np.ndarray | None = None) -> Batch:
        return self._batch(idx, self._frames(idx)[0], weights)

    def _batch(self, idx: np.ndarray, frames: list[np.ndarray],
               weights: np.ndarray | None = None) -> Batch:  # fmt: skip
        """The transitions in slots ``idx`` from their stacks' ``frames`` (oldest first); the
        next observation is the stack of the (n-step) walk's last step shifted by one with
        its next frame."""
        last, rewards, discount = self._returns(idx)
        last_frames = frames if last is idx else self._frames(last)[0]
        next_stacks = np.stack([*last_frames[1:], self._next_obs_of(last)], axis=-1)
        return Batch(np.stack(frames, axis=-1), self.actions[idx], rewards, next_stacks,
                     self.terminated[last], self.truncated[last], idx, weights,
                     discount)  # fmt: skip

    def sample(self, batch_size: int, num_batches: int | None = None) -> Batch:
        """As :meth:`ReplayMemory.sample`, redrawing (from the sampler) transitions whose
        stack reaches frames that were overwritten (at most ``history - 1`` per stream, the
        oldest ones)."""
        if batch_size <= 0 or batch_size > self._size:
            return super().sample(batch_size, num_batches)  # its clear errors
        shape = (batch_size,) if num_batches is None else (num_batches, batch_size)
        idx, weights = self.sampler.sample(self.rng, self._size, shape)
        for attempt in range(MAX_REDRAWS):
            frames, valid = self._frames(idx)
            if valid.all():
                if attempt:  # the weights of a draw with some redrawn, as one draw's
                    weights = self.sampler.weights(idx, self._size)
                return self._batch(idx, frames, weights)  # (the frames are not gathered twice)
            redrawn, _ = self.sampler.sample(self.rng, self._size, (int((~valid).sum()),))
            idx[~valid] = redrawn
        if not self._frames(np.arange(self._size))[1].any():
            raise ValueError(
                f"none of the {self._size} transitions held has its whole stack of "
                f"{self.history} frames: the replay needs a capacity well above "
                f"{self.history} frames per environment"
            )
        return self.sample(batch_size, num_batches)  # (valid ones are there: draw again)

    def clear(self) -> None:
        """Forget every transition; each stream starts its next episode again (a stack in
        progress would need the frames forgotten)."""
        super().clear()
        for stream in list(self._first):
            self._close(stream)
        self._last.clear()
        self._gap_next.clear()
        self._total = 0  # (slot = global index % capacity again)

    # -- checkpoints -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        state = super().state_dict()
        last = sorted((s, g, int(e)) for s, (g, e) in self._last.items())
        return {
            **state,
            "prev_gap": self.prev_gap[: self._size].copy(),
            "total": np.array([self._total], np.int64),
            "last": np.array(last, np.int64).reshape(-1, 3),
            "gap_next": np.array(sorted(self._gap_next.items()), np.int64).reshape(-1, 2),
        }

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        super().load_state_dict(state)
        size = self._size
        self.prev_gap[:size] = state["prev_gap"]
        self._total = int(state["total"][0])
        self._last = {int(s): (int(g), bool(e)) for s, g, e in state["last"]}
        gap_next = state.get("gap_next", np.zeros((0, 2), np.int64))
        self._gap_next = {int(s): int(g) for s, g in gap_next}
