"""What makes TD3 of DDPG's learner, as parameters (Fujimoto et al. 2018): twin critics (the
smaller target value), target policy smoothing, and actor (and target) updates delayed to
every ``policy_delay`` critic updates. DDPG is the same learner with one critic, no
smoothing and a delay of 1: there is no TD3 branch, only these numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class LearnerTerms:
    """The learner's TD3 parameters; ``LearnerTerms()`` is DDPG.

    ``critics``: 1, or 2 for twin critics. ``policy_delay``: critic updates per actor update.
    ``target_noise`` / ``target_noise_clip``: the smoothing noise's std and clip, as
    fractions of the action half-range (0: none).
    """

    critics: int = 1
    policy_delay: int = 1
    target_noise: float = 0.0
    target_noise_clip: float = 0.0

    @classmethod
    def from_config(cls, config: Any) -> LearnerTerms:
        """TD3's terms from a :class:`~rlkit.agents.ddpg_config.DDPGConfig` with ``td3``,
        else DDPG's."""
        if not config.td3:
            return cls()
        return cls(2, config.policy_delay, config.target_noise, config.target_noise_clip)

    def smoothing_noise(self, rng: np.random.Generator, shape: tuple[int, ...],
                        half_range: np.ndarray) -> np.ndarray:  # fmt: skip
        """The clipped target noise in action units, float32 ``shape`` (``[..., act_dim]``);
        zeros (no draw from ``rng``) without smoothing."""
        if self.target_noise == 0:
            return np.zeros(shape, np.float32)
        noise = np.clip(
            self.target_noise * rng.standard_normal(shape),
            -self.target_noise_clip,
            self.target_noise_clip,
        )
        return (noise * half_range).astype(np.float32)
