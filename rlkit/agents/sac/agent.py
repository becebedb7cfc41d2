"""SAC (discrete SAC for Discrete actions: :mod:`rlkit.agents.sac.discrete`).

An acting rule (:class:`~rlkit.agents.sac.acting.SACActing`: samples of the squashed
Gaussian policy) and a learner (:class:`~rlkit.agents.sac.learner.SACLearner`: twin critics
with EMA target shadows, the policy, the learned temperature) joined by the off-policy agent
with its replay memory (:class:`~rlkit.agents.off_policy.OffPolicyAgent`: prioritized replay
and n-step returns included)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rlkit.agents.off_policy import OffPolicyAgent
from rlkit.agents.parts import Parts
from rlkit.agents.sac import config as sac_config
from rlkit.agents.sac.acting import SACActing
from rlkit.agents.sac.config import SACConfig
from rlkit.agents.sac.discrete import CategoricalActing, DiscreteSACLearner
from rlkit.agents.sac.learner import SACLearner
from rlkit.networks.actor_critic import ActionBounds

__all__ = ["SAC"]


class SAC(OffPolicyAgent):
    """Soft Actor-Critic for bounded Box action spaces, and discrete SAC (Christodoulou
    2019) for Discrete ones.

    Args:
        observation_space: ``Box`` (flattened) or ``Discrete`` (one-hot) observations;
            images too with Discrete actions (the Nature CNN; MinAtar's torso).
        action_space: a ``Box`` with finite bounds (any shape; flattened inside), or a
            ``Discrete``.
        config: a :class:`~rlkit.agents.sac.config.SACConfig`; keyword arguments override
            its keys (``ent_coef="auto_0.1"``, ``learning_rate=1e-3``...).
        seed: seeds the weights, replay sampling, warm-up actions and the policy's draws.

    Attributes:
        learner: the :class:`SACLearner` (``actor``, ``critics``, ``log_alpha``, pipelines).
        acting: the :class:`SACActing` rule.
        bounds: the flattened action's box.
        replay: the replay memory; actions stored float32 ``[A]`` in the environment's units.
    """

    learner: SACLearner | DiscreteSACLearner
    acting: SACActing | CategoricalActing

    name = "sac"
    config_class = SACConfig
    accepts_images = True  # (Discrete actions only: check_spaces)
    check_spaces = staticmethod(sac_config.check_spaces)

    @property
    def discrete(self) -> bool:
        """Discrete SAC (a Discrete action space)."""
        return not hasattr(self.action_space, "low")

    def build(self, seed: int) -> Parts:
        """The learner and the acting rule, both drawing from the ``"explore"`` generator."""
        if self.discrete:
            n = int(self.action_space.n)
            return Parts(
                DiscreteSACLearner(self.config, self.obs_format, n, seed),
                CategoricalActing(self.obs_format, n, self.config.learning_starts, self.rng),
                ((), np.int64),
            )
        self.action_shape = tuple(self.action_space.shape)
        self.bounds = ActionBounds(self.action_space.low, self.action_space.high)
        learner = SACLearner(self.config, self.obs_format, self.bounds, seed, self.rng)
        acting = SACActing(self.obs_format, self.bounds, self.action_shape,
                           self.action_space.dtype, self.config, self.rng)  # fmt: skip
        return Parts(learner, acting, ((self.bounds.dim,), np.float32))

    def stored_action(self, action) -> np.ndarray:
        if self.discrete:
            return np.asarray(action, np.int64)
        return np.asarray(action, np.float32).reshape(-1)

    def stored_actions(self, actions) -> np.ndarray:
        if self.discrete:
            return np.asarray(actions, np.int64)
        return np.asarray(actions, np.float32).reshape(len(actions), -1)

    # -- the parts' public faces -------------------------------------------------------------
    @property
    def alpha(self) -> float:
        """The temperature now (learned with ``ent_coef = auto``)."""
        return self.learner.alpha

    @property
    def actor(self):
        """The policy network (:class:`~rlkit.agents.sac.networks.GaussianActor`)."""
        return self.learner.actor

    @property
    def critics(self) -> list:
        """The twin critics."""
        return self.learner.critics

    def critic_target_variables(self, k: int = 0) -> list[tf.Variable]:
        """The target of critic ``k``: EMA shadows of its variables, in the same order."""
        return self.learner.critic_target_variables(k)
