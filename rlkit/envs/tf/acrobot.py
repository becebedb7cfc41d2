"""Acrobot-v1 in TensorFlow, equal step for step to gymnasium's ``AcrobotEnv``.

The state ``(theta1, theta2 [rad], dtheta1, dtheta2 [rad/s])`` is integrated over
``dt`` = 0.2 s with one classic Runge-Kutta 4 step in float64 ("book" dynamics), the angles
wrapped into ``[-pi, pi]`` by repeated subtraction of ``2 pi`` as gymnasium's ``wrap`` does,
the velocities clipped to ``4 pi`` and ``9 pi``. gymnasium draws a reset state in float64 and
stores it as float32; so does this (then widened to float64, exactly). Reward -1 per step and
0 on the terminal one (the tip above the bar: ``-cos(t1) - cos(t1 + t2) > 1``); truncated after
500 steps. Actions int32 ``[N]``: torque -1, 0, +1.
"""

from __future__ import annotations

from math import pi

import tensorflow as tf

from rlkit.envs.tf.base import TFEnv, round32, uniform64

DT = 0.2  # [s]
LINK_LENGTH_1 = 1.0  # [m]
LINK_MASS_1 = 1.0  # [kg]
LINK_MASS_2 = 1.0  # [kg]
LINK_COM_POS_1 = 0.5  # [m]
LINK_COM_POS_2 = 0.5  # [m]
LINK_MOI = 1.0  # [kg m^2]
MAX_VEL_1 = 4 * pi  # [rad/s]
MAX_VEL_2 = 9 * pi  # [rad/s]
GRAVITY = 9.8


def dsdt(s: tf.Tensor, a: tf.Tensor) -> tf.Tensor:
    """Time derivative of ``s`` (float64 ``[N, 4]``) under torque ``a`` (float64 ``[N]``), in
    gymnasium's ``_dsdt`` order of operations."""
    m1, m2, l1 = LINK_MASS_1, LINK_MASS_2, LINK_LENGTH_1
    lc1, lc2 = LINK_COM_POS_1, LINK_COM_POS_2
    i1 = i2 = LINK_MOI
    g = GRAVITY
    theta1, theta2, dtheta1, dtheta2 = tf.unstack(s, axis=1)
    d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * tf.cos(theta2)) + i1 + i2
    d2 = m2 * (lc2**2 + l1 * lc2 * tf.cos(theta2)) + i2
    phi2 = m2 * lc2 * g * tf.cos(theta1 + theta2 - pi / 2.0)
    phi1 = (
        -m2 * l1 * lc2 * dtheta2**2 * tf.sin(theta2)
        - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * tf.sin(theta2)
        + (m1 * lc1 + m2 * l1) * g * tf.cos(theta1 - pi / 2)
        + phi2
    )
    ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1**2 * tf.sin(theta2) - phi2) / (
        m2 * lc2**2 + i2 - d2**2 / d1
    )
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return tf.stack([dtheta1, dtheta2, ddtheta1, ddtheta2], axis=1)


def wrap(x: tf.Tensor, low: float, high: float) -> tf.Tensor:
    """gymnasium's ``wrap``: subtract ``high - low`` while above ``high``, then add it while
    below ``low`` (one subtraction at a time, as gymnasium rounds)."""
    diff = high - low
    x = tf.while_loop(
        lambda v: tf.reduce_any(v > high), lambda v: (tf.where(v > high, v - diff, v),), (x,)
    )[0]
    return tf.while_loop(
        lambda v: tf.reduce_any(v < low), lambda v: (tf.where(v < low, v + diff, v),), (x,)
    )[0]


class Acrobot(TFEnv):
    """``N`` Acrobots; physics float64 ``[N, 4]`` = gymnasium's ``env.unwrapped.state``."""

    gym_id = "Acrobot-v1"
    max_episode_steps = 500
    obs_dim = 6
    physics_dim = 4
    discrete_actions = 3
    obs_high = (1.0, 1.0, 1.0, 1.0, MAX_VEL_1, MAX_VEL_2)

    def initial_physics(self, seed: tf.Tensor, num_envs: int | tf.Tensor) -> tf.Tensor:
        return round32(uniform64(seed, tf.stack([num_envs, 4]), -0.1, 0.1))

    def advance(
        self, physics: tf.Tensor, actions: tf.Tensor, time: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        torque = tf.cast(actions, tf.float64) - 1.0  # exactly -1.0, 0.0, 1.0
        # gymnasium's rk4 over t = [0, dt]; the torque is a constant fifth state entry
        dt = DT - 0
        dt2 = dt / 2.0
        y0 = physics
        k1 = dsdt(y0, torque)
        k2 = dsdt(y0 + dt2 * k1, torque)
        k3 = dsdt(y0 + dt2 * k2, torque)
        k4 = dsdt(y0 + dt * k3, torque)
        ns = y0 + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        t1, t2, v1, v2 = tf.unstack(ns, axis=1)
        t1 = wrap(t1, -pi, pi)
        t2 = wrap(t2, -pi, pi)
        v1 = tf.clip_by_value(v1, -MAX_VEL_1, MAX_VEL_1)
        v2 = tf.clip_by_value(v2, -MAX_VEL_2, MAX_VEL_2)
        terminated = -tf.cos(t1) - tf.cos(t2 + t1) > 1.0
        reward = tf.where(terminated, 0.0, -1.0)
        return tf.stack([t1, t2, v1, v2], axis=1), tf.cast(reward, tf.float64), terminated

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        t1, t2, v1, v2 = tf.unstack(physics, axis=1)
        obs = tf.stack([tf.cos(t1), tf.sin(t1), tf.cos(t2), tf.sin(t2), v1, v2], axis=1)
        return tf.cast(obs, tf.float32)
