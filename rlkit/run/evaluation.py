"""Greedy evaluation: play whole episodes with ``agent.act(obs, explore=False)``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def evaluate(agent, env, episodes: int = 10, seed: int | None = None) -> tuple[float, float]:
    """Mean and standard deviation of the return of ``episodes`` greedy episodes.

    ``seed`` seeds the first reset (later resets continue the env's generator).
    """
    returns = episode_returns(agent, env, episodes, seed)
    return float(np.mean(returns)), float(np.std(returns))


class EvaluationStopped(Exception):
    """A stop was requested (Ctrl-C) in the middle of an evaluation: it was abandoned."""


def episode_returns(
    agent,
    env,
    episodes: int,
    seed: int | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[float]:
    """Returns of ``episodes`` greedy episodes (``agent.act(obs, explore=False)``).

    ``should_stop``: asked before every step; when it says True the evaluation is abandoned
    (:class:`EvaluationStopped`), so that Ctrl-C stops a run after the current step even
    while it evaluates.
    """
    if episodes <= 0:
        raise ValueError(f"episodes must be > 0, got {episodes}")
    returns = []
    obs, _ = env.reset(seed=seed)
    for _ in range(episodes):
        total, done = 0.0, False
        while not done:
            if should_stop is not None and should_stop():
                raise EvaluationStopped
            obs, reward, terminated, truncated, _ = env.step(agent.act(obs, explore=False))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
        obs, _ = env.reset()
    return returns


def episodes_phrase(episodes: int, epsilon: float = 0.0) -> str:
    """``"10 greedy episodes"``, ``"1 greedy episode"``, ``"10 ε-greedy (ε 0.05) episodes"``:
    what an evaluation played, said right."""
    rule = "greedy" if epsilon == 0 else f"ε-greedy (ε {epsilon:g})"
    return f"{episodes} {rule} episode{'' if episodes == 1 else 's'}"
