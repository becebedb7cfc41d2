"""The common part of rlkit's environments written in TensorFlow: state, reset, step, autoreset.

An environment here is a set of pure functions over a batch of ``N`` copies: no Python
state changes between calls, every random number comes from a stateless op fed by an
explicit seed, so a whole run can live inside ``tf.function(jit_compile=True)`` and a
``tf.while_loop`` and replays exactly from its seeds::

    env = CartPole()
    state, obs = env.reset(seed, 8)                    # seed: int32 [2]
    out = env.step(state, actions, step_seed)          # actions: int32 [8]
    state, obs = out.state, out.obs                    # ended copies already reset

A subclass gives the physics of one copy family (batched): :meth:`TFEnv.initial_physics`,
:meth:`TFEnv.advance` and :meth:`TFEnv.observe`. The base adds the time limit
(``truncated``), the autoreset gymnax does (every step draws fresh reset states from its
own seed and keeps them where an episode ended) and the last observation of an ended
episode (``final_obs``, for bootstrapping on truncation).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import tensorflow as tf


class EnvState(NamedTuple):
    """The state of ``N`` copies.

    Attributes:
        physics: float64 ``[N, K]``, the env's own state vector in gymnasium's units (the
            values of ``env.unwrapped.state``).
        time: int32 ``[N]``, steps taken in the current episode (0 right after a reset).
    """

    physics: tf.Tensor
    time: tf.Tensor


class Transition(NamedTuple):
    """What :meth:`TFEnv.step` returns (all batched over ``N``).

    Attributes:
        state: the next state; copies whose episode ended are already reset.
        obs: float32 ``[N, obs_dim]``, the observation to act on next (a reset copy's first).
        reward: float64 ``[N]``, gymnasium's reward for the transition.
        terminated: bool ``[N]``, the episode reached a terminal state.
        truncated: bool ``[N]``, the episode hit the time limit (may be true with terminated,
            as gymnasium's ``TimeLimit`` reports it).
        final_obs: float32 ``[N, obs_dim]``, the observation the transition led to, before any
            reset (equal to ``obs`` where the episode goes on).
    """

    state: EnvState
    obs: tf.Tensor
    reward: tf.Tensor
    terminated: tf.Tensor
    truncated: tf.Tensor
    final_obs: tf.Tensor


def round32(x: tf.Tensor) -> tf.Tensor:
    """``x`` (float64) rounded to the nearest float32, kept as float64: what numpy does when
    it computes in float32. (An add, subtract or multiply of float32 numbers done in float64
    and rounded once equals the float32 operation: 53 >= 2 * 24 + 2 bits.)"""
    return tf.cast(tf.cast(x, tf.float32), tf.float64)


def uniform64(seed: tf.Tensor, shape: list[int] | tf.Tensor, low, high) -> tf.Tensor:
    """float64 uniform in ``[low, high)`` from a stateless seed (int32 ``[2]``), drawn as numpy's
    ``Generator.uniform`` draws it: ``low + (high - low) * u``."""
    u = tf.random.stateless_uniform(shape, seed, dtype=tf.float64)
    low = tf.constant(low, tf.float64)
    high = tf.constant(high, tf.float64)
    return low + (high - low) * u


def split_seed(seed: tf.Tensor, num: int = 2) -> tf.Tensor:
    """``num`` independent stateless seeds (int32 ``[num, 2]``) from one."""
    return tf.random.experimental.stateless_split(seed, num)


class TFEnv:
    """Base of a batched environment in TensorFlow, equal step for step to a gymnasium one.

    Class attributes a subclass sets:
        gym_id: the gymnasium id it reproduces (``"CartPole-v1"``).
        max_episode_steps: the ``TimeLimit`` of that id (steps).
        obs_dim: length of an observation.
        physics_dim: length of the state vector (``K``).
        discrete_actions: number of actions for a ``Discrete`` action space, else None.
        action_low, action_high: the ``Box`` bounds of a continuous action (shape ``[1]``).
        obs_high: the observation space's ``high`` (``low`` is ``-high`` unless obs_low is set).
        obs_low: the observation space's ``low`` or None.
        physics_dtype: the dtype of ``EnvState.physics`` (int32 for MinAtar's games).
        obs_shape: an observation's shape when it is not ``[obs_dim]`` (MinAtar's
            ``(10, 10, channels)``), else None.
        obs_dtype: the dtype :meth:`observe` returns (float32; bool for MinAtar's boards).
    """

    gym_id: str = ""
    max_episode_steps: int = 0
    obs_dim: int = 0
    physics_dim: int = 0
    discrete_actions: int | None = None
    action_low: float = 0.0
    action_high: float = 0.0
    obs_high: tuple[float, ...] = ()
    obs_low: tuple[float, ...] | None = None
    physics_dtype: tf.DType = tf.float64
    obs_shape: tuple[int, ...] | None = None
    obs_dtype: tf.DType = tf.float32

    # --- what a subclass writes -------------------------------------------------------
    def initial_physics(self, seed: tf.Tensor, num_envs: int | tf.Tensor) -> tf.Tensor:
        """float64 ``[N, K]``: ``N`` reset states drawn as gymnasium's ``reset`` draws one."""
        raise NotImplementedError

    def advance(
        self, physics: tf.Tensor, actions: tf.Tensor, time: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """One step of the dynamics, no reset: ``(physics [N, K] float64, reward [N] float64,
        terminated [N] bool)``. ``time`` (int32 ``[N]``, 0 on a fresh reset) is there for
        envs whose arithmetic differs on the first step (MountainCarContinuous)."""
        raise NotImplementedError

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        """float32 ``[N, obs_dim]``, the observation gymnasium returns for ``physics``."""
        raise NotImplementedError

    # --- the public functions ------------------------------------------------------------
    @property
    def action_dtype(self) -> tf.DType:
        """int32 for a discrete action space, float32 for a continuous one."""
        return tf.int32 if self.discrete_actions is not None else tf.float32

    def reset(self, seed: tf.Tensor, num_envs: int | tf.Tensor) -> tuple[EnvState, tf.Tensor]:
        """``N = num_envs`` fresh episodes from ``seed`` (int32 ``[2]``): ``(state, obs)``."""
        physics = self.initial_physics(seed, num_envs)
        time = tf.zeros(tf.shape(physics)[:1], tf.int32)
        return EnvState(physics, time), self.observe(physics)

    def transition(
        self, state: EnvState, actions: tf.Tensor
    ) -> tuple[EnvState, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
        """One step without autoreset: ``(state, obs, reward, terminated, truncated)``;
        ``truncated`` once ``max_episode_steps`` steps are taken. ``actions``: int32 ``[N]``
        (discrete) or float32 ``[N, 1]`` (continuous)."""
        actions = tf.cast(actions, self.action_dtype)
        physics, reward, terminated = self.advance(state.physics, actions, state.time)
        time = state.time + 1
        truncated = time >= self.max_episode_steps
        return EnvState(physics, time), self.observe(physics), reward, terminated, truncated

    def step(self, state: EnvState, actions: tf.Tensor, seed: tf.Tensor) -> Transition:
        """One step of every copy with autoreset: where an episode ends (terminated or
        truncated) the next state is a fresh reset drawn from ``seed`` (int32 ``[2]``)."""
        after, final_obs, reward, terminated, truncated = self.transition(state, actions)
        fresh, fresh_obs = self.reset(seed, tf.shape(state.time)[0])
        done = tf.logical_or(terminated, truncated)
        fresh_physics = self.carry_over(after.physics, fresh.physics)
        physics = tf.where(done[:, None], fresh_physics, after.physics)
        time = tf.where(done, fresh.time, after.time)
        rows = tf.reshape(done, [-1] + [1] * (final_obs.shape.rank - 1))  # [N, 1, ...]
        obs = tf.where(rows, fresh_obs, final_obs)
        return Transition(EnvState(physics, time), obs, reward, terminated, truncated, final_obs)

    def carry_over(self, ended: tf.Tensor, fresh: tf.Tensor) -> tf.Tensor:
        """The reset physics ``[N, K]`` an ended episode continues with: ``fresh`` (a new
        draw), or what a subclass keeps of the ended one's ``ended`` across episodes."""
        return fresh

    # --- spaces, for the gymnasium adapter ----------------------------------------------
    def observation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """float32 ``(low, high)`` of gymnasium's observation space."""
        high = np.array(self.obs_high, dtype=np.float32)
        low = -high if self.obs_low is None else np.array(self.obs_low, dtype=np.float32)
        return low, high
