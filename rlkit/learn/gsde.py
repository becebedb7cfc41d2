"""Generalized State-Dependent Exploration (gSDE: Raffin et al. 2021, "Smooth Exploration
for Robotic Reinforcement Learning", arXiv 2005.05719), the formulas of SB3's
``StateDependentNoiseDistribution`` (``common/distributions.py``) written anew.

The policy's exploration noise is a random linear map of its own last hidden layer
``z(s)`` (``[B, L]``, the "latent"): ``noise(s) = z(s) . E`` with an exploration matrix
``E`` ``[L, A]`` whose entries are ``N(0, sigma_ij^2)``, held for several steps and then
redrawn. For one state the action ``u = mean(s) + z(s) . E`` is Gaussian with

    Var(u_j) = sum_i z_i(s)^2 sigma_ij^2       (``variance = (z^2) @ (sigma^2)``, [B, A])

independent across ``j`` (each column of ``E`` is its own draw), so the log-probability and
entropy are those of a diagonal Gaussian with that per-state std, ``sqrt(variance + eps)``
(``eps = 1e-6``, SB3's, keeps the std away from 0 where ``z`` vanishes).

- ``sigma = exp(log_std)``, or with ``use_expln`` ``exp(log_std)`` for ``log_std <= 0`` and
  ``log1p(log_std) + 1`` above (the paper's expln: positive, growing slowly);
- ``log_std`` is ``[L, A]`` with ``full_std`` (one sigma per entry of ``E``), else ``[L, 1]``
  (one per latent unit, shared by the actions);
- the latent enters without a gradient unless ``learn_features`` (SB3: SAC's actor learns
  them, PPO's and A2C's policies do not).

These are pure functions of tensors (the learners' graphs) with numpy twins (acting), and
:class:`ExplorationMatrices`, acting's held matrices, one per environment stream, a part of
the checkpoint (exact resume).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf

#: added to the variance before its root (SB3's ``epsilon``)
EPSILON = 1e-6
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def gsde_std(log_std: tf.Tensor, action_dim: int, use_expln: bool = False) -> tf.Tensor:
    """The exploration matrix's std ``sigma`` ``[L, A]`` from ``log_std`` ``[L, A]`` (full) or
    ``[L, 1]`` (broadcast over the actions): ``exp``, or ``expln`` with ``use_expln``."""
    if use_expln:
        positive = tf.maximum(log_std, 0.0)
        std = tf.where(log_std <= 0.0, tf.exp(tf.minimum(log_std, 0.0)),
                       tf.math.log1p(positive) + 1.0)  # fmt: skip
    else:
        std = tf.exp(log_std)
    return tf.broadcast_to(std, [log_std.shape[0], action_dim])


def numpy_gsde_std(log_std: np.ndarray, action_dim: int, use_expln: bool = False) -> np.ndarray:
    """:func:`gsde_std` in numpy (float64)."""
    log_std = np.asarray(log_std, np.float64)
    if use_expln:
        std = np.where(log_std <= 0.0, np.exp(np.minimum(log_std, 0.0)),
                       np.log1p(np.maximum(log_std, 0.0)) + 1.0)  # fmt: skip
    else:
        std = np.exp(log_std)
    return np.broadcast_to(std, (log_std.shape[0], action_dim)).copy()


def gsde_variance(latent: tf.Tensor, std: tf.Tensor) -> tf.Tensor:
    """``Var(u) = (z^2) @ (sigma^2)``: ``latent [B, L]``, ``std [L, A]`` -> ``[B, A]``."""
    return tf.matmul(tf.square(latent), tf.square(std))


def gsde_log_prob(u: tf.Tensor, mean: tf.Tensor, variance: tf.Tensor) -> tf.Tensor:
    """``sum_j log N(u_j; mean_j, variance_j + eps)``: ``[B, A]`` each -> ``[B]``."""
    var = variance + EPSILON
    return tf.reduce_sum(-0.5 * tf.square(u - mean) / var - 0.5 * tf.math.log(var)
                         - _HALF_LOG_2PI, axis=-1)  # fmt: skip


def gsde_entropy(variance: tf.Tensor) -> tf.Tensor:
    """The Gaussian's entropy ``sum_j (0.5 + 0.5 log(2 pi) + 0.5 log(variance_j + eps))``:
    ``[B, A] -> [B]`` (of the unsquashed action: PPO's and A2C's)."""
    return tf.reduce_sum(0.5 + _HALF_LOG_2PI + 0.5 * tf.math.log(variance + EPSILON), axis=-1)


def latent_input(latent: tf.Tensor, learn_features: bool) -> tf.Tensor:
    """The latent as the distribution takes it: as is with ``learn_features``, else without
    a gradient (SB3's ``latent_sde.detach()``)."""
    return latent if learn_features else tf.stop_gradient(latent)


def numpy_gsde_noise(latent: np.ndarray, matrices: np.ndarray) -> np.ndarray:
    """Each stream's noise ``z_n . E_n``: ``latent [N, L]``, ``matrices [N, L, A]`` ->
    ``[N, A]`` (float64)."""
    return np.einsum("nl,nla->na", np.asarray(latent, np.float64), matrices)


class ExplorationMatrices:
    """Acting's exploration matrices ``E_n`` ``[N, L, A]``, one per environment stream (SB3's
    ``exploration_matrices``), and the steps since they were drawn.

    :meth:`draw` redraws all ``N`` (``sigma * standard normal``, from the caller's generator);
    :meth:`due` says when: at the first exploring act, after :meth:`restart` (the start of a
    rollout or a block of collection, as SB3's ``collect_rollouts`` calls ``reset_noise``),
    every ``sample_freq`` acts from then when ``sample_freq > 0``, and when the batch's
    stream count changes. Its :meth:`state_dict` is the checkpoint's ``memory/gsde``.
    """

    def __init__(self, latent_dim: int, action_dim: int, sample_freq: int) -> None:
        self.latent_dim, self.action_dim, self.sample_freq = latent_dim, action_dim, sample_freq
        self.matrices = np.zeros((0, latent_dim, action_dim))
        self.clock = -1  # acts since the draw; -1: none drawn since the last restart
        self.mark = -1  # the last restart_at's mark

    def restart(self) -> None:
        """The next exploring act draws afresh (a rollout or collection block begins)."""
        self.clock = -1

    def restart_at(self, mark: int) -> None:
        """:meth:`restart` when ``mark`` (e.g. the collection block's number) differs from
        the last one given."""
        if mark != self.mark:
            self.mark = mark
            self.restart()

    def due(self, streams: int) -> bool:
        """Whether the act about to happen, on ``streams`` streams, draws new matrices."""
        if self.clock < 0 or len(self.matrices) != streams:
            return True
        return self.sample_freq > 0 and self.clock % self.sample_freq == 0

    def draw(self, std: np.ndarray, streams: int, rng: np.random.Generator) -> None:
        """``E_n = sigma * N(0, 1)``, ``[streams, L, A]`` (``std`` ``[L, A]``)."""
        normal = rng.standard_normal((streams, self.latent_dim, self.action_dim))
        self.matrices = np.asarray(std, np.float64) * normal
        self.clock = 0

    def noise(self, latent: np.ndarray, std: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The noise of one exploring act ``[N, A]`` for ``latent [N, L]``: the held matrices
        (drawn first when :meth:`due`), the clock advanced."""
        streams = int(latent.shape[0])
        if self.due(streams):
            self.draw(std, streams, rng)
        self.clock += 1
        return numpy_gsde_noise(latent, self.matrices)

    def state_dict(self) -> dict[str, np.ndarray]:
        return {"matrices": self.matrices.copy(), "clock": np.asarray(self.clock, np.int64),
                "mark": np.asarray(self.mark, np.int64)}  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.matrices = np.array(state["matrices"], np.float64)
        self.clock, self.mark = int(state["clock"]), int(state["mark"])


class NumpyLatentMLP:
    """A policy MLP's numpy forward pass that also gives its last hidden layer:
    ``x [N, D] -> (latent [N, L], head output [N, A])``.

    Args:
        arrays: ``[kernel_0, bias_0, ..., kernel_out, bias_out]``.
        activation: the hidden layers' (``"relu"``: SAC's; ``"tanh"``: PPO's).
        clip: the head's output clipped to ``[-clip, clip]`` (SAC's ``clip_mean``; 0: not).
        std: the exploration matrix's std ``[L, A]`` that goes with these weights.
    """

    def __init__(self, arrays, activation: str, clip: float = 0.0,
                 std: np.ndarray | None = None) -> None:  # fmt: skip
        arrays = [np.asarray(a) for a in arrays]
        self.layers = [(arrays[i], arrays[i + 1]) for i in range(0, len(arrays), 2)]
        self.activation, self.clip = activation, clip
        #: the exploration matrix's std ``[L, A]`` as of the weights (:func:`numpy_gsde_std`)
        self.std = std

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        *hidden, (kernel, bias) = self.layers
        for k, b in hidden:
            y = x @ k + b
            x = np.tanh(y) if self.activation == "tanh" else np.maximum(y, 0.0)
        out = x @ kernel + bias
        return x, (np.clip(out, -self.clip, self.clip) if self.clip > 0 else out)


# -- the in-graph twin of ExplorationMatrices (the compiled loop's acting) ---------------------
class HeldNoise(NamedTuple):
    """The held matrices' state in the graph, as :class:`ExplorationMatrices` keeps it:
    ``matrices`` float32 ``[N, L, A]``, ``clock`` and ``mark`` int64 scalars."""

    matrices: tf.Tensor
    clock: tf.Tensor
    mark: tf.Tensor


def graph_held_noise(
    latent: tf.Tensor, std: tf.Tensor, held: HeldNoise, mark: tf.Tensor, sample_freq: int,
    seed: tf.Tensor,
) -> tuple[tf.Tensor, HeldNoise]:  # fmt: skip
    """:meth:`ExplorationMatrices.restart_at` (``mark``) then :meth:`~ExplorationMatrices.noise`
    in the graph: ``(noise [N, A], the state after)`` for ``latent [N, L]`` and ``std [L,
    A]``. New matrices ``std * normal`` (the standard normals a stateless draw of ``seed``,
    int32 ``[2]``: :func:`graph_matrix_normals`) replace the held ones when the mark changed,
    none were drawn yet, or ``sample_freq > 0`` acts have passed since the draw."""
    clock = tf.where(tf.not_equal(mark, held.mark), tf.constant(-1, tf.int64), held.clock)
    due = clock < 0
    if sample_freq > 0:
        due = tf.logical_or(due, tf.equal(clock % sample_freq, 0))
    drawn = std * graph_matrix_normals(seed, held.matrices.shape)
    matrices = tf.where(due, drawn, held.matrices)
    clock = tf.where(due, tf.constant(0, tf.int64), clock) + 1
    noise = tf.einsum("nl,nla->na", latent, matrices)
    return noise, HeldNoise(matrices, clock, tf.cast(mark, tf.int64))


def graph_matrix_normals(seed: tf.Tensor, shape) -> tf.Tensor:
    """The standard normals ``[N, L, A]`` float32 a draw of new matrices scales by ``std``."""
    return tf.random.stateless_normal(shape, seed)
