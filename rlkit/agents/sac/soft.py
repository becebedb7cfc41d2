"""What SAC's two learners share (:class:`~rlkit.agents.sac.learner.SACLearner` for Box
actions, :class:`~rlkit.agents.sac.discrete.DiscreteSACLearner` for Discrete ones): the
temperature ``alpha = exp(log_alpha)``, the three Adam pipelines, the critics' EMA target
shadows and their cadence, the learning-rate schedule, and what a checkpoint keeps."""

from __future__ import annotations

from typing import Any

import keras
import numpy as np
import tensorflow as tf

from rlkit.agents.parts import Learner
from rlkit.core.schedules import dqn3_linear
from rlkit.learn.gradients import UpdatePipeline
from rlkit.learn.optimizers import make_optimizer
from rlkit.learn.targets import EMAShadows


class SoftLearner(Learner):
    """The parts of a SAC learner beside its networks' own update (a subclass sets
    ``self.config``, ``self.actor`` and ``self.critics``, then calls :meth:`build_soft`).

    Attributes:
        log_alpha: the temperature's log (a variable; fixed when ``ent_coef`` is a number).
        learn_alpha: whether alpha is learned.
        actor_pipeline, critic_pipeline, alpha_pipeline: their update pipelines (Adam).
        targets: the critics' :class:`~rlkit.learn.targets.EMAShadows` (decay ``1 - tau``).
    """

    config: Any
    actor: Any
    critics: list

    def build_soft(self) -> None:
        """alpha, the pipelines and the target shadows, for ``self.actor`` and ``self.critics``."""
        cfg = self.config
        self.learn_alpha, alpha = cfg.temperature()
        self.log_alpha = keras.Variable(
            np.float32(np.log(alpha)), dtype="float32", trainable=self.learn_alpha, name="log_alpha"
        )

        def adam():
            return make_optimizer("adam", cfg.learning_rate, cfg.adam_epsilon)

        self.actor_pipeline = UpdatePipeline(self.actor.variables, adam())
        self.critic_pipeline = UpdatePipeline([v for c in self.critics for v in c.variables],
                                              adam())  # fmt: skip
        self.alpha_pipeline = UpdatePipeline([self.log_alpha], adam())
        self._critic_sources = [[v.value for v in c.variables] for c in self.critics]
        self.targets = EMAShadows([v for vs in self._critic_sources for v in vs], cfg.tau)
        self.num_updates = 0

    @property
    def alpha(self) -> float:
        """The temperature now."""
        return float(np.exp(self.log_alpha.numpy()))

    def critic_target_variables(self, k: int = 0) -> list[tf.Variable]:
        """The target of critic ``k``: EMA shadows of its variables, in the same order."""
        return self.targets.shadows(self._critic_sources[k])

    def update_targets(self, index: tf.Tensor) -> None:
        """Inside a traced update: the targets' EMA step when the update's number ``index``
        (int64, from 0 over the run) is a multiple of ``target_update_interval``."""
        interval = self.config.target_update_interval
        if interval == 1:
            self.targets.update()
        else:
            tf.cond(index % interval == 0, self._update_targets_in_graph, lambda: tf.constant(0))

    def _update_targets_in_graph(self) -> tf.Tensor:
        self.targets.update()
        return tf.constant(0)

    def learning_rate_scale(self, step: int) -> float:
        """What the learning rates are multiplied by at ``step`` (1 when constant)."""
        cfg = self.config
        if cfg.lr_end_fraction < 0:
            return 1.0
        return dqn3_linear(step, 1.0, cfg.lr_end_fraction, cfg.lr_anneal_steps, cfg.learning_starts)

    def schedule_learning_rates(self, step: int) -> None:
        """Set the three learning rates for the block at ``step`` (with a schedule)."""
        cfg = self.config
        if cfg.lr_end_fraction >= 0:
            rate = cfg.learning_rate * self.learning_rate_scale(step)
            for pipeline in (self.actor_pipeline, self.critic_pipeline, self.alpha_pipeline):
                pipeline.optimizer.learning_rate.assign(rate)

    def diagnostics(self, step: int) -> dict[str, float]:
        """alpha, and with a schedule the learning rates' scale at ``step``."""
        out = {"alpha": self.alpha}
        if self.config.lr_end_fraction >= 0:
            out["learning_rate_scale"] = self.learning_rate_scale(step)
        return out

    def variables(self) -> dict[str, list]:
        groups: dict[str, list] = {"actor": self.actor.variables, "log_alpha": [self.log_alpha]}
        for k, critic in enumerate(self.critics):
            groups[f"critic{k}"] = critic.variables
            groups[f"critic{k}_target"] = self.critic_target_variables(k)
        return groups

    def state(self) -> dict[str, dict[str, Any]]:
        """The three optimizers."""
        return {"optimizer": {"actor": self.actor_pipeline.optimizer,
                              "critic": self.critic_pipeline.optimizer,
                              "alpha": self.alpha_pipeline.optimizer}}  # fmt: skip
