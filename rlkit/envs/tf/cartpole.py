"""CartPole-v1 in TensorFlow, equal step for step to gymnasium's ``CartPoleEnv``.

gymnasium keeps the state ``(x [m], x_dot [m/s], theta [rad], theta_dot [rad/s])`` in
float64 and integrates with explicit Euler (``tau`` = 0.02 s); this does the same, in the
same order of operations, and returns the float32 observation gymnasium returns. Reward 1
every step (the termination step included), terminated when ``|x| > 2.4`` or
``|theta| > 12 degrees``, truncated after 500 steps.
"""

from __future__ import annotations

import math

import tensorflow as tf

from rlkit.envs.tf.base import TFEnv, uniform64

GRAVITY = 9.8
MASSCART = 1.0
MASSPOLE = 0.1
TOTAL_MASS = MASSPOLE + MASSCART
LENGTH = 0.5  # half the pole's length [m]
POLEMASS_LENGTH = MASSPOLE * LENGTH
FORCE_MAG = 10.0  # [N]
TAU = 0.02  # [s]
THETA_THRESHOLD = 12 * 2 * math.pi / 360  # [rad]
X_THRESHOLD = 2.4  # [m]


class CartPole(TFEnv):
    """``N`` CartPoles; actions int32 ``[N]`` in {0: push left, 1: push right}; physics
    float64 ``[N, 4]`` = gymnasium's ``env.unwrapped.state``."""

    gym_id = "CartPole-v1"
    max_episode_steps = 500
    obs_dim = 4
    physics_dim = 4
    discrete_actions = 2
    obs_high = (X_THRESHOLD * 2, math.inf, THETA_THRESHOLD * 2, math.inf)

    def initial_physics(self, seed: tf.Tensor, num_envs: int | tf.Tensor) -> tf.Tensor:
        return uniform64(seed, tf.stack([num_envs, 4]), -0.05, 0.05)

    def advance(
        self, physics: tf.Tensor, actions: tf.Tensor, time: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        x, x_dot, theta, theta_dot = tf.unstack(physics, axis=1)
        force = tf.where(actions == 1, FORCE_MAG, -FORCE_MAG)
        force = tf.cast(force, tf.float64)
        costheta = tf.cos(theta)
        sintheta = tf.sin(theta)
        temp = (force + POLEMASS_LENGTH * tf.square(theta_dot) * sintheta) / TOTAL_MASS
        thetaacc = (GRAVITY * sintheta - costheta * temp) / (
            LENGTH * (4.0 / 3.0 - MASSPOLE * tf.square(costheta) / TOTAL_MASS)
        )
        xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
        x = x + TAU * x_dot
        x_dot = x_dot + TAU * xacc
        theta = theta + TAU * theta_dot
        theta_dot = theta_dot + TAU * thetaacc
        terminated = (
            (x < -X_THRESHOLD)
            | (x > X_THRESHOLD)
            | (theta < -THETA_THRESHOLD)
            | (theta > THETA_THRESHOLD)
        )
        reward = tf.ones_like(x)
        return tf.stack([x, x_dot, theta, theta_dot], axis=1), reward, terminated

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        return tf.cast(physics, tf.float32)
