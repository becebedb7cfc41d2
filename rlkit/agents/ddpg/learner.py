"""DDPG's learner, whose target networks *are* ``tf.train.ExponentialMovingAverage`` shadows.

As in the TF1 DDPG this follows (``ema = ExponentialMovingAverage(decay=1 - TAU)``,
``target_update = ema.apply(net)``, the target forward pass built from
``ema.average(var)``), there is no second copy of the networks kept in sync by
hand: ``ema.apply`` runs after every actor step inside the compiled update, and
the target actor and critic are the online Keras models run on the shadow
variables (``model.stateless_call(shadows, [], x)``).

Critic: ``y = stop_gradient(r + pcont Q'(s2, mu'(s2)))`` with ``pcont = gamma (1 -
terminated)`` (``gamma^n`` for n-step returns; time-limit truncation still bootstraps),
per-example ``(y - Q(s, a))^2`` times the importance weight (1 for uniform replay),
averaged over the minibatch; ``y - Q_0(s, a)`` is the TD error a prioritized replay
gets back. Actor: the gradient of ``-mean Q(s, mu(s))`` w.r.t. the actor's variables
only. Each goes through its own :class:`~rlkit.learn.gradients.UpdatePipeline` (own
optimizer and gradient transforms).

TD3 is this learner with other :class:`~rlkit.agents.ddpg.td3.LearnerTerms`: twin critics
(the smaller target value), target policy smoothing (clipped Gaussian noise on ``mu'(s2)``,
drawn in numpy from the agent's ``"explore"`` generator) and actor + target updates every
``policy_delay`` critic updates (DDPG: one critic, no smoothing, delay 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from rlkit.agents.ddpg import networks as ddpg_networks
from rlkit.agents.ddpg.td3 import LearnerTerms
from rlkit.agents.parts import Learner
from rlkit.core.schedules import dqn3_linear
from rlkit.core.spaces import ObservationFormat
from rlkit.learn.compiled import (
    CompiledFunction,
    NestedCompiledFunction,
    block_range,
    pack,
    unpack,
)
from rlkit.learn.gradients import UpdatePipeline, transforms_from_config
from rlkit.learn.losses import bootstrap_target, smooth_target_action, squared_error
from rlkit.learn.optimizers import make_optimizer
from rlkit.learn.targets import EMAShadows
from rlkit.networks.actor_critic import ActionBounds
from rlkit.replay.memory import Batch


class DDPGLearner(Learner):
    """The actor, the critic(s), their EMA targets and the compiled update.

    Args:
        config: a :class:`~rlkit.agents.ddpg.config.DDPGConfig`.
        obs_format: how observations reach the networks.
        spaces: the (observation, action) spaces (the user's network builders take them).
        bounds: the flattened action's box.
        given: ``{"actor": ..., "critic": ...}``: networks given as Python objects, or None.
        seed: seeds the networks' weights.
        rng: TD3's smoothing noise is drawn from it (the agent's ``"explore"`` generator).

    Attributes:
        terms: the :class:`LearnerTerms` (DDPG's or TD3's).
        actor: :class:`~rlkit.networks.actor_critic.Actor`, ``mu(s)`` in the bounds' units
            (or a :class:`~rlkit.networks.custom.KerasActor`).
        critics: ``terms.critics`` critics (rlkit's or the user's).
        actor_pipeline, critic_pipeline: the actor's and the critics' update pipelines.
        ema: the ``tf.train.ExponentialMovingAverage(decay=1 - tau)`` whose shadow
            variables are the target actor and critics.
        num_actor_updates: actor gradient steps (= EMA updates) so far.
    """

    def __init__(
        self,
        config: Any,
        obs_format: ObservationFormat,
        spaces: tuple[Any, Any],
        bounds: ActionBounds,
        given: dict[str, Any],
        seed: int,
        rng: np.random.Generator,
    ) -> None:
        cfg = self.config = config
        self.obs_format, self.bounds, self.rng = obs_format, bounds, rng
        self.terms = LearnerTerms.from_config(cfg)  # DDPG's or TD3's
        self.actor, self.critics = ddpg_networks.networks(
            cfg, obs_format, spaces, bounds, given, self.terms.critics, seed
        )
        self.actor_pipeline = UpdatePipeline(
            self.actor.variables,
            make_optimizer(cfg.actor_optimizer, cfg.actor_learning_rate, cfg.adam_epsilon),
            transforms_from_config(cfg.actor_max_grad_norm),
        )
        self.critic_pipeline = UpdatePipeline(
            [v for critic in self.critics for v in critic.variables],
            make_optimizer(cfg.critic_optimizer, cfg.critic_learning_rate, cfg.adam_epsilon),
            transforms_from_config(cfg.critic_max_grad_norm),
        )
        # The target networks: EMA shadows of the online variables. Keras 3 variables
        # wrap a tf.Variable (``.value``); the EMA tracks those. The first ``apply``
        # creates the shadows initialised to the online weights (and leaves them so).
        self._actor_sources = [v.value for v in self.actor.variables]
        self._critic_sources = [[v.value for v in c.variables] for c in self.critics]
        self.targets = EMAShadows(
            self._actor_sources + [v for vs in self._critic_sources for v in vs], cfg.tau
        )
        self.ema = self.targets.ema
        self.num_updates = 0
        self.num_actor_updates = 0
        compiled = NestedCompiledFunction if obs_format.parts else CompiledFunction
        self._train_block = compiled(self._train_block_graph, cfg.jit_compile)
        self._update_targets = tf.function(self.targets.update)
        self._actor_weights = None  # the actor's weights as the last block returned them
        self._zeros: dict[tuple, tf.Tensor] = {}  # DDPG's smoothing "noise", by shape

    # -- target networks -------------------------------------------------------------------
    @property
    def actor_target_variables(self) -> list[tf.Variable]:
        """The target actor: EMA shadows of the actor's variables, in the same order."""
        return self.targets.shadows(self._actor_sources)

    def critic_target_variables(self, k: int = 0) -> list[tf.Variable]:
        """The target of critic ``k``: EMA shadows of its variables, in the same order."""
        return self.targets.shadows(self._critic_sources[k])

    def target_action(self, obs: tf.Tensor) -> tf.Tensor:
        """``mu'(s)``: the actor run on its EMA shadow weights, ``[B, act_dim]``."""
        action, _ = self.actor.model.stateless_call(self.actor_target_variables, [], obs)
        return action

    def target_q(self, obs: tf.Tensor, actions: tf.Tensor, k: int = 0) -> tf.Tensor:
        """``Q'_k(s, a)``: critic ``k`` run on its EMA shadow weights, ``[B]``."""
        q, _ = self.critics[k].model.stateless_call(
            self.critic_target_variables(k), [], [obs, actions]
        )
        return q

    def update_targets(self) -> None:
        """One EMA step outside training: ``shadow <- decay * shadow + (1 - decay) * w``."""
        self._update_targets()

    def learning_rate_scale(self, step: int) -> float:
        """What both learning rates are multiplied by at step ``step``: 1 falling linearly to
        ``lr_end_fraction`` over ``lr_anneal_steps`` steps after ``learning_starts``
        (DQN3.0's formula, :func:`rlkit.core.schedules.dqn3_linear`); 1 when off."""
        cfg = self.config
        if cfg.lr_end_fraction < 0:
            return 1.0
        return dqn3_linear(step, 1.0, cfg.lr_end_fraction, cfg.lr_anneal_steps, cfg.learning_starts)

    def diagnostics(self, step: int) -> dict[str, float]:
        """With a schedule, the learning rates' scale at step ``step``."""
        if self.config.lr_end_fraction >= 0:
            return {"learning_rate_scale": self.learning_rate_scale(step)}
        return {}

    # -- learning ----------------------------------------------------------------------------
    def learn(self, batch: Batch, step: int) -> tuple[dict[str, float], tf.Tensor]:
        """One block of ``K`` critic updates on ``batch`` (``[K, B]``) and the actor's (every
        ``policy_delay``); ``{"critic_loss", "actor_loss", "q"}`` averaged over the block
        (``q``: mean ``Q(s, a)`` of the sampled actions), and the first critic's TD errors
        ``[K, B]`` (a tensor)."""
        cfg = self.config
        if cfg.lr_end_fraction >= 0:
            scale = self.learning_rate_scale(step)
            self.actor_pipeline.optimizer.learning_rate.assign(cfg.actor_learning_rate * scale)
            self.critic_pipeline.optimizer.learning_rate.assign(cfg.critic_learning_rate * scale)
        shape = (*batch.rewards.shape, self.bounds.dim)
        if self.terms.target_noise == 0:  # DDPG: zeros, drawing nothing; made once a shape
            smoothing = self._zeros.get(shape)
            if smoothing is None:
                smoothing = self._zeros[shape] = tf.zeros(shape)
        else:
            smoothing = self.terms.smoothing_noise(self.rng, shape, self.bounds.half_range)
        critic_loss, actor_loss, q, td_errors, self._actor_weights = self._train_block(
            *self._block_tensors(batch), smoothing, np.int64(self.num_updates)
        )
        updates_before = self.num_updates
        self.num_updates += int(batch.rewards.shape[0])
        self.num_actor_updates += self.terms.actor_updates(updates_before, self.num_updates)
        losses = {"critic_loss": float(critic_loss), "actor_loss": float(actor_loss)}
        return {**losses, "q": float(q)}, td_errors

    def weights_changed(self) -> None:
        self._actor_weights = None  # (the last block's weights are no longer the actor's)

    def policy(self) -> Callable[[Any], np.ndarray]:
        """``encoded obs [N, ...] -> mu(s) [N, act_dim]``: a numpy copy of the actor (of the
        weights the last block returned: cheaper than reading the variables again), or
        one compiled call for an actor without a fast path."""
        if self._actor_weights is None:
            return self.actor.numpy_snapshot()
        weights, self._actor_weights = self._actor_weights, None
        return self.actor.to_numpy([w.numpy() for w in weights])

    def _tensors(
        self, batch: Batch
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
        """The batch as tensors: ``(obs, actions, rewards, next_obs, pcont, weights)``
        (observations: float32, or a dict or tuple of parts)."""
        return (
            ddpg_networks.obs_tensors(self.obs_format, batch.obs),
            tf.convert_to_tensor(batch.actions, tf.float32),
            tf.convert_to_tensor(batch.rewards, tf.float32),
            ddpg_networks.obs_tensors(self.obs_format, batch.next_obs),
            tf.convert_to_tensor(batch.discount_or(self.config.gamma)),
            tf.convert_to_tensor(batch.weights_or_ones()),
        )

    def _block_tensors(self, batch: Batch) -> tuple[tf.Tensor, ...]:
        """The batch as the compiled block takes it, in as few tensors as it can: the
        float32 ``[K, B, act_dim + 3]`` of each example's action, reward, discount
        (``pcont``) and importance weight (:func:`~rlkit.learn.compiled.pack`), after the
        observations and next observations (vectors: all in one array; a Dict's or Tuple's
        parts: each a structure of tensors)."""
        fields = [batch.actions, batch.rewards, batch.discount_or(self.config.gamma),
                  batch.weights_or_ones()]  # fmt: skip
        lead = np.shape(batch.rewards)
        if not self.obs_format.parts:
            return (pack([batch.obs, batch.next_obs, *fields], lead),)
        obs = [ddpg_networks.obs_tensors(self.obs_format, o) for o in (batch.obs, batch.next_obs)]
        return (*obs, pack(fields, lead))

    def _unpack(self, *inputs) -> tuple:
        """:meth:`_block_tensors` (or :meth:`_tensors`) as ``(obs, actions, rewards, next_obs,
        pcont, weights)``."""
        if len(inputs) == 6:
            return inputs
        widths = [self.bounds.dim, 0, 0, 0]
        if len(inputs) == 1:
            obs_dim = self.obs_format.size
            obs, next_obs, *fields = unpack(inputs[0], [obs_dim, obs_dim, *widths])
        else:
            obs, next_obs = inputs[:2]
            fields = unpack(inputs[2], widths)
        actions, rewards, pcont, weights = fields
        return obs, actions, rewards, next_obs, pcont, weights

    def _train_block_graph(self, *inputs):
        """``K`` updates in one graph; inputs have leading shape ``[K, B]``.

        ``inputs``: :meth:`_block_tensors` (or :meth:`_tensors`), then TD3's smoothing noise
        ``[K, B, act_dim]`` and ``updates_before``: critic updates before this block
        (int64), which places TD3's delayed actor updates. Returns the block's mean critic
        loss, actor loss and ``Q(s, a)``, and the actor's weights after the block (for the
        numpy acting copy: returning them is cheaper than reading the variables again).
        """
        *block, smoothing, updates_before = inputs
        obs, actions, rewards, next_obs, pcont, weights = self._unpack(*block)
        delay = self.terms.policy_delay
        num_updates_in_block = tf.shape(rewards)[0]
        critic_total, q_total = tf.constant(0.0), tf.constant(0.0)
        actor_total, actor_count = tf.constant(0.0), tf.constant(0.0)
        td_errors = tf.TensorArray(tf.float32, size=num_updates_in_block)
        row = ddpg_networks.row  # obs[k]: of each part of a Dict or Tuple observation
        for k in block_range(rewards):
            critic_loss, q, td_error = self.critic_step(
                row(obs, k), actions[k], rewards[k], row(next_obs, k), pcont[k], weights[k],
                smoothing[k],
            )  # fmt: skip
            td_errors = td_errors.write(k, td_error)
            critic_total += critic_loss
            q_total += q
            if delay > 1:
                due = self.terms.actor_due(updates_before + tf.cast(k, tf.int64) + 1)
                actor_loss = tf.cond(
                    due, lambda k=k: self.actor_step(row(obs, k)), lambda: tf.constant(0.0)
                )
                actor_count += tf.cast(due, tf.float32)
            else:
                actor_loss = self.actor_step(row(obs, k))
                actor_count += 1.0
            actor_total += actor_loss
        n = tf.cast(num_updates_in_block, tf.float32)
        actor_weights = [tf.identity(w) for w in self.actor.layer_weights()]
        return (
            critic_total / n,
            actor_total / tf.maximum(actor_count, 1.0),
            q_total / n,
            td_errors.stack(),
            actor_weights,
        )

    def critic_step(self, obs, actions, rewards, next_obs, pcont, weights, smoothing):
        """One critic update on one minibatch, for use inside a traced graph (the update
        block's body and the compiled loop's, ``rlkit/run/compiled/ddpg.py``).

        ``obs [B, obs_dim]``, ``actions [B, act_dim]``, ``rewards``/``pcont``/``weights [B]``,
        ``smoothing [B, act_dim]`` (TD3's target-action noise, zeros without it). Returns the
        critic loss, mean Q and the first critic's TD errors ``[B]``.
        """
        with tf.GradientTape() as tape:
            loss, q, td_error = self._critic_loss(obs, actions, rewards, next_obs, pcont,
                                                  weights, smoothing)  # fmt: skip
        self.critic_pipeline.apply(self.critic_pipeline.gradients(tape, loss))
        return loss, q, td_error

    def actor_step(self, obs):
        """One actor update on ``obs [B, obs_dim]``, then the target networks' moving-average
        step; returns the actor loss. Traced-graph use, as :meth:`critic_step`; TD3's delay is
        the caller's."""
        with tf.GradientTape() as tape:
            loss = self._actor_loss(obs)
        self.actor_pipeline.apply(self.actor_pipeline.gradients(tape, loss))
        self.targets.update()  # the target networks follow
        return loss

    def _bootstrap(self, rewards, next_obs, pcont, smoothing):
        next_action = self.target_action(next_obs)
        if self.terms.target_noise > 0:
            next_action = smooth_target_action(
                next_action, smoothing, self.bounds.low, self.bounds.high
            )
        next_q = self.target_q(next_obs, next_action, 0)
        for k in range(1, len(self.critics)):
            next_q = tf.minimum(next_q, self.target_q(next_obs, next_action, k))
        return bootstrap_target(rewards, pcont, next_q)

    def _critic_loss(self, obs, actions, rewards, next_obs, pcont, weights, smoothing):
        """Scalar critic loss (sum over critics of the batch-mean weighted squared error),
        mean Q and the first critic's TD errors ``y - Q_0(s, a)`` ``[B]``."""
        y = self._bootstrap(rewards, next_obs, pcont, smoothing)
        loss, q_first = tf.constant(0.0), None
        for critic in self.critics:
            q = critic.model([obs, actions], training=True)
            loss += tf.reduce_mean(squared_error(q, y) * weights)
            q_first = q if q_first is None else q_first
        return loss, tf.reduce_mean(q_first), y - q_first

    def _actor_loss(self, obs):
        """``-mean_B Q_0(s, mu(s))``: differentiated w.r.t. the actor's variables only."""
        return -tf.reduce_mean(self.critics[0].model([obs, self.actor.model(obs, training=True)]))

    # -- inspection (tests, users' experiments) ----------------------------------------------
    def _smoothing_tensor(self, batch: Batch, smoothing: np.ndarray | None) -> tf.Tensor:
        """TD3's target noise ``[B, act_dim]`` as given, or zeros."""
        if smoothing is None:
            smoothing = np.zeros((len(batch.rewards), self.bounds.dim), np.float32)
        return tf.constant(smoothing)

    def td_targets(self, batch: Batch, smoothing: np.ndarray | None = None) -> np.ndarray:
        """The critic targets ``y`` for ``batch`` (``[B]``), without updating anything.

        ``smoothing``: TD3's target noise in action units (``[B, act_dim]``; default none).
        """
        _, _, rewards, next_obs, pcont, _ = self._tensors(batch)
        smoothing = self._smoothing_tensor(batch, smoothing)
        return self._bootstrap(rewards, next_obs, pcont, smoothing).numpy()

    def critic_loss(self, batch: Batch, smoothing: np.ndarray | None = None) -> tf.Tensor:
        """The scalar critic loss for ``batch`` (``[B]``); call it under a GradientTape."""
        return self._critic_loss(*self._tensors(batch), self._smoothing_tensor(batch, smoothing))[0]

    def actor_loss(self, obs: np.ndarray) -> tf.Tensor:
        """The scalar actor loss ``-mean Q(s, mu(s))`` for ``obs`` ``[B, ...]``."""
        encoded = self.obs_format.encode(obs)
        return self._actor_loss(ddpg_networks.obs_tensors(self.obs_format, encoded))

    # -- persistence -------------------------------------------------------------------------
    def variables(self) -> dict[str, list]:
        groups = {"actor": self.actor.variables, "actor_target": self.actor_target_variables}
        for k, critic in enumerate(self.critics):
            groups[f"critic{k}"] = critic.variables
            groups[f"critic{k}_target"] = self.critic_target_variables(k)
        return groups

    def state(self) -> dict[str, dict[str, Any]]:
        """Both optimizers and the actor-update count."""
        return {
            "optimizer": {
                "actor": self.actor_pipeline.optimizer,
                "critic": self.critic_pipeline.optimizer,
            },
            "counters": {"num_actor_updates": self.num_actor_updates},
        }

    def load_scalars(self, counters: dict[str, int], extra: dict[str, Any]) -> None:
        self.num_actor_updates = int(counters["num_actor_updates"])
