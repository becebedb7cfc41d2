"""Pendulum-v1 in TensorFlow, equal step for step to gymnasium's ``PendulumEnv``.

State ``(theta [rad], theta_dot [rad/s])`` in float64, as gymnasium keeps it; the torque
``u`` (float32, clipped to [-2, 2] N m) enters in float32 where numpy computes in float32
(``u ** 2``, ``0.001 * u ** 2``, ``3.0 * u``). Cost ``angle_normalize(theta)^2 + 0.1
theta_dot^2 + 0.001 u^2`` with ``angle_normalize(x) = ((x + pi) mod 2 pi) - pi`` (a floored
modulo, as numpy's ``%``); reward ``-cost``; ``theta_dot += (15 sin(theta) + 3 u) 0.05``,
clipped to 8; ``theta += theta_dot 0.05``. Never terminates; truncated after 200 steps.
Actions float32 ``[N, 1]``.
"""

from __future__ import annotations

from math import pi

import tensorflow as tf

from rlkit.envs.tf.base import TFEnv, round32, uniform64

MAX_SPEED = 8  # [rad/s]
MAX_TORQUE = 2.0  # [N m]
DT = 0.05  # [s]
G = 10.0  # [m/s^2]
M = 1.0  # [kg]
L = 1.0  # [m]
F32_0_001 = 0.0010000000474974513  # 0.001 as numpy's float32 operand sees it


def angle_normalize(x: tf.Tensor) -> tf.Tensor:
    """``x`` (float64 [rad]) into ``[-pi, pi)``, as gymnasium's ``angle_normalize``."""
    return tf.math.floormod(x + pi, 2 * pi) - pi


class Pendulum(TFEnv):
    """``N`` Pendulums; physics float64 ``[N, 2]`` = gymnasium's ``env.unwrapped.state``."""

    gym_id = "Pendulum-v1"
    max_episode_steps = 200
    obs_dim = 3
    physics_dim = 2
    action_low = -MAX_TORQUE
    action_high = MAX_TORQUE
    obs_high = (1.0, 1.0, float(MAX_SPEED))

    def initial_physics(self, seed: tf.Tensor, num_envs: int | tf.Tensor) -> tf.Tensor:
        return uniform64(seed, tf.stack([num_envs, 2]), [-pi, -1.0], [pi, 1.0])

    def advance(
        self, physics: tf.Tensor, actions: tf.Tensor, time: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        th, thdot = tf.unstack(physics, axis=1)
        u32 = tf.clip_by_value(actions[:, 0], -MAX_TORQUE, MAX_TORQUE)  # float32, as numpy's
        u = tf.cast(u32, tf.float64)
        u_cost = round32(F32_0_001 * round32(u * u))  # float32 products
        costs = angle_normalize(th) ** 2 + 0.1 * thdot**2 + u_cost
        accel = 3 * G / (2 * L) * tf.sin(th) + round32(3.0 / (M * L**2) * u)
        newthdot = thdot + accel * DT
        newthdot = tf.clip_by_value(newthdot, -float(MAX_SPEED), float(MAX_SPEED))
        newth = th + newthdot * DT
        terminated = tf.zeros_like(th, tf.bool)
        return tf.stack([newth, newthdot], axis=1), -costs, terminated

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        theta, thetadot = tf.unstack(physics, axis=1)
        obs = tf.stack([tf.cos(theta), tf.sin(theta), thetadot], axis=1)
        return tf.cast(obs, tf.float32)
