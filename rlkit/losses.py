"""Targets and losses as pure functions: per-example tensors in, per-example tensors out.

Nothing here reduces over the batch or touches an optimizer, so each formula can
be checked against a hand-computed case.
"""

from __future__ import annotations

import tensorflow as tf


def q_learning_delta(
    q_taken: tf.Tensor,
    rewards: tf.Tensor,
    next_q_target: tf.Tensor,
    terminated: tf.Tensor,
    gamma: float,
    r_max: float | None = None,
    next_q_online: tf.Tensor | None = None,
) -> tf.Tensor:
    """DQN3.0's TD error ``delta``, shape ``[B]``.

    ``delta = r (/ r_max) + (1 - terminated) * gamma * max_a Q_target(s2, a) - Q(s, a)``.

    Args:
        q_taken: ``Q(s, a)`` for the taken actions, ``[B]``.
        rewards: ``[B]``; divided by ``r_max`` when ``r_max`` is given (DQN3.0 rescale_r).
        next_q_target: ``Q_target(s2, .)``, ``[B, A]``.
        terminated: ``[B]``, 1 where the episode truly ended (time-limit truncation is *not*
            termination: it still bootstraps).
        gamma: discount.
        next_q_online: ``Q(s2, .)`` from the online network, ``[B, A]``; when given the
            bootstrap is Double DQN's ``Q_target(s2, argmax_a Q(s2, a))``.

    The bootstrap side carries no gradient (``stop_gradient``).
    """
    rewards = tf.cast(rewards, q_taken.dtype)
    if r_max is not None:
        rewards = rewards / r_max
    if next_q_online is None:
        next_value = tf.reduce_max(next_q_target, axis=-1)
    else:
        best = tf.argmax(next_q_online, axis=-1, output_type=tf.int32)
        next_value = tf.gather(next_q_target, best, axis=-1, batch_dims=1)
    not_done = 1.0 - tf.cast(terminated, q_taken.dtype)
    target = tf.stop_gradient(rewards + not_done * gamma * next_value)
    return target - q_taken


def dqn3_output_gradient(
    delta: tf.Tensor, actions: tf.Tensor, num_actions: int, clip_delta: float | None
) -> tf.Tensor:
    """The gradient DQN3.0 injects at the Q-network output, shape ``[B, A]``.

    DQN3.0 writes the clipped ``delta`` into a zero ``targets`` matrix at the taken
    action and calls ``network:backward(s, targets)``, then *adds* the result to the
    weights (gradient ascent on ``Q . targets``). For a minimising Keras optimizer
    the same step is the output gradient ``-targets``:
    ``d loss / d Q(s, b) = -clip(delta, -c, c) * [b == a]``.
    """
    if clip_delta:
        delta = tf.clip_by_value(delta, -clip_delta, clip_delta)
    return -tf.one_hot(actions, num_actions, dtype=delta.dtype) * delta[:, None]


def huber(x: tf.Tensor, delta: float) -> tf.Tensor:
    """Elementwise Huber loss: ``0.5 x^2`` for ``|x| <= delta``, else ``delta (|x| - delta/2)``.

    Its derivative is ``clip(x, -delta, delta)``: the loss whose gradient DQN3.0's
    clipped ``delta`` equals.
    """
    abs_x = tf.abs(x)
    quadratic = tf.minimum(abs_x, delta)
    return 0.5 * quadratic**2 + delta * (abs_x - quadratic)


def squared(x: tf.Tensor) -> tf.Tensor:
    """Elementwise ``0.5 x^2``."""
    return 0.5 * tf.square(x)
