"""Exploration schedules."""

from __future__ import annotations


def dqn3_epsilon(step: int, start: float, end: float, anneal_steps: int, learn_start: int) -> float:
    """DQN3.0's epsilon: linear from ``start`` to ``end`` in ``anneal_steps`` after ``learn_start``.

    ``end + max(0, (start - end) * (anneal_steps - max(0, step - learn_start)) / anneal_steps)``
    """
    if anneal_steps <= 0:
        return end
    remaining = anneal_steps - max(0, step - learn_start)
    return end + max(0.0, (start - end) * remaining / anneal_steps)
