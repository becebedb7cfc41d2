"""Targets and losses of every agent as pure functions: per-example tensors in and out.

Nothing here reduces over the batch, reads a network or touches an optimizer (TRFL's
habit), so each formula is checked against a hand-computed case in the tests.

- DQN (DQN3.0): :func:`q_learning_delta`, :func:`dqn3_output_gradient`, :func:`huber`,
  :func:`squared` (joined into losses on the value-learning seam in
  :mod:`rlkit.learn.value_losses`); its ``pcont`` is the replay's
  (:func:`rlkit.replay.nstep.pcont`, :func:`rlkit.replay.nstep.graph_pcont`);
- DDPG / TD3: :func:`bootstrap_target`, :func:`squared_error`, :func:`smooth_target_action`;
- REINFORCE: :func:`softmax_log_loss`, :func:`softmax_entropy`, :func:`gaussian_log_prob`,
  :func:`gaussian_log_loss`, :func:`gaussian_entropy`, :func:`value_loss`, :func:`normalize`;
- PPO and A2C with ``MultiDiscrete`` actions: :func:`multi_categorical_log_prob`,
  :func:`multi_categorical_entropy` (one softmax per dimension over its slice of the logits).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

_LOG_2PI = float(np.log(2.0 * np.pi))

# -- DQN ----------------------------------------------------------------------------------------


def q_learning_delta(
    q_taken: tf.Tensor,
    rewards: tf.Tensor,
    next_q_target: tf.Tensor,
    pcont: tf.Tensor,
    next_q_online: tf.Tensor | None = None,
) -> tf.Tensor:
    """DQN3.0's TD error ``delta``, shape ``[B]`` (TRFL's ``qlearning`` / ``double_qlearning``
    TD error).

    ``delta = r + pcont * max_a Q_target(s2, a) - Q(s, a)``.

    Args:
        q_taken: ``Q(s, a)`` for the taken actions, ``[B]``.
        rewards: ``[B]`` (already divided by DQN3.0's ``r_max`` where rescaled; an n-step
            return's discounted sum).
        next_q_target: ``Q_target(s2, .)``, ``[B, A]``.
        pcont: ``[B]``, the bootstrap's discount: ``gamma`` (``gamma ** n`` for n steps),
            0 where the episode truly ended (time-limit truncation is *not* termination: it
            still bootstraps).
        next_q_online: ``Q(s2, .)`` from the online network, ``[B, A]``; when given the
            bootstrap is Double DQN's ``Q_target(s2, argmax_a Q(s2, a))``.

    The bootstrap side carries no gradient (``stop_gradient``).
    """
    rewards = tf.cast(rewards, q_taken.dtype)
    if next_q_online is None:
        next_value = tf.reduce_max(next_q_target, axis=-1)
    else:
        best = tf.argmax(next_q_online, axis=-1, output_type=tf.int32)
        next_value = tf.gather(next_q_target, best, axis=-1, batch_dims=1)
    target = tf.stop_gradient(rewards + tf.cast(pcont, q_taken.dtype) * next_value)
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


# -- DDPG / TD3 ---------------------------------------------------------------------------------
def bootstrap_target(rewards: tf.Tensor, pcont: tf.Tensor, next_q: tf.Tensor) -> tf.Tensor:
    """``y = stop_gradient(r + pcont * next_q)``, shape ``[B]``.

    Args:
        rewards: ``[B]`` (an n-step return's discounted sum).
        pcont: ``[B]``, the bootstrap's discount: ``gamma`` (``gamma ** n`` for n steps), 0
            where the MDP ended; a time-limit truncation is *not* termination and still
            bootstraps.
        next_q: ``Q'(s2, mu'(s2))`` from the target networks, ``[B]`` (TD3: the minimum
            over the twin critics).
    """
    pcont = tf.cast(pcont, next_q.dtype)
    return tf.stop_gradient(tf.cast(rewards, next_q.dtype) + pcont * next_q)


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


# -- REINFORCE -----------------------------------------------------------------------------------
def softmax_log_loss(logits: tf.Tensor, actions: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
    """REINFORCE pseudo-loss of a softmax policy, ``-log pi(a_t|s_t) * w_t``, shape ``[T]``.

    Args:
        logits: ``[T, A]`` unnormalised log-probabilities.
        actions: ``[T]`` int, the actions taken (0-based).
        weights: ``[T]``, the return (or advantage) of each action; no gradient flows
            into it. Its gradient at the logits is ``-(onehot(a_t) - pi(.|s_t)) * w_t``.
    """
    log_probs = tf.nn.log_softmax(logits, axis=-1)
    taken = tf.gather(log_probs, actions, axis=-1, batch_dims=1)
    return -taken * tf.stop_gradient(tf.cast(weights, taken.dtype))


def softmax_entropy(logits: tf.Tensor) -> tf.Tensor:
    """Entropy of each softmax distribution, ``[T, A] -> [T]`` (nats)."""
    log_probs = tf.nn.log_softmax(logits, axis=-1)
    return -tf.reduce_sum(tf.exp(log_probs) * log_probs, axis=-1)


def gaussian_log_prob(mean: tf.Tensor, log_std: tf.Tensor, actions: tf.Tensor) -> tf.Tensor:
    """Log-density of a diagonal Gaussian: mean ``[T, D]``, log_std ``[D]``, actions ``[T, D]``.

    Returns ``[T]``: ``sum_d -0.5 ((a - mu) / sigma)^2 - log sigma - 0.5 log 2 pi``.
    """
    z = (actions - mean) * tf.exp(-log_std)
    return tf.reduce_sum(-0.5 * tf.square(z) - log_std - 0.5 * _LOG_2PI, axis=-1)


def gaussian_log_loss(
    mean: tf.Tensor, log_std: tf.Tensor, actions: tf.Tensor, weights: tf.Tensor
) -> tf.Tensor:
    """REINFORCE pseudo-loss of a Gaussian policy, ``-log pi(a_t|s_t) * w_t``, shape ``[T]``."""
    log_prob = gaussian_log_prob(mean, log_std, actions)
    return -log_prob * tf.stop_gradient(tf.cast(weights, log_prob.dtype))


def gaussian_entropy(log_std: tf.Tensor, num_examples: tf.Tensor) -> tf.Tensor:
    """Entropy of the diagonal Gaussian, repeated ``num_examples`` times: ``[T]`` (nats)."""
    entropy = tf.reduce_sum(log_std + 0.5 * (_LOG_2PI + 1.0))
    return tf.fill([num_examples], entropy)


def multi_categorical_log_prob(logits: tf.Tensor, actions: tf.Tensor,
                               nvec: tuple[int, ...]) -> tf.Tensor:  # fmt: skip
    """Log-probability of ``D`` independent categoricals (a ``MultiDiscrete(nvec)`` action).

    ``logits [B, sum(nvec)]`` hold dimension ``d``'s ``nvec[d]`` logits in the slice after
    the first ``d`` dimensions'; ``actions [B, D]`` int (each counted from 0). Returns ``[B]``:
    ``sum_d log softmax(logits_d)[a_d]`` (SB3's ``MultiCategoricalDistribution``, CleanRL's
    ``ppo_multidiscrete.py``). Dimension ``d``'s gradient reaches its own slice only.
    """
    parts = tf.split(logits, list(nvec), axis=-1)
    taken = [
        tf.gather(tf.nn.log_softmax(part, axis=-1), actions[:, d], axis=-1, batch_dims=1)
        for d, part in enumerate(parts)
    ]
    return tf.add_n(taken)


def multi_categorical_entropy(logits: tf.Tensor, nvec: tuple[int, ...]) -> tf.Tensor:
    """Entropy of ``D`` independent categoricals, ``[B, sum(nvec)] -> [B]`` (nats): the sum
    of each dimension's softmax entropy."""
    return tf.add_n([softmax_entropy(part) for part in tf.split(logits, list(nvec), axis=-1)])


def value_loss(values: tf.Tensor, returns: tf.Tensor) -> tf.Tensor:
    """Squared error of the baseline, ``0.5 (G_t - V(s_t))^2``, shape ``[T]``."""
    return 0.5 * tf.square(tf.stop_gradient(returns) - values)


def normalize(x: tf.Tensor, eps: float = 1e-8) -> tf.Tensor:
    """``(x - mean(x)) / (std(x) + eps)`` over the whole ``[T]`` batch (0 when ``T == 1``)."""
    mean, variance = tf.nn.moments(x, axes=[0])
    return (x - mean) / (tf.sqrt(variance) + eps)
