"""DDPG's and TD3's acting rule: the deterministic policy's action plus exploration noise.

:class:`NoisyActing` reads the policy its learner last gave it (``encoded obs -> mu(s)``,
``[N, act_dim]`` in the action's units: a numpy copy of the actor, or one compiled call)
and, when exploring, adds noise (:mod:`rlkit.learn.noise`, a fraction of the half-range
``(high - low) / 2``) and clips to the bounds. Before ``learning_starts`` steps exploring
actions are uniform in the bounds instead. The noise process restarts when an episode ends.

Its in-graph twin, :func:`graph_noisy_action` (the compiled loop's acting,
:mod:`rlkit.run.compiled.ddpg`; Gaussian noise only), takes the same actions from the same
random numbers to float32's rounding (``tests/unit/agents/test_exploration_twins.py``); its
numbers are stateless draws (:func:`graph_exploration_draws`), not the generators'.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from rlkit.agents.parts import Acting
from rlkit.core.spaces import ObservationFormat
from rlkit.learn.noise import GaussianNoise, OrnsteinUhlenbeckNoise
from rlkit.networks.actor_critic import ActionBounds


class NoisyActing(Acting):
    """``clip(mu(s) + noise * half_range, low, high)``; uniform actions before learning starts.

    Args:
        obs_format: how observations are encoded (flat ``[obs_dim]``, or a ``Dict``'s or
            ``Tuple``'s structure).
        bounds: the flattened action's box (``[act_dim]`` each).
        action_shape: the action space's shape (actions are returned in it).
        action_dtype: the action space's dtype.
        noise: Gaussian or Ornstein-Uhlenbeck noise of ``[act_dim]`` (one row per stream when
            batched), in units of its ``sigma``.
        noise_scale: the noise's std as a fraction of the half-range (0: no noise drawn).
        learning_starts: steps of uniform actions while exploring.
        rng: the generator of the uniform actions (the agent's ``"explore"`` stream).
    """

    def __init__(
        self,
        obs_format: ObservationFormat,
        bounds: ActionBounds,
        action_shape: tuple[int, ...],
        action_dtype: Any,
        noise: GaussianNoise | OrnsteinUhlenbeckNoise,
        noise_scale: float,
        learning_starts: int,
        rng: np.random.Generator,
    ) -> None:
        self.obs_format = obs_format
        self.bounds = bounds
        self.action_shape = tuple(action_shape)
        self.action_dtype = action_dtype
        self.noise = noise
        self.noise_scale = float(noise_scale)
        self.learning_starts = int(learning_starts)
        self.rng = rng

    def act(self, obs, explore: bool = True, step: int = 0) -> np.ndarray:
        """An action in the bounds: ``mu(s)`` (+ noise, clipped, when ``explore``); uniform
        while exploring before step ``learning_starts``.

        ``obs`` is one observation (returns an action of the space's shape) or a batch
        ``[N, ...]`` (returns ``[N, *action_shape]``); a Dict or Tuple one: its structure,
        of ``[N, *part_shape]`` arrays for a batch.
        """
        x = self.obs_format.encode(obs)
        batch = self.obs_format.batch_rows(x)
        if explore and step < self.learning_starts:
            shape = (self.bounds.dim,) if batch is None else (batch, self.bounds.dim)
            action = self.rng.uniform(self.bounds.low, self.bounds.high, size=shape)
        else:
            action = self.policy(x)
            if explore and self.noise_scale > 0:
                action = action + self.noise(batch) * self.bounds.half_range
        action = self.bounds.clip(action).astype(self.action_dtype)
        return action.reshape(self.action_shape if batch is None else (batch, *self.action_shape))

    def episodes_ended(self, indices: np.ndarray | None) -> None:
        """The exploration noise restarts (of streams ``indices``; None: the one)."""
        if indices is None:
            self.noise.reset()
        else:
            self.noise.reset(indices)

    def diagnostics(self, step: int) -> dict[str, float]:
        """The exploration noise scale (fraction of the half-range; 0 before learning)."""
        exploring = step >= self.learning_starts
        return {"noise_scale": self.noise_scale if exploring else 0.0}

    # -- persistence -------------------------------------------------------------------------
    def state(self) -> dict[str, dict[str, Any]]:
        """The noise's generator and the Ornstein-Uhlenbeck process state (mid-episode
        exploration noise), in the tree of :meth:`rlkit.agents.base.Agent.state`."""
        process = getattr(self.noise, "state", None)
        return {
            "rngs": {"noise": self.noise.rng},
            "extra": {} if process is None else {"noise_state": process.tolist()},
        }

    def load_scalars(self, counters: dict[str, int], extra: dict[str, Any]) -> None:
        """Take back the noise process state :meth:`state` gave."""
        if "noise_state" in extra:  # (only the Ornstein-Uhlenbeck process has one)
            assert isinstance(self.noise, OrnsteinUhlenbeckNoise)
            self.noise.state = np.asarray(extra["noise_state"], np.float64)


# -- the in-graph twin (the compiled loop's acting) -------------------------------------------
def graph_exploration_draws(
    seed: tf.Tensor, shape: list[int], noise: bool = True
) -> tuple[tf.Tensor, tf.Tensor | None]:
    """The random numbers of one exploring step in the graph, from the stateless ``seed``
    (int32 ``[2]``): float32 ``shape`` (``[N, act_dim]``) uniforms in ``[0, 1)`` (the warm-up
    actions: :class:`NoisyActing`'s ``rng.uniform``) and, with ``noise``, standard normals
    (:class:`~rlkit.learn.noise.GaussianNoise`'s ``rng.standard_normal``; else None)."""
    uniform_seed, noise_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
    uniform = tf.random.stateless_uniform(shape, uniform_seed)
    normal = tf.random.stateless_normal(shape, noise_seed) if noise else None
    return uniform, normal


def graph_noisy_action(
    mu: tf.Tensor, step: tf.Tensor, seed: tf.Tensor, bounds: ActionBounds,
    noise_scale: float, learning_starts: int,
) -> tf.Tensor:  # fmt: skip
    """:meth:`NoisyActing.act` (exploring, Gaussian noise) of a batch in the graph: float32
    ``[N, act_dim]`` actions for the actor's ``mu`` ``[N, act_dim]`` (static shape) at the
    int64 step count ``step``: uniform in the bounds before ``learning_starts``, else
    ``mu + noise_scale * N(0, 1) * half_range``; clipped to the bounds. The random numbers:
    :func:`graph_exploration_draws` of ``seed`` (int32 ``[2]``)."""
    low, high = tf.constant(bounds.low), tf.constant(bounds.high)
    uniform, normal = graph_exploration_draws(seed, [mu.shape[0], bounds.dim], noise_scale > 0)
    warm_up = uniform * (high - low) + low
    if normal is not None:
        mu = mu + noise_scale * normal * tf.constant(bounds.half_range)
    action = tf.where(step < learning_starts, warm_up, mu)
    return tf.clip_by_value(action, low, high)
