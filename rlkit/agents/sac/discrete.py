"""Discrete SAC (Christodoulou 2019, arXiv 1910.07207): SAC with the expectations over the
actions taken exactly instead of sampled.

The policy and the twin critics are :class:`~rlkit.networks.q_network.QNetwork`\\ s (an MLP,
the Nature CNN for images or MinAtar's torso, each ``[B, *obs] -> [B, |A|]``): the policy's
outputs are logits, the critics' ``Q(s, .)``. One update, in the continuous learner's order
(:mod:`rlkit.agents.sac.learner`), with :mod:`rlkit.learn.max_entropy`'s formulas:

1. the temperature step on ``-alpha (sum_a pi log pi + H)`` (eq. 11; or SB3's form in
   ``log alpha``), ``H = target_entropy_scale * log |A|`` by default;
2. the critic step on ``sum_j mean w 0.5 (Q_j(s, a) - y)^2`` with
   ``y = r + pcont sum_a pi(a|s') (min_j Q'_j(s', a) - alpha log pi(a|s'))`` (eq. 10);
3. the actor step on ``mean sum_a pi(a|s) (alpha log pi(a|s) - min_j Q_j(s, a))`` (eq. 12);
4. the targets' EMA step every ``target_update_interval`` updates.

Acting samples ``pi(.|s)`` while exploring (inverse CDF of a uniform draw from the
``"explore"`` generator, in numpy) and takes the most probable action when greedy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from rlkit.agents.parts import Acting
from rlkit.agents.sac.soft import SoftLearner
from rlkit.core.errors import UsageError
from rlkit.core.spaces import ObservationFormat
from rlkit.learn.compiled import CompiledFunction, block_range, fresh_tensor, pack, unpack
from rlkit.learn.gumbel import gumbel_from_uniform
from rlkit.learn.losses import squared_error
from rlkit.learn.max_entropy import (
    categorical_log_prob_mean,
    categorical_policy_loss,
    categorical_soft_value,
    soft_bootstrap_target,
    temperature_loss,
)
from rlkit.networks.q_network import QNetwork
from rlkit.replay.memory import Batch


class DiscreteSACLearner(SoftLearner):
    """The categorical policy, twin critics with EMA targets, alpha and the compiled update.

    Args:
        config: a :class:`~rlkit.agents.sac.config.SACConfig`.
        obs_format: the observations' format (vectors, one-hot or images).
        num_actions: ``|A|``.
        seed: seeds the networks' weights.

    Attributes:
        actor: the policy's :class:`QNetwork` (logits ``[B, |A|]``).
        critics: two :class:`QNetwork` (``Q(s, .)``).
        log_alpha, target_entropy, actor_pipeline, critic_pipeline, alpha_pipeline, targets:
            as :class:`~rlkit.agents.sac.learner.SACLearner`'s.
    """

    def __init__(self, config: Any, obs_format: ObservationFormat, num_actions: int,
                 seed: int) -> None:  # fmt: skip
        cfg = self.config = config
        self.obs_format, self.num_actions = obs_format, int(num_actions)

        def network(name: str, sizes, offset: int) -> QNetwork:
            # QNetwork seeds its layers from seed * 1000: three seeds per agent seed apart
            return QNetwork(obs_format, self.num_actions, sizes, seed=3 * seed + offset,
                            name=name, init=cfg.init)  # fmt: skip

        self.actor = network("actor", cfg.actor_hidden_sizes, 0)
        self.critics = [network(f"critic{k}", cfg.critic_hidden_sizes, 1 + k) for k in range(2)]
        self.target_entropy = cfg.entropy_target(self.num_actions, discrete=True)
        self.build_soft()
        self._one_array = (len(obs_format.shape) == 1
                           and np.dtype(obs_format.dtype) == np.float32)  # fmt: skip
        self._train_block = CompiledFunction(self._train_block_graph, cfg.jit_compile)
        self._mirror_weights: list | None = None

    def target_q(self, obs: tf.Tensor, k: int) -> tf.Tensor:
        """``Q'_k(s, .)`` ``[B, |A|]``: critic ``k`` on its EMA shadow weights."""
        q, _ = self.critics[k].model.stateless_call(self.critic_target_variables(k), [], obs)
        return q

    def policy_terms(self, obs: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """``(pi, log pi)`` ``[B, |A|]`` of the policy at ``obs``."""
        log_probs = tf.nn.log_softmax(self.actor.model(obs, training=True), axis=-1)
        return tf.exp(log_probs), log_probs

    # -- learning ------------------------------------------------------------------------------
    def learn(self, batch: Batch, step: int) -> tuple[dict[str, float], tf.Tensor]:
        """One block of ``K`` updates on ``batch`` (``[K, B]``): the block's mean losses,
        alpha, entropy and ``Q(s, a)``, and critic 0's TD errors ``[K, B]``."""
        self.schedule_learning_rates(step)
        out = self._train_block(*self._block_tensors(batch), np.int64(self.num_updates))
        *metrics, td_errors, self._mirror_weights = out
        self.num_updates += int(np.shape(batch.rewards)[0])
        names = ("critic_loss", "actor_loss", "alpha_loss", "alpha", "entropy", "q")
        return {k: float(v) for k, v in zip(names, metrics, strict=True)}, td_errors

    def _block_tensors(self, batch: Batch) -> tuple[tf.Tensor, ...]:
        fields = [batch.actions, batch.rewards, batch.discount_or(self.config.gamma),
                  batch.weights_or_ones()]  # fmt: skip
        lead = np.shape(batch.rewards)
        if self._one_array:
            return (pack([batch.obs, batch.next_obs, *fields], lead),)
        return fresh_tensor(batch.obs), fresh_tensor(batch.next_obs), pack(fields, lead)

    def _train_block_graph(self, *inputs):
        *block, updates_before = inputs
        if len(block) == 1:
            width = self.obs_format.shape[0]
            obs, next_obs, *fields = unpack(block[0], [width, width, 0, 0, 0, 0])
        else:
            obs, next_obs = block[:2]
            fields = unpack(block[2], [0, 0, 0, 0])
        actions, rewards, pcont, weights = fields
        actions = tf.cast(actions, tf.int32)
        count = tf.shape(rewards)[0]
        totals = [tf.constant(0.0)] * 6
        td_errors = tf.TensorArray(tf.float32, size=count)
        for k in block_range(rewards):
            index = updates_before + tf.cast(k, tf.int64)
            *metrics, td_error = self.update_step(obs[k], actions[k], rewards[k], next_obs[k],
                                                  pcont[k], weights[k], index)  # fmt: skip
            totals = [t + m for t, m in zip(totals, metrics, strict=True)]
            td_errors = td_errors.write(k, td_error)
        n = tf.cast(count, tf.float32)
        mirror = [tf.identity(w) for w in self.actor.mirror_weights()]
        return (*[t / n for t in totals], td_errors.stack(), mirror)

    def update_step(self, obs, actions, rewards, next_obs, pcont, weights, index):
        """One discrete SAC update (the module's steps 1-4) inside a traced graph; returns
        the critic, actor and alpha losses, alpha, the entropy, mean Q and the TD errors."""
        alpha = tf.exp(tf.identity(self.log_alpha.value))  # before the temperature's step
        with tf.GradientTape() as actor_tape:
            probs, log_probs = self.policy_terms(obs)
            mean_log_prob = categorical_log_prob_mean(probs, log_probs)
            if self.learn_alpha:
                with tf.GradientTape() as alpha_tape:
                    alpha_loss = tf.reduce_mean(temperature_loss(
                        self.log_alpha.value, mean_log_prob, self.target_entropy,
                        self.config.temperature_loss))  # fmt: skip
                self.alpha_pipeline.apply(self.alpha_pipeline.gradients(alpha_tape, alpha_loss))
            else:
                alpha_loss = tf.constant(0.0)
            critic_loss, q, td_error = self.critic_step(obs, actions, rewards, next_obs, pcont,
                                                        weights, alpha)  # fmt: skip
            q_min = tf.minimum(self.critics[0].model(obs), self.critics[1].model(obs))
            actor_loss = tf.reduce_mean(categorical_policy_loss(probs, log_probs, q_min, alpha))
        self.actor_pipeline.apply(self.actor_pipeline.gradients(actor_tape, actor_loss))
        self.update_targets(index)
        entropy = -tf.reduce_mean(mean_log_prob)
        return critic_loss, actor_loss, alpha_loss, alpha, entropy, q, td_error

    def critic_step(self, obs, actions, rewards, next_obs, pcont, weights, alpha):
        """One critic update; returns its loss, mean ``Q_0(s, a)`` and the TD errors."""
        next_probs, next_log_probs = self.policy_terms(next_obs)
        next_q = tf.minimum(self.target_q(next_obs, 0), self.target_q(next_obs, 1))
        value = categorical_soft_value(next_probs, next_log_probs, next_q, alpha)
        y = soft_bootstrap_target(rewards, pcont, value, tf.zeros_like(value), alpha)
        with tf.GradientTape() as tape:
            loss, q_first = tf.constant(0.0), None
            for critic in self.critics:
                q = tf.gather(critic.model(obs, training=True), actions, batch_dims=1)
                loss += tf.reduce_mean(0.5 * squared_error(q, y) * weights)
                q_first = q if q_first is None else q_first
        self.critic_pipeline.apply(self.critic_pipeline.gradients(tape, loss))
        return loss, tf.reduce_mean(q_first), y - q_first

    def weights_changed(self) -> None:
        self._mirror_weights = None

    def policy(self) -> Callable[[Any], np.ndarray]:
        """``obs -> logits [N, |A|]``: the policy's numpy mirror (of the weights the last block
        returned) or, for a torso without one, one compiled call per batch."""
        if self._mirror_weights and self.actor.mirrored:
            weights, self._mirror_weights = self._mirror_weights, None
            return self.actor.mirror([w.numpy() for w in weights])
        return self.actor.policy()


def sample_categorical(logits: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Actions ``[N]`` drawn from ``softmax(logits)`` ``[N, |A|]`` by the inverse CDF of
    ``uniform`` ``[N]`` in [0, 1)."""
    logits = np.asarray(logits, np.float64)  # (as the graph's twin computes it)
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    cdf = np.cumsum(shifted / shifted.sum(axis=-1, keepdims=True), axis=-1)
    return np.minimum((cdf < uniform[:, None]).sum(axis=-1), logits.shape[-1] - 1)


class CategoricalActing(Acting):
    """A draw from ``pi(.|s)`` while exploring, the most probable action when greedy; uniform
    actions before ``learning_starts`` (``rng``: the ``"explore"`` generator)."""

    def __init__(self, obs_format: ObservationFormat, num_actions: int, learning_starts: int,
                 rng: np.random.Generator) -> None:  # fmt: skip
        self.obs_format, self.num_actions = obs_format, int(num_actions)
        self.learning_starts, self.rng = int(learning_starts), rng

    def act(self, obs, explore: bool = True, step: int = 0) -> Any:
        x = self.obs_format.encode(obs)
        rows = self.obs_format.batch_rows(x)
        n = rows or 1
        if explore and step < self.learning_starts:
            actions = self.rng.integers(self.num_actions, size=n)
        else:
            logits = np.asarray(self.policy(x if rows is not None else np.asarray(x)[None]))
            if explore:
                actions = sample_categorical(logits, self.rng.random(n))
            else:
                actions = np.argmax(logits, axis=-1)
        actions = actions.astype(np.int64)
        return actions if rows is not None else int(actions[0])

    def logits(self, obs) -> np.ndarray:
        """The policy's logits ``[(N,) |A|]`` for raw observations."""
        x = self.obs_format.encode(obs)
        rows = self.obs_format.batch_rows(x)
        logits = np.asarray(self.policy(x if rows is not None else np.asarray(x)[None]))
        return logits if rows is not None else logits[0]

    def noise_spec(self) -> tuple[str, int]:
        """What :meth:`act_with_noise` takes per observation: ``("uniform", |A|)``, one
        uniform in (0, 1) per logit."""
        return "uniform", self.num_actions

    def act_with_noise(self, obs, noise) -> int | np.ndarray:
        """A draw of ``pi(.|s)`` from the given uniforms ``noise [(N,) |A|]`` (nothing of the
        agent's changes): ``argmax(logits + gumbel)``, the Gumbel-max trick as PPO's export
        draws (:func:`~rlkit.learn.gumbel.gumbel_from_uniform`), not the inverse CDF of one
        uniform that :meth:`act` uses; both are exact draws of ``softmax(logits)``. What the
        export's ``sample`` signature computes."""
        logits = np.asarray(self.logits(obs), np.float32)
        noise = np.asarray(noise)
        if noise.shape != logits.shape:
            raise UsageError(f"noise of shape {noise.shape} for logits {logits.shape}: one "
                             "uniform in (0, 1) per action of each observation")  # fmt: skip
        drawn = np.argmax(logits + gumbel_from_uniform(noise), axis=-1).astype(np.int64)
        return int(drawn) if logits.ndim == 1 else drawn


# -- the in-graph twin (the compiled loop's acting, rlkit.run.compiled.sac) -------------------
def graph_categorical_action(
    logits: tf.Tensor, step: tf.Tensor, seed: tf.Tensor, learning_starts: int
) -> tf.Tensor:
    """:meth:`CategoricalActing.act` (exploring) of a batch in the graph: int32 ``[N]`` actions
    for ``logits`` ``[N, |A|]`` at the int64 step count ``step``: uniform before
    ``learning_starts``, else :func:`sample_categorical` of a uniform draw (the same inverse
    CDF). The random numbers: stateless uniforms of ``seed`` (int32 ``[2]``), one for the
    warm-up action and one for the draw."""
    n, num_actions = logits.shape[0], logits.shape[-1]
    warm_seed, draw_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
    warm_up = tf.random.stateless_uniform([n], warm_seed, 0, num_actions, tf.int32)
    uniform = tf.random.stateless_uniform([n], draw_seed, dtype=tf.float64)
    probs = tf.nn.softmax(tf.cast(logits, tf.float64), axis=-1)
    cdf = tf.cumsum(probs, axis=-1)
    drawn = tf.reduce_sum(tf.cast(cdf < uniform[:, None], tf.int32), axis=-1)
    drawn = tf.minimum(drawn, num_actions - 1)
    return tf.where(step < learning_starts, warm_up, drawn)
