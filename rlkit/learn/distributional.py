"""Distributional value learning as pure ops: C51, QR-DQN and IQN targets and losses.

TRFL's habit (``trfl/dist_value_ops.py``): per-example tensors in and out, never reduced over
the batch, no network read, no optimizer. ``pcont`` is the per-example bootstrap discount
``gamma ** k * (1 - terminated)`` (k the steps of an n-step return), so n-step returns and
episode ends need no special case: ``pcont = 0`` means "do not bootstrap".

Every learner returns a :class:`LossOutput`: the per-example ``loss`` ``[B]`` to be weighted
(importance weights) and averaged by the caller, and a ``td_error`` ``[B]`` for prioritized
replay. For the distributional learners there is no scalar TD error; as Dopamine does
(``rainbow_agent.py`` and ``quantile_agent.py``: ``priorities = sqrt(loss + 1e-10)``), the
``td_error`` is the per-example loss itself (no gradient), non-negative: with the sampler's
``priority_exponent = 0.5`` and ``epsilon = 1e-10`` it gives Dopamine's priorities exactly.

Shapes: ``B`` batch, ``A`` actions, ``N`` atoms or quantiles (``N'`` target quantiles).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import tensorflow as tf


class LossOutput(NamedTuple):
    """A learner's per-example results: ``loss`` ``[B]`` and ``td_error`` ``[B]`` (the value
    prioritized replay turns into a priority; carries no gradient)."""

    loss: tf.Tensor
    td_error: tf.Tensor


# -- C51 (Bellemare, Dabney and Munos 2017) -----------------------------------------------------


def categorical_atoms(v_min: float, v_max: float, num_atoms: int) -> tf.Tensor:
    """The support ``z_i = v_min + i (v_max - v_min) / (N - 1)``, float32 ``[N]``.

    Raises:
        ValueError: ``v_min >= v_max`` or fewer than 2 atoms.
    """
    if not v_min < v_max:
        raise ValueError(f"v_min must be below v_max, got v_min={v_min}, v_max={v_max}")
    if int(num_atoms) < 2:
        raise ValueError(f"num_atoms must be >= 2, got {num_atoms}")
    return tf.linspace(tf.constant(v_min, tf.float32), float(v_max), int(num_atoms))


def categorical_projection(
    atoms: tf.Tensor, next_probs: tf.Tensor, rewards: tf.Tensor, pcont: tf.Tensor
) -> tf.Tensor:
    """Project ``r + pcont * Z'`` back onto the atoms: Bellemare et al. 2017 eq. 7, Alg. 1.

    ``(Phi T Z)_i = sum_j clip(1 - |clip(r + pcont z_j, v_min, v_max) - z_i| / dz, 0, 1) p_j``:
    each shifted atom ``r + pcont z_j`` (clipped to ``[v_min, v_max]``: mass beyond the
    support lands on the end atom) splits its probability ``p_j`` between its two nearest
    atoms in proportion to closeness. With ``pcont = 0`` (terminal) every atom moves to ``r``
    and all mass lands on the atoms on either side of ``r`` (or on ``r``'s atom exactly).
    This dense form (Dopamine's ``project_distribution``, TRFL's ``l2_project``) has none of
    Alg. 1's ``floor == ceil`` special case: a shifted atom exactly on ``z_i`` keeps its mass.

    Args:
        atoms: the support ``[N]``, increasing and **evenly spaced** (``categorical_atoms``);
            ``v_min = atoms[0]``, ``v_max = atoms[-1]``.
        next_probs: ``p_j``, the next state's distribution at the bootstrap action ``[B, N]``.
        rewards: ``[B]`` (the n-step discounted reward sum).
        pcont: ``[B]``, ``gamma ** k * (1 - terminated)``.

    Returns:
        ``[B, N]``, rows summing to the rows of ``next_probs`` (1 for distributions).
        Differentiable in ``next_probs``; callers stop the gradient on targets.
    """
    atoms = tf.convert_to_tensor(atoms)
    dtype = next_probs.dtype
    atoms = tf.cast(atoms, dtype)
    v_min, v_max = atoms[0], atoms[-1]
    delta_z = (v_max - v_min) / tf.cast(tf.shape(atoms)[0] - 1, dtype)
    rewards = tf.cast(rewards, dtype)[:, None]
    pcont = tf.cast(pcont, dtype)[:, None]
    shifted = tf.clip_by_value(rewards + pcont * atoms[None, :], v_min, v_max)  # [B, N_j]
    distance = tf.abs(shifted[:, None, :] - atoms[None, :, None])  # [B, N_i, N_j]
    share = tf.clip_by_value(1.0 - distance / delta_z, 0.0, 1.0)
    return tf.reduce_sum(share * next_probs[:, None, :], axis=-1)


def categorical_greedy_actions(logits: tf.Tensor, atoms: tf.Tensor) -> tf.Tensor:
    """``argmax_a sum_i softmax(logits[b, a])_i z_i``, int32 ``[B]`` from ``logits`` ``[B, A, N]``
    (the bootstrap action: target-net logits for C51, online-net logits for Double DQN)."""
    probs = tf.nn.softmax(logits, axis=-1)
    means = tf.reduce_sum(probs * tf.cast(atoms, probs.dtype), axis=-1)
    return tf.argmax(means, axis=-1, output_type=tf.int32)


def categorical_q_learning(
    logits: tf.Tensor,
    actions: tf.Tensor,
    rewards: tf.Tensor,
    pcont: tf.Tensor,
    target_logits: tf.Tensor,
    atoms: tf.Tensor,
    next_actions: tf.Tensor,
) -> LossOutput:
    """C51's loss: cross-entropy from the projected target to the online distribution.

    ``loss_b = -sum_i m_i log softmax(logits[b, a_b])_i`` with ``m`` the
    :func:`categorical_projection` of ``softmax(target_logits[b, next_a_b])`` (no gradient);
    TRFL's ``categorical_dist_qlearning`` with the bootstrap action chosen by the caller
    (:func:`categorical_greedy_actions` on the target logits, or on the online logits at the
    next state for Double DQN as Rainbow does).

    Args:
        logits: online logits at the state ``[B, A, N]``.
        actions: taken actions ``[B]``, int.
        rewards: ``[B]``. pcont: ``[B]``, ``gamma ** k * (1 - terminated)``.
        target_logits: target-network logits at the next state ``[B, A, N]``.
        atoms: the support ``[N]`` (evenly spaced).
        next_actions: bootstrap actions ``[B]``, int.

    Returns:
        ``loss`` ``[B]`` (nats) and ``td_error`` = the same cross-entropy, no gradient (the
        value Dopamine's Rainbow turns into a priority).
    """
    chosen = tf.gather(logits, actions, axis=1, batch_dims=1)  # [B, N]
    next_probs = tf.nn.softmax(
        tf.gather(target_logits, next_actions, axis=1, batch_dims=1), axis=-1
    )
    target = tf.stop_gradient(categorical_projection(atoms, next_probs, rewards, pcont))
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=target, logits=chosen)
    return LossOutput(loss, tf.stop_gradient(loss))


# -- QR-DQN (Dabney et al. 2018a) and IQN (Dabney et al. 2018b) ----------------------------------


def quantile_midpoints(num_quantiles: int) -> tf.Tensor:
    """QR-DQN's fixed fractions ``tau_hat_i = (2 i + 1) / (2 N)``, float32 ``[N]`` (Dabney et
    al. 2018a Lemma 2). Raises ValueError for fewer than 2 quantiles."""
    if int(num_quantiles) < 2:
        raise ValueError(f"num_quantiles must be >= 2, got {num_quantiles}")
    n = int(num_quantiles)
    return (tf.range(n, dtype=tf.float32) + 0.5) / n


def quantile_huber_loss(
    quantiles: tf.Tensor,
    target_quantiles: tf.Tensor,
    taus: tf.Tensor,
    kappa: float = 1.0,
) -> tf.Tensor:
    """The quantile Huber loss, summed over the quantiles and averaged over the targets, ``[B]``.

    Over the ``N x N'`` pairs ``u_ij = T theta_j - theta_i`` (target minus online):
    ``rho_tau^kappa(u) = |tau_i - 1{u < 0}| L_kappa(u) / kappa`` with the Huber loss
    ``L_kappa(u) = u^2 / 2`` for ``|u| <= kappa``, else ``kappa (|u| - kappa / 2)``, and
    ``loss_b = sum_i mean_j rho_{tau_i}^kappa(u_ij)`` (Dabney et al. 2018a eq. 9-10 and its
    Algorithm 1; IQN's eq. 3, written with the ``1 / kappa``). ``kappa = 0`` is the plain
    quantile-regression loss ``|tau - 1{u < 0}| |u|``, the limit of the ``kappa > 0`` form.

    Dopamine's ``implicit_quantile_agent.py`` divides by kappa as here; its
    ``quantile_agent.py`` (QR-DQN) does not: the two agree at Dopamine's ``kappa = 1``, and
    for another kappa Dopamine's QR-DQN loss is ``kappa`` times this one.

    Args:
        quantiles: online quantile values ``theta_i`` ``[B, N]``.
        target_quantiles: ``T theta_j`` ``[B, N']``; no gradient flows into them.
        taus: the fractions of ``quantiles``: ``[N]`` (QR-DQN's midpoints) or ``[B, N]``
            (IQN's per-example samples), in ``(0, 1)``.
        kappa: Huber threshold ``>= 0`` (a Python float).

    Returns:
        ``[B]``, in the units of the values.
    """
    if not float(kappa) >= 0.0:
        raise ValueError(f"kappa must be >= 0, got {kappa}")
    dtype = quantiles.dtype
    target_quantiles = tf.stop_gradient(tf.cast(target_quantiles, dtype))
    taus = tf.cast(taus, dtype)
    if taus.shape.rank == 1:
        taus = taus[None, :]
    u = target_quantiles[:, None, :] - quantiles[:, :, None]  # [B, N_i, N'_j]
    below = tf.cast(u < 0.0, dtype)
    weight = tf.abs(taus[:, :, None] - below)
    if kappa == 0.0:
        elementwise = weight * tf.abs(u)
    else:
        abs_u = tf.abs(u)
        huber = tf.where(abs_u <= kappa, 0.5 * tf.square(u), kappa * (abs_u - 0.5 * kappa))
        elementwise = weight * huber / kappa
    return tf.reduce_sum(tf.reduce_mean(elementwise, axis=2), axis=1)


def quantile_greedy_actions(quantiles: tf.Tensor) -> tf.Tensor:
    """``argmax_a mean_i quantiles[b, a, i]``, int32 ``[B]`` from ``[B, A, N]`` (QR-DQN's
    Q-values; IQN's with quantiles at K sampled fractions, Dabney et al. 2018b eq. 5)."""
    return tf.argmax(tf.reduce_mean(quantiles, axis=-1), axis=-1, output_type=tf.int32)


def quantile_q_learning(
    quantiles: tf.Tensor,
    actions: tf.Tensor,
    rewards: tf.Tensor,
    pcont: tf.Tensor,
    target_quantiles: tf.Tensor,
    next_actions: tf.Tensor,
    kappa: float = 1.0,
    taus: tf.Tensor | None = None,
) -> LossOutput:
    """QR-DQN's loss (``taus=None``) or IQN's (``taus`` the sampled fractions).

    ``T theta_j = r + pcont * target_quantiles[b, next_a_b, j]`` (no gradient), then
    :func:`quantile_huber_loss` against ``quantiles[b, a_b]``.

    Args:
        quantiles: online quantile values at the state ``[B, A, N]``.
        actions: taken actions ``[B]``, int.
        rewards: ``[B]``. pcont: ``[B]``, ``gamma ** k * (1 - terminated)``.
        target_quantiles: target-network values at the next state ``[B, A, N']``: QR-DQN's
            ``N' = N`` fixed quantiles, or IQN's values at ``N'`` fractions ``tau'`` sampled
            independently of ``taus`` (the ``tau'`` themselves do not enter the loss).
        next_actions: bootstrap actions ``[B]`` (:func:`quantile_greedy_actions`; for IQN on
            values at ``K`` further fractions).
        kappa: Huber threshold (Dopamine: 1.0).
        taus: ``None`` for QR-DQN's midpoints ``(2 i + 1) / 2N``; IQN's fractions of
            ``quantiles`` ``[B, N]`` (one draw per example, Dabney et al. 2018b eq. 3).

    Returns:
        ``loss`` ``[B]`` and ``td_error`` = the same loss, no gradient (Dopamine's QR-DQN
        priority, ``sqrt(loss + 1e-10)``).
    """
    chosen = tf.gather(quantiles, actions, axis=1, batch_dims=1)  # [B, N]
    next_values = tf.gather(target_quantiles, next_actions, axis=1, batch_dims=1)  # [B, N']
    dtype = chosen.dtype
    target = tf.cast(rewards, dtype)[:, None] + tf.cast(pcont, dtype)[:, None] * next_values
    if taus is None:
        taus = quantile_midpoints(quantiles.shape[-1])
    loss = quantile_huber_loss(chosen, tf.stop_gradient(target), taus, kappa)
    return LossOutput(loss, tf.stop_gradient(loss))


def iqn_cosine_embedding(
    taus: tf.Tensor, embedding_dim: int = 64, first_index: int = 0
) -> tf.Tensor:
    """IQN's fraction features ``cos(pi i tau)``, ``[B, N, embedding_dim]`` from ``[B, N]``.

    ``i = first_index, ..., first_index + embedding_dim - 1``. Dabney et al. 2018b eq. 4 sums
    over ``i = 0 .. n - 1`` (the default, ``first_index=0``), whose ``i = 0`` feature is the
    constant 1, redundant with the following Dense layer's bias. Dopamine (JAX
    ``networks.py`` ``ImplicitQuantileNetwork`` and TF ``legacy_networks.py``) uses
    ``i = 1 .. n`` (``jnp.arange(1, dim + 1)``): ``first_index=1`` reproduces it; it trades the
    constant for one more frequency. The following ReLU Dense layer is the network's
    (:class:`rlkit.networks.quantile.QuantileEmbedding`).
    """
    if int(embedding_dim) < 1:
        raise ValueError(f"embedding_dim must be >= 1, got {embedding_dim}")
    taus = tf.convert_to_tensor(taus)
    dtype = taus.dtype if taus.dtype.is_floating else tf.float32
    frequencies = tf.range(first_index, first_index + int(embedding_dim), dtype=dtype) * math.pi
    return tf.cos(tf.cast(taus, dtype)[..., None] * frequencies)
