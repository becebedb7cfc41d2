"""n-step returns gathered along the links a replay memory keeps (Dopamine's
``update_horizon``).

Within an episode a transition's next observation is linked to the stream's next
transition (``LINKED``); the last transition of an episode, and a stream's newest until
its next one arrives, keep theirs apart (``STORED``). So the walk from a sampled slot
follows ``next_ref`` while the link is ``LINKED``, at most ``n - 1`` times, and stops by
itself at a terminated or truncated step and at the stream's newest transition:

    return   = r_0 + gamma r_1 + ... + gamma^(k-1) r_(k-1)     (k <= n steps walked)
    discount = gamma^k, or 0 where step k-1 terminated         (TRFL's pcont)
    next_obs = the next observation of step k-1

A truncated episode (a time limit) bootstraps from the last observation reached, with
``gamma^k``. With ``n = 1`` this is the one-step transition itself.

The discount is :func:`pcont`; the compiled loop's one-step minibatches take
:func:`graph_pcont`, its twin in the graph (tied bit for bit by
``tests/unit/replay/test_pcont_twins.py``; its n-step walk is
:meth:`rlkit.replay.in_graph.GraphReplay.n_step`, tied by ``test_graph_priorities.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    import tensorflow as tf

LINKED, STORED = 0, 1  # how a slot's next observation is kept (rlkit.replay.memory)


class NStep(NamedTuple):
    """The n-step view of sampled slots, each of the slots' shape.

    last: int, the slot of the walk's last step (its next observation is the bootstrap's).
    returns: float32, the discounted reward sum over the steps walked.
    discount: float32, ``gamma ** k`` (``k``: steps walked), 0 where the last step
        terminated.
    """

    last: np.ndarray
    returns: np.ndarray
    discount: np.ndarray


def n_step(
    idx: np.ndarray,
    n: int,
    gamma: float,
    rewards: np.ndarray,
    terminated: np.ndarray,
    next_kind: np.ndarray,
    next_ref: np.ndarray,
) -> NStep:
    """Walk ``n`` steps (at most) from the slots ``idx`` (any shape).

    Args:
        idx: the sampled slots.
        n: the horizon, ``>= 1``.
        gamma: the discount per step.
        rewards, terminated, next_kind, next_ref: the memory's arrays (``[capacity]``).

    Computed in float32 (the rewards' dtype): with ``n = 1`` the return is the reward and
    the discount ``float32(gamma)`` or 0, bit for bit what a one-step target computes.
    """
    g = np.float32(gamma)
    if n == 1:  # the transition itself (the hot path of every one-step learner)
        return NStep(idx, rewards[idx], pcont(terminated[idx], g))
    last = idx
    returns = rewards[idx].astype(np.float32)
    scale = np.ones(np.shape(idx), np.float32)  # gamma ** (steps walked - 1)
    for _ in range(n - 1):
        walking = next_kind[last] == LINKED
        if not walking.any():
            break
        last = np.where(walking, next_ref[last], last)
        scale = np.where(walking, scale * g, scale)
        returns = returns + np.where(walking, scale * rewards[last], np.float32(0))
    return NStep(last, returns, pcont(terminated[last], scale * g))


def pcont(terminated: np.ndarray, discount: np.float32 | np.ndarray) -> np.ndarray:
    """TRFL's ``pcont``: float32 ``discount`` (``gamma ** k``; a scalar or the shape of
    ``terminated``) where the step did not terminate, else 0, in ``terminated``'s shape (bool,
    or 0/1). A truncated step is not terminated: it bootstraps."""
    return np.where(terminated, np.float32(0), discount).astype(np.float32, copy=False)


def graph_pcont(terminated: tf.Tensor, gamma: float) -> tf.Tensor:
    """:func:`pcont` of one-step transitions in the graph: float32 ``gamma * (1 -
    terminated)`` of ``terminated`` ``[B]`` (float32 0/1, or bool), as the compiled loop's
    one-step minibatches and the learners' tests take it."""
    import tensorflow as tf

    return gamma * (1.0 - tf.cast(terminated, tf.float32))
