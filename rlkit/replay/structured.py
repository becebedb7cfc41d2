"""StructuredReplay: a replay memory for ``Dict`` and ``Tuple`` observations.

Each part of the observation is stored in an array of its own, in its own shape and
dtype (an uint8 image part stays uint8 next to a float32 vector part), and
:meth:`~rlkit.replay.memory.ReplayMemory.sample` returns ``obs`` and ``next_obs`` in the
observation's own structure: a dict of ``[B, *part_shape]`` arrays for a ``Dict``, a tuple
for a ``Tuple`` (``[K, B, ...]`` for ``sample(B, K)``).

Everything else is :class:`~rlkit.replay.memory.ReplayMemory`'s: one observation stored
once, a transition's next observation linked to the next transition of its stream's
episode, the last one's kept in the side store (one array per part as well); the same
``state_dict`` with ``obs/<i>``, ``side_obs/<i>`` and ``first_obs/<i>`` for part ``i``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from rlkit.core.structure import DICT, TUPLE, Part, assemble, leaves, parts_of
from rlkit.replay.memory import Batch, ReplayMemory

#: the names of a state_dict's observation arrays, one array per part each
_OBSERVATIONS = ("obs", "side_obs", "first_obs")


class PartArrays:
    """Arrays with a common leading axis, one per part: indexed, assigned and compared
    (``tobytes``) as one array of structured rows.

    ``shape`` is ``(rows, part_shapes)``, so two stores of the same parts compare equal on
    ``shape[1:]``.
    """

    def __init__(self, arrays: Sequence[np.ndarray], parts: tuple[Part, ...]) -> None:
        self.arrays = tuple(arrays)
        self.parts = parts

    @classmethod
    def zeros(cls, rows: int, parts: tuple[Part, ...]) -> PartArrays:
        return cls([np.zeros((rows, *p.shape), p.dtype) for p in parts], parts)

    def _values(self, value) -> Sequence:
        if isinstance(value, PartArrays):
            return value.arrays
        if isinstance(value, Mapping):
            return leaves(self.parts, value)
        return value  # a tuple or list, in part order

    def __getitem__(self, index) -> PartArrays:
        return PartArrays([a[index] for a in self.arrays], self.parts)

    def __setitem__(self, index, value) -> None:
        for array, v in zip(self.arrays, self._values(value), strict=True):
            array[index] = v

    def __len__(self) -> int:
        return len(self.arrays[0])

    def tobytes(self) -> bytes:
        return b"".join(a.tobytes() for a in self.arrays)

    @property
    def shape(self) -> tuple:
        return (len(self), tuple(a.shape[1:] for a in self.arrays))

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays)


class StructuredReplay(ReplayMemory):
    """A :class:`ReplayMemory` for ``Dict`` or ``Tuple`` observations, one array per part.

    Args:
        capacity: the most transitions kept.
        obs_shape, obs_dtype: the shape and dtype of each part, as the observation's
            structure: ``{"position": (2,), "goal": (2,)}`` and ``{"position": np.float32,
            ...}`` for a ``Dict``; tuples for a ``Tuple``.
        action_shape, action_dtype, seed, options: as :class:`ReplayMemory` (``options``:
            ``sampler``, ``n_step``, ``gamma``).

    Attributes:
        obs: a :class:`PartArrays`; ``obs.arrays[i]`` is part ``i``'s ``[capacity, *shape]``.
        parts: the parts, in order (a ``Dict`` space's key order).
        kind: ``"dict"`` or ``"tuple"``.
    """

    def __init__(
        self,
        capacity: int,
        obs_shape: Mapping[str, tuple[int, ...]] | tuple[tuple[int, ...], ...],
        obs_dtype: Mapping[str, Any] | tuple[Any, ...],
        action_shape: tuple[int, ...] = (),
        action_dtype: Any = np.int64,
        seed: int | Sequence[int] | None = None,
        **options: Any,
    ) -> None:
        if isinstance(obs_shape, Mapping):
            self.kind = DICT
            keys: list = list(obs_shape)
        else:
            self.kind, keys = TUPLE, list(range(len(obs_shape)))
        self.parts = tuple(Part(k, tuple(obs_shape[k]), np.dtype(obs_dtype[k])) for k in keys)
        # the parts' shapes and dtypes where ReplayMemory takes one: only _allocate reads them,
        # and it is this class's
        super().__init__(capacity, obs_shape, obs_dtype, action_shape, action_dtype, seed,  # type: ignore[arg-type]
                         **options)  # fmt: skip

    # PartArrays stands in for ReplayMemory's observation array (indexed, assigned and
    # compared as one), so each store and row of it is one where the base has an array
    def _allocate(self, rows: int) -> PartArrays:  # type: ignore[override]
        return PartArrays.zeros(rows, self.parts)

    @classmethod
    def from_spaces(cls, capacity: int, observation_space, action_space,
                    seed=None) -> StructuredReplay:  # fmt: skip
        """Size the arrays from a ``Dict`` or ``Tuple`` observation space (``Box`` and
        ``Discrete`` parts) and an action space."""
        kind, parts = parts_of(observation_space, "StructuredReplay")
        return cls(
            capacity,
            assemble(kind, parts, [p.shape for p in parts]),
            assemble(kind, parts, [p.dtype for p in parts]),
            tuple(action_space.shape),
            action_space.dtype,
            seed,
        )

    @staticmethod
    def bytes_needed(capacity: int, obs_shape, obs_dtype, action_shape=(),
                     action_dtype=np.int64) -> int:  # fmt: skip
        """:attr:`nbytes` for these arguments (shapes and dtypes as the constructor's)."""
        keys = list(obs_shape) if isinstance(obs_shape, Mapping) else range(len(obs_shape))
        per_obs = sum(int(np.prod(obs_shape[k], dtype=np.int64)) * np.dtype(obs_dtype[k]).itemsize
                      for k in keys)  # fmt: skip
        rest = ReplayMemory.bytes_needed(capacity, (0,), np.uint8, action_shape, action_dtype)
        return rest + (capacity + ReplayMemory._side_start(capacity)) * per_obs

    def _structure(self, rows: PartArrays) -> dict | tuple:
        return assemble(self.kind, self.parts, rows.arrays)

    @property
    def next_obs(self) -> dict | tuple:  # type: ignore[override]  # (the observation's structure)
        """Every slot's next observation, one ``[capacity, *shape]`` array per part."""
        out = self._allocate(self.capacity)
        out[: self._size] = self._next_obs_of(np.arange(self._size))
        return self._structure(out)

    def _rows(self, obs) -> PartArrays:
        """A batch (``[N, ...]`` per part, as a dict or tuple) as rows ``j`` to index."""
        if isinstance(obs, PartArrays):
            return obs
        return PartArrays(leaves(self.parts, obs), self.parts)

    def _gather(self, idx: np.ndarray, weights: np.ndarray | None = None) -> Batch:
        batch = super()._gather(idx, weights)
        rows, next_rows = batch.obs, batch.next_obs  # PartArrays here (_allocate)
        assert isinstance(rows, PartArrays) and isinstance(next_rows, PartArrays)
        structured: dict[str, Any] = {
            "obs": self._structure(rows),
            "next_obs": self._structure(next_rows),
        }
        return replace(batch, **structured)

    # -- checkpoints -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """:meth:`ReplayMemory.state_dict` with ``obs/<i>``, ``side_obs/<i>`` and
        ``first_obs/<i>`` (part ``i``'s rows) in place of ``obs``, ``side_obs`` and
        ``first_obs``."""
        state: dict[str, Any] = super().state_dict()  # the observations as PartArrays
        for name in _OBSERVATIONS:
            for i, array in enumerate(state.pop(name).arrays):
                state[f"{name}/{i}"] = array
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (the same parts, shapes and dtypes)."""
        state = dict(state)  # (its observations become PartArrays)
        for name in _OBSERVATIONS:
            keys = [f"{name}/{i}" for i in range(len(self.parts))]
            if name == "first_obs" and keys[0] not in state:
                continue  # a state of the format before streams were started explicitly
            if any(key not in state for key in keys) or f"{name}/{len(keys)}" in state:
                raise ValueError(f"replay {name} does not have the {len(keys)} parts expected")
            arrays = [state.pop(key) for key in keys]
            for part, array in zip(self.parts, arrays, strict=True):
                if array.dtype != part.dtype:
                    raise ValueError(f"replay {name} part {part.key!r} has dtype {array.dtype}, "
                                     f"expected {part.dtype}")  # fmt: skip
            state[name] = PartArrays(arrays, self.parts)
        super().load_state_dict(state)
