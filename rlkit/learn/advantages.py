"""PPO's formulas (Schulman et al. 2017; GAE: Schulman et al. 2016), pure functions.

- :func:`gae` (numpy): generalised advantage estimates over a rollout ``[T, N]`` (``T``
  steps of ``N`` streams), terminated and truncated kept apart::

      next_value_t = V(next_obs_t)   where step t ended by truncation, or t = T - 1
                   = V(obs_{t+1})    otherwise (the stream's next step)
      delta_t = r_t + gamma * (1 - terminated_t) * next_value_t - V(obs_t)
      A_t     = delta_t + gamma * lambda * (1 - done_t) * A_{t+1},  A_T = 0

  with ``done_t = terminated_t or truncated_t``. At a truncation the advantage bootstraps
  from the value of the *final* observation (gymnasium's ``final_obs``, which rlkit's
  protocol hands as the ended step's ``next_obs``), not from the reset observation that
  follows in the stream and not as a terminal; at a termination nothing is bootstrapped;
  the chain ``A_{t+1}`` is cut at every episode end. The value targets are ``A + V``.
- :func:`graph_gae`: the same in TensorFlow, for the compiled loop (its twin).
- In TensorFlow, per-example (never reduced over the batch, as :mod:`rlkit.learn.losses`):
  :func:`clipped_surrogate` (the policy loss ``-min(ratio A, clip(ratio, 1 +- eps) A)``),
  :func:`value_error` (squared error, optionally with SB3's value clipping),
  :func:`normalize_advantages` (per minibatch, with the sample std as torch's ``std()``),
  :func:`approx_kl` (``(ratio - 1) - log ratio``, CleanRL's and SB3's) and
  :func:`clipped` (the clip fraction's indicator).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def gae(
    rewards: np.ndarray,
    values: np.ndarray,
    next_values: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    gamma: float,
    gae_lambda: float,
) -> tuple[np.ndarray, np.ndarray]:
    """GAE(lambda) advantages and value targets of a rollout, both ``[T, N]`` float32.

    Args:
        rewards: ``[T, N]``, step ``t`` of stream ``n`` (reward units).
        values: ``[T, N]``, ``V(obs_t)`` of each step's observation.
        next_values: ``[T, N]``, ``V(next_obs_t)`` of each step's next observation; read
            only where the step was truncated or is the rollout's last (``t = T - 1``): the
            value the advantage bootstraps from there (the final observation's, not the
            reset's). Anything elsewhere is ignored.
        terminated, truncated: ``[T, N]`` bool: the episode ended at step ``t`` (the MDP
            ended: no bootstrap; a time limit cut it: bootstrap from ``next_values``).
        gamma: the discount, in ``[0, 1]``.
        gae_lambda: GAE's lambda, in ``[0, 1]`` (0: one-step TD errors; 1: Monte-Carlo
            returns less ``V``).

    Returns:
        ``(advantages, returns)``, ``returns = advantages + values`` (the value targets).
    """
    rewards = np.asarray(rewards, np.float64)
    values = np.asarray(values, np.float64)
    if rewards.ndim != 2:
        raise ValueError(f"rewards must be [T, N], got shape {rewards.shape}")
    shape = rewards.shape
    next_values = np.asarray(next_values, np.float64)
    terminated = np.asarray(terminated, bool)
    truncated = np.asarray(truncated, bool)
    for name, array in (("values", values), ("next_values", next_values),
                        ("terminated", terminated), ("truncated", truncated)):  # fmt: skip
        if array.shape != shape:
            raise ValueError(f"{name} has shape {array.shape}, rewards {shape}")
    steps = shape[0]
    advantages = np.zeros(shape, np.float64)
    running = np.zeros(shape[1], np.float64)  # A_{t+1}
    for t in range(steps - 1, -1, -1):
        done = terminated[t] | truncated[t]
        if t == steps - 1:
            bootstrap = next_values[t]
        else:
            bootstrap = np.where(truncated[t], next_values[t], values[t + 1])
        bootstrap = np.where(terminated[t], 0.0, bootstrap)
        delta = rewards[t] + gamma * bootstrap - values[t]
        running = delta + gamma * gae_lambda * np.where(done, 0.0, running)
        advantages[t] = running
    return advantages.astype(np.float32), (advantages + values).astype(np.float32)


def graph_gae(
    rewards: tf.Tensor,
    values: tf.Tensor,
    next_values: tf.Tensor,
    terminated: tf.Tensor,
    truncated: tf.Tensor,
    gamma: float,
    gae_lambda: float,
) -> tuple[tf.Tensor, tf.Tensor]:
    """The in-graph twin of :func:`gae` (the compiled loop's), same arguments as tensors
    ``[T, N]`` of a static ``T``, same formulas in float64, the same ``(advantages,
    returns)`` float32 ``[T, N]``; tied to :func:`gae` by
    ``tests/unit/agents/test_ppo_twins.py``."""
    rewards = tf.cast(rewards, tf.float64)
    values = tf.cast(values, tf.float64)
    next_values = tf.cast(next_values, tf.float64)
    terminated = tf.cast(terminated, tf.bool)
    truncated = tf.cast(truncated, tf.bool)
    following = tf.concat([values[1:], next_values[-1:]], axis=0)  # V(obs_{t+1}); the last: V(next)
    bootstrap = tf.where(truncated, next_values, following)
    bootstrap = tf.where(terminated, tf.zeros_like(bootstrap), bootstrap)
    delta = rewards + gamma * bootstrap - values
    done = tf.logical_or(terminated, truncated)

    def back(running, step):
        delta_t, done_t = step
        return delta_t + gamma * gae_lambda * tf.where(done_t, tf.zeros_like(running), running)

    advantages = tf.scan(back, (delta, done), initializer=tf.zeros_like(values[0]), reverse=True)
    return tf.cast(advantages, tf.float32), tf.cast(advantages + values, tf.float32)


def clipped_surrogate(
    log_prob: tf.Tensor, old_log_prob: tf.Tensor, advantages: tf.Tensor, clip_range
) -> tf.Tensor:
    """PPO's clipped policy loss per example, ``[B]``:
    ``-min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A)``, ``ratio = exp(log_prob -
    old_log_prob)``.

    Its gradient in ``log_prob`` is ``-ratio * A`` where the unclipped term is the smaller
    (inside the clip, or outside on the side that makes things worse) and 0 where the clipped
    term is (outside the clip on the side the step was heading: the objective is flat there).

    Args:
        log_prob: ``[B]``, ``log pi(a|s)`` under the weights being trained.
        old_log_prob: ``[B]``, under the weights that collected the rollout (no gradient).
        advantages: ``[B]`` (no gradient).
        clip_range: epsilon, a scalar > 0.
    """
    advantages = tf.stop_gradient(advantages)
    ratio = tf.exp(log_prob - tf.stop_gradient(old_log_prob))
    unclipped = ratio * advantages
    clipped_ratio = tf.clip_by_value(ratio, 1.0 - clip_range, 1.0 + clip_range)
    return -tf.minimum(unclipped, clipped_ratio * advantages)


def value_error(
    values: tf.Tensor, old_values: tf.Tensor, returns: tf.Tensor, clip_range_vf=None
) -> tf.Tensor:
    """The value loss per example, ``[B]``: ``(R - V)^2`` (SB3's ``F.mse_loss``, no half).

    With ``clip_range_vf`` (a scalar > 0) the prediction is first kept within
    ``clip_range_vf`` of the rollout's value: ``V' = V_old + clip(V - V_old, -c, c)``, then
    ``(R - V')^2`` (SB3's value clipping; CleanRL's takes ``max((R - V)^2, (R - V')^2)``).
    """
    returns = tf.stop_gradient(returns)
    if clip_range_vf is not None:
        old_values = tf.stop_gradient(old_values)
        values = old_values + tf.clip_by_value(values - old_values, -clip_range_vf, clip_range_vf)
    return tf.square(returns - values)


def normalize_advantages(advantages: tf.Tensor, eps: float = 1e-8) -> tf.Tensor:
    """``(A - mean(A)) / (std(A) + eps)`` over one minibatch ``[B]``, ``std`` the sample
    standard deviation (``B - 1`` in the denominator, as torch's ``std()`` that SB3 and
    CleanRL call); a minibatch of one is returned as it is (SB3's ``len > 1`` guard)."""
    n = tf.shape(advantages)[0]
    mean = tf.reduce_mean(advantages)
    count = tf.cast(tf.maximum(n - 1, 1), advantages.dtype)
    std = tf.sqrt(tf.reduce_sum(tf.square(advantages - mean)) / count)
    return tf.cond(n > 1, lambda: (advantages - mean) / (std + eps), lambda: advantages)


def approx_kl(log_ratio: tf.Tensor) -> tf.Tensor:
    """The KL estimate per example, ``(ratio - 1) - log ratio`` (``[B]``; John Schulman's
    k3 estimator: unbiased, never negative), ``log_ratio = log_prob - old_log_prob``."""
    return tf.exp(log_ratio) - 1.0 - log_ratio


def clipped(ratio: tf.Tensor, clip_range) -> tf.Tensor:
    """``1.0`` where ``|ratio - 1| > clip_range`` else ``0.0``, ``[B]`` (its mean is the
    clip fraction)."""
    return tf.cast(tf.abs(ratio - 1.0) > clip_range, ratio.dtype)
