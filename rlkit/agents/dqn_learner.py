"""DQN's learner, faithful to DeepMind's DQN3.0 ``getQUpdate`` / ``qLearnMinibatch``.

The TD error ``delta`` is clipped to ``+-clip_delta``, written at the taken action
and injected as the output gradient of the Q network
(``tape.gradient(q_values, variables, output_gradients=...)``), summed over the
minibatch. No scalar loss takes part in that path; ``loss="huber"``/``"mse"``
run the scalar-loss equivalents through the same pipeline for comparison.

Updates run in blocks of ``gradient_steps`` inside one compiled ``tf.function``
(optionally XLA); the target network is copied every ``target_update`` steps (or
follows the online one by Polyak averaging, ``target_tau``). What acting reads
(:meth:`DQNLearner.policy`) is a numpy copy of an MLP, or one compiled call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import tensorflow as tf

from rlkit.agents.dqn_config import anneal_start
from rlkit.agents.parts import Clock, Learner
from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.schedules import crossed, dqn3_linear
from rlkit.core.spaces import ObservationFormat
from rlkit.core.structure import describe
from rlkit.learn import losses
from rlkit.learn.compiled import CompiledFunction, NestedCompiledFunction
from rlkit.learn.gradients import UpdatePipeline, transforms_from_config
from rlkit.learn.optimizers import make_optimizer
from rlkit.networks.custom import KerasQNetwork, build_model, check_output, network_source, twin
from rlkit.networks.torso import QNetwork
from rlkit.replay.memory import Batch

if TYPE_CHECKING:
    from rlkit.agents.dqn_config import DQNConfig


class DQNLearner(Learner):
    """The Q-network, its target, the update pipeline and the compiled block of updates.

    Args:
        config: the agent's :class:`~rlkit.agents.dqn_config.DQNConfig`.
        obs_format: how observations reach the network (``[B, *shape]``, or a structure).
        observation_space: the space a network of one's own is built for.
        action_space: ``Discrete(A)``; the network outputs ``[B, A]`` Q-values.
        seed: the agent's seed (weight initialisation).
        clock: the agent's step count (the learning-rate schedule).
        q_network: a network of one's own given as a Python object (a Keras model or a
            builder); one named in ``config.q_network`` is found by itself.

    Attributes:
        q, q_target: the online and target networks (``.model``: the Keras model).
        pipeline: the online network's :class:`~rlkit.learn.gradients.UpdatePipeline`.
        r_max: what rewards are divided by with ``rescale_r`` (DQN3.0's running maximum
            with ``r_max_running``).
        train_block: the compiled block of updates, taking :meth:`tensors` of a ``[K, B]``
            batch.
    """

    def __init__(
        self, config: DQNConfig, obs_format: ObservationFormat, observation_space, action_space,
        seed: int, clock: Clock, q_network: Any = None,
    ) -> None:  # fmt: skip
        cfg = self.config = config
        self.obs_format = obs_format
        self.num_actions = int(action_space.n)
        self.clock = clock
        self.num_updates = 0
        if obs_format.parts and not cfg.q_network:
            refuse_builtin_network(obs_format)
        if cfg.q_network:
            spaces = observation_space, action_space
            self.q, self.q_target = custom_networks(cfg.q_network, q_network, spaces, obs_format,
                                                    seed)  # fmt: skip
        else:
            self.q, self.q_target = (
                QNetwork(obs_format, self.num_actions, cfg.hidden_sizes, cfg.dueling, seed,
                         name, cfg.init, cfg.torso, cfg.conv_padding)
                for name in ("q", "q_target")
            )  # fmt: skip
        self.pipeline = UpdatePipeline(
            self.q.variables,
            make_optimizer(cfg.optimizer, cfg.learning_rate, cfg.adam_epsilon),
            transforms_from_config(cfg.max_grad_norm),
        )
        self._target_stale = False
        self.r_max = float(cfg.r_max)  # the running maximum with r_max_running
        self.r_max_variable = tf.Variable(self.r_max, trainable=False, name="r_max")
        compiled = NestedCompiledFunction if obs_format.parts else CompiledFunction
        self.train_block = compiled(self._train_block_graph, cfg.jit_compile)
        self._sync_target_graph = tf.function(self._copy_online_to_target)
        self._copy_online_to_target()

    # -- schedules and what acting reads -----------------------------------------------------
    @property
    def learning_rate(self) -> float:
        """Learning rate at the current step (DQN3.0's lr_start -> lr_end annealing)."""
        cfg = self.config
        if cfg.learning_rate_end < 0:
            return cfg.learning_rate
        return dqn3_linear(
            self.clock(),
            cfg.learning_rate,
            cfg.learning_rate_end,
            cfg.lr_anneal_steps,
            anneal_start(cfg),
        )

    def policy(self) -> Callable[[Any], np.ndarray]:
        """``obs [*shape] -> Q [A]`` or ``[N, *shape] -> [N, A]`` of the online network: a
        numpy copy of an MLP (taken now), else one compiled call reading the live weights."""
        return self.q.policy()

    def diagnostics(self) -> dict[str, float]:
        return {"learning_rate": self.learning_rate}

    def rewards_stored(self, rewards) -> None:
        """DQN3.0's ``r_max = max(r_max, reward)`` for each (clipped) reward stored."""
        if self.config.r_max_running:
            self.r_max = max(self.r_max, float(np.max(rewards)))

    def _r_max_in_graph(self):
        """What rewards are divided by: None without rescale_r; the configured constant; or
        the running maximum (a variable, so the compiled update reads its current value)."""
        cfg = self.config
        if not cfg.rescale_r:
            return None
        return self.r_max_variable if cfg.r_max_running else cfg.r_max

    # -- learning ----------------------------------------------------------------------------
    def learn(self, batch: Batch) -> dict[str, float]:
        """One block of ``gradient_steps`` updates on ``batch`` (``[K, B]``); ``{"loss",
        "q", "abs_delta"}`` averaged over the block."""
        if self.config.learning_rate_end >= 0:
            self.pipeline.optimizer.learning_rate.assign(self.learning_rate)
        if self.config.r_max_running:
            self.r_max_variable.assign(self.r_max)
        loss, q, abs_delta = self.train_block(*self.tensors(batch))
        self.num_updates += int(batch.rewards.shape[0])
        self._target_stale = True
        return {"loss": float(loss), "q": float(q), "abs_delta": float(abs_delta)}

    def after_blocks(self, before: int, now: int) -> None:
        """DQN3.0's hard target copy each time the step count passes a multiple of
        ``target_update`` (and the online network changed since the last copy)."""
        cfg = self.config
        if self._target_stale and cfg.target_tau == 0 and crossed(before, now, cfg.target_update):
            self.sync_target()

    def sync_target(self) -> None:
        """Hard-copy the online weights into the target network."""
        self._sync_target_graph()
        self._target_stale = False

    def _copy_online_to_target(self) -> None:
        for target, online in zip(self.q_target.variables, self.q.variables, strict=True):
            target.assign(online)

    @staticmethod
    def tensors(batch: Batch) -> tuple:
        """``batch`` as :attr:`train_block` takes it: ``(obs, actions, rewards, next_obs,
        terminated)`` tensors (observations: an array, or a dict or tuple of them)."""
        return (
            tf.nest.map_structure(tf.convert_to_tensor, batch.obs),
            tf.convert_to_tensor(batch.actions, tf.int32),
            tf.convert_to_tensor(batch.rewards),
            tf.nest.map_structure(tf.convert_to_tensor, batch.next_obs),
            tf.convert_to_tensor(batch.terminated, tf.float32),
        )

    def _train_block_graph(self, obs, actions, rewards, next_obs, terminated):
        """``K`` updates in one graph; inputs have leading shape ``[K, B]``."""
        num_updates_in_block = tf.shape(rewards)[0]
        totals = tf.zeros([3])
        # With hard target copies the target network is fixed for the whole block, so its
        # values for all K minibatches come from one large (and efficient) forward pass.
        all_next_q_target = None
        if self.config.target_tau == 0:
            if self.obs_format.parts:  # each part [K, B, ...] -> [K * B, ...]
                flat = tf.nest.map_structure(lambda t: tf.reshape(t, [-1, *t.shape[2:]]),
                                             next_obs)  # fmt: skip
            else:
                flat = tf.reshape(next_obs, [-1, *self.obs_format.shape])
            all_next_q_target = tf.reshape(
                self.q_target.model(flat), [num_updates_in_block, -1, self.num_actions]
            )
        for k in tf.range(num_updates_in_block):
            step_metrics = self._update_step(
                tf.nest.map_structure(lambda t: t[k], obs),  # noqa: B023 (called right here)
                actions[k],
                rewards[k],
                tf.nest.map_structure(lambda t: t[k], next_obs),  # noqa: B023
                terminated[k],
                None if all_next_q_target is None else all_next_q_target[k],
            )
            totals += tf.stack(step_metrics)
        totals /= tf.cast(num_updates_in_block, tf.float32)
        return totals[0], totals[1], totals[2]

    def _update_step(self, obs, actions, rewards, next_obs, terminated, next_q_target=None):
        grads, (loss, q, abs_delta) = self._gradients(
            obs, actions, rewards, next_obs, terminated, next_q_target
        )
        self.pipeline.apply(grads)
        tau = self.config.target_tau
        if tau > 0:
            for target, online in zip(self.q_target.variables, self.q.variables, strict=True):
                target.assign(target + tau * (online - target))
        return loss, q, abs_delta

    def _gradients(self, obs, actions, rewards, next_obs, terminated, next_q_target=None):
        """Processed gradients for one minibatch ``[B]`` and metrics (loss, mean Q, mean |delta|).

        ``loss`` is the per-example loss of the chosen path (Huber with the clip for
        ``dqn3``) reduced as configured; it is reported, never differentiated in ``dqn3``.
        ``next_q_target`` (``[B, A]``) may be passed in when computed ahead.
        """
        cfg = self.config
        if next_q_target is None:
            next_q_target = self.q_target.model(next_obs)
        next_q_online = self.q.model(next_obs) if cfg.double_dqn else None
        with tf.GradientTape() as tape:
            q_values = self.q.model(obs, training=True)
            q_taken = tf.gather(q_values, actions, axis=1, batch_dims=1)
            delta = losses.q_learning_delta(
                q_taken,
                rewards,
                next_q_target,
                terminated,
                cfg.gamma,
                r_max=self._r_max_in_graph(),
                next_q_online=next_q_online,
            )
            if cfg.loss == "mse" or not cfg.clip_delta:
                per_example = losses.squared(delta)
            else:
                per_example = losses.huber(delta, cfg.clip_delta)
            reduce = tf.reduce_sum if cfg.reduction == "sum" else tf.reduce_mean
            loss = reduce(per_example)
        if cfg.loss == "dqn3":
            output_gradient = losses.dqn3_output_gradient(
                delta, actions, self.num_actions, cfg.clip_delta
            )
            if cfg.reduction == "mean":
                output_gradient /= tf.cast(tf.shape(delta)[0], output_gradient.dtype)
            grads = self.pipeline.gradients(tape, q_values, output_gradients=output_gradient)
        else:
            grads = self.pipeline.gradients(tape, loss)
        metrics = (loss, tf.reduce_mean(q_taken), tf.reduce_mean(tf.abs(delta)))
        return grads, metrics

    def td_errors(self, batch: Batch) -> np.ndarray:
        """DQN3.0's unclipped ``delta`` for ``batch`` (``[B]``), without updating anything."""
        cfg = self.config
        obs, actions, rewards, next_obs, terminated = self.tensors(batch)
        q_taken = tf.gather(self.q.model(obs), actions, axis=1, batch_dims=1)
        delta = losses.q_learning_delta(
            q_taken,
            rewards,
            self.q_target.model(next_obs),
            terminated,
            cfg.gamma,
            r_max=self._r_max_in_graph(),
            next_q_online=self.q.model(next_obs) if cfg.double_dqn else None,
        )
        return delta.numpy()

    def gradients(self, batch: Batch) -> list[tf.Tensor]:
        """The processed gradients one update would apply for ``batch`` (``[B]``), unapplied:
        one per online variable, in its shape."""
        grads, _ = self._gradients(*self.tensors(batch))
        return grads

    # -- persistence -------------------------------------------------------------------------
    def variables(self) -> dict[str, list]:
        return {"q": self.q.variables, "q_target": self.q_target.variables}

    def state(self) -> dict[str, dict[str, Any]]:
        return {"optimizer": {"q": self.pipeline.optimizer},
                "extra": {"target_stale": self._target_stale, "r_max": self.r_max}}  # fmt: skip

    def load_scalars(self, counters: dict[str, int], extra: dict[str, Any]) -> None:
        self._target_stale = bool(extra.get("target_stale", False))
        self.r_max = float(extra.get("r_max", self.config.r_max))


def custom_networks(
    named: str, given: Any, spaces: tuple, obs_format: ObservationFormat, seed: int
) -> tuple[KerasQNetwork, KerasQNetwork]:
    """The user's Q-network (``[B, ...] -> [B, A]``) and its target twin (same
    architecture, copied weights); ``spaces``: (observation space, action space)."""
    num_actions = int(spaces[1].n)
    source = network_source("q_network", named, given)
    model = build_model(source, *spaces, "q_network", seeding.network_seed(seed, "q"))
    sample = check_output(model, obs_format, (num_actions,), "q_network")
    target = twin(model, source, *spaces, "q_network")
    check_output(target, obs_format, (num_actions,), "q_network")
    parts = obs_format.parts
    return KerasQNetwork(model, sample, parts), KerasQNetwork(target, sample, parts)


def refuse_builtin_network(obs_format: ObservationFormat) -> None:
    """UsageError: rlkit's own networks take vectors, images or one-hot observations."""
    raise UsageError(
        f"dqn's built-in networks cannot take a {describe(obs_format.kind, obs_format.parts)} "
        "observation: pass a network of your own that takes it, DQN(..., q_network=build) in "
        "Python or --set q_network=module:function on the command line"
    )
