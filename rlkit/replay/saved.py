"""A replay memory's checkpoint: its filled arrays, its streams, position and generator.

:func:`state_of` is what :meth:`ReplayMemory.state_dict` returns, :func:`restore` puts it
back (:meth:`ReplayMemory.load_state_dict`), states of older rlkit versions included.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rlkit.replay.memory import ReplayMemory

LINKED, STORED = 0, 1  # (as rlkit.replay.memory)
#: the layout's version: 1 kept next_obs as a second full array (before the side store),
#: 2 streams implicitly (before observe_first: no first_obs), 3 today
STATE_FORMAT = 3


def state_of(memory: ReplayMemory) -> dict[str, np.ndarray]:
    """The filled part of ``memory``'s arrays and what links them, as arrays.

    The side store is written compacted: ``side_obs[k]`` is the next observation of the
    ``k``-th STORED transition in slot order; ``first_obs[k]`` is the current observation
    of the stream ``first_streams[k]``, started with no transition yet. ``open_streams``
    rows are ``(stream, slot of its newest transition)`` for episodes in progress.
    """
    size = memory._size
    kind, ref = memory.next_kind[:size].copy(), memory.next_ref[:size].copy()
    stored = np.flatnonzero(kind == STORED)
    side_obs = memory._side[ref[stored]]
    ref[stored] = np.arange(len(stored))
    first = sorted(memory._first.items())
    # slots [0, size) are the filled ones, whether or not the ring has wrapped
    return {
        **{name: getattr(memory, name)[:size] for name in memory._ARRAYS},
        "next_kind": kind,
        "next_ref": ref,
        "side_obs": side_obs,
        "open_streams": np.array(sorted(memory._open.items()), np.int64).reshape(-1, 2),
        "first_streams": np.array([stream for stream, _ in first], np.int64),
        "first_obs": memory._side[np.array([r for _, r in first], np.int64)],
        "format": np.array([STATE_FORMAT], np.int64),
        "position": np.array([memory._next, size], dtype=np.int64),
        "rng_state": np.array([repr(memory.rng.bit_generator.state)]),
    }


def restore(memory: ReplayMemory, state: dict[str, np.ndarray]) -> None:
    """Put back what :func:`state_of` returned; ValueError where shapes do not match.

    Older states load too: one written before the side store (a ``next_obs`` array) keeps
    each next observation apart, and one written before streams were started explicitly
    (no ``first_obs``) has in progress only the episodes its newest transitions did not end.
    """
    next_index, size = (int(v) for v in state["position"])
    if size > memory.capacity:
        raise ValueError(f"replay holds {size} transitions, more than capacity {memory.capacity}")
    for name in memory._ARRAYS:
        target = getattr(memory, name)
        expected = (size, *target.shape[1:])
        if state[name].shape != expected:
            raise ValueError(f"replay {name} has shape {state[name].shape}, expected {expected}")
        target[:size] = state[name]
    if "next_obs" in state:  # format 1
        side_obs = state["next_obs"]
        kind = np.full(size, STORED, np.int8)
        ref = np.arange(size, dtype=np.int32)
        open_streams = np.zeros((0, 2), np.int64)
    else:
        side_obs, kind, ref = state["side_obs"], state["next_kind"], state["next_ref"]
        open_streams = state["open_streams"]
    first_streams = state.get("first_streams", np.zeros(0, np.int64))
    first_obs = state.get("first_obs", side_obs[:0])
    if "first_obs" not in state:  # format 2 also kept the episodes that had ended
        ended = memory.terminated[:size] | memory.truncated[:size]
        open_streams = [(s, i) for s, i in open_streams if not ended[i]]
    for what, array in (("next observations", side_obs), ("first observations", first_obs)):
        if array.shape[1:] != memory.obs.shape[1:]:
            raise ValueError(f"replay {what} have shape {array.shape[1:]}")
    used = len(side_obs) + len(first_obs)
    memory._side = memory._allocate(max(used, memory._side_start(memory.capacity)))
    memory._side[: len(side_obs)] = side_obs
    memory._side[len(side_obs) : used] = first_obs
    memory._free = list(range(len(memory._side) - 1, used - 1, -1))
    memory.next_kind[:size], memory.next_ref[:size] = kind, ref
    memory._first = {int(s): len(side_obs) + k for k, s in enumerate(first_streams)}
    memory._open = {int(s): int(i) for s, i in open_streams}
    memory._stream_of = {i: s for s, i in memory._open.items()}
    memory._next, memory._size = next_index, size
    memory.rng.bit_generator.state = ast.literal_eval(str(state["rng_state"][0]))
