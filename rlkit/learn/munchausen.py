"""Munchausen DQN's target (Vieillard, Pietquin and Geist 2020), as a pure per-example op.

``y = r + alpha * clip(tau * log pi(a | s), l0, 0)
      + pcont * sum_a' pi(a' | s') (q(s', a') - tau * log pi(a' | s'))``

with ``pi = softmax(q / tau)`` of the **target** network's values at both states (the paper's
Algorithm 1 and eq. 2; its defaults ``alpha = 0.9``, ``tau = 0.03``, ``l0 = -1``). The scaled
log-policy is computed stably: ``tau log pi = q - max q - tau log sum exp((q - max q) / tau)``.
The expectation in the last term equals ``tau * logsumexp(q(s', .) / tau)``, computed so.
``pcont = gamma ** k * (1 - terminated)`` as in TRFL. The regression loss on
``y - Q(s, a)`` (Huber in the paper) is the caller's, e.g. :func:`rlkit.learn.losses.huber`.
"""

from __future__ import annotations

import tensorflow as tf


def scaled_log_policy(q: tf.Tensor, tau: float) -> tf.Tensor:
    """``tau * log softmax(q / tau)``, ``[B, A]`` from ``q`` ``[B, A]``; always ``<= 0``."""
    shifted = q - tf.reduce_max(q, axis=-1, keepdims=True)
    return shifted - tau * tf.reduce_logsumexp(shifted / tau, axis=-1, keepdims=True)


def munchausen_target(
    q_target: tf.Tensor,
    actions: tf.Tensor,
    rewards: tf.Tensor,
    pcont: tf.Tensor,
    next_q_target: tf.Tensor,
    tau: float = 0.03,
    alpha: float = 0.9,
    clip_min: float = -1.0,
) -> tf.Tensor:
    """The M-DQN regression target ``y`` ``[B]`` (no gradient).

    Args:
        q_target: the target network's ``q(s, .)`` ``[B, A]`` (for the Munchausen bonus).
        actions: taken actions ``[B]``, int.
        rewards: ``[B]``. pcont: ``[B]``, ``gamma ** k * (1 - terminated)``.
        next_q_target: the target network's ``q(s', .)`` ``[B, A]``.
        tau: entropy temperature ``> 0``. alpha: Munchausen scale in ``[0, 1]``.
        clip_min: ``l0 < 0``, the lower clip of the bonus.

    ``alpha = 0`` gives soft (entropy-regularised) DQN's target; ``tau -> 0`` with
    ``alpha = 0`` gives DQN's ``r + pcont max_a' q(s', a')``.
    """
    if not tau > 0.0:
        raise ValueError(f"tau must be > 0, got {tau}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
    dtype = q_target.dtype
    log_pi = scaled_log_policy(q_target, tau)
    bonus = tf.clip_by_value(tf.gather(log_pi, actions, axis=1, batch_dims=1), clip_min, 0.0)
    # sum_a' pi(a') (q(a') - tau log pi(a')) = tau logsumexp(q / tau) (every bracket is that
    # value), computed as max q + tau logsumexp((q - max q) / tau)
    top = tf.reduce_max(next_q_target, axis=-1)
    soft_value = top + tau * tf.reduce_logsumexp((next_q_target - top[:, None]) / tau, axis=-1)
    target = tf.cast(rewards, dtype) + alpha * bonus + tf.cast(pcont, dtype) * soft_value
    return tf.stop_gradient(target)
