"""DDPG whose target networks *are* ``tf.train.ExponentialMovingAverage`` shadows.

As in the TF1 DDPG this follows (``ema = ExponentialMovingAverage(decay=1 - TAU)``,
``target_update = ema.apply(net)``, the target forward pass built from
``ema.average(var)``), there is no second copy of the networks kept in sync by
hand: ``ema.apply`` runs after every gradient step inside the compiled update, and
the target actor and critic are the online Keras models run on the shadow
variables (``model.stateless_call(shadows, [], x)``).

Critic: ``y = stop_gradient(r + gamma (1 - terminated) Q'(s2, mu'(s2)))`` (time-limit
truncation still bootstraps), per-example ``(y - Q(s, a))^2`` averaged over the
minibatch. Actor: the gradient of ``-mean Q(s, mu(s))`` w.r.t. the actor's variables
only. Each goes through its own :class:`~rlkit.gradients.UpdatePipeline` (own
optimizer and gradient transforms).

``td3=True``: twin critics and the smaller of the two target values, target policy
smoothing (clipped Gaussian noise on ``mu'(s2)``) and actor + target updates every
``policy_delay`` critic updates (Fujimoto et al. 2018).

Speed: updates run in blocks of ``gradient_steps`` in one compiled ``tf.function``
(optionally XLA); acting uses a numpy copy of the actor refreshed after each block.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rlkit.actor_critic import ActionBounds, Actor, Critic, NumpyActor
from rlkit.agents import ddpg_config
from rlkit.agents.base import Agent
from rlkit.agents.ddpg_config import DDPGConfig
from rlkit.compiled import CompiledFunction
from rlkit.gradients import UpdatePipeline, apply_gradients, transforms_from_config
from rlkit.noise import make_noise
from rlkit.optimizers import make_optimizer
from rlkit.replay import Batch, ReplayMemory
from rlkit.schedules import blocks_due
from rlkit.spaces import observation_encoder

# -- targets and losses: pure functions, per-example tensors in and out ------------------------


def bootstrap_target(
    rewards: tf.Tensor, terminated: tf.Tensor, next_q: tf.Tensor, gamma: float
) -> tf.Tensor:
    """``y = stop_gradient(r + gamma * (1 - terminated) * next_q)``, shape ``[B]``.

    Args:
        rewards: ``[B]``.
        terminated: ``[B]``, 1 where the MDP ended; a time-limit truncation is *not*
            termination and still bootstraps.
        next_q: ``Q'(s2, mu'(s2))`` from the target networks, ``[B]`` (TD3: the minimum
            over the twin critics).
        gamma: discount.
    """
    not_done = 1.0 - tf.cast(terminated, next_q.dtype)
    return tf.stop_gradient(tf.cast(rewards, next_q.dtype) + gamma * not_done * next_q)


def squared_error(q: tf.Tensor, target: tf.Tensor) -> tf.Tensor:
    """Per-example critic loss ``(target - q)^2``, shape ``[B]`` (not reduced)."""
    return tf.square(target - q)


def smooth_target_action(
    action: tf.Tensor, noise: tf.Tensor, low: np.ndarray, high: np.ndarray
) -> tf.Tensor:
    """TD3's target policy smoothing: ``clip(mu'(s2) + noise, low, high)``, ``[B, act_dim]``.

    ``noise`` is already clipped and in action units (the agent draws it in numpy).
    """
    return tf.clip_by_value(action + noise, low, high)


class DDPG(Agent):
    """Deep Deterministic Policy Gradient (optionally TD3) for bounded Box action spaces.

    Args:
        observation_space: ``Box`` (flattened) or ``Discrete`` (one-hot) observations.
        action_space: a ``Box`` with finite bounds (any shape; flattened inside).
        config: a :class:`DDPGConfig`; keyword arguments override its keys.
        seed: seeds weight initialisation, replay sampling, random actions and noise.

    Attributes:
        actor: :class:`~rlkit.actor_critic.Actor`, ``mu(s)`` in the bounds' units.
        critics: one :class:`~rlkit.actor_critic.Critic` (two with ``td3``).
        ema: the ``tf.train.ExponentialMovingAverage(decay=1 - tau)`` whose shadow
            variables are the target actor and critics.
        replay: the :class:`~rlkit.replay.ReplayMemory`; actions stored as float32
            ``[act_dim]`` in the environment's units.
    """

    name = "ddpg"
    config_class = DDPGConfig

    def __init__(self, observation_space, action_space, config=None, seed: int = 0, **overrides):
        super().__init__(observation_space, action_space, config, seed, **overrides)
        cfg = self.config
        self.encode, obs_dim = observation_encoder(observation_space, "ddpg")
        self.action_shape = tuple(action_space.shape)
        self._action_dtype = action_space.dtype
        self.bounds = ActionBounds(action_space.low, action_space.high)
        act_dim = self.bounds.dim
        self.actor = Actor(obs_dim, self.bounds, cfg.actor_hidden_sizes, seed, "actor")
        self.critics = [
            Critic(obs_dim, self.bounds, cfg.critic_hidden_sizes, seed, f"critic{k}", index=k)
            for k in range(2 if cfg.td3 else 1)
        ]
        self.actor_pipeline = UpdatePipeline(
            self.actor.variables,
            make_optimizer(cfg.actor_optimizer, cfg.actor_learning_rate),
            transforms_from_config(cfg.actor_max_grad_norm),
        )
        self.critic_pipeline = UpdatePipeline(
            [v for critic in self.critics for v in critic.variables],
            make_optimizer(cfg.critic_optimizer, cfg.critic_learning_rate),
            transforms_from_config(cfg.critic_max_grad_norm),
        )
        # The target networks: EMA shadows of the online variables. Keras 3 variables
        # wrap a tf.Variable (``.value``); the EMA tracks those. The first ``apply``
        # creates the shadows initialised to the online weights (and leaves them so).
        self.ema = tf.train.ExponentialMovingAverage(decay=1.0 - cfg.tau)
        self._actor_sources = [v.value for v in self.actor.variables]
        self._critic_sources = [[v.value for v in c.variables] for c in self.critics]
        self._ema_sources = self._actor_sources + [v for vs in self._critic_sources for v in vs]
        self.ema.apply(self._ema_sources)
        # a stream of its own: default_rng(seed) is also what gymnasium seeds the env with
        self.replay = ReplayMemory(
            cfg.buffer_size, (obs_dim,), np.float32, (act_dim,), np.float32, [seed, 3]
        )
        self.rng = np.random.default_rng([seed, 1])  # random actions, target smoothing noise
        self.noise = make_noise(
            cfg.noise,
            (act_dim,),
            cfg.noise_scale,
            np.random.default_rng([seed, 2]),
            cfg.ou_theta,
            cfg.ou_dt,
        )
        self.num_updates = 0  # critic gradient steps
        self.num_actor_updates = 0  # actor gradient steps (= EMA updates)
        self._last_update_step = 0  # num_steps when update() last ran
        self._train_block = CompiledFunction(self._train_block_graph, cfg.jit_compile)
        self._update_targets = tf.function(self._ema_step)
        self._policy: NumpyActor = self.actor.numpy_snapshot()

    check_spaces = staticmethod(ddpg_config.check_spaces)

    # -- target networks -------------------------------------------------------------------
    @property
    def actor_target_variables(self) -> list[tf.Variable]:
        """The target actor: EMA shadows of the actor's variables, in the same order."""
        return [self.ema.average(v) for v in self._actor_sources]

    def critic_target_variables(self, k: int = 0) -> list[tf.Variable]:
        """The target of critic ``k``: EMA shadows of its variables, in the same order."""
        return [self.ema.average(v) for v in self._critic_sources[k]]

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

    def diagnostics(self) -> dict[str, float]:
        """The exploration noise scale (fraction of the bounds' half-range; 0 before learning)."""
        exploring = self.num_steps >= self.config.learning_starts
        return {"noise_scale": self.config.noise_scale if exploring else 0.0}

    # -- acting ------------------------------------------------------------------------------
    def act(self, obs, explore: bool = True) -> np.ndarray:
        """An action in the bounds: ``mu(s)`` (+ noise, clipped, when ``explore``).

        Before ``learning_starts`` steps, exploring actions are uniform in the bounds.
        ``obs`` is one observation (returns an action of the space's shape) or a batch
        ``[N, ...]`` (returns ``[N, *action_shape]``).
        """
        x = self.encode(obs)
        batch = None if x.ndim == 1 else len(x)
        if explore and self.num_steps < self.config.learning_starts:
            shape = (self.bounds.dim,) if batch is None else (batch, self.bounds.dim)
            action = self.rng.uniform(self.bounds.low, self.bounds.high, size=shape)
        else:
            action = self._policy(x)
            if explore and self.config.noise_scale > 0:
                action = action + self.noise(batch) * self.bounds.half_range
        action = self.bounds.clip(action).astype(self._action_dtype)
        return action.reshape(self.action_shape if batch is None else (batch, *self.action_shape))

    # -- learning ----------------------------------------------------------------------------
    def observe(self, obs, action, reward, next_obs, terminated, truncated) -> None:
        """Store one transition; the exploration noise restarts when an episode ends."""
        self.replay.add(
            self.encode(obs),
            np.asarray(action, np.float32).reshape(-1),
            reward,
            self.encode(next_obs),
            terminated,
            truncated,
        )
        self.num_steps += 1
        if terminated or truncated:
            self.noise.reset()

    def observe_batch(self, obs, actions, rewards, next_obs, terminated, truncated) -> None:
        """Store ``N`` transitions (leading axis ``N``, e.g. from a vector env)."""
        n = len(rewards)
        self.replay.add_batch(
            self.encode(obs),
            np.asarray(actions, np.float32).reshape(n, -1),
            np.asarray(rewards, np.float32),
            self.encode(next_obs),
            terminated,
            truncated,
        )
        self.num_steps += n
        ended = np.flatnonzero(np.logical_or(terminated, truncated))
        if len(ended):
            self.noise.reset(ended)

    def update(self) -> dict[str, float] | None:
        """Run the blocks of ``gradient_steps`` updates due since the last call.

        A block runs each time the step count passes a multiple of ``train_freq`` (from
        ``learning_starts`` on); with one environment that is ``step % train_freq == 0``.
        Returns ``{"critic_loss", "actor_loss", "q"}`` averaged over the last block
        (``q``: mean ``Q(s, a)`` of the sampled actions), or None when no update ran.
        """
        cfg = self.config
        before, t = self._last_update_step, self.num_steps
        self._last_update_step = t
        if len(self.replay) < cfg.batch_size:
            return None
        metrics = None
        start = max(cfg.learning_starts, cfg.batch_size)
        for _ in range(blocks_due(before, t, cfg.train_freq, start)):
            batch = self.replay.sample(cfg.batch_size, cfg.gradient_steps)
            smoothing = self._smoothing_noise(batch.rewards.shape)
            critic_loss, actor_loss, q, actor_weights = self._train_block(
                *self._tensors(batch), smoothing, np.int64(self.num_updates)
            )
            done = self.num_updates
            self.num_updates += cfg.gradient_steps
            delay = cfg.policy_delay if cfg.td3 else 1
            self.num_actor_updates += self.num_updates // delay - done // delay
            metrics = {
                "critic_loss": float(critic_loss),
                "actor_loss": float(actor_loss),
                "q": float(q),
            }
        if metrics is not None:
            self._policy = self.actor.to_numpy([w.numpy() for w in actor_weights])
        return metrics

    def _smoothing_noise(self, shape: tuple[int, ...]) -> np.ndarray:
        """TD3's clipped target noise in action units, ``[*shape, act_dim]`` (zeros for DDPG)."""
        cfg = self.config
        shape = (*shape, self.bounds.dim)
        if not cfg.td3 or cfg.target_noise == 0:
            return np.zeros(shape, np.float32)
        noise = np.clip(
            cfg.target_noise * self.rng.standard_normal(shape),
            -cfg.target_noise_clip,
            cfg.target_noise_clip,
        )
        return (noise * self.bounds.half_range).astype(np.float32)

    @staticmethod
    def _tensors(batch: Batch) -> tuple[tf.Tensor, ...]:
        return (
            tf.convert_to_tensor(batch.obs, tf.float32),
            tf.convert_to_tensor(batch.actions, tf.float32),
            tf.convert_to_tensor(batch.rewards, tf.float32),
            tf.convert_to_tensor(batch.next_obs, tf.float32),
            tf.convert_to_tensor(batch.terminated, tf.float32),
        )

    def _train_block_graph(self, obs, actions, rewards, next_obs, terminated, smoothing, done):
        """``K`` updates in one graph; inputs have leading shape ``[K, B]``.

        ``done``: critic updates before this block (int64), which places TD3's delayed
        actor updates. Returns the block's mean critic loss, actor loss and ``Q(s, a)``,
        and the actor's weights after the block (for the numpy acting copy: returning
        them is cheaper than reading the variables again after the call).
        """
        cfg = self.config
        num_blocks = tf.shape(rewards)[0]
        critic_total, q_total = tf.constant(0.0), tf.constant(0.0)
        actor_total, actor_count = tf.constant(0.0), tf.constant(0.0)
        for k in tf.range(num_blocks):
            critic_loss, q = self._critic_step(
                obs[k], actions[k], rewards[k], next_obs[k], terminated[k], smoothing[k]
            )
            critic_total += critic_loss
            q_total += q
            if cfg.td3:
                due = (done + tf.cast(k, tf.int64) + 1) % cfg.policy_delay == 0
                actor_loss = tf.cond(
                    due, lambda k=k: self._actor_step(obs[k]), lambda: tf.constant(0.0)
                )
                actor_count += tf.cast(due, tf.float32)
            else:
                actor_loss = self._actor_step(obs[k])
                actor_count += 1.0
            actor_total += actor_loss
        n = tf.cast(num_blocks, tf.float32)
        actor_weights = [tf.identity(w) for w in self.actor.layer_weights()]
        return (
            critic_total / n,
            actor_total / tf.maximum(actor_count, 1.0),
            q_total / n,
            actor_weights,
        )

    def _critic_step(self, obs, actions, rewards, next_obs, terminated, smoothing):
        with tf.GradientTape() as tape:
            loss, q = self._critic_loss(obs, actions, rewards, next_obs, terminated, smoothing)
        grads = self.critic_pipeline.gradients(tape, loss)
        apply_gradients(self.critic_pipeline.optimizer, grads, self.critic_pipeline.variables)
        return loss, q

    def _actor_step(self, obs):
        with tf.GradientTape() as tape:
            loss = self._actor_loss(obs)
        grads = self.actor_pipeline.gradients(tape, loss)
        apply_gradients(self.actor_pipeline.optimizer, grads, self.actor_pipeline.variables)
        self._ema_step()  # the target networks follow
        return loss

    def _ema_step(self) -> None:
        self.ema.apply(self._ema_sources)

    def _bootstrap(self, rewards, next_obs, terminated, smoothing):
        next_action = self.target_action(next_obs)
        if self.config.td3:
            next_action = smooth_target_action(
                next_action, smoothing, self.bounds.low, self.bounds.high
            )
        next_q = self.target_q(next_obs, next_action, 0)
        for k in range(1, len(self.critics)):
            next_q = tf.minimum(next_q, self.target_q(next_obs, next_action, k))
        return bootstrap_target(rewards, terminated, next_q, self.config.gamma)

    def _critic_loss(self, obs, actions, rewards, next_obs, terminated, smoothing):
        """Scalar critic loss (sum over critics of the batch-mean squared error), mean Q."""
        y = self._bootstrap(rewards, next_obs, terminated, smoothing)
        loss, q_first = tf.constant(0.0), None
        for critic in self.critics:
            q = critic.model([obs, actions], training=True)
            loss += tf.reduce_mean(squared_error(q, y))
            q_first = q if q_first is None else q_first
        return loss, tf.reduce_mean(q_first)

    def _actor_loss(self, obs):
        """``-mean_B Q_0(s, mu(s))``: differentiated w.r.t. the actor's variables only."""
        return -tf.reduce_mean(self.critics[0].model([obs, self.actor.model(obs, training=True)]))

    # -- inspection (tests, users' experiments) ----------------------------------------------
    def td_targets(self, batch: Batch, smoothing: np.ndarray | None = None) -> np.ndarray:
        """The critic targets ``y`` for ``batch`` (``[B]``), without updating anything.

        ``smoothing``: TD3's target noise in action units (``[B, act_dim]``; default none).
        """
        obs, actions, rewards, next_obs, terminated = self._tensors(batch)
        if smoothing is None:
            smoothing = np.zeros((len(batch.rewards), self.bounds.dim), np.float32)
        return self._bootstrap(rewards, next_obs, terminated, tf.constant(smoothing)).numpy()

    def critic_loss(self, batch: Batch, smoothing: np.ndarray | None = None) -> tf.Tensor:
        """The scalar critic loss for ``batch`` (``[B]``); call it under a GradientTape."""
        if smoothing is None:
            smoothing = np.zeros((len(batch.rewards), self.bounds.dim), np.float32)
        return self._critic_loss(*self._tensors(batch), tf.constant(smoothing))[0]

    def actor_loss(self, obs: np.ndarray) -> tf.Tensor:
        """The scalar actor loss ``-mean Q(s, mu(s))`` for ``obs`` ``[B, ...]``."""
        return self._actor_loss(tf.convert_to_tensor(self.encode(obs), tf.float32))

    # -- persistence -------------------------------------------------------------------------
    counter_names = ("num_steps", "num_updates", "num_actor_updates")

    def checkpoint_variables(self) -> dict[str, list]:
        groups = {"actor": self.actor.variables, "actor_target": self.actor_target_variables}
        for k, critic in enumerate(self.critics):
            groups[f"critic{k}"] = critic.variables
            groups[f"critic{k}_target"] = self.critic_target_variables(k)
        return groups

    def optimizers(self) -> dict:
        return {"actor": self.actor_pipeline.optimizer, "critic": self.critic_pipeline.optimizer}

    def rngs(self) -> dict[str, np.random.Generator]:
        return {"explore": self.rng, "noise": self.noise.rng}

    def memories(self) -> dict[str, ReplayMemory]:
        return {"replay": self.replay}

    def extra_state(self) -> dict:
        """The Ornstein-Uhlenbeck process state (mid-episode exploration noise)."""
        extra = {"last_update_step": self._last_update_step}
        state = getattr(self.noise, "state", None)
        return extra if state is None else {**extra, "noise_state": state.tolist()}

    def load_extra_state(self, state: dict) -> None:
        if "noise_state" in state:
            self.noise.state = np.asarray(state["noise_state"], np.float64)
        self._last_update_step = int(state.get("last_update_step", self.num_steps))

    def after_restore(self) -> None:
        self._policy = self.actor.numpy_snapshot()
        if self._last_update_step == 0:  # a loaded model: nothing is owed before num_steps
            self._last_update_step = self.num_steps
