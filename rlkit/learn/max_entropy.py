"""Maximum-entropy terms (SAC: Haarnoja et al. 2018, arXiv 1801.01290 and 1812.05905), pure
functions of tensors: per-example values, never reduced over the batch, no optimizer.

- The policy is a tanh-squashed diagonal Gaussian: ``u ~ N(mean, exp(log_std)^2)``, the
  action in ``[-1, 1]`` is ``tanh(u)`` (rescaled to the Box bounds outside these terms).
  Its log-density (1801.01290, Appendix C, eq. 21) is
  ``log pi(a|s) = sum_i [log N(u_i; mean_i, std_i) - log(1 - tanh(u_i)^2)]``, with
  ``log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2 u))`` (exact, and finite where
  ``1 - tanh(u)^2`` rounds to 0; SB3 adds 1e-6 inside the log instead, CleanRL too).
  The density is of the squashed action in ``[-1, 1]``: the constant Jacobian of the
  rescaling to the bounds is left out, as SB3 and CleanRL do (target entropy -|A| is
  stated in those units).
- ``log_std`` is bounded before use: ``clip`` to ``[low, high]`` (SB3's ``LOG_STD_MIN,
  LOG_STD_MAX = -20, 2``, ``sac/policies.py``) or ``tanh`` squashed into ``[low, high]``
  (CleanRL's ``sac_continuous_action.py``: ``-5 + 0.5 (2 - -5)(tanh(x) + 1)``).
- The soft critic target: ``y = r + pcont (min_j Q'_j(s', a') - alpha log pi(a'|s'))``,
  ``a' ~ pi(.|s')`` (1812.05905 eq. 3 with the twin minimum of eq. 7's implementation).
- The temperature loss: ``-alpha (log pi + H)`` (1812.05905 eq. 18, the paper's) or
  ``-log(alpha) (log pi + H)`` (SB3's ``sac.py``). Both learn ``log alpha``; their gradients
  in ``log alpha`` are ``-alpha (log pi + H)`` and ``-(log pi + H)``: the same sign (alpha
  rises while the entropy ``-log pi`` is below the target ``H``), the paper's step scaled
  by alpha itself (smaller steps as alpha shrinks), SB3's not.
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

_LOG_2 = math.log(2.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def bound_log_std(raw: tf.Tensor, low: float, high: float, how: str = "clip") -> tf.Tensor:
    """The network's raw ``log_std`` ``[..., A]`` kept in ``[low, high]`` (``how``: clip |
    tanh, see the module's docstring)."""
    if how == "tanh":
        return low + 0.5 * (high - low) * (tf.tanh(raw) + 1.0)
    return tf.clip_by_value(raw, low, high)


def numpy_bound_log_std(raw: np.ndarray, low: float, high: float, how: str = "clip") -> np.ndarray:
    """:func:`bound_log_std` in numpy (acting's twin; float32 in, float32 out)."""
    if how == "tanh":
        return (low + 0.5 * (high - low) * (np.tanh(raw) + 1.0)).astype(np.float32)
    return np.clip(raw, low, high).astype(np.float32)


def log_one_minus_tanh_squared(u: tf.Tensor) -> tf.Tensor:
    """``log(1 - tanh(u)^2)`` elementwise as ``2 (log 2 - u - softplus(-2 u))``: exact, and
    finite for any ``u`` (the direct form is ``log(0) = -inf`` once ``|u|`` > ~9 in float32)."""
    return 2.0 * (_LOG_2 - u - tf.math.softplus(-2.0 * u))


def gaussian_log_prob(u: tf.Tensor, mean: tf.Tensor, log_std: tf.Tensor) -> tf.Tensor:
    """``sum_i log N(u_i; mean_i, exp(log_std_i)^2)`` over the last axis: ``[..., A] -> [...]``."""
    z = (u - mean) * tf.exp(-log_std)
    return tf.reduce_sum(-0.5 * tf.square(z) - log_std - _HALF_LOG_2PI, axis=-1)


def squashed_sample(
    mean: tf.Tensor, log_std: tf.Tensor, noise: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor]:
    """The reparameterised sample and its log-density: ``u = mean + exp(log_std) noise``,
    ``a = tanh(u)`` in ``[-1, 1]`` ``[..., A]``, and ``log pi(a|s)`` ``[...]`` (module
    docstring). ``noise``: standard normal ``[..., A]``, drawn by the caller (so that the
    Python loop's generator and the graph's stateless draws both feed it)."""
    u = mean + tf.exp(log_std) * noise
    log_prob = gaussian_log_prob(u, mean, log_std)
    log_prob -= tf.reduce_sum(log_one_minus_tanh_squared(u), axis=-1)
    return tf.tanh(u), log_prob


def soft_bootstrap_target(
    rewards: tf.Tensor,
    pcont: tf.Tensor,
    next_q_min: tf.Tensor,
    next_log_prob: tf.Tensor,
    alpha: tf.Tensor,
) -> tf.Tensor:
    """``y = stop_gradient(r + pcont (min_j Q'_j(s', a') - alpha log pi(a'|s')))``, all ``[B]``
    (``pcont = gamma^n (1 - terminated)``; a truncation still bootstraps)."""
    return tf.stop_gradient(rewards + pcont * (next_q_min - alpha * next_log_prob))


def temperature_loss(
    log_alpha: tf.Tensor, log_prob: tf.Tensor, target_entropy: float, form: str = "alpha"
) -> tf.Tensor:
    """The per-example temperature loss ``[B]`` to minimise in ``log_alpha`` (a scalar
    variable): ``-alpha (log pi + H)`` (``form="alpha"``, 1812.05905 eq. 18) or ``-log_alpha
    (log pi + H)`` (``"log_alpha"``, SB3); ``log_prob`` ``[B]`` enters without a gradient."""
    gap = tf.stop_gradient(log_prob + target_entropy)
    scale = tf.exp(log_alpha) if form == "alpha" else log_alpha
    return -scale * gap


# -- discrete actions (Christodoulou 2019, arXiv 1910.07207): expectations instead of samples --
def categorical_soft_value(
    probs: tf.Tensor, log_probs: tf.Tensor, q_min: tf.Tensor, alpha: tf.Tensor
) -> tf.Tensor:
    """``V(s) = sum_a pi(a|s) (min_j Q_j(s, a) - alpha log pi(a|s))``: ``[B, A] -> [B]`` (the
    discrete soft target's bootstrap, eq. 10's expectation taken exactly)."""
    return tf.reduce_sum(probs * (q_min - alpha * log_probs), axis=-1)


def categorical_policy_loss(
    probs: tf.Tensor, log_probs: tf.Tensor, q_min: tf.Tensor, alpha: tf.Tensor
) -> tf.Tensor:
    """``sum_a pi(a|s) (alpha log pi(a|s) - min_j Q_j(s, a))``: ``[B, A] -> [B]`` (eq. 12)."""
    return tf.reduce_sum(probs * (alpha * log_probs - q_min), axis=-1)


def categorical_log_prob_mean(probs: tf.Tensor, log_probs: tf.Tensor) -> tf.Tensor:
    """``E_pi[log pi(a|s)] = sum_a pi log pi`` ``[B]`` (minus the entropy): what the temperature
    loss takes as ``log_prob`` for discrete actions (eq. 11: ``pi^T (-alpha (log pi + H))``,
    the sum over actions of ``pi`` being 1)."""
    return tf.reduce_sum(probs * log_probs, axis=-1)
