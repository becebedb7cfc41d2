"""DQN, faithful to DeepMind's DQN3.0 ``getQUpdate`` / ``qLearnMinibatch``.

The TD error ``delta`` is clipped to ``+-clip_delta``, written at the taken action
and injected as the output gradient of the Q network
(``tape.gradient(q_values, variables, output_gradients=...)``), summed over the
minibatch. No scalar loss takes part in that path; ``loss="huber"``/``"mse"``
run the scalar-loss equivalents through the same pipeline for comparison.

Speed: updates run in blocks of ``gradient_steps`` inside one compiled
``tf.function`` (optionally XLA); acting uses a numpy copy of the weights that is
refreshed after each block, so no TensorFlow call happens per environment step.
"""

from __future__ import annotations

from types import MethodType

import numpy as np
import tensorflow as tf

from rlkit.agents import dqn_config, dqn_structured
from rlkit.agents.dqn_config import DQNConfig
from rlkit.agents.off_policy import OffPolicyAgent
from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.schedules import crossed, dqn3_epsilon, dqn3_linear
from rlkit.learn import losses
from rlkit.learn.compiled import CompiledFunction, NestedCompiledFunction
from rlkit.learn.gradients import UpdatePipeline, transforms_from_config
from rlkit.learn.optimizers import make_optimizer
from rlkit.networks.custom import (
    GIVEN_IN_PYTHON,
    KerasQNetwork,
    build_model,
    check_output,
    network_source,
    twin,
)
from rlkit.networks.torso import QNetwork
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
    """

    name = "dqn"
    config_class = DQNConfig
    accepts_images = True
    accepts_structured = True

    def __init__(
        self, observation_space, action_space, config=None, seed: int = 0, q_network=None,
        **overrides,
    ) -> None:  # fmt: skip
        """``q_network``: your own network (see :mod:`rlkit.networks.custom`): a Keras
        model, a builder ``(observation_space, action_space) -> keras.Model``, or the name
        of an importable builder (``"package.module:function"``, kept in the config)."""
        self._q_network = q_network
        if q_network is not None:
            overrides["q_network"] = q_network if isinstance(q_network, str) else GIVEN_IN_PYTHON
        super().__init__(observation_space, action_space, config, seed, **overrides)

    def replay_class(self) -> type[ReplayMemory]:
        """A frame replay (each frame stored once) when ``frame_stack`` says the observations
        are stacks of frames; one array per part for Dict and Tuple observations."""
        if self.obs_format.parts:
            return StructuredReplay
        return FrameReplay if self.config.frame_stack else ReplayMemory

    def build(self, seed: int) -> None:
        cfg = self.config
        if cfg.frame_stack and self.obs_format.kind != "image":
            raise UsageError(
                "frame_stack needs image observations [H, W, frames] (e.g. an ALE/* id)"
            )
        self.num_actions = int(self.action_space.n)
        self._action_start = int(self.action_space.start)
        self.action_spec = ((), np.int64)
        if self.obs_format.parts:  # Dict / Tuple: the user's network, acting bound once here
            if not cfg.q_network:
                dqn_structured.refuse_builtin_network(self)
            self.act = MethodType(dqn_structured.act, self)
        if cfg.q_network:
            self.q, self.q_target = self._custom_networks(cfg.q_network)
        else:
            self.q, self.q_target = (
                QNetwork(self.obs_format, self.num_actions, cfg.hidden_sizes, cfg.dueling, seed,
                         name, cfg.init, cfg.torso, cfg.conv_padding)
                for name in ("q", "q_target")
            )  # fmt: skip
        self.pipeline = UpdatePipeline(
            self.q.variables,
            make_optimizer(cfg.optimizer, cfg.learning_rate, cfg.adam_epsilon),
            transforms_from_config(cfg.max_grad_norm),
        )
        self._target_stale = False
        self.eval_rng = seeding.generator(seed, "evaluate")  # eval_epsilon's draws
        self.r_max = float(cfg.r_max)  # the running maximum with r_max_running
        self._r_max_variable = tf.Variable(self.r_max, trainable=False, name="r_max")
        compiled = NestedCompiledFunction if self.obs_format.parts else CompiledFunction
        self._train_block = compiled(self._train_block_graph, cfg.jit_compile)
        self._sync_target_graph = tf.function(self._copy_online_to_target)
        self._copy_online_to_target()

    def _custom_networks(self, named: str) -> tuple[KerasQNetwork, KerasQNetwork]:
        """The user's Q-network and its target twin (same architecture, copied weights)."""
        source = network_source("q_network", named, self._q_network)
        spaces = self.observation_space, self.action_space
        model = build_model(source, *spaces, "q_network", seeding.network_seed(self.seed, "q"))
        sample = check_output(model, self.obs_format, (self.num_actions,), "q_network")
        target = twin(model, source, *spaces, "q_network")
        check_output(target, self.obs_format, (self.num_actions,), "q_network")
        parts = self.obs_format.parts
        return KerasQNetwork(model, sample, parts), KerasQNetwork(target, sample, parts)

    check_spaces = staticmethod(dqn_config.check_spaces)

    # -- acting ------------------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        """Exploration rate at the current step (DQN3.0's linear schedule)."""
        cfg = self.config
        return dqn3_epsilon(
            self.num_steps, cfg.eps_start, cfg.eps_end, cfg.eps_anneal_steps, self._anneal_start
        )

    @property
    def learning_rate(self) -> float:
        """Learning rate at the current step (DQN3.0's lr_start -> lr_end annealing)."""
        cfg = self.config
        if cfg.learning_rate_end < 0:
            return cfg.learning_rate
        return dqn3_linear(
            self.num_steps,
            cfg.learning_rate,
            cfg.learning_rate_end,
            cfg.lr_anneal_steps,
            self._anneal_start,
        )

    @property
    def _anneal_start(self) -> int:
        """Where the linear schedules start: learning_starts (DQN3.0) or step 0 (SB3)."""
        return 0 if self.config.exploration_from_start else self.config.learning_starts

    @property
    def evaluation_epsilon(self) -> float:
        return self.config.eval_epsilon

    def diagnostics(self) -> dict[str, float]:
        return {"epsilon": self.epsilon, "learning_rate": self.learning_rate}

    def q_values(self, obs) -> np.ndarray:
        """``Q(s, .)`` of the online network as acting sees it: ``[A]`` or ``[N, A]``."""
        return self._policy(self.encode(obs))

    def act(self, obs, explore: bool = True):
        """Epsilon-greedy action; with ``explore`` False the evaluation rule: greedy, or
        epsilon-greedy with ``eval_epsilon`` (DQN3.0 evaluates with 0.05) drawing from a
        generator of its own, so evaluating never changes what training draws.

        ``obs`` is one observation (returns an int) or a batch (returns ``[N]`` ints).
        """
        x = self.encode(obs)
        if not explore and self.config.eval_epsilon > 0:
            return self._epsilon_greedy(x, self.config.eval_epsilon, self.eval_rng)
        if x.ndim == len(self.obs_format.shape):
            # as DQN3.0's eGreedy: the network runs only when the action is greedy
            if explore and self.rng.random() < self.epsilon:
                return int(self.rng.integers(self.num_actions)) + self._action_start
            return int(np.argmax(self._policy(x))) + self._action_start
        if not explore:
            return np.argmax(self._policy(x), axis=-1) + self._action_start
        n = len(x)
        random = self.rng.random(n) < self.epsilon
        actions = self.rng.integers(self.num_actions, size=n)
        if not random.all():
            actions = np.where(random, actions, np.argmax(self._policy(x), axis=-1))
        return actions + self._action_start

    def _epsilon_greedy(self, x: np.ndarray, epsilon: float, rng: np.random.Generator):
        """Epsilon-greedy for one observation or a batch; the network runs only for the
        greedy ones."""
        if x.ndim == len(self.obs_format.shape):
            if rng.random() < epsilon:
                return int(rng.integers(self.num_actions)) + self._action_start
            return int(np.argmax(self._policy(x))) + self._action_start
        random = rng.random(len(x)) < epsilon
        actions = rng.integers(self.num_actions, size=len(x))
        if not random.all():
            actions = np.where(random, actions, np.argmax(self._policy(x), axis=-1))
        return actions + self._action_start

    # -- learning ----------------------------------------------------------------------------
    def stored_action(self, action) -> int:
        return int(action) - self._action_start

    def stored_actions(self, actions) -> np.ndarray:
        return np.asarray(actions) - self._action_start

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
        return self._r_max_variable if cfg.r_max_running else cfg.r_max

    def learn(self, batch: Batch) -> dict[str, float]:
        """One block of ``gradient_steps`` updates; ``{"loss", "q", "abs_delta"}`` averaged
        over the block."""
        if self.config.learning_rate_end >= 0:
            self.pipeline.optimizer.learning_rate.assign(self.learning_rate)
        if self.config.r_max_running:
            self._r_max_variable.assign(self.r_max)
        loss, q, abs_delta = self._train_block(*self._tensors(batch))
        self.num_updates += int(batch.rewards.shape[0])
        self._target_stale = True
        return {"loss": float(loss), "q": float(q), "abs_delta": float(abs_delta)}

    def refresh_policy(self) -> None:
        self._policy = self.q.policy()

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
    def _tensors(batch: Batch):
        """The batch as tensors (observations: an array, or a dict or tuple of them)."""
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
        obs, actions, rewards, next_obs, terminated = self._tensors(batch)
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
        """The processed gradients one update would apply for ``batch`` (``[B]``), unapplied."""
        grads, _ = self._gradients(*self._tensors(batch))
        return grads

    # -- persistence -------------------------------------------------------------------------
    def checkpoint_variables(self) -> dict[str, list]:
        return {"q": self.q.variables, "q_target": self.q_target.variables}

    def learner_state(self) -> dict:
        return {"optimizer": {"q": self.pipeline.optimizer}, "rngs": {"evaluate": self.eval_rng},
                "extra": {"target_stale": self._target_stale, "r_max": self.r_max}}  # fmt: skip

    def load_scalars(self, counters: dict, extra: dict) -> None:
        super().load_scalars(counters, extra)
        self._target_stale = bool(extra.get("target_stale", False))
        self.r_max = float(extra.get("r_max", self.config.r_max))
