"""DQN, faithful to DeepMind's DQN3.0: epsilon-greedy acting joined with DQN3.0's learner.

The learner (:class:`~rlkit.agents.dqn.learner.DQNLearner`) injects the clipped TD error
``delta`` as the output gradient of the Q network, in blocks of ``gradient_steps``
updates inside one compiled ``tf.function`` (optionally XLA), and copies the target
network every ``target_update`` steps. Acting (:class:`~rlkit.agents.dqn.acting.
EpsilonGreedy`) reads a numpy copy of the weights refreshed after each block, so no
TensorFlow call happens per environment step (one compiled call for a convolutional or
structured network, only when the action is greedy).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import tensorflow as tf

from rlkit.agents.dqn import config as dqn_config
from rlkit.agents.dqn.acting import EpsilonGreedy
from rlkit.agents.dqn.config import DQNConfig, anneal_start
from rlkit.agents.dqn.heads import ScalarHead, ValueHead
from rlkit.agents.dqn.learner import DQNLearner
from rlkit.agents.off_policy import OffPolicyAgent
from rlkit.agents.parts import Parts
from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.schedules import dqn3_epsilon
from rlkit.learn.gradients import UpdatePipeline
from rlkit.networks.custom import GIVEN_IN_PYTHON, KerasQNetwork
from rlkit.networks.q_network import QNetwork
from rlkit.replay.frames import FrameReplay
from rlkit.replay.memory import Batch, ReplayMemory
from rlkit.replay.structured import StructuredReplay


class DQN(OffPolicyAgent):
    """Deep Q-Network agent for discrete action spaces.

    Args:
        observation_space: ``Box`` vectors (flattened), ``[H, W, C]`` images (a Nature CNN
            torso; uint8 divided by 255 inside the network) or ``Discrete`` (one-hot); or a
            ``Dict`` or ``Tuple`` of ``Box`` and ``Discrete`` parts with a ``q_network`` of
            one's own that takes that structure (:mod:`rlkit.networks.structured`).
        action_space: ``Discrete(n)``.
        config: a :class:`DQNConfig`; keyword arguments override its keys.
        seed: seeds weight initialisation, replay sampling and exploration.

    Attributes:
        learner: the :class:`~rlkit.agents.dqn.learner.DQNLearner`.
        acting: the :class:`~rlkit.agents.dqn.acting.EpsilonGreedy` rule.
        num_actions: ``n``, the Q-network's outputs.
        eval_rng: the ``"evaluate"`` generator (``eval_epsilon``'s draws).
    """

    name = "dqn"
    config_class = DQNConfig
    accepts_images = True
    accepts_structured = True
    learner: DQNLearner
    acting: EpsilonGreedy

    def __init__(
        self, observation_space, action_space, config=None, seed: int = 0, q_network=None,
        loss=None, torso=None, **overrides,
    ) -> None:  # fmt: skip
        """``q_network``: your own network (see :mod:`rlkit.networks.custom`): a Keras
        model, a builder ``(observation_space, action_space) -> keras.Model``, or the name
        of an importable builder (``"package.module:function"``, kept in the config).
        ``torso``: a torso of your own under rlkit's hidden layers and head, given the same
        ways (``[B, *obs_shape] -> [B, D]``, :mod:`rlkit.networks.user_torso`), or the name
        of rlkit's (``"auto"``, ``"nature"``, ``"minatar"``).
        ``loss``: a config name (``"dqn3"``, ``"huber"``, ``"mse"``) or a loss of your own,
        any callable with the signature of :class:`~rlkit.learn.value_losses.ValueLoss`."""
        self._q_network = q_network
        if q_network is not None:
            overrides["q_network"] = q_network if isinstance(q_network, str) else GIVEN_IN_PYTHON
        self._torso = None if torso is None or isinstance(torso, str) else torso
        if torso is not None:
            overrides["torso"] = torso if isinstance(torso, str) else GIVEN_IN_PYTHON
        self._loss = None if loss is None or isinstance(loss, str) else loss
        if loss is not None:
            overrides["loss"] = loss if isinstance(loss, str) else GIVEN_IN_PYTHON
        super().__init__(observation_space, action_space, config, seed, **overrides)

    check_spaces = staticmethod(dqn_config.check_spaces)

    def replay_class(self) -> type[ReplayMemory]:
        """A frame replay (each frame stored once) when ``frame_stack`` says the observations
        are stacks of frames; one array per part for Dict and Tuple observations."""
        if self.obs_format.parts:
            return StructuredReplay
        return FrameReplay if self.config.frame_stack else ReplayMemory

    def build(self, seed: int) -> Parts:
        """DQN3.0's learner and its epsilon-greedy acting; actions stored as int64 from 0."""
        cfg = self.config
        if cfg.frame_stack and self.obs_format.kind != "image":
            raise UsageError(
                "frame_stack needs image observations [H, W, frames] (e.g. an ALE/* id)"
            )
        self.num_actions = int(self.action_space.n)
        self._action_start = int(self.action_space.start)
        learner = self.make_learner(seed)
        self.eval_rng = seeding.generator(seed, "evaluate")  # eval_epsilon's draws
        epsilon = epsilon_schedule(cfg)
        acting = EpsilonGreedy(self.obs_format, self.num_actions, epsilon, self.rng,
                               cfg.eval_epsilon, self.eval_rng, self._action_start)  # fmt: skip
        return Parts(learner, acting, ((), np.int64))

    def make_learner(self, seed: int) -> DQNLearner:
        """The learner (IQN's draws fractions: :mod:`rlkit.agents.dqn.iqn`)."""
        return DQNLearner(self.config, self.obs_format, self.observation_space,
                          self.action_space, seed, self._q_network, self._loss,
                          self.value_head(), self._torso)  # fmt: skip

    def python_networks(self) -> dict:
        networks = {}
        if self.config.q_network == GIVEN_IN_PYTHON:
            networks["q_network"] = self.learner.q.model
        if self.config.torso == GIVEN_IN_PYTHON:  # (then rlkit's QNetwork holds it)
            networks["torso"] = getattr(self.learner.q, "user_torso", None)
        return networks

    def value_head(self) -> ValueHead:
        """What the network outputs per action: one Q-value (a distribution for C51 and
        QR-DQN, :mod:`rlkit.agents.dqn.distributional`)."""
        return ScalarHead()

    def stored_action(self, action) -> int:
        return int(action) - self._action_start

    def stored_actions(self, actions) -> np.ndarray:
        return np.asarray(actions) - self._action_start

    # -- the parts' members, as the agent's ---------------------------------------------------
    @property
    def q(self) -> QNetwork | KerasQNetwork:
        """The online Q-network (``QNetwork`` or a user's ``KerasQNetwork``; ``.model``)."""
        return self.learner.q

    @property
    def q_target(self) -> QNetwork | KerasQNetwork:
        """The target Q-network."""
        return self.learner.q_target

    @property
    def pipeline(self) -> UpdatePipeline:
        """The online network's update pipeline (``pipeline.process``: the transforms)."""
        return self.learner.pipeline

    @property
    def epsilon(self) -> float:
        """Exploration rate at the current step (DQN3.0's linear schedule)."""
        return self.acting.schedule(self.num_steps)

    @property
    def learning_rate(self) -> float:
        """Learning rate at the current step (DQN3.0's lr_start -> lr_end annealing)."""
        return self.learner.learning_rate(self.num_steps)

    @property
    def evaluation_epsilon(self) -> float:
        return self.config.eval_epsilon

    def q_values(self, obs) -> np.ndarray:
        """``Q(s, .)`` of the online network as acting sees it: ``[A]`` or ``[N, A]``."""
        return self.acting.policy(self.encode(obs))

    def td_errors(self, batch: Batch) -> np.ndarray:
        """DQN3.0's unclipped ``delta`` for ``batch`` (``[B]``), without updating anything."""
        return self.learner.td_errors(batch)

    def gradients(self, batch: Batch) -> list[tf.Tensor]:
        """The processed gradients one update would apply for ``batch`` (``[B]``), unapplied."""
        return self.learner.gradients(batch)

    def sync_target(self) -> None:
        """Hard-copy the online weights into the target network."""
        self.learner.sync_target()


def epsilon_schedule(config: DQNConfig) -> Callable[[int], float]:
    """``step -> epsilon``: DQN3.0's linear schedule from ``eps_start`` to ``eps_end`` over
    ``eps_anneal_steps`` (a closure over plain numbers: acting reads it every step)."""
    start, end, steps = config.eps_start, config.eps_end, config.eps_anneal_steps
    learn_start = anneal_start(config)
    return lambda step: dqn3_epsilon(step, start, end, steps, learn_start)
