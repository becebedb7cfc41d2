"""SAC's acting rule: a sample of the squashed Gaussian policy while exploring, the tanh of
its mean when greedy (evaluation, export), uniform actions before ``learning_starts``.

It reads the policy network its learner last gave it in numpy (``encoded obs [N, obs_dim]
-> [N, 2 A]``, the mean and raw log std side by side) and computes, with the same formulas
as :mod:`rlkit.learn.max_entropy`, ``a = tanh(mean + exp(log_std) noise)`` rescaled to the
bounds: no TensorFlow call per environment step. :func:`squashed_action` is the numpy twin
of :func:`~rlkit.learn.max_entropy.squashed_sample`'s action (tied by
``tests/unit/agents/test_sac.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from rlkit.agents.parts import Acting
from rlkit.core.errors import UsageError
from rlkit.core.spaces import ObservationFormat
from rlkit.learn.gsde import ExplorationMatrices, HeldNoise, graph_held_noise
from rlkit.learn.max_entropy import bound_log_std, numpy_bound_log_std
from rlkit.networks.actor_critic import ActionBounds


def squashed_action(
    out: np.ndarray, noise: np.ndarray | None, bounds: ActionBounds, config: Any
) -> np.ndarray:
    """The action in the bounds' units ``[N, A]`` from the policy network's output ``out [N,
    2 A]``: ``tanh(mean + exp(log_std) noise)`` (``noise [N, A]`` standard normal), or
    ``tanh(mean)`` with ``noise`` None (greedy)."""
    dim = bounds.dim
    u = out[..., :dim]
    if noise is not None:
        log_std = numpy_bound_log_std(out[..., dim:], config.log_std_min, config.log_std_max,
                                      config.log_std_bounding)  # fmt: skip
        u = u + np.exp(log_std) * noise
    return bounds.from_unit(np.tanh(u)).astype(np.float32)


class SACActing(Acting):
    """Sampled actions while exploring, ``tanh(mean)`` when greedy.

    Args:
        obs_format: how observations are encoded (flat ``[obs_dim]``).
        bounds: the flattened action's box.
        action_shape, action_dtype: the action space's (actions are returned in them).
        config: the :class:`~rlkit.agents.sac.config.SACConfig` (log std bounds).
        rng: draws the uniform warm-up actions and the policy's noise (``"explore"``).
        latent_dim: gSDE's latent width ``L`` (the policy's last hidden layer).
    """

    def __init__(
        self,
        obs_format: ObservationFormat,
        bounds: ActionBounds,
        action_shape: tuple[int, ...],
        action_dtype: Any,
        config: Any,
        rng: np.random.Generator,
        latent_dim: int = 0,
    ) -> None:
        self.obs_format, self.bounds, self.config, self.rng = obs_format, bounds, config, rng
        self.action_shape, self.action_dtype = tuple(action_shape), action_dtype
        self.gsde: ExplorationMatrices | None = None
        if config.use_sde:
            self.gsde = ExplorationMatrices(latent_dim, bounds.dim, config.sde_sample_freq)

    def act(self, obs, explore: bool = True, step: int = 0) -> Any:
        encoded = self.obs_format.encode(obs)
        rows = self.obs_format.batch_rows(encoded)
        batch = np.asarray(encoded, np.float32).reshape(rows or 1, self.obs_format.size)
        n, dim, cfg = batch.shape[0], self.bounds.dim, self.config
        if explore and step < cfg.learning_starts and not (cfg.use_sde and cfg.use_sde_at_warmup):
            flat = self.rng.uniform(self.bounds.low, self.bounds.high, (n, dim))
        elif self.gsde is not None:
            flat = self.sde_action(batch, explore, step)
        else:
            noise = self.rng.standard_normal((n, dim)).astype(np.float32) if explore else None
            flat = squashed_action(self.policy(batch), noise, self.bounds, self.config)
        actions = np.asarray(self.bounds.clip(flat), self.action_dtype)
        actions = actions.reshape(n, *self.action_shape)
        return actions if rows is not None else actions[0]

    def noise_spec(self) -> tuple[str, int]:
        """What :meth:`act_with_noise` takes per observation: ``("normal", A)``, one standard
        normal per action dimension."""
        return "normal", self.bounds.dim

    def act_with_noise(self, obs, noise) -> np.ndarray:
        """The action :meth:`act` samples past ``learning_starts``, drawn from the given
        standard normal ``noise [(N,) A]`` instead of the generator (nothing of the agent's
        changes): ``clip(from_unit(tanh(mean + exp(log_std) noise)))`` in the action
        space's shape and dtype. What the export's ``sample`` signature computes."""
        encoded = self.obs_format.encode(obs)
        rows = self.obs_format.batch_rows(encoded)
        batch = np.asarray(encoded, np.float32).reshape(rows or 1, self.obs_format.size)
        noise = np.asarray(noise, np.float32).reshape(batch.shape[0], -1)
        if noise.shape[1] != self.bounds.dim:
            raise UsageError(f"noise of width {noise.shape[1]} for {self.bounds.dim} action "
                             "dimensions: one standard normal per dimension of each "
                             "observation")  # fmt: skip
        flat = squashed_action(self.policy(batch), noise, self.bounds, self.config)
        actions = np.asarray(self.bounds.clip(flat), self.action_dtype)
        actions = actions.reshape(batch.shape[0], *self.action_shape)
        return actions if rows is not None else actions[0]

    def sde_action(self, batch: np.ndarray, explore: bool, step: int) -> np.ndarray:
        """gSDE's action ``[N, A]`` in the bounds' units: ``tanh(mean + z . E_n)`` (each
        stream ``n`` its held matrix, :class:`~rlkit.learn.gsde.ExplorationMatrices`), or
        ``tanh(mean)`` greedy. The matrices are redrawn when a collection block of
        ``train_freq`` steps begins (SB3's ``collect_rollouts``; with ``train_freq_unit``
        episode, when an episode ends) and every ``sde_sample_freq`` steps within it."""
        assert self.gsde is not None
        mirror: Any = self.policy  # (a NumpyLatentMLP: latent, mean, and std)
        latent, mean = mirror(batch)
        if not explore:
            return self.bounds.from_unit(np.tanh(mean)).astype(np.float32)
        if self.config.train_freq_unit == "step":
            self.gsde.restart_at(step // self.config.train_freq)
        noise = self.gsde.noise(latent, mirror.std, self.rng)
        return self.bounds.from_unit(np.tanh(mean + noise)).astype(np.float32)

    def episodes_ended(self, indices: np.ndarray | None) -> None:
        """With gSDE and ``train_freq_unit`` episode, the next act draws new matrices."""
        if self.gsde is not None and self.config.train_freq_unit == "episode":
            self.gsde.restart()

    def state(self) -> dict[str, dict[str, Any]]:
        """gSDE's held matrices (``memory/gsde``)."""
        return {} if self.gsde is None else {"memory": {"gsde": self.gsde}}


# -- the in-graph twin (the compiled loop's acting, rlkit.run.compiled.sac) -------------------
def graph_sac_action(
    out: tf.Tensor, step: tf.Tensor, seed: tf.Tensor, bounds: ActionBounds, config: Any
) -> tf.Tensor:
    """:meth:`SACActing.act` (exploring) of a batch in the graph: float32 ``[N, A]`` actions from
    the policy network's output ``out`` ``[N, 2 A]`` at the int64 step count ``step``: uniform
    in the bounds before ``learning_starts``, else :func:`squashed_action` of standard normal
    noise; clipped to the bounds. The random numbers are stateless draws of ``seed`` (int32
    ``[2]``): uniforms, then normals (:func:`graph_sac_draws`)."""
    low, high = tf.constant(bounds.low), tf.constant(bounds.high)
    uniform, normal = graph_sac_draws(seed, [out.shape[0], bounds.dim])
    warm_up = uniform * (high - low) + low
    dim = bounds.dim
    log_std = bound_log_std(out[:, dim:], config.log_std_min, config.log_std_max,
                            config.log_std_bounding)  # fmt: skip
    sampled = bounds.from_unit(tf.tanh(out[:, :dim] + tf.exp(log_std) * normal))
    action = tf.where(step < config.learning_starts, warm_up, sampled)
    return tf.clip_by_value(action, low, high)


def graph_sac_draws(seed: tf.Tensor, shape: list[int]) -> tuple[tf.Tensor, tf.Tensor]:
    """One exploring step's random numbers in the graph: float32 ``shape`` uniforms in
    ``[0, 1)`` (the warm-up actions) and standard normals (the policy's sample)."""
    uniform_seed, normal_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
    return (tf.random.stateless_uniform(shape, uniform_seed),
            tf.random.stateless_normal(shape, normal_seed))  # fmt: skip


def graph_sac_sde_action(
    latent: tf.Tensor, mean: tf.Tensor, std: tf.Tensor, held: HeldNoise, step: tf.Tensor,
    seed: tf.Tensor, bounds: ActionBounds, config: Any,
) -> tuple[tf.Tensor, HeldNoise]:  # fmt: skip
    """:meth:`SACActing.act` (exploring) with gSDE in the graph: ``(float32 [N, A] actions,
    the held matrices after)`` for the policy's ``latent [N, L]`` and ``mean [N, A]``, the
    matrices' ``std [L, A]`` and their state ``held``, at the int64 step count ``step``.
    Before ``learning_starts`` (without ``use_sde_at_warmup``) uniform actions, the matrices
    untouched; else :meth:`SACActing.sde_action`: the collection block's mark ``step //
    train_freq``, the held noise (:func:`~rlkit.learn.gsde.graph_held_noise`), ``tanh(mean +
    noise)`` rescaled. The random numbers: stateless draws of ``seed`` (int32 ``[2]``):
    the uniforms, then the matrices' normals."""
    low, high = tf.constant(bounds.low), tf.constant(bounds.high)
    uniform_seed, matrix_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
    warm_up = tf.random.stateless_uniform(mean.shape, uniform_seed) * (high - low) + low
    noise, after = graph_held_noise(latent, std, held, step // config.train_freq,
                                    config.sde_sample_freq, matrix_seed)  # fmt: skip
    sampled = bounds.from_unit(tf.tanh(mean + noise))
    if config.use_sde_at_warmup:
        return tf.clip_by_value(sampled, low, high), after
    warming = step < config.learning_starts
    kept = HeldNoise(*(tf.where(warming, old, new) for old, new in zip(held, after, strict=True)))
    return tf.clip_by_value(tf.where(warming, warm_up, sampled), low, high), kept
