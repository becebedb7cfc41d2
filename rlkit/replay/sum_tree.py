"""A sum tree in numpy: many leaves set and many prefix sums searched in one call each.

The tree behind proportional prioritized replay (Schaul et al. 2016, Appendix B.2.1; Dopamine's
``dopamine/jax/replay_memory/sum_tree.py``). Leaves hold non-negative values (priorities); every
inner node holds the sum of its two children, so the root is the total and a prefix-sum search
from the root finds, for a target ``t`` in ``[0, total)``, the leaf ``i`` with
``sum(values[:i]) <= t < sum(values[:i + 1])``: drawing ``t`` uniformly picks leaf ``i`` with
probability ``values[i] / total``.

Layout: one float64 array of ``2 L - 1`` nodes, ``L`` the capacity rounded up to a power of two;
node ``k`` has children ``2 k + 1`` and ``2 k + 2``; leaf ``i`` is node ``L - 1 + i``; the
padding leaves past the capacity stay 0. Both :meth:`SumTree.set` and :meth:`SumTree.find` loop
over the ``log2 L`` levels only, never over the indices.

Unlike Dopamine's tree (which adds deltas up the path), :meth:`SumTree.set` *recomputes* each
touched parent as ``left + right``. So every inner node is exactly the float64 sum of its
children whatever the history of updates (no drift from adding and subtracting deltas), the
tree is a pure function of its leaves, and a reloaded tree is bit-identical.
"""

from __future__ import annotations

import numpy as np


class SumTree:
    """Leaves ``[0, capacity)`` of non-negative float64 values and their partial sums.

    Args:
        capacity: number of leaves, ``>= 1``.
    """

    def __init__(self, capacity: int) -> None:
        capacity = int(capacity)
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._leaves = 1 << (capacity - 1).bit_length()  # L: a power of two >= capacity
        self._depth = self._leaves.bit_length() - 1  # levels below the root: log2 L
        self._first_leaf = self._leaves - 1
        self._nodes = np.zeros(2 * self._leaves - 1, dtype=np.float64)
        self._max_recorded = 0.0

    @property
    def total(self) -> float:
        """The sum of all leaves (the root)."""
        return float(self._nodes[0])

    @property
    def max_recorded(self) -> float:
        """The largest value ever set on any leaf (0.0 before the first set): it never
        decreases, even when the leaf that held it is overwritten (Schaul et al.'s
        ``max_i p_i`` over all transitions seen, Dopamine's ``max_recorded_priority``)."""
        return self._max_recorded

    def get(self, indices: np.ndarray) -> np.ndarray:
        """The leaf values at ``indices`` (any shape), float64, same shape."""
        indices = self._checked_indices(indices)
        return self._nodes[self._first_leaf + indices]

    def values(self) -> np.ndarray:
        """A copy of all ``capacity`` leaf values, float64 ``[capacity]``."""
        return self._nodes[self._first_leaf : self._first_leaf + self.capacity].copy()

    def set(self, indices: np.ndarray, values: np.ndarray | float) -> None:
        """Set the leaves ``indices`` to ``values`` (same shape, or ``values`` a scalar).

        Where an index repeats, the last of its values in flattened order wins. Runs in
        ``O(len(indices) log capacity)`` with one numpy pass per tree level.

        Raises:
            ValueError: an index outside ``[0, capacity)``, or a value negative or not finite.
        """
        indices = self._checked_indices(indices)
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), indices.shape)
        indices, values = indices.reshape(-1), values.reshape(-1)
        if indices.size == 0:
            return
        if not np.all(np.isfinite(values)) or np.any(values < 0.0):
            raise ValueError("sum tree values must be finite and >= 0")
        # keep the last occurrence of each index: unique over the reversed array
        reversed_unique, first_in_reversed = np.unique(indices[::-1], return_index=True)
        last = indices.size - 1 - first_in_reversed
        nodes = self._first_leaf + reversed_unique
        self._nodes[nodes] = values[last]
        self._max_recorded = max(self._max_recorded, float(values.max()))
        # children of node k are rows k of nodes[1:] as pairs: (2k + 1, 2k + 2). A parent
        # reached twice is assigned the same sum twice: no need to drop repeats
        pairs = self._nodes[1:].reshape(-1, 2)
        for _ in range(self._depth):
            nodes = (nodes - 1) >> 1
            self._nodes[nodes] = pairs[nodes].sum(axis=1)

    def find(self, targets: np.ndarray) -> np.ndarray:
        """The leaf index of each target's prefix sum, int64, the shape of ``targets``.

        For ``t`` in ``[0, total)``: the ``i`` with ``sum(values[:i]) <= t < sum(values[:i+1])``.
        The search never ends on a leaf of value 0: where float rounding would step into an
        empty right subtree it stays left, so every index found has a positive value.

        Raises:
            ValueError: the tree is empty (total 0), or a target outside ``[0, total)``.
        """
        targets = np.array(targets, dtype=np.float64)  # a copy: reduced in place below
        total = self._nodes[0]
        if total <= 0.0:
            raise ValueError("cannot search an empty sum tree (total 0)")
        if targets.size and not (np.all(targets >= 0.0) and np.all(targets < total)):
            raise ValueError(f"targets must lie in [0, {total!r})")
        leaves = self._descend(targets, guarded=False)
        empty = self._nodes[self._first_leaf + leaves] <= 0.0
        if np.any(empty):  # rare: rounding stepped into an empty subtree; redo those, guarded
            leaves[empty] = self._descend(targets[empty], guarded=True)
        return leaves

    def _descend(self, targets: np.ndarray, guarded: bool) -> np.ndarray:
        """The prefix-sum descent, one numpy pass per level. ``guarded``: never step into a
        right subtree of sum 0 (so the leaf reached is positive, whatever the rounding)."""
        nodes = np.zeros(targets.shape, dtype=np.int64)
        pairs = self._nodes[1:].reshape(-1, 2)
        for _ in range(self._depth):
            children = pairs[nodes]  # [..., 2]: left and right sums
            left_sum = children[..., 0]
            go_right = targets >= left_sum
            if guarded:
                go_right &= children[..., 1] > 0.0
            targets = np.where(go_right, targets - left_sum, targets)
            nodes = 2 * nodes + 1 + go_right
        return nodes - self._first_leaf

    def state_dict(self) -> dict[str, np.ndarray]:
        """The tree's state as numpy arrays (copies): ``capacity`` int64 ``[]``, ``nodes``
        float64 ``[2 L - 1]`` and ``max_recorded`` float64 ``[]`` (0-d arrays: as written to
        and read from a checkpoint's npz)."""
        return {
            "capacity": np.array(self.capacity, np.int64),
            "nodes": self._nodes.copy(),
            "max_recorded": np.array(self._max_recorded, np.float64),
        }

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore a :meth:`state_dict` of a tree of the same capacity, bit for bit.

        Raises:
            ValueError: the saved nodes do not fit this tree's capacity.
        """
        nodes = np.asarray(state["nodes"])
        saved = int(state["capacity"])
        if saved != self.capacity or nodes.shape != self._nodes.shape or nodes.dtype != np.float64:
            raise ValueError(
                f"a saved sum tree of capacity {saved} ({nodes.dtype}{list(nodes.shape)}) does "
                f"not fit this tree of capacity {self.capacity} (float64[{self._nodes.size}])"
            )
        self._nodes = nodes.copy()
        self._max_recorded = float(state["max_recorded"])

    def _checked_indices(self, indices: np.ndarray) -> np.ndarray:
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            raise ValueError(f"sum tree indices must be integers, got {indices.dtype}")
        indices = indices.astype(np.int64, copy=False)
        if indices.size and (indices.min() < 0 or indices.max() >= self.capacity):
            raise ValueError(f"sum tree indices must lie in [0, {self.capacity})")
        return indices
