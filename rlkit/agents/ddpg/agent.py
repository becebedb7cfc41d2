"""DDPG and TD3: an acting rule (:class:`~rlkit.agents.ddpg.acting.NoisyActing`: the
actor's action plus exploration noise) and a learner
(:class:`~rlkit.agents.ddpg.learner.DDPGLearner`: actor, critics, EMA target networks, the
compiled update) joined by the agent with its replay memory
(:class:`~rlkit.agents.off_policy.OffPolicyAgent`).

The target networks *are* ``tf.train.ExponentialMovingAverage`` shadows, as in the TF1
DDPG this follows: ``ema.apply`` runs after every actor step inside the compiled update,
and the target actor and critic are the online Keras models run on the shadow variables.
Critic: ``y = stop_gradient(r + gamma (1 - terminated) Q'(s2, mu'(s2)))`` (time-limit
truncation still bootstraps), per-example ``(y - Q(s, a))^2`` averaged over the minibatch.
Actor: the gradient of ``-mean Q(s, mu(s))`` w.r.t. the actor's variables only. Each goes
through its own :class:`~rlkit.learn.gradients.UpdatePipeline`.

``td3=True``: twin critics and the smaller of the two target values, target policy
smoothing (clipped Gaussian noise on ``mu'(s2)``) and actor + target updates every
``policy_delay`` critic updates (Fujimoto et al. 2018). These are the learner's
:class:`~rlkit.agents.ddpg.td3.LearnerTerms` (DDPG: one critic, no smoothing, delay 1),
not branches of their own.

Speed: updates run in blocks of ``gradient_steps`` in one compiled ``tf.function``
(optionally XLA); acting uses a numpy copy of the actor refreshed after each block.

``Dict`` and ``Tuple`` observations take an actor and a critic of one's own
(:mod:`rlkit.agents.ddpg.networks`); the replay is then a
:class:`~rlkit.replay.structured.StructuredReplay`, one array per part.
"""

from __future__ import annotations

import warnings

import numpy as np
import tensorflow as tf

from rlkit.agents.ddpg import config as ddpg_config
from rlkit.agents.ddpg.acting import NoisyActing
from rlkit.agents.ddpg.config import DDPGConfig
from rlkit.agents.ddpg.learner import DDPGLearner
from rlkit.agents.off_policy import OffPolicyAgent
from rlkit.agents.parts import Parts
from rlkit.core import seeding
from rlkit.core.errors import RlkitWarning
from rlkit.learn.gradients import UpdatePipeline
from rlkit.learn.losses import bootstrap_target, squared_error
from rlkit.learn.noise import make_noise
from rlkit.networks.actor_critic import ActionBounds, Actor, Critic
from rlkit.networks.custom import GIVEN_IN_PYTHON, KerasActor, KerasCritic
from rlkit.replay.memory import ReplayMemory
from rlkit.replay.structured import StructuredReplay

__all__ = ["DDPG", "bootstrap_target", "squared_error"]


class DDPG(OffPolicyAgent):
    """Deep Deterministic Policy Gradient (optionally TD3) for bounded Box action spaces.

    Args:
        observation_space: ``Box`` (flattened) or ``Discrete`` (one-hot) observations; or a
            ``Dict`` or ``Tuple`` of ``Box`` and ``Discrete`` parts with an actor and a
            critic of one's own that take that structure.
        action_space: a ``Box`` with finite bounds (any shape; flattened inside).
        config: a :class:`DDPGConfig`; keyword arguments override its keys.
        seed: seeds weight initialisation, replay sampling, random actions and noise.

    Attributes:
        learner: the :class:`~rlkit.agents.ddpg.learner.DDPGLearner` (networks, targets,
            update); ``actor``, ``critics``, ``ema``, the pipelines and ``terms`` are its.
        acting: the :class:`~rlkit.agents.ddpg.acting.NoisyActing` rule (``noise`` is its).
        bounds: the flattened action's :class:`~rlkit.networks.actor_critic.ActionBounds`.
        replay: the :class:`~rlkit.replay.memory.ReplayMemory`; actions stored as float32
            ``[act_dim]`` in the environment's units.
    """

    learner: DDPGLearner
    acting: NoisyActing

    name = "ddpg"
    config_class = DDPGConfig
    accepts_structured = True

    def __init__(
        self, observation_space, action_space, config=None, seed: int = 0, actor=None,
        critic=None, **overrides,
    ) -> None:  # fmt: skip
        """``actor`` / ``critic``: networks of your own (see :mod:`rlkit.networks.custom`):
        a Keras model, a builder ``(observation_space, action_space) -> keras.Model``, or the
        name of an importable builder (``"package.module:function"``, kept in the config).
        The actor maps ``[B, obs]`` to ``[B, act_dim]`` in the action's units (acting clips to
        the bounds); the critic takes ``[observation, action]`` and returns ``[B]`` or
        ``[B, 1]``. Their targets are EMA shadows of their variables, as for rlkit's own."""
        self._networks = {"actor": actor, "critic": critic}
        for key, given in self._networks.items():
            if given is not None:
                overrides[key] = given if isinstance(given, str) else GIVEN_IN_PYTHON
        super().__init__(observation_space, action_space, config, seed, **overrides)
        unused = self.config.unused_settings()
        if unused:  # (an old run's saved config may hold them: it still loads)
            warnings.warn(unused, RlkitWarning, stacklevel=2)

    def python_networks(self) -> dict:
        models = {"actor": self.learner.actor.model, "critic": self.learner.critics[0].model}
        return {k: m for k, m in models.items() if getattr(self.config, k) == GIVEN_IN_PYTHON}

    def replay_class(self) -> type[ReplayMemory]:
        """One array per part for Dict and Tuple observations (:class:`StructuredReplay`)."""
        return StructuredReplay if self.obs_format.parts else ReplayMemory

    check_spaces = staticmethod(ddpg_config.check_spaces)

    def build(self, seed: int) -> Parts:
        """The learner (DDPG's or TD3's terms) and the noisy acting rule, both drawing from
        the ``"explore"`` generator (acting: uniform warm-up
        actions; the learner: TD3's target smoothing)."""
        cfg = self.config
        self.action_shape = tuple(self.action_space.shape)
        self.bounds = ActionBounds(self.action_space.low, self.action_space.high)
        spaces = (self.observation_space, self.action_space)
        learner = DDPGLearner(cfg, self.obs_format, spaces, self.bounds, self._networks, seed,
                              self.rng)  # fmt: skip
        noise = make_noise(cfg.noise, (self.bounds.dim,), cfg.noise_scale,
                           seeding.generator(seed, "noise"), cfg.ou_theta, cfg.ou_dt)  # fmt: skip
        acting = NoisyActing(self.obs_format, self.bounds, self.action_shape,
                             self.action_space.dtype, noise, cfg.noise_scale,
                             cfg.learning_starts, self.rng)  # fmt: skip
        return Parts(learner, acting, ((self.bounds.dim,), np.float32))

    def stored_action(self, action) -> np.ndarray:
        return np.asarray(action, np.float32).reshape(-1)

    def stored_actions(self, actions) -> np.ndarray:
        return np.asarray(actions, np.float32).reshape(len(actions), -1)

    # -- the parts' public faces -------------------------------------------------------------
    @property
    def actor(self) -> Actor | KerasActor:
        """``mu(s)``: the learner's actor network, in the bounds' units."""
        return self.learner.actor

    @property
    def critics(self) -> list[Critic | KerasCritic]:
        """The learner's critics: one, two with ``td3``."""
        return self.learner.critics

    @property
    def actor_pipeline(self) -> UpdatePipeline:
        return self.learner.actor_pipeline

    @property
    def critic_pipeline(self) -> UpdatePipeline:
        return self.learner.critic_pipeline

    @property
    def actor_target_variables(self) -> list[tf.Variable]:
        """The target actor: EMA shadows of the actor's variables, in the same order."""
        return self.learner.actor_target_variables

    def critic_target_variables(self, k: int = 0) -> list[tf.Variable]:
        """The target of critic ``k``: EMA shadows of its variables, in the same order."""
        return self.learner.critic_target_variables(k)
