"""Schedules: DQN3.0's linear annealing (epsilon, learning rate) and periodic events."""

from __future__ import annotations


def dqn3_linear(step: int, start: float, end: float, anneal_steps: int, learn_start: int) -> float:
    """Linear from ``start`` to ``end`` over ``anneal_steps`` steps after ``learn_start``.

    ``end + max(0, (start - end) * (anneal_steps - max(0, step - learn_start)) / anneal_steps)``,
    DQN3.0's formula for both epsilon (ep_start, ep_end, ep_endt) and the learning
    rate (lr_start, lr_end, lr_endt).
    """
    if anneal_steps <= 0:
        return end
    remaining = anneal_steps - max(0, step - learn_start)
    return end + max(0.0, (start - end) * remaining / anneal_steps)


dqn3_epsilon = dqn3_linear


def blocks_due(before: int, now: int, every: int, start: int) -> int:
    """How many multiples ``m`` of ``every`` satisfy ``before < m <= now`` and ``m >= start``.

    An off-policy agent runs one block of updates per multiple of ``train_freq`` the
    step count passed since its last ``update()`` call, counting only steps from which
    learning was possible (``start``: learning_starts, and a full minibatch stored).
    With one environment and ``update()`` after every step this is DQN3.0's
    ``step % train_freq == 0``.
    """
    if now < start:
        return 0
    return max(0, now // every - max(before, start - 1) // every)


def crossed(before: int, now: int, every: int) -> bool:
    """Did the step count pass a multiple of ``every`` going from ``before`` to ``now``?

    Periodic events (target copies, evaluations, checkpoints) use this rather than
    ``now % every == 0``, so that steps advancing by N (vector envs) miss none.
    """
    return now // every > before // every
