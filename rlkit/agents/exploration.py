"""DDPG's and TD3's acting rule: the deterministic policy's action plus exploration noise.

:class:`NoisyActing` reads the policy its learner last gave it (``encoded obs -> mu(s)``,
``[N, act_dim]`` in the action's units: a numpy copy of the actor, or one compiled call)
and, when exploring, adds noise (:mod:`rlkit.learn.noise`, a fraction of the half-range
``(high - low) / 2``) and clips to the bounds. Before ``learning_starts`` steps exploring
actions are uniform in the bounds instead. The noise process restarts when an episode ends.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
