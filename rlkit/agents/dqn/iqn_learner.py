"""IQN's learner (Dabney et al. 2018b): DQN's learner with sampled fractions.

Each update draws, per example, ``N`` fractions ``tau`` for the online values, ``N'``
fractions ``tau'`` for the target values and ``K`` for choosing the bootstrap action
(Dopamine's ``implicit_quantile_agent.py``: ``target_quantile_values`` and ``train``):

- ``a* = argmax_a mean_k Z_{tau_k}(s', a)`` of the target network (of the online one with
  ``double_dqn``);
- ``T Z_j = r + pcont Z'_{tau'_j}(s', a*)`` (target network, no gradient);
- the quantile Huber loss over the ``N x N'`` pairs (:func:`~rlkit.learn.distributional.
  quantile_q_learning` with ``taus``): summed over ``i``, averaged over ``j``.

Acting takes the mean over ``K`` fresh fractions per call (one compiled call, reading the
live weights); an export acts on ``K`` fixed ones (:meth:`IQNLearner.export_fractions`).
The fractions come from three ``keras.random.SeedGenerator`` (learning, exploring,
evaluating) whose states are in the checkpoint: a resumed run draws the same.
Everything else (replay, prioritized and n-step, blocks of updates, target copies,
optimizer, schedules) is :class:`~rlkit.agents.dqn.learner.DQNLearner`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from rlkit.agents.dqn.heads import ValueHead
from rlkit.agents.dqn.iqn_config import IQNConfig
from rlkit.agents.dqn.learner import DQNLearner
from rlkit.core import seeding
from rlkit.learn.compiled import CompiledFunction
from rlkit.learn.distributional import quantile_greedy_actions, quantile_q_learning
from rlkit.learn.value_losses import LossOutput
from rlkit.networks.custom import build_model, network_source, twin
from rlkit.networks.iqn import EMBEDDING, IQN_TORSO, IQNNetwork
from rlkit.networks.user_torso import check_torso
from rlkit.replay.memory import Batch


@dataclass(frozen=True)
class ImplicitQuantileLoss:
    """IQN's per-example loss from values already computed at sampled fractions.

    ``__call__(z, actions, rewards, pcont, next_z_target, next_actions, taus)``: online values
    ``z`` ``[B, N, A]`` at ``taus`` ``[B, N]``, the target's ``next_z_target`` ``[B, N', A]`` at
    ``tau'``, bootstrap actions ``[B]`` -> ``loss`` ``[B]`` (summed over ``N``, averaged over
    ``N'``), ``td_error`` = that loss (Dopamine's priority), ``value`` the taken action's
    mean over ``N``."""

    kappa: float = 1.0

    def __call__(self, z, actions, rewards, pcont, next_z_target, next_actions, taus):
        quantiles = tf.transpose(z, [0, 2, 1])  # [B, A, N]
        target = tf.transpose(next_z_target, [0, 2, 1])  # [B, A, N']
        out = quantile_q_learning(quantiles, actions, rewards, pcont, target, next_actions,
                                  self.kappa, taus)  # fmt: skip
        means = tf.reduce_mean(quantiles, axis=-1)
        return LossOutput(out.loss, out.td_error, tf.gather(means, actions, axis=1, batch_dims=1))


class IQNHead:
    """What IQN's network gives per action to the rest of DQN's learner: ``Z`` at fractions
    (its acting already averages ``K`` of them, so acting reads ``Q`` as it is)."""

    per_action = 1

    def __init__(self, kappa: float) -> None:
        self.loss = ImplicitQuantileLoss(float(kappa))

    def q_values_graph(self, outputs: tf.Tensor) -> tf.Tensor:
        return outputs

    def value_loss(self, name: str, clip_delta: float, given: Any) -> Any:
        return self.loss

    def acting(self, policy):
        return policy


class IQNLearner(DQNLearner):
    """:class:`~rlkit.agents.dqn.learner.DQNLearner` for an :class:`~rlkit.networks.iqn.
    IQNNetwork` (``config``: an :class:`~rlkit.agents.dqn.iqn_config.IQNConfig`)."""

    shared_target_pass = False  # fresh tau' for each update
    config: IQNConfig
    loss: Any  # an ImplicitQuantileLoss (values at fractions, not the ValueLoss seam)
    q: Any  # an IQNNetwork (its values take the fractions): build_networks below
    q_target: Any

    def __init__(
        self, config, obs_format, observation_space, action_space, seed: int, q_network=None
    ) -> None:
        self.fractions = {use: keras.random.SeedGenerator(seeding.fraction_seed(seed, use))
                          for use in seeding.FRACTIONS}  # fmt: skip
        diagnostic_seed = seeding.fraction_seed(seed, "learn") + 50  # td_errors(): not saved
        self._diagnostic_fractions = keras.random.SeedGenerator(diagnostic_seed)
        self._policies: dict[str, Callable] = {}
        self._values_at: CompiledFunction | None = None
        head: ValueHead = IQNHead(config.kappa)
        super().__init__(config, obs_format, observation_space, action_space, seed, q_network,
                         None, head)  # fmt: skip

    def build_networks(self, observation_space, action_space, seed: int, q_network: Any):
        cfg, obs_format = self.config, self.obs_format
        torsos: tuple[Any, Any] = (None, None)
        if cfg.q_network:
            source = network_source("q_network", cfg.q_network, q_network)
            spaces = observation_space, action_space
            model = build_model(source, *spaces, "q_network", seeding.network_seed(seed, "q"))
            check_torso(model, obs_format, "q_network", IQN_TORSO, EMBEDDING)
            torsos = model, twin(model, source, *spaces, "q_network")
        return tuple(
            IQNNetwork(obs_format, self.num_actions, cfg.hidden_sizes, cfg.quantile_embedding_dim,
                       cfg.dueling, seed, name, cfg.init, cfg.torso, cfg.conv_padding, user)
            for name, user in zip(("q", "q_target"), torsos, strict=True)
        )  # fmt: skip

    # -- acting ------------------------------------------------------------------------------
    def policy(self) -> Callable[[Any], np.ndarray]:
        """``obs -> Q [A]`` (``[N, A]`` for a batch): the mean of ``Z`` over ``K`` fractions
        drawn from the evaluation generator; one compiled call on the live weights."""
        return self._acting("evaluate")

    def exploring_policy(self) -> Callable[[Any], np.ndarray]:
        """As :meth:`policy`, drawing from the exploring generator."""
        return self._acting("act")

    def _acting(self, use: str) -> Callable[[Any], np.ndarray]:
        if use not in self._policies:
            generator, k = self.fractions[use], self.config.num_quantile_samples

            def mean_values(obs):
                taus = keras.random.uniform((tf.shape(obs)[0], k), seed=generator)
                return self._mean_values(obs, taus)

            compiled = CompiledFunction(mean_values)
            obs_rank = len(self.obs_format.shape)

            def q_values(obs: np.ndarray) -> np.ndarray:
                single = np.ndim(obs) == obs_rank
                out = compiled(obs[None] if single else obs).numpy()
                return out[0] if single else out

            self._policies[use] = q_values
        return self._policies[use]

    def _mean_values(self, obs, taus):
        """``mean_k Z(obs, taus_k)`` ``[B, A]`` of the online network at fractions ``[B, K]``."""
        return tf.reduce_mean(self.q.values(obs, taus), axis=1)

    def export_fractions(self) -> np.ndarray:
        """The fixed fractions an export acts on (``[K]`` float32): the ``K`` midpoints
        ``(2k + 1) / 2K`` of ``[0, 1]`` (QR-DQN's fractions), so that an exported policy is a
        function of the observation alone; training and ``rlkit evaluate`` keep drawing
        ``K`` fresh ones."""
        k = self.config.num_quantile_samples
        return ((2 * np.arange(k) + 1) / (2 * k)).astype(np.float32)

    def values_at(self, obs, taus: np.ndarray) -> np.ndarray:
        """``Q(s, .)`` at given fractions: the mean of ``Z`` over ``taus`` (``[K]``, the same
        for every row) for encoded observations ``[B, *shape]`` -> ``[B, A]``; one compiled
        call on the live weights, drawing from no generator."""
        if self._values_at is None:
            self._values_at = CompiledFunction(self._mean_values)
        obs = np.asarray(obs)
        rows = np.broadcast_to(np.asarray(taus, np.float32), (len(obs), len(taus)))
        return self._values_at(obs, np.ascontiguousarray(rows)).numpy()

    # -- learning ----------------------------------------------------------------------------
    def draw_fractions(self, batch_size, generator=None) -> tuple[tf.Tensor, ...]:
        """``(tau [B, N], tau' [B, N'], tau_k [B, K])``, uniform on [0, 1), in that order."""
        cfg, generator = self.config, generator or self.fractions["learn"]
        counts = (cfg.num_tau_samples, cfg.num_tau_prime_samples, cfg.num_quantile_samples)
        return tuple(keras.random.uniform((batch_size, n), seed=generator) for n in counts)

    def bootstrap(self, next_obs, tau_primes, tau_k) -> tuple[tf.Tensor, tf.Tensor]:
        """``(Z_target(s', tau') [B, N', A], a* [B])``: the target's values and the action of
        the largest mean over the ``K`` fractions (online network's with Double DQN)."""
        if self.config.double_dqn:
            choice = self.q.values(next_obs, tau_k)
            target = self.q_target.values(next_obs, tau_primes)
        else:  # one pass of the target network over the N' + K fractions (one torso pass)
            both = self.q_target.values(next_obs, tf.concat([tau_primes, tau_k], axis=1))
            target, choice = both[:, : tf.shape(tau_primes)[1]], both[:, tf.shape(tau_primes)[1] :]
        next_actions = quantile_greedy_actions(tf.transpose(choice, [0, 2, 1]))  # [B, A, K]
        return tf.stop_gradient(target), next_actions

    def per_example_loss(self, obs, actions, rewards, next_obs, pcont, fractions) -> LossOutput:
        """The loss of each example at given ``fractions`` ``(tau, tau', tau_k)`` (tensors),
        nothing updated: what one update differentiates (before weights and reduction)."""
        taus, tau_primes, tau_k = fractions
        next_z, next_actions = self.bootstrap(next_obs, tau_primes, tau_k)
        z = self.q.values(obs, taus, training=True)
        return self.loss(z, actions, rewards, pcont, next_z, next_actions, taus)

    def _gradients(self, obs, actions, rewards, next_obs, pcont, weights, next_q_target=None):
        cfg = self.config
        taus, tau_primes, tau_k = self.draw_fractions(tf.shape(actions)[0])
        r_max = self._r_max_in_graph()
        if r_max is not None:
            rewards = rewards / r_max
        next_z, next_actions = self.bootstrap(next_obs, tau_primes, tau_k)
        reduce = tf.reduce_sum if cfg.reduction == "sum" else tf.reduce_mean
        with tf.GradientTape() as tape:
            z = self.q.values(obs, taus, training=True)
            out = self.loss(z, actions, rewards, pcont, next_z, next_actions, taus)
            loss = reduce(out.loss * weights)
        grads = self.pipeline.gradients(tape, loss)
        metrics = (loss, tf.reduce_mean(out.value), tf.reduce_mean(tf.abs(out.td_error)))
        return grads, metrics, out.td_error

    def td_errors(self, batch: Batch) -> np.ndarray:
        """Each example's loss (IQN's priority) for ``batch`` ``[B]`` at fractions of a
        generator of its own, nothing updated and no training draw spent."""
        obs, actions, rewards, next_obs, pcont, _ = self.unpack(*self.tensors(batch))
        r_max = self._r_max_in_graph()
        if r_max is not None:
            rewards = rewards / r_max
        fractions = self.draw_fractions(tf.shape(actions)[0], self._diagnostic_fractions)
        return self.per_example_loss(obs, actions, rewards, next_obs, pcont,
                                     fractions).td_error.numpy()  # fmt: skip

    def variables(self) -> dict[str, list]:
        groups = super().variables()
        groups["iqn_fractions"] = [g.state for g in self.fractions.values()]
        return groups
