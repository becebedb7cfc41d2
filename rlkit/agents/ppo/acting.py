"""PPO's acting rule, in numpy: sample from the policy's snapshot, or act greedily.

Discrete actions are drawn with the Gumbel-max trick (``argmax(logits + Gumbel noise)``,
an exact sample from ``softmax(logits)``); Box actions from the diagonal Gaussian
``mean + std * noise`` in the action's own units (SB3's and CleanRL's: no rescaling), the
*unclipped* sample kept for the rollout (its log-probability is then exact) and clipped to
the bounds only on its way to the environment. Greedy: ``argmax`` of the logits, or the
mean (clipped). No TensorFlow call per step: the snapshot is refreshed after each update.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from gymnasium import spaces

from rlkit.agents.parts import Acting

if TYPE_CHECKING:
    from rlkit.agents.ppo.learner import PolicySnapshot


class PPOActing(Acting):
    """Sample ``a ~ pi(.|s)`` from the snapshot last given to :meth:`follow`.

    Args:
        action_space: ``Discrete(n)`` or ``Box``.
        encode: observations -> the float32 ``[obs_dim]`` / ``[N, obs_dim]`` the policy takes.
        rng: the generator of the draws (one draw of the output's shape per call).
    """

    def __init__(self, action_space, encode, rng: np.random.Generator) -> None:
        self.action_space = action_space
        self.encode = encode
        self.rng = rng
        self.discrete = isinstance(action_space, spaces.Discrete)
        if self.discrete:
            self.action_start = int(action_space.start)
        else:
            self._low = np.asarray(action_space.low, np.float64).reshape(-1)
            self._high = np.asarray(action_space.high, np.float64).reshape(-1)
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # (sent, unclipped) of a draw
        self.snapshot: PolicySnapshot

    def follow(self, policy: PolicySnapshot) -> None:  # type: ignore[override]
        """Act from ``policy`` from now on (its ``forward`` and, for Box actions, ``std``)."""
        self.policy = policy
        self.snapshot = policy

    def act(self, obs, explore: bool = True, step: int = 0) -> int | np.ndarray:
        """An action for one observation (an int or ``[*shape]``) or ``N`` actions for a
        batch (``[N]`` / ``[N, *shape]``): sampled (``explore``) or greedy."""
        out = self.snapshot.forward(self.encode(obs))
        if self.discrete:
            if explore:
                out = out + self.rng.gumbel(size=out.shape)
            action = np.argmax(out, axis=-1) + self.action_start
            return int(action) if out.ndim == 1 else action
        std = self.snapshot.std
        assert std is not None  # (Box actions)
        raw = out + std * self.rng.standard_normal(out.shape) if explore else out
        raw = raw.astype(np.float32)
        sent = np.clip(raw, self._low, self._high).astype(self.action_space.dtype)
        sent = sent.reshape(*out.shape[:-1], *self.action_space.shape)
        if explore:
            self._last = (sent, raw)
        return sent

    def stored_actions(self, actions) -> np.ndarray:
        """Actions as the rollout keeps them: Discrete counted from 0 (int64); Box as the
        unclipped Gaussian sample ``[(N,) A]`` float32 when ``actions`` are those the last
        draw sent, else ``actions`` themselves, flattened."""
        if self.discrete:
            return np.asarray(actions, np.int64) - self.action_start
        actions = np.asarray(actions)
        if self._last is not None and np.array_equal(actions, self._last[0]):
            return self._last[1]
        flat = actions.reshape(-1) if actions.shape == self.action_space.shape else (
            actions.reshape(len(actions), -1))  # fmt: skip
        return flat.astype(np.float32)
