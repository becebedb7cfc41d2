"""Proportional prioritized sampling held in ``tf.Variable``\\ s: used inside a compiled program.

What the compiled training loop (:mod:`rlkit.run.compiled.program`) samples by when a config asks
for prioritized replay: the numpy :class:`~rlkit.replay.sum_tree.SumTree` and
:class:`~rlkit.replay.prioritized.PrioritizedSampler` written in TensorFlow ops, rule for rule:

- the same tree layout (``2 L - 1`` float64 nodes, ``L`` the capacity rounded up to a power of
  two, node ``k``'s children ``2 k + 1`` and ``2 k + 2``), every touched parent *recomputed* as
  ``left + right``, so a tree given the same leaves holds the same nodes bit for bit as the
  numpy one; where a slot repeats in one :meth:`GraphSumTree.set`, its last value wins;
- the search never ends on a leaf of value 0 (it does not step into a right subtree of sum 0,
  which is what the numpy tree's guarded retry gives);
- priority ``(|delta| + epsilon) ** alpha``, new slots at the largest priority ever recorded
  (1.0 before any), draws stratified over the total (row ``b`` of a minibatch uniform in
  ``[b, b + 1) * total / B``), importance weights ``(N P(i)) ** -beta`` over the minibatch's
  largest.

The random numbers are the program's own (stateless seeds), not the numpy sampler's
generator, so a compiled run samples other slots than a Python run of the same seed. Given
the same numbers, both draw the same slots (``tests/unit/replay/test_prioritized_twins.py``;
the tree alone: ``test_graph_priorities.py``); ``tf.pow`` and numpy's ``**`` may round a
priority or weight one float64 ulp apart.

    tree = GraphSumTree(100_000)
    sampler = GraphPrioritized(100_000, priority_exponent=0.5, epsilon=1e-10)
    sampler.written(slots)                            # inside tf.function
    slots, weights = sampler.sample(32, seed, size, beta)   # [1, 32] each: one minibatch
    sampler.update(slots, td_errors)
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


class GraphSumTree:
    """Leaves ``[0, capacity)`` of non-negative float64 values and their partial sums, in
    variables (``nodes`` float64 ``[2 L - 1]``, ``max_recorded`` float64 ``[]``).

    Args:
        capacity: number of leaves, ``>= 1``.
        name: prefix of the variables' names.
    """

    def __init__(self, capacity: int, name: str = "replay_priority") -> None:
        capacity = int(capacity)
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.leaves = 1 << (capacity - 1).bit_length()
        self.depth = self.leaves.bit_length() - 1
        self.first_leaf = self.leaves - 1
        self.nodes = tf.Variable(
            tf.zeros([2 * self.leaves - 1], tf.float64), trainable=False, name=f"{name}_nodes"
        )
        self.max_recorded = tf.Variable(
            tf.constant(0.0, tf.float64), trainable=False, name=f"{name}_max"
        )

    @property
    def total(self) -> tf.Tensor:
        """The sum of all leaves (the root), float64 ``[]``."""
        return self.nodes[0]

    def get(self, indices: tf.Tensor) -> tf.Tensor:
        """The leaf values at int32 ``indices`` (any shape), float64, the same shape."""
        return tf.gather(self.nodes, self.first_leaf + indices)

    def set(self, indices: tf.Tensor, values: tf.Tensor) -> None:
        """Set the leaves ``indices`` (int32 ``[K]``) to ``values`` (float64 ``[K]``, finite,
        ``>= 0``), the last value winning where an index repeats; then recompute each
        ancestor of a touched leaf, one scatter per level."""
        count = tf.shape(indices)[0]
        positions = tf.range(count)
        same = tf.equal(indices[:, None], indices[None, :])  # [K, K]
        # each occurrence takes the value of its index's last occurrence: then a scatter
        # that writes a repeated index several times writes the same value each time
        last = tf.reduce_max(tf.where(same, positions[None, :], -1), axis=1)
        self.max_recorded.assign(tf.maximum(self.max_recorded, tf.reduce_max(values)))
        nodes = self.first_leaf + indices
        self.nodes.scatter_nd_update(nodes[:, None], tf.gather(values, last))
        for _ in range(self.depth):
            nodes = (nodes - 1) // 2
            sums = tf.gather(self.nodes, 2 * nodes + 1) + tf.gather(self.nodes, 2 * nodes + 2)
            self.nodes.scatter_nd_update(nodes[:, None], sums)

    def find(self, targets: tf.Tensor) -> tf.Tensor:
        """int32 leaf index of each float64 target in ``[0, total)``: the ``i`` with
        ``sum(values[:i]) <= t < sum(values[:i + 1])``, never a leaf of value 0."""
        nodes = tf.zeros(tf.shape(targets), tf.int32)
        for _ in range(self.depth):
            left = tf.gather(self.nodes, 2 * nodes + 1)
            right = tf.gather(self.nodes, 2 * nodes + 2)
            go_right = tf.logical_and(targets >= left, right > 0.0)
            targets = tf.where(go_right, targets - left, targets)
            nodes = 2 * nodes + 1 + tf.cast(go_right, tf.int32)
        return nodes - self.first_leaf

    def variables(self) -> dict[str, tf.Variable]:
        """The variables by the name a checkpoint keeps them under."""
        return {"priority_nodes": self.nodes, "priority_max": self.max_recorded}


class GraphPrioritized:
    """Stratified proportional prioritized sampling over slots ``[0, capacity)`` inside a
    graph (see the module's docstring for the rules).

    Args:
        capacity: the replay's number of slots.
        priority_exponent: ``alpha >= 0``.
        epsilon: ``> 0``, added to ``|delta|``.

    Attributes:
        tree: the :class:`GraphSumTree` of priorities.
        nonfinite: int64 variable, TD errors that were NaN or infinite (their slots keep
            their old priority; the loop reads it after each chunk and stops the run).
    """

    def __init__(self, capacity: int, priority_exponent: float, epsilon: float) -> None:
        if not float(priority_exponent) >= 0.0:
            raise ValueError(f"priority_exponent (alpha) must be >= 0, got {priority_exponent}")
        if not float(epsilon) > 0.0:
            raise ValueError(f"epsilon must be > 0, got {epsilon}")
        self.tree = GraphSumTree(capacity)
        self.priority_exponent = float(priority_exponent)
        self.epsilon = float(epsilon)
        self.nonfinite = tf.Variable(
            tf.constant(0, tf.int64), trainable=False, name="replay_priority_nonfinite"
        )

    def priority(self, td_errors: tf.Tensor) -> tf.Tensor:
        """``(|td_errors| + epsilon) ** alpha``, float64, the shape of ``td_errors``."""
        magnitude = tf.abs(tf.cast(td_errors, tf.float64)) + self.epsilon
        return tf.pow(magnitude, self.priority_exponent)

    def written(self, slots: tf.Tensor) -> None:
        """New transitions in ``slots`` (int32 ``[N]``): the largest priority recorded so far,
        1.0 before any."""
        top = self.tree.max_recorded.read_value()
        value = tf.where(top > 0.0, top, tf.constant(1.0, tf.float64))
        self.tree.set(slots, tf.fill(tf.shape(slots), value))

    def update(self, slots: tf.Tensor, td_errors: tf.Tensor) -> None:
        """The priorities of ``slots`` (int32 ``[B]``) from their TD errors ``[B]``; a TD
        error that is NaN or infinite leaves its slot's priority and is counted."""
        finite = tf.math.is_finite(td_errors)
        self.nonfinite.assign_add(tf.reduce_sum(tf.cast(~finite, tf.int64)))
        old = self.tree.get(slots)
        self.tree.set(slots, tf.where(finite, self.priority(td_errors), old))

    def sample(
        self, batch_size: int, seed: tf.Tensor, size: tf.Tensor, beta: tf.Tensor | float,
        minibatches: int = 1,
    ) -> tuple[tf.Tensor, tf.Tensor]:  # fmt: skip
        """Slots int32 ``[K, B]`` drawn by priority for ``K = minibatches`` minibatches (a
        block, drawn before any priority changes, as the numpy sampler's ``(K, B)`` draw),
        each stratified over the whole total, from the stateless ``seed`` (int32 ``[2]``);
        and their importance weights float32 ``[K, B]``, each minibatch's largest 1
        (``size``: slots written, ``N``; ``beta``: the importance exponent)."""
        total = self.tree.total
        shape = [minibatches, batch_size]
        uniform = tf.random.stateless_uniform(shape, seed, dtype=tf.float64)
        strata = (tf.range(batch_size, dtype=tf.float64) + uniform) * (total / batch_size)
        below_total = tf.math.nextafter(total, tf.constant(0.0, tf.float64))
        slots = self.tree.find(tf.minimum(strata, below_total))
        probabilities = self.tree.get(slots) / total
        weights = tf.pow(tf.cast(size, tf.float64) * probabilities, -tf.cast(beta, tf.float64))
        weights /= tf.reduce_max(weights, axis=-1, keepdims=True)
        return slots, tf.cast(weights, tf.float32)

    def variables(self) -> dict[str, tf.Variable]:
        """The variables by the name a checkpoint keeps them under."""
        return {**self.tree.variables(), "priority_nonfinite": self.nonfinite}

    @property
    def nbytes(self) -> int:
        """Bytes the tree takes."""
        return int(np.prod(self.tree.nodes.shape)) * 8 + 16
