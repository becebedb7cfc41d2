"""MountainCarContinuous-v0 in TensorFlow, equal step for step to gymnasium's
``Continuous_MountainCarEnv``, float32 roundings included.

gymnasium draws a reset state in float64 and stores every later state as float32; in
between it mixes numpy float32 scalars (the action, the state after the first step) with
Python floats, which numpy 2 computes in float32 (a Python float is cast to the float32
operand's type). This env keeps the state as float64 ``[N, 2]`` (float32 values after the
first step) and rounds to float32 exactly where numpy does (:func:`round32`); ``time == 0``
marks the float64 first step of an episode.

A step: ``force = clip(action, -1, 1)``; ``velocity += force * 0.0015 - 0.0025 cos(3
position)``, clipped to 0.07 in size; ``position += velocity``, clipped to [-1.2, 0.6]; a
leftward velocity at the left wall becomes 0. Terminated once ``position >= 0.45`` (with
``velocity >= 0``). Reward ``100 * terminated - 0.1 action^2`` (of the unclipped action,
as gymnasium has it); truncated after 999 steps. Actions float32 ``[N, 1]``.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rlkit.envs.tf.base import TFEnv, round32, uniform64

MIN_ACTION = -1.0
MAX_ACTION = 1.0
MIN_POSITION = -1.2
MAX_POSITION = 0.6
MAX_SPEED = 0.07
GOAL_POSITION = 0.45
GOAL_VELOCITY = 0
POWER = 0.0015


def f32(value: float) -> float:
    """A Python float rounded to float32 (a numpy float32 operand's view of it)."""
    return float(np.float32(value))


def pick(condition: tf.Tensor, if_true: float, if_false: float) -> tf.Tensor:
    """float64 ``[N]``: ``if_true`` where ``condition``, else ``if_false``."""
    return tf.where(condition, tf.constant(if_true, tf.float64), tf.constant(if_false, tf.float64))


class MountainCarContinuous(TFEnv):
    """``N`` continuous MountainCars; physics float64 ``[N, 2]`` = gymnasium's
    ``env.unwrapped.state``."""

    gym_id = "MountainCarContinuous-v0"
    max_episode_steps = 999
    obs_dim = 2
    physics_dim = 2
    action_low = MIN_ACTION
    action_high = MAX_ACTION
    obs_low = (MIN_POSITION, -MAX_SPEED)
    obs_high = (MAX_POSITION, MAX_SPEED)

    def initial_physics(self, seed: tf.Tensor, num_envs: int | tf.Tensor) -> tf.Tensor:
        position = uniform64(seed, tf.reshape(num_envs, [1]), -0.6, -0.4)
        return tf.stack([position, tf.zeros_like(position)], axis=1)

    def advance(
        self, physics: tf.Tensor, actions: tf.Tensor, time: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        first = time == 0  # the state is float64 (a reset's); later float32

        def as_numpy(x: tf.Tensor) -> tf.Tensor:  # a state value after arithmetic
            return tf.where(first, x, round32(x))

        position, velocity = tf.unstack(physics, axis=1)
        action = tf.cast(actions[:, 0], tf.float64)
        clipped = (action < MIN_ACTION) | (action > MAX_ACTION)  # force is a Python float
        force = tf.clip_by_value(action, MIN_ACTION, MAX_ACTION)
        # force * power: float32 for a float32 force, float64 for a Python one
        push = tf.where(clipped, force * POWER, round32(force * f32(POWER)))
        hill = 0.0025 * tf.cos(as_numpy(3 * position))
        # push - hill: float32 when push is float32 (hill rounded first)
        change = tf.where(clipped, push - hill, round32(push - round32(hill)))
        # velocity += change: float32 later (change rounded first), float64 on the first step
        velocity = tf.where(first, velocity + change, round32(velocity + round32(change)))
        speed_limit = pick(first, MAX_SPEED, f32(MAX_SPEED))
        velocity = tf.where(velocity > speed_limit, tf.constant(MAX_SPEED, tf.float64), velocity)
        velocity = tf.where(velocity < -speed_limit, tf.constant(-MAX_SPEED, tf.float64), velocity)
        position = as_numpy(position + tf.where(first, velocity, round32(velocity)))
        # comparisons with a float32 position are made in float32
        right = pick(first, MAX_POSITION, f32(MAX_POSITION))
        left = pick(first, MIN_POSITION, f32(MIN_POSITION))
        position = tf.where(position > right, tf.constant(MAX_POSITION, tf.float64), position)
        position = tf.where(position < left, tf.constant(MIN_POSITION, tf.float64), position)
        at_wall = (as_numpy(position) == left) & (velocity < 0)
        velocity = tf.where(at_wall, tf.zeros_like(velocity), velocity)
        goal = pick(first, GOAL_POSITION, f32(GOAL_POSITION))
        terminated = (as_numpy(position) >= goal) & (velocity >= GOAL_VELOCITY)
        reward = pick(terminated, 100.0, 0.0) - action * action * 0.1
        state = round32(tf.stack([position, velocity], axis=1))  # gymnasium stores float32
        return state, reward, terminated

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        return tf.cast(physics, tf.float32)
