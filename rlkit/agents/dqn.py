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

import numpy as np
import tensorflow as tf

from rlkit import losses
from rlkit.agents import dqn_config
from rlkit.agents.base import Agent
from rlkit.agents.dqn_config import DQNConfig
from rlkit.compiled import CompiledFunction
from rlkit.gradients import UpdatePipeline, apply_gradients, transforms_from_config
from rlkit.networks import QNetwork
from rlkit.optimizers import make_optimizer
from rlkit.replay import Batch, ReplayMemory
from rlkit.schedules import blocks_due, dqn3_epsilon, dqn3_linear
from rlkit.spaces import observation_encoder


class DQN(Agent):
    """Deep Q-Network agent for discrete action spaces.

    Args:
        observation_space: ``Box`` (flattened) or ``Discrete`` (one-hot) observations.
        action_space: ``Discrete(n)``.
        config: a :class:`DQNConfig`; keyword arguments override its keys.
        seed: seeds weight initialisation, replay sampling and exploration.
    """

    name = "dqn"
    config_class = DQNConfig

    def __init__(self, observation_space, action_space, config=None, seed: int = 0, **overrides):
        super().__init__(observation_space, action_space, config, seed, **overrides)
        cfg = self.config
        self.encode, obs_dim = observation_encoder(observation_space, "dqn")
        self.num_actions = int(action_space.n)
        self._action_start = int(action_space.start)
        self.q, self.q_target = (
            QNetwork(obs_dim, self.num_actions, cfg.hidden_sizes, cfg.dueling, seed, name, cfg.init)
            for name in ("q", "q_target")
        )
        self.pipeline = UpdatePipeline(
            self.q.variables,
            make_optimizer(cfg.optimizer, cfg.learning_rate),
            transforms_from_config(cfg.max_grad_norm),
        )
        # a stream of its own: default_rng(seed) is also what gymnasium seeds the env with
        self.replay = ReplayMemory(cfg.buffer_size, (obs_dim,), np.float32, (), np.int64, [seed, 3])
        self.rng = np.random.default_rng([seed, 1])  # exploration, apart from replay sampling
        self.num_updates = 0
        self._last_update_step = 0  # num_steps when update() last ran
        self._target_stale = False
        self._train_block = CompiledFunction(self._train_block_graph, cfg.jit_compile)
        self._sync_target_graph = tf.function(self._copy_online_to_target)
        self._copy_online_to_target()
        self._policy = self.q.numpy_snapshot()

    check_spaces = staticmethod(dqn_config.check_spaces)

    # -- acting ------------------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        """Exploration rate at the current step (DQN3.0's linear schedule)."""
        cfg = self.config
        return dqn3_epsilon(
            self.num_steps, cfg.eps_start, cfg.eps_end, cfg.eps_anneal_steps, cfg.learning_starts
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
            cfg.learning_starts,
        )

    def diagnostics(self) -> dict[str, float]:
        return {"epsilon": self.epsilon, "learning_rate": self.learning_rate}

    def q_values(self, obs) -> np.ndarray:
        """``Q(s, .)`` from the numpy copy of the online network: ``[A]`` or ``[N, A]``."""
        return self._policy(self.encode(obs))

    def act(self, obs, explore: bool = True):
        """Epsilon-greedy action (greedy when ``explore`` is False).

        ``obs`` is one observation (returns an int) or a batch (returns ``[N]`` ints).
        """
        x = self.encode(obs)
        if x.ndim == 1:
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

    # -- learning ----------------------------------------------------------------------------
    def observe(self, obs, action, reward, next_obs, terminated, truncated) -> None:
        """Store one transition and advance the step counter."""
        if self.config.reward_clip > 0:
            reward = float(np.clip(reward, -self.config.reward_clip, self.config.reward_clip))
        self.replay.add(
            self.encode(obs),
            int(action) - self._action_start,
            reward,
            self.encode(next_obs),
            terminated,
            truncated,
        )
        self.num_steps += 1

    def observe_batch(self, obs, actions, rewards, next_obs, terminated, truncated) -> None:
        """Store ``N`` transitions (leading axis ``N``, e.g. from a vector env)."""
        rewards = np.asarray(rewards, dtype=np.float32)
        if self.config.reward_clip > 0:
            rewards = np.clip(rewards, -self.config.reward_clip, self.config.reward_clip)
        self.replay.add_batch(
            self.encode(obs),
            np.asarray(actions) - self._action_start,
            rewards,
            self.encode(next_obs),
            terminated,
            truncated,
        )
        self.num_steps += len(rewards)

    def update(self) -> dict[str, float] | None:
        """Run whatever is due since the last call: blocks of updates, then a target copy.

        A block of ``gradient_steps`` updates runs each time the step count passes a
        multiple of ``train_freq`` (from ``learning_starts`` on), a target copy each
        time it passes a multiple of ``target_update``, as DQN3.0 does; with one
        environment that is ``step % train_freq == 0``. Returns ``{"loss", "q",
        "abs_delta"}`` averaged over the last block, or None when no update ran.
        """
        cfg = self.config
        metrics = None
        before, t = self._last_update_step, self.num_steps
        self._last_update_step = t
        start = max(cfg.learning_starts, cfg.batch_size)
        blocks = blocks_due(before, t, cfg.train_freq, start)
        if len(self.replay) < cfg.batch_size:
            blocks = 0
        for _ in range(blocks):
            if cfg.learning_rate_end >= 0:
                self.pipeline.optimizer.learning_rate.assign(self.learning_rate)
            batch = self.replay.sample(cfg.batch_size, cfg.gradient_steps)
            loss, q, abs_delta = self._train_block(*self._tensors(batch))
            self.num_updates += cfg.gradient_steps
            self._target_stale = True
            metrics = {"loss": float(loss), "q": float(q), "abs_delta": float(abs_delta)}
        if blocks:
            self._policy = self.q.numpy_snapshot()
        crossed_target = t // cfg.target_update > before // cfg.target_update
        if self._target_stale and cfg.target_tau == 0 and crossed_target:
            self.sync_target()
        return metrics

    def sync_target(self) -> None:
        """Hard-copy the online weights into the target network."""
        self._sync_target_graph()
        self._target_stale = False

    def _copy_online_to_target(self) -> None:
        for target, online in zip(self.q_target.variables, self.q.variables, strict=True):
            target.assign(online)

    @staticmethod
    def _tensors(batch: Batch):
        return (
            tf.convert_to_tensor(batch.obs),
            tf.convert_to_tensor(batch.actions, tf.int32),
            tf.convert_to_tensor(batch.rewards),
            tf.convert_to_tensor(batch.next_obs),
            tf.convert_to_tensor(batch.terminated, tf.float32),
        )

    def _train_block_graph(self, obs, actions, rewards, next_obs, terminated):
        """``K`` updates in one graph; inputs have leading shape ``[K, B]``."""
        num_blocks = tf.shape(rewards)[0]
        totals = tf.zeros([3])
        # With hard target copies the target network is fixed for the whole block, so its
        # values for all K minibatches come from one large (and efficient) forward pass.
        all_next_q_target = None
        if self.config.target_tau == 0:
            flat = tf.reshape(next_obs, [-1, tf.shape(next_obs)[-1]])
            all_next_q_target = tf.reshape(
                self.q_target.model(flat), [num_blocks, -1, self.num_actions]
            )
        for k in tf.range(num_blocks):
            step_metrics = self._update_step(
                obs[k],
                actions[k],
                rewards[k],
                next_obs[k],
                terminated[k],
                None if all_next_q_target is None else all_next_q_target[k],
            )
            totals += tf.stack(step_metrics)
        totals /= tf.cast(num_blocks, tf.float32)
        return totals[0], totals[1], totals[2]

    def _update_step(self, obs, actions, rewards, next_obs, terminated, next_q_target=None):
        grads, (loss, q, abs_delta) = self._gradients(
            obs, actions, rewards, next_obs, terminated, next_q_target
        )
        apply_gradients(self.pipeline.optimizer, grads, self.pipeline.variables)
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
                r_max=cfg.r_max if cfg.rescale_r else None,
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
            r_max=cfg.r_max if cfg.rescale_r else None,
            next_q_online=self.q.model(next_obs) if cfg.double_dqn else None,
        )
        return delta.numpy()

    def gradients(self, batch: Batch) -> list[tf.Tensor]:
        """The processed gradients one update would apply for ``batch`` (``[B]``), unapplied."""
        grads, _ = self._gradients(*self._tensors(batch))
        return grads

    # -- persistence -------------------------------------------------------------------------
    counter_names = ("num_steps", "num_updates")

    def checkpoint_variables(self) -> dict[str, list]:
        return {"q": self.q.variables, "q_target": self.q_target.variables}

    def optimizers(self) -> dict:
        return {"q": self.pipeline.optimizer}

    def rngs(self) -> dict[str, np.random.Generator]:
        return {"explore": self.rng}

    def memories(self) -> dict[str, ReplayMemory]:
        return {"replay": self.replay}

    def extra_state(self) -> dict:
        return {"target_stale": self._target_stale, "last_update_step": self._last_update_step}

    def load_extra_state(self, state: dict) -> None:
        self._target_stale = bool(state.get("target_stale", False))
        self._last_update_step = int(state.get("last_update_step", self.num_steps))

    def after_restore(self) -> None:
        self._policy = self.q.numpy_snapshot()
        if self._last_update_step == 0:  # a loaded model: nothing is owed before num_steps
            self._last_update_step = self.num_steps
