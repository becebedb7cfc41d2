"""Batch: a minibatch of transitions as the replay memories gather it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rlkit.replay.nstep import pcont


@dataclass(frozen=True)
class Batch:
    """A minibatch of transitions; leading shape ``[B]`` or ``[K, B]``.

    obs, next_obs: ``[..., *obs_shape]`` in the observation dtype (a dict or tuple of
        such arrays for Dict and Tuple observations).
    actions: ``[..., *action_shape]``; rewards: float32 ``[...]`` (with n-step returns the
        discounted reward sum; ``next_obs`` is then the observation after the last step).
    terminated, truncated: bool ``[...]`` (of the last step).
    indices: int ``[...]``, the slots sampled (what priorities are given back for); None
        for a batch made by hand.
    weights: float32 ``[...]``, the importance weights (ones for uniform sampling); None:
        ones.
    discount: float32 ``[...]``, the bootstrap's discount (TRFL's ``pcont``):
        ``gamma ** k`` for ``k`` steps, 0 where the last step terminated. None: one step
        with the learner's ``gamma``.
    """

    obs: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_obs: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    indices: np.ndarray | None = None
    weights: np.ndarray | None = None
    discount: np.ndarray | None = None

    def as_block(self) -> Batch:
        """This ``[B]`` minibatch as a block of one update, leading shape ``[1, B]``."""
        fields: dict[str, Any] = {k: v if v is None else v[None] for k, v in self.__dict__.items()}
        return Batch(**fields)

    def weights_or_ones(self) -> np.ndarray:
        """:attr:`weights`, or float32 ones of the rewards' shape."""
        if self.weights is None:
            return np.ones(np.shape(self.rewards), np.float32)
        return self.weights

    def discount_or(self, gamma: float) -> np.ndarray:
        """:attr:`discount`, or one step's: float32 ``gamma`` where not terminated, else 0
        (:func:`rlkit.replay.nstep.pcont`)."""
        if self.discount is None:
            return pcont(self.terminated, np.float32(gamma))
        return self.discount
