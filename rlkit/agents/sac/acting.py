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

from rlkit.agents.parts import Acting
from rlkit.core.spaces import ObservationFormat
from rlkit.learn.max_entropy import numpy_bound_log_std
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
    """

    def __init__(
        self,
        obs_format: ObservationFormat,
        bounds: ActionBounds,
        action_shape: tuple[int, ...],
        action_dtype: Any,
        config: Any,
        rng: np.random.Generator,
    ) -> None:
        self.obs_format, self.bounds, self.config, self.rng = obs_format, bounds, config, rng
        self.action_shape, self.action_dtype = tuple(action_shape), action_dtype

    def act(self, obs, explore: bool = True, step: int = 0) -> Any:
        encoded = self.obs_format.encode(obs)
        rows = self.obs_format.batch_rows(encoded)
        batch = np.asarray(encoded, np.float32).reshape(rows or 1, self.obs_format.size)
        n, dim = batch.shape[0], self.bounds.dim
        if explore and step < self.config.learning_starts:
            flat = self.rng.uniform(self.bounds.low, self.bounds.high, (n, dim))
        else:
            noise = self.rng.standard_normal((n, dim)).astype(np.float32) if explore else None
            flat = squashed_action(self.policy(batch), noise, self.bounds, self.config)
        actions = np.asarray(self.bounds.clip(flat), self.action_dtype)
        actions = actions.reshape(n, *self.action_shape)
        return actions if rows is not None else actions[0]
