"""The training and evaluation loops shared by every agent."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class TrainHistory:
    """What a training run produced.

    episode_returns / episode_lengths: one entry per finished episode;
    episode_end_steps: the agent step at which each episode ended;
    updates: ``(step, metrics)`` for every update that ran; steps, seconds: totals.
    """

    episode_returns: list[float] = field(default_factory=list)
    episode_lengths: list[int] = field(default_factory=list)
    episode_end_steps: list[int] = field(default_factory=list)
    updates: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    steps: int = 0
    seconds: float = 0.0

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0

    def recent_return(self, window: int = 20) -> float | None:
        """Mean return of the last ``window`` episodes (None before the first ends)."""
        if not self.episode_returns:
            return None
        return float(np.mean(self.episode_returns[-window:]))


Callback = Callable[[int, dict[str, Any], TrainHistory], "bool | None"]


def train(
    agent,
    env,
    steps: int,
    seed: int | None = None,
    callback: Callback | None = None,
    max_episodes: int | None = None,
) -> TrainHistory:
    """Run ``agent`` in ``env`` for ``steps`` environment steps, learning as it goes.

    Training also stops once ``max_episodes`` episodes have finished, if given.

    Each step: ``agent.act(obs)``, ``env.step``, ``agent.observe(...)``, ``agent.update()``.
    ``seed`` (default: the agent's seed) seeds the first ``env.reset``.

    ``callback(step, info, history)`` is called after every step; ``info`` holds
    ``episode_return``/``episode_length`` when an episode just ended and
    ``metrics`` when an update ran. Returning ``False`` stops training early.
    """
    if steps <= 0:
        raise ValueError(f"steps must be > 0, got {steps}")
    if max_episodes is not None and max_episodes <= 0:
        raise ValueError(f"max_episodes must be > 0, got {max_episodes}")
    history = TrainHistory()
    seed = agent.seed if seed is None else seed
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    episode_return, episode_length = 0.0, 0
    start = time.perf_counter()
    for step in range(1, steps + 1):
        action = agent.act(obs)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        agent.observe(obs, action, reward, next_obs, terminated, truncated)
        metrics = agent.update()
        episode_return += float(reward)
        episode_length += 1
        info: dict[str, Any] = {}
        if metrics is not None:
            history.updates.append((step, metrics))
            info["metrics"] = metrics
        if terminated or truncated:
            history.episode_returns.append(episode_return)
            history.episode_lengths.append(episode_length)
            history.episode_end_steps.append(step)
            info["episode_return"], info["episode_length"] = episode_return, episode_length
            episode_return, episode_length = 0.0, 0
            obs, _ = env.reset()
        else:
            obs = next_obs
        history.steps = step
        if callback is not None and callback(step, info, history) is False:
            break
        if max_episodes is not None and len(history.episode_returns) >= max_episodes:
            break
    history.seconds = time.perf_counter() - start
    return history


def evaluate(agent, env, episodes: int = 10, seed: int | None = None) -> tuple[float, float]:
    """Mean and standard deviation of the return of ``episodes`` greedy episodes.

    ``seed`` seeds the first reset (later resets continue the env's generator).
    """
    returns = episode_returns(agent, env, episodes, seed)
    return float(np.mean(returns)), float(np.std(returns))


def episode_returns(agent, env, episodes: int, seed: int | None = None) -> list[float]:
    """Returns of ``episodes`` greedy episodes (``agent.act(obs, explore=False)``)."""
    if episodes <= 0:
        raise ValueError(f"episodes must be > 0, got {episodes}")
    returns = []
    obs, _ = env.reset(seed=seed)
    for _ in range(episodes):
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(agent.act(obs, explore=False))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
        obs, _ = env.reset()
    return returns
