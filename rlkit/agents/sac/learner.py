"""SAC's learner: the Gaussian policy, twin critics whose targets are
``tf.train.ExponentialMovingAverage`` shadows (as DDPG's: :class:`~rlkit.learn.targets.EMAShadows`,
decay ``1 - tau``), and the temperature ``alpha = exp(log_alpha)``.

One update on a minibatch, in SB3's order (``sac/sac.py`` ``train``), the formulas being
:mod:`rlkit.learn.max_entropy`'s:

1. ``a~, log pi(a~|s)`` sampled from the policy with the reparameterisation trick;
2. the temperature step on ``mean_B temperature_loss`` (when alpha is learned); the alpha
   used by the critic and actor losses below is the one *before* this step (SB3's);
3. the critic step on ``sum_j mean_B w 0.5 (Q_j(s, a) - y)^2``, ``y`` the soft target with
   ``a' ~ pi(.|s')`` and the twin minimum of the target critics (``w``: importance weights,
   1 for uniform replay);
4. the actor step on ``mean_B (alpha log pi(a~|s) - min_j Q_j(s, a~))``, the critics as step 3
   left them (SB3's: its actor loss is built after the critic's step);
5. the targets' EMA step when the update's index (from 0, over the run) is a multiple of
   ``target_update_interval``.

The standard normal draws of steps 1 and 3 come in with the batch, drawn in numpy from the
agent's ``"explore"`` generator (a checkpoint keeps it: exact resume), two ``[K, B, A]``
arrays a block; with gSDE one exploration matrix's ``[K, L, A]`` (:meth:`SACLearner.sde_sample`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from rlkit.agents.sac import networks as sac_networks
from rlkit.agents.sac.soft import SoftLearner
from rlkit.core.spaces import ObservationFormat
from rlkit.learn import gsde
from rlkit.learn.compiled import CompiledFunction, block_range, pack, unpack
from rlkit.learn.losses import squared_error
from rlkit.learn.max_entropy import (
    bound_log_std,
    log_one_minus_tanh_squared,
    soft_bootstrap_target,
    squashed_sample,
    temperature_loss,
)
from rlkit.networks.actor_critic import ActionBounds
from rlkit.replay.memory import Batch


class SACLearner(SoftLearner):
    """The policy, the twin critics, their EMA targets, alpha and the compiled update.

    Args:
        config: a :class:`~rlkit.agents.sac.config.SACConfig`.
        obs_format: how observations reach the networks (flat ``[obs_dim]``).
        bounds: the flattened action's box.
        seed: seeds the networks' weights.
        rng: the update's standard normal draws come from it (the agent's ``"explore"``).
        spaces, given: the (observation, action) spaces and ``{"actor": ..., "critic": ...}``,
            networks given as Python objects (:func:`rlkit.agents.sac.networks.networks`).

    Attributes:
        actor: the :class:`~rlkit.agents.sac.networks.GaussianActor` (or the user's
            :class:`~rlkit.networks.custom.KerasActor`).
        critics: two :class:`~rlkit.networks.actor_critic.Critic` (or the user's).
        log_alpha: the temperature's log (a variable; fixed when ``ent_coef`` is a number).
        target_entropy: ``H``, -|A| by default.
        actor_pipeline, critic_pipeline, alpha_pipeline: their update pipelines (Adam).
        targets: the critics' :class:`~rlkit.learn.targets.EMAShadows`.
    """

    def __init__(
        self,
        config: Any,
        obs_format: ObservationFormat,
        bounds: ActionBounds,
        seed: int,
        rng: np.random.Generator,
        spaces: tuple[Any, Any] = (None, None),
        given: dict[str, Any] | None = None,
    ) -> None:
        cfg = self.config = config
        self.obs_format, self.bounds, self.rng = obs_format, bounds, rng
        dim = bounds.dim
        self.actor, self.critics = sac_networks.networks(cfg, obs_format, spaces, bounds,
                                                         given or {}, seed)  # fmt: skip
        self.target_entropy = cfg.entropy_target(dim)
        self.build_soft()
        self._train_block = CompiledFunction(self._train_block_graph, cfg.jit_compile)
        self._actor_weights = None  # the actor's weights as the last block returned them

    # -- the policy ----------------------------------------------------------------------------
    def distribution(self, obs: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """``(mean, log_std)`` of ``u`` for ``obs [B, obs_dim]``, each ``[B, A]`` (log std
        bounded: :func:`~rlkit.learn.max_entropy.bound_log_std`)."""
        out = self.actor.model(obs, training=True)
        mean, raw = out[..., : self.bounds.dim], out[..., self.bounds.dim :]
        cfg = self.config
        return mean, bound_log_std(raw, cfg.log_std_min, cfg.log_std_max, cfg.log_std_bounding)

    def sample(self, obs: tf.Tensor, noise: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """``(a, log pi(a|s))``: the action in the bounds' units ``[B, A]`` and its log-density
        ``[B]`` (of the squashed action in ``[-1, 1]``), from standard normal ``noise``
        (``[B, A]``; with gSDE ``[L, A]``, one exploration matrix's: :meth:`sde_sample`)."""
        if self.config.use_sde:
            return self.sde_sample(obs, noise)
        squashed, log_prob = squashed_sample(*self.distribution(obs), noise)
        return self.bounds.from_unit(squashed), log_prob

    def sde_sample(self, obs: tf.Tensor, normal: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """gSDE's reparameterised sample (SB3's ``action_log_prob`` with ``use_sde``): one
        exploration matrix ``E = sigma * normal`` (``[L, A]``) for the whole batch, ``u = mean
        + z . E`` (``z`` the latent, without a gradient unless ``learn_features``), ``a =
        tanh(u)``; ``log pi = log N(u; mean, (z^2) @ (sigma^2) + eps) - sum log(1 -
        tanh(u)^2)``. The gradient reaches ``log_std`` through ``E`` and the variance."""
        cfg = self.config
        latent, mean = self.actor.latent_and_mean(obs)
        latent = gsde.latent_input(latent, cfg.learn_features)
        std = gsde.gsde_std(self.actor.log_std, self.bounds.dim, cfg.use_expln)
        u = mean + tf.matmul(latent, std * normal)
        log_prob = gsde.gsde_log_prob(u, mean, gsde.gsde_variance(latent, std))
        log_prob -= tf.reduce_sum(log_one_minus_tanh_squared(u), axis=-1)
        return self.bounds.from_unit(tf.tanh(u)), log_prob

    def target_q(self, obs: tf.Tensor, actions: tf.Tensor, k: int) -> tf.Tensor:
        """``Q'_k(s, a)``: critic ``k`` run on its EMA shadow weights, ``[B]``."""
        q, _ = self.critics[k].model.stateless_call(
            self.critic_target_variables(k), [], [obs, actions]
        )
        return q

    def soft_target(self, rewards, next_obs, pcont, next_noise, alpha) -> tf.Tensor:
        """``y [B]``: the soft target with ``a' ~ pi(.|s')`` from ``next_noise``."""
        next_action, next_log_prob = self.sample(next_obs, next_noise)
        next_q = tf.minimum(self.target_q(next_obs, next_action, 0),
                            self.target_q(next_obs, next_action, 1))  # fmt: skip
        return soft_bootstrap_target(rewards, pcont, next_q, next_log_prob, alpha)

    # -- learning ------------------------------------------------------------------------------
    def learn(self, batch: Batch, step: int) -> tuple[dict[str, float], tf.Tensor]:
        """One block of ``K`` updates on ``batch`` (``[K, B]``); ``{"critic_loss",
        "actor_loss", "alpha_loss", "alpha", "entropy", "q"}`` averaged over the block
        (``entropy``: mean ``-log pi(a~|s)``), and critic 0's TD errors ``[K, B]``."""
        self.schedule_learning_rates(step)
        shape = (*np.shape(batch.rewards), 2, self.bounds.dim)
        if self.config.use_sde:  # one exploration matrix an update, for s and s' (SB3's)
            shape = (shape[0], self.actor.latent_dim, self.bounds.dim)
        noise = self.rng.standard_normal(shape).astype(np.float32)
        out = self._train_block(self._block_tensors(batch), noise, np.int64(self.num_updates))
        *metrics, td_errors, self._actor_weights = out
        self.num_updates += int(np.shape(batch.rewards)[0])
        names = ("critic_loss", "actor_loss", "alpha_loss", "alpha", "entropy", "q")
        return {k: float(v) for k, v in zip(names, metrics, strict=True)}, td_errors

    def _block_tensors(self, batch: Batch) -> tf.Tensor:
        """The float32 ``[K, B, 2 obs_dim + A + 3]`` of each example's observation, next
        observation, action, reward, discount (``pcont``) and importance weight."""
        fields = [batch.obs, batch.next_obs, batch.actions, batch.rewards,
                  batch.discount_or(self.config.gamma), batch.weights_or_ones()]  # fmt: skip
        return pack(fields, np.shape(batch.rewards))

    def _train_block_graph(self, block, noise, updates_before):
        """``K`` updates in one graph (``block``: :meth:`_block_tensors`; ``noise``: ``[K, B,
        2, A]`` standard normal draws, with gSDE ``[K, L, A]``; ``updates_before``: int64
        updates before the block)."""
        size = self.obs_format.size
        obs, next_obs, actions, rewards, pcont, weights = unpack(
            block, [size, size, self.bounds.dim, 0, 0, 0]
        )
        count, sde = tf.shape(rewards)[0], self.config.use_sde
        totals = [tf.constant(0.0)] * 6
        td_errors = tf.TensorArray(tf.float32, size=count)
        for k in block_range(rewards):
            index = updates_before + tf.cast(k, tf.int64)
            now, later = (noise[k], noise[k]) if sde else (noise[k, :, 0], noise[k, :, 1])
            *metrics, td_error = self.update_step(
                obs[k], actions[k], rewards[k], next_obs[k], pcont[k], weights[k],
                now, later, index,
            )  # fmt: skip
            totals = [t + m for t, m in zip(totals, metrics, strict=True)]
            td_errors = td_errors.write(k, td_error)
        n = tf.cast(count, tf.float32)
        snapshot = self.actor.snapshot_weights() if sde else self.actor.layer_weights()
        weights_after = [tf.identity(w) for w in snapshot]
        return (*[t / n for t in totals], td_errors.stack(), weights_after)

    def update_step(self, obs, actions, rewards, next_obs, pcont, weights, noise, next_noise,
                    index):  # fmt: skip
        """One SAC update (the module's steps 1-5) inside a traced graph. ``obs [B, obs_dim]``,
        ``actions [B, A]`` (bounds' units), ``rewards``/``pcont``/``weights [B]``, ``noise``
        and ``next_noise`` ``[B, A]`` standard normal, ``index``: this update's int64 number.
        Returns the critic, actor and alpha losses, alpha, the entropy estimate, mean Q and
        critic 0's TD errors ``[B]``."""
        alpha = tf.exp(tf.identity(self.log_alpha.value))  # before the temperature's step
        with tf.GradientTape() as actor_tape:
            action_pi, log_prob = self.sample(obs, noise)
            if self.learn_alpha:
                with tf.GradientTape() as alpha_tape:
                    alpha_loss = tf.reduce_mean(temperature_loss(
                        self.log_alpha.value, log_prob, self.target_entropy,
                        self.config.temperature_loss))  # fmt: skip
                self.alpha_pipeline.apply(self.alpha_pipeline.gradients(alpha_tape, alpha_loss))
            else:
                alpha_loss = tf.constant(0.0)
            critic_loss, q, td_error = self.critic_step(
                obs, actions, rewards, next_obs, pcont, weights, next_noise, alpha
            )
            q_pi = tf.minimum(self.critics[0].model([obs, action_pi]),
                              self.critics[1].model([obs, action_pi]))  # fmt: skip
            actor_loss = tf.reduce_mean(alpha * log_prob - q_pi)
        self.actor_pipeline.apply(self.actor_pipeline.gradients(actor_tape, actor_loss))
        self.update_targets(index)
        entropy = -tf.reduce_mean(log_prob)
        return critic_loss, actor_loss, alpha_loss, alpha, entropy, q, td_error

    def critic_step(self, obs, actions, rewards, next_obs, pcont, weights, next_noise, alpha):
        """One critic update; returns its loss, mean ``Q_0(s, a)`` and the TD errors ``y -
        Q_0(s, a)`` ``[B]``."""
        y = self.soft_target(rewards, next_obs, pcont, next_noise, alpha)
        with tf.GradientTape() as tape:
            loss, q_first = self.critic_loss_terms(obs, actions, y, weights)
        self.critic_pipeline.apply(self.critic_pipeline.gradients(tape, loss))
        return loss, tf.reduce_mean(q_first), y - q_first

    def critic_loss_terms(self, obs, actions, y, weights) -> tuple[tf.Tensor, tf.Tensor]:
        """``(sum_j mean_B w 0.5 (Q_j(s, a) - y)^2, Q_0(s, a) [B])``."""
        loss, q_first = tf.constant(0.0), None
        for critic in self.critics:
            q = critic.model([obs, actions], training=True)
            loss += tf.reduce_mean(0.5 * squared_error(q, y) * weights)
            q_first = q if q_first is None else q_first
        return loss, q_first

    def weights_changed(self) -> None:
        self._actor_weights = None

    def policy(self) -> Callable[[Any], np.ndarray]:
        """``encoded obs [N, obs_dim] -> [N, 2 A]`` (mean, raw log std): a numpy copy of the
        policy network (of the weights the last block returned)."""
        if self._actor_weights is None:
            return self.actor.numpy_snapshot()
        weights, self._actor_weights = self._actor_weights, None
        return self.actor.to_numpy([w.numpy() for w in weights])
