"""MountainCar-v0 in TensorFlow, equal step for step to gymnasium's ``MountainCarEnv``.

State ``(position [-1.2, 0.6], velocity [-0.07, 0.07])`` in float64, as gymnasium keeps it.
A step: ``velocity += (action - 1) * 0.001 - 0.0025 cos(3 position)``, clipped; ``position
+= velocity``, clipped; at the left wall a leftward velocity becomes 0. Terminated once
``position >= 0.5`` (with ``velocity >= 0``); reward -1 every step; truncated after 200
steps. Actions int32 ``[N]``: push left, none, right.
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.envs.tf.base import TFEnv, uniform64

MIN_POSITION = -1.2
MAX_POSITION = 0.6
MAX_SPEED = 0.07
GOAL_POSITION = 0.5
GOAL_VELOCITY = 0
FORCE = 0.001
GRAVITY = 0.0025


class MountainCar(TFEnv):
    """``N`` MountainCars; physics float64 ``[N, 2]`` = gymnasium's ``env.unwrapped.state``."""

    gym_id = "MountainCar-v0"
    max_episode_steps = 200
    obs_dim = 2
    physics_dim = 2
    discrete_actions = 3
    obs_low = (MIN_POSITION, -MAX_SPEED)
    obs_high = (MAX_POSITION, MAX_SPEED)

    def initial_physics(self, seed: tf.Tensor, num_envs: int | tf.Tensor) -> tf.Tensor:
        position = uniform64(seed, tf.reshape(num_envs, [1]), -0.6, -0.4)
        return tf.stack([position, tf.zeros_like(position)], axis=1)

    def advance(
        self, physics: tf.Tensor, actions: tf.Tensor, time: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        position, velocity = tf.unstack(physics, axis=1)
        push = tf.cast(actions - 1, tf.float64) * FORCE
        velocity = velocity + (push + tf.cos(3 * position) * (-GRAVITY))
        velocity = tf.clip_by_value(velocity, -MAX_SPEED, MAX_SPEED)
        position = position + velocity
        position = tf.clip_by_value(position, MIN_POSITION, MAX_POSITION)
        at_wall = (position == MIN_POSITION) & (velocity < 0)
        velocity = tf.where(at_wall, tf.zeros_like(velocity), velocity)
        terminated = (position >= GOAL_POSITION) & (velocity >= GOAL_VELOCITY)
        reward = -tf.ones_like(position)
        return tf.stack([position, velocity], axis=1), reward, terminated

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        return tf.cast(physics, tf.float32)
