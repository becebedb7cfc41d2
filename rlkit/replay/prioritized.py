"""Proportional prioritized sampling (Schaul et al. 2016) over a replay's slots.

A sampler chooses slots; the replay storage gathers them. This one keeps a priority per slot
in a :class:`~rlkit.replay.sum_tree.SumTree`:

- priority ``p_i = (|delta_i| + epsilon) ** alpha`` (Schaul et al. section 3.3, "proportional");
- sampling probability ``P(i) = p_i / sum_k p_k``, drawn **stratified**: the total is cut into
  ``B`` equal segments and each row of a minibatch draws one uniform target in its own segment
  (Schaul et al. Appendix B.2.1; Dopamine's TF ``SumTree.stratified_sample``);
- importance weights ``w_i = (N P(i)) ** -beta / max_j w_j``, ``N`` the number of slots
  written, the max taken **over the minibatch** (each of the ``K`` minibatches of a
  ``(K, B)`` draw on its own). That is Dopamine's rule (``rainbow_agent.py``: ``loss_weights
  /= jnp.max(loss_weights)``), chosen because it needs no second (min) tree; OpenAI baselines
  divides by the largest weight over the whole memory instead. With the batch max, ``N``
  cancels out, and the largest weight in each minibatch is exactly 1;
- a newly written slot gets the largest priority ever recorded (1.0 before any update):
  Schaul et al. Algorithm 1 line 6, Dopamine's ``max_recorded_priority``.

Dopamine's Rainbow in these terms: ``td_error`` = the per-example cross-entropy,
``alpha = 0.5``, ``epsilon = 1e-10`` (``priorities = sqrt(loss + 1e-10)``) and ``beta = 0.5``
fixed (``1 / sqrt(P)``; the 1e-10 it adds to ``P`` there only guards a division by zero).

Its in-graph twin, :class:`~rlkit.replay.graph_priorities.GraphPrioritized` (the compiled
loop's), is tied to it by ``tests/unit/replay/test_prioritized_twins.py``: the same priorities
and tree from the same TD errors (within 2 float64 ulps: numpy's ``**`` and TensorFlow's
``pow`` round differently), the same slots from the same uniform numbers and tree, the same
weights within one float32 ulp.
"""

from __future__ import annotations

import numpy as np

from rlkit.replay.sum_tree import SumTree


class PrioritizedSampler:
    """Stratified proportional prioritized sampling over slots ``[0, capacity)``.

    Args:
        capacity: the replay's number of slots.
        priority_exponent: ``alpha >= 0`` (0: uniform over the written slots).
        importance_exponent: ``beta`` in ``[0, 1]`` (0: all weights 1; 1: full correction).
            An attribute: the agent anneals it (Schaul et al.: ``beta_0 -> 1``).
        epsilon: ``> 0``, added to ``|delta|`` so that no written slot has probability 0.

    Raises:
        ValueError: a parameter out of range, naming it.
    """

    def __init__(
        self,
        capacity: int,
        priority_exponent: float = 0.5,
        importance_exponent: float = 0.5,
        epsilon: float = 1e-10,
    ) -> None:
        if not float(priority_exponent) >= 0.0:
            raise ValueError(f"priority_exponent (alpha) must be >= 0, got {priority_exponent}")
        if not float(epsilon) > 0.0:
            raise ValueError(f"epsilon must be > 0, got {epsilon}")
        self._tree = SumTree(capacity)
        self._pending: list[np.ndarray] = []  # slots written since the tree was last touched
        self.priority_exponent = float(priority_exponent)
        self.epsilon = float(epsilon)
        self.importance_exponent = importance_exponent

    @property
    def importance_exponent(self) -> float:
        """``beta``, settable (annealed by the agent), checked to lie in ``[0, 1]``."""
        return self._importance_exponent

    @importance_exponent.setter
    def importance_exponent(self, beta: float) -> None:
        if not 0.0 <= float(beta) <= 1.0:
            raise ValueError(f"importance_exponent (beta) must lie in [0, 1], got {beta}")
        self._importance_exponent = float(beta)

    def priority(self, td_errors: np.ndarray) -> np.ndarray:
        """``(|td_errors| + epsilon) ** alpha``, float64, the shape of ``td_errors``."""
        magnitude = np.abs(np.asarray(td_errors, dtype=np.float64)) + self.epsilon
        return magnitude**self.priority_exponent

    @property
    def tree(self) -> SumTree:
        """The sum tree of priorities, with every slot written so far in it."""
        if self._pending:
            slots = np.concatenate(self._pending)
            self._pending.clear()
            top = self._tree.max_recorded
            self._tree.set(slots, top if top > 0.0 else 1.0)
        return self._tree

    def written(self, slots: np.ndarray) -> None:
        """New transitions were just written to ``slots``: each gets the largest priority
        recorded so far (1.0 before any), so that it is sampled at least once soon.

        The slots wait in a list until the tree is next read (a draw, an update, a
        checkpoint): one tree update per block of steps instead of one per step. The
        largest priority recorded cannot change in between (only an update changes it, and
        an update reads the tree first), so each slot gets exactly the value it would have
        got at once."""
        self._pending.append(np.asarray(slots))

    def update_priorities(self, slots: np.ndarray, td_errors: np.ndarray) -> None:
        """Set the priorities of ``slots`` from their TD errors (same shape, any shape).

        A slot drawn twice in one call keeps the value of its last occurrence (flattened
        order); Dopamine's tree keeps the first. Both are one transition's errors from one
        network, so they differ only where the loss itself is random (noisy nets, IQN's taus).

        Raises:
            ValueError: a TD error that is NaN or infinite (it would poison the whole tree).
        """
        td_errors = np.asarray(td_errors, dtype=np.float64)
        if not np.all(np.isfinite(td_errors)):
            raise ValueError("td_errors must be finite to become priorities")
        slots = np.asarray(slots)
        if slots.shape != td_errors.shape:
            raise ValueError(f"slots {slots.shape} and td_errors {td_errors.shape} differ")
        self.tree.set(slots, self.priority(td_errors))

    def sample(
        self, rng: np.random.Generator, size: int, shape: tuple[int, ...]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw slots by priority, stratified along the last axis of ``shape``.

        Args:
            rng: the replay's generator (one ``rng.random(shape)`` call per draw).
            size: the number of written slots ``N``: every slot drawn lies in ``[0, size)``.
            shape: ``(B,)`` for one minibatch or ``(K, B)`` for K minibatches drawn before any
                priority is updated, each stratified over the whole total.

        Returns:
            ``indices`` int64 ``shape`` and importance ``weights`` float32 ``shape`` (the
            largest weight of each minibatch is 1).

        Raises:
            ValueError: nothing written yet, or a slot with priority at or past ``size``.
        """
        shape = tuple(int(n) for n in shape)
        batch = shape[-1]
        total = self.tree.total
        if total <= 0.0:
            raise ValueError("no transitions written: cannot sample by priority")
        # row b of each minibatch: a target uniform in [b, b + 1) * total / B
        strata = (np.arange(batch, dtype=np.float64) + rng.random(shape)) * (total / batch)
        targets = np.minimum(strata, np.nextafter(total, 0.0))
        indices = self.tree.find(targets)
        if indices.max() >= size:
            raise ValueError(
                f"slot {int(indices.max())} has a priority but only {size} slots are written"
            )
        return indices, self.weights(indices, size)

    def weights(self, slots: np.ndarray, size: int) -> np.ndarray:
        """``(N P(i)) ** -beta`` over its largest along the last axis (each minibatch's),
        float32 in the slots' shape; ``N = size``."""
        probabilities = self.tree.get(slots) / self.tree.total
        weights = (size * probabilities) ** -self._importance_exponent
        weights /= weights.max(axis=-1, keepdims=True)
        return weights.astype(np.float32)

    def state_dict(self) -> dict[str, np.ndarray]:
        """The sum tree's arrays (the exponents are configuration, not state)."""
        return {f"tree_{k}": v for k, v in self.tree.state_dict().items()}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore a :meth:`state_dict`, bit for bit."""
        self._pending.clear()
        self._tree.load_state_dict({k[len("tree_") :]: v for k, v in state.items()})
