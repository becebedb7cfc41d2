"""The layout of a replay memory's checkpoint, and the one place older layouts are upgraded.

:meth:`ReplayMemory.state_dict <rlkit.replay.memory.ReplayMemory.state_dict>` writes the
arrays this module describes and :meth:`~rlkit.replay.memory.ReplayMemory.load_state_dict`
reads them back after :func:`migrate` (both methods of :class:`SavedState`, the memory's
base: no function here reads a memory's members).

Format 3 (today): the filled rows of ``obs``, ``actions``, ``rewards``, ``terminated``,
``truncated``, ``next_kind``, ``next_ref``; ``side_obs`` (the next observation of each
``STORED`` transition in slot order, ``next_ref`` pointing into it), ``first_streams`` and
``first_obs`` (streams started with no transition yet, and their observation),
``open_streams`` rows ``(stream, slot of its newest transition)``, ``position`` (next
slot, size), ``rng_state``, ``format``; a sampler's arrays under ``sampler/<name>``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from rlkit.replay.samplers import Sampler

LINKED, STORED = 0, 1  # (as rlkit.replay.memory)
#: the layout's version: 1 kept next_obs as a second full array (before the side store),
#: 2 streams implicitly (before observe_first: no first_obs), 3 today
STATE_FORMAT = 3


def compact_side(kind: np.ndarray, ref: np.ndarray, side: Any) -> tuple[np.ndarray, Any]:
    """``(next_ref, side_obs)`` with the side store compacted: the ``k``-th ``STORED`` slot's
    next observation becomes ``side_obs[k]`` (``side``: the live side store)."""
    ref = ref.copy()
    stored = np.flatnonzero(kind == STORED)
    side_obs = side[ref[stored]]
    ref[stored] = np.arange(len(stored))
    return ref, side_obs


def migrate(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A replay state of any format as format 3 (a new dict; ``state`` is not changed).

    Format 1 kept each next observation as a full array (``next_obs``): each becomes a
    ``STORED`` one and no episode is in progress. Format 2 had no ``first_obs`` (streams
    started implicitly): no stream waits for its first transition, and only the episodes
    its newest transitions did not end are in progress.
    """
    state = dict(state)
    size = int(state["position"][1])
    if "next_obs" in state:  # format 1
        state["side_obs"] = state.pop("next_obs")
        state["next_kind"] = np.full(size, STORED, np.int8)
        state["next_ref"] = np.arange(size, dtype=np.int32)
        state["open_streams"] = np.zeros((0, 2), np.int64)
    if "first_obs" not in state:  # formats 1 and 2
        ended = state["terminated"][:size] | state["truncated"][:size]
        open_streams = [(s, i) for s, i in state["open_streams"] if not ended[i]]
        state["open_streams"] = np.array(open_streams, np.int64).reshape(-1, 2)
        state["first_streams"] = np.zeros(0, np.int64)
        state["first_obs"] = state["side_obs"][:0]
    state["format"] = np.array([STATE_FORMAT], np.int64)
    return state


class SavedState:
    """The checkpoint methods of :class:`~rlkit.replay.memory.ReplayMemory` (its base, kept
    here beside the layout they write): the memory's own state, read and written by its
    own methods."""

    _ARRAYS = ("obs", "actions", "rewards", "terminated", "truncated")

    # The memory's members these methods read and write, declared for the type checker
    # (annotations only: ReplayMemory.__init__ sets them, ReplayMemory defines the methods).
    capacity: int
    obs: np.ndarray
    next_kind: np.ndarray
    next_ref: np.ndarray
    rng: np.random.Generator
    sampler: Sampler
    _side: np.ndarray
    _free: list[int]
    _first: dict[int, int]
    _open: dict[int, int]
    _stream_of: dict[int, int]
    _next: int
    _size: int
    _allocate: Callable[[int], np.ndarray]
    _side_start: Callable[[int], int]

    def state_dict(self) -> dict[str, np.ndarray]:
        """The filled part of the arrays, the streams, position, generator and sampler
        state, for checkpoints (format 3)."""
        size = self._size  # slots [0, size) are the filled ones, wrapped or not
        ref, side_obs = compact_side(self.next_kind[:size], self.next_ref[:size], self._side)
        first = sorted(self._first.items())
        return {
            **{name: getattr(self, name)[:size] for name in self._ARRAYS},
            "next_kind": self.next_kind[:size].copy(),
            "next_ref": ref,
            "side_obs": side_obs,
            "open_streams": np.array(sorted(self._open.items()), np.int64).reshape(-1, 2),
            "first_streams": np.array([stream for stream, _ in first], np.int64),
            "first_obs": self._side[np.array([r for _, r in first], np.int64)],
            "format": np.array([STATE_FORMAT], np.int64),
            "position": np.array([self._next, size], dtype=np.int64),
            "rng_state": np.array([repr(self.rng.bit_generator.state)]),
            **{f"sampler/{k}": v for k, v in self.sampler.state_dict().items()},
        }

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`state_dict` returned, or an older rlkit's (upgraded by
        :func:`rlkit.replay.migrate`); ValueError where shapes do not match."""
        state = migrate(state)
        next_index, size = (int(v) for v in state["position"])
        if size > self.capacity:
            raise ValueError(f"replay holds {size} transitions, more than capacity {self.capacity}")
        for name in self._ARRAYS:
            target = getattr(self, name)
            if state[name].shape != (size, *target.shape[1:]):
                raise ValueError(f"replay {name} has shape {state[name].shape}, expected "
                                 f"{(size, *target.shape[1:])}")  # fmt: skip
            target[:size] = state[name]
        side_obs, first_obs = state["side_obs"], state["first_obs"]
        for what, array in (("next observations", side_obs), ("first observations", first_obs)):
            if array.shape[1:] != self.obs.shape[1:]:
                raise ValueError(f"replay {what} have shape {array.shape[1:]}")
        used = len(side_obs) + len(first_obs)
        self._side = self._allocate(max(used, self._side_start(self.capacity)))
        self._side[: len(side_obs)] = side_obs
        self._side[len(side_obs) : used] = first_obs
        self._free = list(range(len(self._side) - 1, used - 1, -1))
        self.next_kind[:size], self.next_ref[:size] = state["next_kind"], state["next_ref"]
        self._first = {int(s): len(side_obs) + k for k, s in enumerate(state["first_streams"])}
        self._open = {int(s): int(i) for s, i in state["open_streams"]}
        self._stream_of = {i: s for s, i in self._open.items()}
        self._next, self._size = next_index, size
        self.rng.bit_generator.state = ast.literal_eval(str(state["rng_state"][0]))
        prefix = "sampler/"
        self.sampler.load_state_dict({k[len(prefix) :]: v for k, v in state.items()
                                      if k.startswith(prefix)})  # fmt: skip
