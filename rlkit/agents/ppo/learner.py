"""PPO's learner: the policy (and its log std), the value network (separate tanh MLPs, or two
heads over one convolutional torso for images: :mod:`rlkit.agents.ppo.networks`), one update
pipeline over both, and the two compiled calls of an update.

An update on a full rollout ``[T, N]`` (``M = T N`` steps):

1. one compiled call (:meth:`PPOLearner.evaluate`): ``V(obs)``, ``V(next_obs)`` and
   ``log pi(a|obs)`` of all ``M`` steps under the weights that collected them;
2. GAE in numpy (:func:`rlkit.learn.advantages.gae`: truncations bootstrap from the final
   observation's value);
3. one compiled block of ``n_epochs x M / batch_size`` minibatch steps (the minibatches'
   indices drawn in numpy from the ``replay`` generator, a fresh permutation per
   epoch), each ``compute_gradients -> process (global-norm clip) -> apply_gradients``
   (:class:`~rlkit.learn.gradients.UpdatePipeline`, one Adam over both networks as SB3's
   and CleanRL's, or PyTorch's RMSprop as SB3's A2C), with the ``target_kl`` early stop
   inside the block.

A2C (:class:`~rlkit.agents.ppo.a2c.A2C`) is this learner with one epoch of one minibatch
holding the whole rollout (``batch_size`` 0): its only step has ratio 1, where the clipped
surrogate's gradient is the policy gradient.

The block returns the updated weights with its metrics, from which the numpy snapshot
acting reads is rebuilt without further TensorFlow calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf
from gymnasium import spaces

from rlkit.agents.parts import Learner
from rlkit.agents.ppo.config import PPOConfig
from rlkit.agents.ppo.distributions import DISCRETE, ActionHead
from rlkit.agents.ppo.minibatches import cut_minibatches, graph_cut_minibatches
from rlkit.agents.ppo.sde import gsde_policy, initial_log_std, sde_log_prob_entropy, sde_snapshot
from rlkit.agents.ppo.user_networks import build_networks
from rlkit.core.spaces import ObservationFormat, vector_format
from rlkit.learn.advantages import (
    approx_kl,
    clipped,
    clipped_surrogate,
    gae,
    normalize_advantages,
    value_error,
)
from rlkit.learn.gradients import UpdatePipeline, transforms_from_config
from rlkit.learn.optimizers import torch_adam, torch_rmsprop
from rlkit.replay.rollout import RolloutBatch

#: the block's metrics, in the order its sums come back
METRICS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "loss")


@dataclass(frozen=True)
class PolicySnapshot:
    """What acting reads, as of the last update.

    Attributes:
        forward: encoded observations ``[*obs_shape]`` / ``[N, *obs_shape]`` -> logits
            ``[(N,) n]`` (Discrete; ``[(N,) sum(nvec)]`` MultiDiscrete) or the Gaussian's
            mean ``[(N,) act_dim]`` (Box, in the action's own units): a numpy copy of the
            policy (the tanh MLP; MinAtar's torso; a user's Dense stack), or one compiled
            call reading the live weights (the Nature CNN; other networks of one's own).
        std: the Gaussian's std ``[act_dim]`` (gSDE: ``[L, act_dim]``, the exploration
            matrix's, and ``forward`` gives ``(latent, mean)``); None for Discrete.
    """

    forward: Callable[[np.ndarray], Any]
    std: np.ndarray | None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.forward(x)


class PPOLearner(Learner):
    """The networks and the compiled update (see the module's docstring).

    Args:
        config: the :class:`PPOConfig`.
        obs_format: the encoded observations' format (an int: float32 vectors that wide);
            images get the shared convolutional torso (``config.torso``), vectors the
            separate tanh networks (:func:`~rlkit.agents.ppo.networks.make_networks`).
        action_space: ``Discrete(n)`` (softmax over ``n`` logits), ``MultiDiscrete(nvec)``
            (one softmax per dimension over its slice of ``sum(nvec)`` logits) or a ``Box``
            (a diagonal Gaussian over its flattened ``A`` dimensions, state-independent log
            std): :class:`~rlkit.agents.ppo.distributions.ActionHead`.
        seed: seeds the weights.
        given: networks of one's own given as Python objects, ``{"actor": ..., "critic":
            ..., "torso": ...}`` (None where not; the config names them:
            :func:`~rlkit.agents.ppo.user_networks.build_networks`).

    Attributes:
        obs_format: the observations' format.
        head: the :class:`~rlkit.agents.ppo.distributions.ActionHead`; ``discrete`` (a
            ``Discrete`` space) and ``nvec`` (a ``MultiDiscrete`` one's sizes, else None)
            are its.
        networks: :class:`~rlkit.agents.ppo.networks.SeparateMLPs` or
            :class:`~rlkit.agents.ppo.networks.ConvActorCritic` (``networks.shared``).
        policy_network, value_network: ``.model`` ``[B, *obs_shape] -> [B, n or A]`` and
            ``[B, *obs_shape] -> [B, 1]`` (the tanh MLPs, or the shared torso's two heads).
        log_std: ``[A]`` variable (Box); None for Discrete and MultiDiscrete.
        pipeline: the :class:`UpdatePipeline` over the variables of :meth:`variables`, group
            by group (the shared torso's, then the policy's and the log std, then the
            value's).
    """

    def __init__(self, config: PPOConfig, obs_format: ObservationFormat | int, action_space,
                 seed: int, observation_space=None, given: dict | None = None) -> None:  # fmt: skip
        cfg = self.config = config
        if isinstance(obs_format, int):
            obs_format = vector_format(obs_format)
        self.obs_format = obs_format
        self.head = ActionHead(action_space)
        self.discrete, self.nvec = self.head.kind == DISCRETE, self.head.nvec
        out_dim = self.head.out_dim
        self.networks = build_networks(obs_format, self.head, cfg, seed,
                                       (observation_space, action_space), given or {})  # fmt: skip
        self.policy_network = self.networks.policy_network
        self.value_network = self.networks.value_network
        self.log_std, self.sde = None, gsde_policy(self.networks, obs_format, action_space, cfg)
        if isinstance(action_space, spaces.Box):  # (gSDE: the exploration matrix's [L, A])
            self.log_std = tf.Variable(initial_log_std(self.sde, obs_format, out_dim, cfg),
                                       name="policy_log_std")  # fmt: skip
        variables = [v for group in self.variables().values() for v in group]
        if cfg.optimizer == "rmsprop":
            optimizer = torch_rmsprop(cfg.learning_rate, cfg.rms_prop_alpha, cfg.rms_prop_eps)
        else:
            optimizer = torch_adam(cfg.learning_rate, epsilon=cfg.adam_epsilon)
        self.pipeline = UpdatePipeline(variables, optimizer,
                                       transforms_from_config(cfg.max_grad_norm))  # fmt: skip
        self.num_updates = 0
        self.last_epochs = 0.0
        obs_spec = tf.TensorSpec([None, *obs_format.shape], obs_format.dtype)
        action_spec = self.head.spec()
        flat = tf.TensorSpec([None], tf.float32)
        #: with action_masks, one more input of each call: bool [M, out_dim]
        self.masked = bool(cfg.action_masks)
        masks = [tf.TensorSpec([None, out_dim], tf.bool)] if self.masked else []
        self._evaluate = tf.function(
            self._evaluate_graph if self.masked else self._evaluate_unmasked,
            input_signature=[obs_spec, obs_spec, action_spec, *masks],
            jit_compile=cfg.jit_compile,
        ).get_concrete_function()
        self._train_function = tf.function(
            self._train_graph if self.masked else self._train_unmasked,
            input_signature=[obs_spec, action_spec, flat, flat, flat, flat,
                             tf.TensorSpec([None, None], tf.int32),
                             tf.TensorSpec([], tf.float32), *masks],
            jit_compile=cfg.jit_compile,
        )  # fmt: skip
        self._train = self._train_function.get_concrete_function()
        self.refresh()

    # -- the snapshot acting reads -----------------------------------------------------------
    def _snapshot_tensors(self) -> list:
        tensors = list(self.networks.snapshot_tensors())
        if self.log_std is not None:
            tensors.append(self.log_std)
        return tensors

    def refresh(self, arrays: Sequence[np.ndarray] | None = None) -> None:
        """Rebuild :meth:`policy`'s snapshot from ``arrays`` (those of the update's return),
        else from the variables (after a load)."""
        if arrays is None:
            arrays = [np.asarray(v.numpy()) for v in self._snapshot_tensors()]
        n = len(self.networks.snapshot_tensors())
        if self.sde is not None:
            self._snapshot = PolicySnapshot(*sde_snapshot(arrays, n, self.config))
            return
        std = None if self.log_std is None else np.exp(np.asarray(arrays[n], np.float64))
        self._snapshot = PolicySnapshot(self.networks.acting_forward(arrays[:n]), std)

    def policy(self) -> PolicySnapshot:
        """The numpy snapshot of the policy as of the last update."""
        return self._snapshot

    # -- the graph's terms -------------------------------------------------------------------
    def _terms(self, obs, actions, masks=None) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """``log pi(a|s)``, the entropy of ``pi(.|s)`` and ``V(s)``, each ``[B]`` (one pass
        through a shared torso); ``masks``: the valid actions, bool ``[B, out_dim]``."""
        if self.sde is not None:  # (gSDE: rlkit/agents/ppo/sde.py)
            return (*sde_log_prob_entropy(self.sde, self.log_std, obs, actions, self.config),
                    self.networks.value(obs))  # fmt: skip
        out, value = self.networks.forward(obs)
        return (*self._log_prob_entropy(out, actions, masks), value)

    def _log_prob_entropy(self, out, actions, masks=None) -> tuple[tf.Tensor, tf.Tensor]:
        """``log pi(a|s)`` and the entropy of ``pi(.|s)``, both ``[B]``, from the policy's
        outputs ``out`` (logits, or the Gaussian's mean): :class:`ActionHead`'s."""
        return self.head.log_prob_entropy(out, actions, self.log_std, masks)

    def _evaluate_graph(self, obs, next_obs, actions, masks=None):
        """``V(obs)``, ``V(next_obs)`` and ``log pi(actions|obs)``, each ``[M]``."""
        log_prob, _, values = self._terms(obs, actions, masks)
        return values, self.networks.value(next_obs), log_prob

    # Without masks the traced functions take exactly the inputs of their signature: traced on
    # the methods themselves, whose ``masks=None`` the signature does not cover, every call
    # failed to bind, and TensorFlow formatted each argument's values into the error before
    # it fell back to the flat signature (~7% of a PPO CartPole run, more of A2C's).
    def _evaluate_unmasked(self, obs, next_obs, actions):
        return self._evaluate_graph(obs, next_obs, actions)

    def _train_unmasked(self, obs, actions, old_log_probs, advantages, returns, old_values,
                        order, clip_range):  # fmt: skip
        return self._train_graph(obs, actions, old_log_probs, advantages, returns, old_values,
                                 order, clip_range)  # fmt: skip

    def _train_graph(self, obs, actions, old_log_probs, advantages, returns, old_values,
                     order, clip_range, masks=None):  # fmt: skip
        """``K = order.shape[0]`` minibatch steps, step ``k`` on the rows ``order[k]``
        (``[K, B]`` indices into the ``[M]`` rollout); stops before the first step whose
        approximate KL exceeds ``1.5 target_kl`` (with ``target_kl`` on). Returns the
        metrics' sums over the steps applied, their count, and the new snapshot weights.

        Its control flow is ``tf.while_loop``/``tf.cond`` written out (no AutoGraph), so
        that the compiled loop's program (traced without AutoGraph) runs the same graph."""
        cfg = self.config
        clip_vf = cfg.clip_range_vf if cfg.clip_range_vf > 0 else None
        steps = tf.shape(order)[0]

        def body(k, sums, count, stopped):
            idx = order[k]
            obs_b, act_b = tf.gather(obs, idx), tf.gather(actions, idx)
            old_lp, adv = tf.gather(old_log_probs, idx), tf.gather(advantages, idx)
            ret, old_v = tf.gather(returns, idx), tf.gather(old_values, idx)
            mask_b = None if masks is None else tf.gather(masks, idx)
            if cfg.normalize_advantage:
                adv = normalize_advantages(adv)
            with tf.GradientTape() as tape:
                log_prob, entropy, value = self._terms(obs_b, act_b, mask_b)
                policy_loss = tf.reduce_mean(clipped_surrogate(log_prob, old_lp, adv, clip_range))
                v_loss = tf.reduce_mean(value_error(value, old_v, ret, clip_vf))
                entropy_mean = tf.reduce_mean(entropy)
                loss = policy_loss - cfg.ent_coef * entropy_mean + cfg.vf_coef * v_loss
            log_ratio = log_prob - old_lp
            kl = tf.reduce_mean(approx_kl(log_ratio))
            fraction = tf.reduce_mean(clipped(tf.exp(log_ratio), clip_range))
            row = tf.stack([policy_loss, v_loss, entropy_mean, kl, fraction, loss])
            if cfg.target_kl <= 0:
                self.pipeline(tape, loss)
                return k + 1, sums + row, count + 1, stopped
            grads = self.pipeline.gradients(tape, loss)
            crossed = kl > 1.5 * cfg.target_kl

            def apply():
                self.pipeline.apply(grads)
                return sums + row, count + 1

            sums, count = tf.cond(crossed, lambda: (sums, count), apply)
            return k + 1, sums, count, crossed

        start = (tf.constant(0), tf.zeros([len(METRICS)]), tf.constant(0), tf.constant(False))
        _, sums, count, _ = tf.while_loop(
            lambda k, sums, count, stopped: tf.logical_and(k < steps, tf.logical_not(stopped)),
            body, start,
        )  # fmt: skip
        weights = [tf.identity(w) for w in self._snapshot_tensors()]
        return [sums, count, *weights]

    def graph_schedules(self, step: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """``(learning rate, clip range)`` float32 at environment step ``step`` (int64): the
        in-graph twins of :meth:`PPOConfig.learning_rate_at` and
        :meth:`~PPOConfig.clip_range_at` (float64 inside, as Python's floats), tied by
        ``tests/unit/agents/test_ppo_twins.py``."""
        cfg = self.config
        if cfg.lr_anneal_steps > 0:
            annealed = tf.minimum(tf.cast(step, tf.float64) / cfg.lr_anneal_steps, 1.0)
        else:
            annealed = tf.constant(0.0, tf.float64)
        rate = tf.constant(cfg.learning_rate, tf.float64)
        if cfg.lr_end_fraction >= 0:
            rate = cfg.learning_rate * (1.0 - annealed * (1.0 - cfg.lr_end_fraction))
        clip = tf.constant(cfg.clip_range, tf.float64)
        if cfg.clip_range_end_fraction >= 0:
            clip = cfg.clip_range * (1.0 - annealed * (1.0 - cfg.clip_range_end_fraction))
        return tf.cast(rate, tf.float32), tf.cast(clip, tf.float32)

    def graph_minibatch_order(self, seed: tf.Tensor, size: int) -> tf.Tensor:
        """The in-graph twin of :meth:`minibatch_order`: a permutation of the ``size`` rows
        per epoch (the argsort of stateless uniforms from ``seed``, int32 ``[2]``), cut as
        :func:`cut_minibatches` cuts them (:func:`graph_cut_minibatches`)."""
        cfg = self.config
        noise = tf.random.stateless_uniform([cfg.n_epochs, size], seed)
        permutations = tf.argsort(noise, axis=1, stable=True, direction="ASCENDING")
        return graph_cut_minibatches(permutations, cfg.batch_size or size)

    # -- learning ----------------------------------------------------------------------------
    def evaluate(self, batch: RolloutBatch, masks: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """``(values, next_values, log_probs)``, each ``[T, N]``, of a rollout: one call
        (``masks``: its steps' action masks ``[T, N, width]``, with ``action_masks``)."""
        steps, streams = batch.rewards.shape
        flat = self._flat(batch)
        values, next_values, log_probs = self._evaluate(flat[0], flat[2], flat[1],
                                                        *self._masks(batch, masks))  # fmt: skip
        return tuple(np.asarray(a).reshape(steps, streams) for a in (values, next_values,
                                                                     log_probs))  # type: ignore[return-value]  # fmt: skip

    def _flat(self, batch: RolloutBatch) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """The rollout's ``obs``, ``actions`` and ``next_obs`` with ``[T, N]`` made ``[M]``
        (row ``t N + n``), observations in their own shape and dtype (uint8 frames stay
        uint8: the network scales them)."""
        m = batch.rewards.size
        shape, dtype = self.obs_format.shape, self.obs_format.dtype
        obs = tf.constant(batch.obs.reshape(m, *shape), dtype)
        next_obs = tf.constant(batch.next_obs.reshape(m, *shape), dtype)
        return obs, self.head.flat(batch.actions, m), next_obs

    def _masks(self, batch: RolloutBatch, masks: np.ndarray | None) -> list[tf.Tensor]:
        """``[masks [M, out_dim]]`` of a rollout's steps (with ``action_masks``); ``[]``
        without."""
        if not self.masked:
            return []
        if masks is None:
            raise ValueError("this learner takes action masks (action_masks): give the rollout's")
        m = batch.rewards.size
        return [tf.constant(np.asarray(masks).reshape(m, -1), tf.bool)]

    def advantages(self, batch: RolloutBatch, masks: np.ndarray | None = None
                   ) -> tuple[np.ndarray, ...]:  # fmt: skip
        """``(values, log_probs, advantages, returns)`` of a rollout, each ``[T, N]``: one
        :meth:`evaluate` call, then GAE (with ``bootstrap_truncated`` off a truncation is
        treated as a termination)."""
        cfg = self.config
        values, next_values, log_probs = self.evaluate(batch, masks)
        terminated = batch.terminated
        if not cfg.bootstrap_truncated:
            terminated = terminated | batch.truncated
        advantages, returns = gae(batch.rewards, values, next_values, terminated,
                                  batch.truncated, cfg.gamma, cfg.gae_lambda)  # fmt: skip
        return values, log_probs, advantages, returns

    def minibatch_order(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``[n_epochs * size / batch_size, batch_size]`` int32 row indices: a fresh
        permutation of the ``size`` rows per epoch, cut into minibatches (``batch_size`` 0:
        one minibatch of all ``size`` rows per epoch, A2C's)."""
        cfg = self.config
        permutations = np.stack([rng.permutation(size) for _ in range(cfg.n_epochs)])
        return cut_minibatches(permutations, cfg.batch_size or size)

    def learn(self, batch: RolloutBatch, step: int = 0,  # type: ignore[override]
              rng: np.random.Generator | None = None, masks: np.ndarray | None = None
              ) -> tuple[dict[str, float], None]:  # fmt: skip
        """One PPO update on a full rollout at environment step ``step`` (the schedules),
        minibatches drawn from ``rng``. Returns its metrics (means over the minibatch steps
        applied) and no TD errors; :meth:`policy` is the updated snapshot afterwards."""
        cfg = self.config
        values, log_probs, advantages, returns = self.advantages(batch, masks)
        rate, clip_range = cfg.learning_rate_at(step), cfg.clip_range_at(step)
        self.pipeline.optimizer.learning_rate.assign(rate)
        obs, actions, _ = self._flat(batch)
        order = self.minibatch_order(rng if rng is not None else np.random.default_rng(0),
                                     values.size)  # fmt: skip
        sums, count, *weights = self._train(
            obs, actions, tf.constant(log_probs.reshape(-1)),
            tf.constant(advantages.reshape(-1)), tf.constant(returns.reshape(-1)),
            tf.constant(values.reshape(-1)), tf.constant(order),
            tf.constant(clip_range, tf.float32), *self._masks(batch, masks),
        )  # fmt: skip
        self.num_updates += 1
        self.refresh([w.numpy() for w in weights])
        applied = int(count)
        means = np.asarray(sums) / max(applied, 1)
        metrics = {name: float(v) for name, v in zip(METRICS, means, strict=True)}
        per_epoch = len(order) // cfg.n_epochs
        self.last_epochs = applied / per_epoch
        residual = np.var(returns - values)
        spread = np.var(returns)
        metrics.update(
            explained_variance=float(1.0 - residual / spread) if spread > 0 else 0.0,
            epochs=self.last_epochs, learning_rate=rate, clip_range=clip_range,
        )  # fmt: skip
        return metrics, None

    @property
    def tracing_count(self) -> int:
        """How many times the update block was traced (1 after any number of updates)."""
        return self._train_function.experimental_get_tracing_count()

    # -- persistence -------------------------------------------------------------------------
    def variables(self) -> dict[str, list]:
        """``{"policy": [policy variables, log_std], "value": [...]}``; with the shared
        torso ``{"torso": [...], "policy": [its head, log_std], "value": [its head]}``."""
        groups = self.networks.groups()
        if self.log_std is not None:
            groups["policy"] = [*groups["policy"], self.log_std]
        return groups

    def state(self) -> dict[str, dict[str, Any]]:
        """The optimizer (one, over both networks), by the config's name for it."""
        return {"optimizer": {self.config.optimizer: self.pipeline.optimizer}}
