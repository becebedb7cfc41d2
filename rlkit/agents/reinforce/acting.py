"""REINFORCE's acting rule: sample from the policy it follows, or act greedily.

Discrete actions are drawn with the Gumbel-max trick (``argmax(logits + Gumbel noise)``,
an exact sample from ``softmax(logits)``); bounded Box actions from a diagonal Gaussian
(the policy's mean and std, in the action box scaled to ``[-1, 1]``), clipped to the
bounds before they reach the environment. With ``explore`` False: the most likely action
(``argmax pi``, or the Gaussian's mean). Everything is numpy (or the one compiled call of a
user's policy that is not a Dense stack, or that takes a ``Dict`` or ``Tuple`` observation's
structure): no other TensorFlow call per step.

The last single Gaussian sample is kept so that the memory stores the unclipped sample the
action came from (:meth:`Sampling.stored_action`): its log-probability is then exact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from gymnasium import spaces

from rlkit.agents.parts import Acting
from rlkit.core.spaces import ObservationFormat

if TYPE_CHECKING:
    from rlkit.agents.reinforce.learner import PolicySnapshot


def softmax(logits: np.ndarray) -> np.ndarray:
    """``softmax`` over the last axis: ``[A]`` or ``[N, A]`` logits -> probabilities."""
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


class Sampling(Acting):
    """Sample ``a ~ pi(.|s)`` from the policy last given to :meth:`follow`.

    Args:
        action_space: ``Discrete(n)`` (softmax over the policy's logits) or a bounded
            ``Box`` (a Gaussian around the policy's mean, with the snapshot's std).
        obs_format: how observations are encoded for the policy (flat ``[obs_dim]``, or a
            ``Dict``'s or ``Tuple``'s structure, one array per part).
        rng: the generator the draws come from (Gumbel or standard normal noise, one
            draw of the output's shape per call).
    """

    def __init__(
        self, action_space, obs_format: ObservationFormat, rng: np.random.Generator
    ) -> None:
        self.action_space = action_space
        self.encode = obs_format.encode
        self.rng = rng
        self.discrete = isinstance(action_space, spaces.Discrete)
        if self.discrete:
            self.action_start = int(action_space.start)
        else:
            low = action_space.low.astype(np.float64).reshape(-1)
            high = action_space.high.astype(np.float64).reshape(-1)
            self._low, self._high = low, high
            self._center, self._half_range = (high + low) / 2, (high - low) / 2
        self._last_sample: tuple[np.ndarray, np.ndarray] | None = None  # Gaussian (env, raw)

    # (a PolicySnapshot, not Acting's plain callable: REINFORCE's learner gives it one)
    def follow(self, policy: PolicySnapshot) -> None:  # type: ignore[override]
        """Act from ``policy`` from now on: its ``forward`` (logits or the Gaussian's mean)
        and, for Box actions, its ``std``."""
        self.policy = policy
        self._forward = policy.forward
        self._std = policy.std

    def probabilities(self, obs) -> np.ndarray:
        """``pi(.|s)``: ``[A]`` for one observation, ``[N, A]`` for a batch (Discrete only)."""
        return softmax(self._forward(self.encode(obs)))

    def act(self, obs, explore: bool = True, step: int = 0) -> int | np.ndarray:
        """Sample ``a ~ pi(.|s)`` (``explore=True``) or take the most likely action.

        Discrete: the greedy action is ``argmax pi``; Box: the Gaussian mean. ``obs`` is one
        observation (an int or one action ``[*action_shape]`` is returned) or a batch
        (``[N]`` / ``[N, *action_shape]``); a ``Dict`` or ``Tuple`` observation is its
        structure (``[N, *part_shape]`` per part for a batch).
        """
        out = self._forward(self.encode(obs))
        if self.discrete:
            if explore:  # Gumbel-max: an exact sample from softmax(out)
                out = out + self.rng.gumbel(size=out.shape)
            action = np.argmax(out, axis=-1) + self.action_start
            return int(action) if out.ndim == 1 else action
        assert self._std is not None  # (Box actions: the policy's std)
        raw = out + self._std * self.rng.standard_normal(out.shape) if explore else out
        raw = raw.astype(np.float32)
        shape = (*out.shape[:-1], *self.action_space.shape)
        action = np.clip(self._center + self._half_range * raw, self._low, self._high)
        action = action.astype(self.action_space.dtype).reshape(shape)
        if out.ndim == 1:
            self._last_sample = (action, raw)
        return action

    def stored_action(self, action) -> int | np.ndarray:
        """One action as the memory keeps it: a Discrete action counted from 0; a Box action
        as the unclipped Gaussian sample ``[act_dim]`` in ``[-1, 1]`` units (the last sample
        when ``action`` is the one it gave, else ``action`` scaled back)."""
        if self.discrete:
            return int(action) - self.action_start
        if self._last_sample is not None and np.array_equal(action, self._last_sample[0]):
            return self._last_sample[1]
        action = np.asarray(action, np.float64).reshape(-1)
        return ((action - self._center) / self._half_range).astype(np.float32)
