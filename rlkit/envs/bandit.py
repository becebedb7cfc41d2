"""The multi-armed bandit of the discrete policy-gradient source, as a gymnasium environment.

Each arm ``i`` pays a reward drawn from ``Normal(arm_means[i], std)``; every arm
shares the same standard deviation. The observation is always ``[1.0]`` (the
source's fixed state), and every episode is one pull: ``step`` always returns
``terminated=True``. The best arm is the one with the largest mean.

    import gymnasium as gym
    env = gym.make("rlkit/MultiArmedBandit-v0", arm_means=[1.0, 0.9, 0.9, 1.0], std=1.0)

The id is registered by :func:`register_envs` (run when ``rlkit`` is imported).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

ENV_ID = "rlkit/MultiArmedBandit-v0"
DEFAULT_ARM_MEANS = (0.5, 1.0, 2.0, 1.5)
OBSERVATION = np.ones(1, dtype=np.float32)


class MultiArmedBandit(gym.Env):
    """A ``len(arm_means)``-armed bandit with Gaussian rewards and a constant observation.

    Args:
        arm_means: mean reward of each arm (reward units); at least one arm.
        std: standard deviation shared by every arm's reward (reward units, >= 0).

    Spaces: observation ``Box(1, 1, (1,), float32)`` (always ``[1.0]``); action
    ``Discrete(len(arm_means))``. ``info`` of a step holds the pulled arm's mean
    (``arm_mean``) and the expected regret of the pull (``regret``, best mean minus it).
    """

    metadata: dict[str, Any] = {"render_modes": []}
    action_space: gym.spaces.Discrete

    def __init__(self, arm_means: Sequence[float] = DEFAULT_ARM_MEANS, std: float = 1.0) -> None:
        means = np.asarray(arm_means, dtype=np.float64).reshape(-1)
        if means.size == 0:
            raise ValueError("a bandit needs at least one arm (arm_means is empty)")
        if not np.all(np.isfinite(means)):
            raise ValueError(f"arm_means must be finite, got {list(arm_means)}")
        if not (np.isfinite(std) and std >= 0):
            raise ValueError(f"std must be a finite number >= 0, got {std}")
        self.arm_means = means
        self.std = float(std)
        self.observation_space = gym.spaces.Box(1.0, 1.0, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(means.size)

    @property
    def best_arm(self) -> int:
        """Index of the arm with the largest mean (the first one on ties)."""
        return int(np.argmax(self.arm_means))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        return OBSERVATION.copy(), {}

    def step(self, action) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        arm = int(action)
        if not self.action_space.contains(arm):
            raise ValueError(f"arm {action!r} is not one of 0..{self.action_space.n - 1}")
        mean = self.arm_means[arm]
        reward = float(self.np_random.normal(mean, self.std))
        info = {"arm_mean": float(mean), "regret": float(self.arm_means.max() - mean)}
        return OBSERVATION.copy(), reward, True, False, info


def register_envs() -> None:
    """Register ``rlkit/MultiArmedBandit-v0`` with gymnasium (a no-op if already there)."""
    if ENV_ID not in gym.registry:
        # the passive checker would warn that the constant Box has low == high: it is meant to
        gym.register(
            id=ENV_ID, entry_point="rlkit.envs.bandit:MultiArmedBandit", disable_env_checker=True
        )


register_envs()
