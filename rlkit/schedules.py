"""DQN3.0's linear schedules (exploration epsilon, learning rate)."""

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
