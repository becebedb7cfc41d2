"""What makes TD3 of DDPG's learner, as parameters (Fujimoto et al. 2018): twin critics (the
smaller target value), target policy smoothing, and actor (and target) updates delayed to
every ``policy_delay`` critic updates. DDPG is the same learner with one critic, no
smoothing and a delay of 1: there is no TD3 branch, only these numbers.

Both loops read them here: the Python loop's learner (:mod:`rlkit.agents.ddpg.learner`) and
the compiled loop's (:mod:`rlkit.run.compiled.ddpg`) place the actor steps by
:meth:`LearnerTerms.actor_due` and count them by :meth:`LearnerTerms.actor_updates`; the
smoothing noise has a twin in the graph, :meth:`LearnerTerms.graph_smoothing_noise`, equal to
:meth:`LearnerTerms.smoothing_noise` on the same normals to float32's rounding
(``tests/unit/agents/test_td3_twins.py``, which also runs both loops' update code on the same
blocks and requires the same actor steps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf


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
        """TD3's terms from a :class:`~rlkit.agents.ddpg.config.DDPGConfig` with ``td3``,
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

    def graph_smoothing_noise(self, seed: tf.Tensor, shape: list[int],
                              half_range: tf.Tensor) -> tf.Tensor:  # fmt: skip
        """:meth:`smoothing_noise` in the graph: float32 ``shape`` (``[B, act_dim]``) from
        standard normals drawn from the stateless ``seed`` (int32 ``[2]``; float32, where
        the numpy twin computes in float64), times ``half_range`` float32 ``[act_dim]``;
        zeros (no draw) without smoothing."""
        if self.target_noise == 0:
            return tf.zeros(shape)
        noise = self.target_noise * tf.random.stateless_normal(shape, seed)
        clip = self.target_noise_clip
        return tf.clip_by_value(noise, -clip, clip) * half_range

    def actor_due(self, critic_updates: Any) -> Any:
        """Whether an actor step (and the targets' step) follows the critic update that made
        ``critic_updates`` critic updates over the run (int64 tensor, or int): every
        ``policy_delay``-th. A bool tensor (or bool) of its shape."""
        return critic_updates % self.policy_delay == 0

    def actor_updates(self, before: int, after: int) -> int:
        """The actor steps :meth:`actor_due` places among the critic updates ``before + 1
        ... after`` (counts over the run)."""
        return after // self.policy_delay - before // self.policy_delay
