"""Discounted returns-to-go, a pure numpy function (no TensorFlow).

For transitions ``t = 0 .. T-1`` stored oldest first, possibly several episodes
back to back::

    G_t = r_t + gamma * G_{t+1}          inside an episode
    G_t = r_t + gamma * bootstrap_t      at the last transition of an episode

``bootstrap_t`` is the value of the state after the episode's last transition: 0
where the episode *terminated* (the MDP ended), an estimate such as ``V(s_T)``
where a time limit *truncated* it or the store filled up mid-episode. Without a
critic there is no such estimate and a truncated episode is cut as if it had ended
(biased: the last steps look worse than they are); see docs/reinforce.md.
"""

from __future__ import annotations

import numpy as np


def returns_to_go(
    rewards: np.ndarray,
    gamma: float,
    episode_ends: np.ndarray | None = None,
    bootstrap: np.ndarray | None = None,
) -> np.ndarray:
    """Discounted returns-to-go of a sequence of transitions, shape ``[T]`` float32.

    Args:
        rewards: ``[T]`` rewards, oldest first (reward units).
        gamma: discount factor in ``[0, 1]``.
        episode_ends: ``[T]`` bool, True where transition ``t`` is the last of its
            episode (terminated, truncated or cut). The last transition of the sequence
            always ends a segment, whatever this says. None: one episode.
        bootstrap: ``[T]`` value added, discounted once, after a transition that ends an
            episode (reward units; 0 where the episode terminated). Ignored elsewhere.
            None: zeros (every segment end is treated as a termination).

    Returns:
        ``G`` with ``G[t] = sum_k gamma^k r[t+k]`` up to the end of ``t``'s episode, plus
        ``gamma^(n) * bootstrap`` at that end.
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim != 1:
        raise ValueError(f"rewards must be one-dimensional [T], got shape {rewards.shape}")
    n = rewards.shape[0]
    ends = np.zeros(n, bool) if episode_ends is None else np.asarray(episode_ends, bool)
    boot = np.zeros(n) if bootstrap is None else np.asarray(bootstrap, dtype=np.float64)
    if ends.shape != (n,) or boot.shape != (n,):
        raise ValueError(
            f"episode_ends {ends.shape} and bootstrap {boot.shape} must have shape ({n},)"
        )
    out = np.empty(n, dtype=np.float64)
    running = 0.0
    for t in range(n - 1, -1, -1):
        if ends[t] or t == n - 1:
            running = boot[t]
        running = rewards[t] + gamma * running
        out[t] = running
    return out.astype(np.float32)
