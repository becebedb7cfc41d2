"""Epsilon-greedy acting, as DQN3.0's ``eGreedy``: the network runs only for greedy actions.

One rule for every observation format (vectors, images, one-hot, ``Dict`` and ``Tuple``):
``obs_format.batch_rows`` tells one observation (one action back) from a batch ``[N, ...]``
(``N`` actions, a vector env's). Exploring, it takes a random action with the probability
the schedule gives at the step the agent passes; evaluating, it is greedy, or epsilon-greedy with a
fixed ``eval_epsilon`` drawing from a generator of its own, so that evaluating never
changes what training draws. Actions are ``action_start + [0, num_actions)``.

Its in-graph twin, :func:`graph_epsilon_greedy` (the compiled loop's acting,
:mod:`rlkit.run.compiled.dqn`), makes the same decisions from the same random numbers
(``tests/unit/agents/test_epsilon_greedy_twins.py``); its numbers are stateless draws
(:func:`graph_epsilon_draws`), not the generator's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from rlkit.agents.parts import Acting
from rlkit.core.spaces import ObservationFormat


class EpsilonGreedy(Acting):
    """Epsilon-greedy over the Q-values of the policy it follows.

    Args:
        obs_format: how observations are encoded and told from batches.
        num_actions: ``A``; the policy maps ``[*shape] -> [A]`` and ``[N, *shape] -> [N, A]``.
        epsilon: the exploration rate at a step (e.g. DQN3.0's linear schedule).
        rng: the ``"explore"`` generator (the epsilon draws and random actions).
        eval_epsilon: the share of random actions when evaluating (0: greedy).
        eval_rng: the generator evaluation draws from (needed when ``eval_epsilon > 0``).
        action_start: the first action (``Discrete(n, start)``).
    """

    def __init__(
        self, obs_format: ObservationFormat, num_actions: int, epsilon: Callable[[int], float],
        rng: np.random.Generator, eval_epsilon: float = 0.0,
        eval_rng: np.random.Generator | None = None, action_start: int = 0,
    ) -> None:  # fmt: skip
        self.encode = obs_format.encode
        self.batch_rows = obs_format.batch_rows
        self.num_actions = num_actions
        self.schedule = epsilon
        self.rng = rng
        self.eval_epsilon = eval_epsilon
        self.eval_rng = eval_rng
        self.action_start = action_start

    def diagnostics(self, step: int) -> dict[str, float]:
        return {"epsilon": self.schedule(step)}

    def state(self) -> dict[str, dict[str, Any]]:
        """The evaluation generator (``rngs["evaluate"]``); ``rng`` is the agent's own."""
        return {} if self.eval_rng is None else {"rngs": {"evaluate": self.eval_rng}}

    def act(self, obs, explore: bool = True, step: int = 0) -> int | np.ndarray:
        """An action for one observation (an int) or ``[N]`` ints for a batch ``[N, ...]``;
        exploring, epsilon-greedy with the schedule's epsilon at ``step``; with ``explore``
        False greedy, or ``eval_epsilon``-greedy from ``eval_rng``."""
        x = self.encode(obs)
        rows = self.batch_rows(x)
        if explore:
            return self.epsilon_greedy(x, rows, self.schedule(step), self.rng, self.exploring)
        if self.eval_epsilon > 0:
            assert self.eval_rng is not None  # (eval_epsilon > 0 needs one: the docstring)
            return self.epsilon_greedy(x, rows, self.eval_epsilon, self.eval_rng, self.policy)
        q = self.policy(x)
        return (int(np.argmax(q)) if rows is None else np.argmax(q, axis=-1)) + self.action_start

    def epsilon_greedy(
        self, x, rows: int | None, epsilon: float, rng: np.random.Generator, policy=None
    ) -> int | np.ndarray:
        """Epsilon-greedy for one encoded observation (``rows`` None) or ``rows`` of them,
        greedy on ``policy`` (default: the one followed).

        One observation: one ``rng.random()`` draw, then ``rng.integers(A)`` if it is below
        ``epsilon``, else the network. A batch: ``rng.random(N)`` then ``rng.integers(A,
        size=N)``, the network only when some action is greedy.
        """
        start = self.action_start
        policy = self.policy if policy is None else policy
        if rows is None:
            if rng.random() < epsilon:
                return int(rng.integers(self.num_actions)) + start
            return int(np.argmax(policy(x))) + start
        random = rng.random(rows) < epsilon
        actions = rng.integers(self.num_actions, size=rows)
        if not random.all():
            actions = np.where(random, actions, np.argmax(policy(x), axis=-1))
        return actions + start


# -- the in-graph twin (the compiled loop's acting) -------------------------------------------
def graph_epsilon_draws(
    seed: tf.Tensor, rows: int, num_actions: int
) -> tuple[tf.Tensor, tf.Tensor]:
    """The random numbers of one epsilon-greedy step of ``rows`` observations in the graph,
    from the stateless ``seed`` (int32 ``[2]``): the coins float64 ``[rows]`` uniform in
    ``[0, 1)`` (:meth:`EpsilonGreedy.epsilon_greedy`'s ``rng.random(N)``) and the random
    actions int32 ``[rows]`` uniform in ``[0, num_actions)`` (its ``rng.integers(A, size=N)``)."""
    coin_seed, action_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
    coins = tf.random.stateless_uniform([rows], coin_seed, dtype=tf.float64)
    random = tf.random.stateless_uniform(
        [rows], action_seed, minval=0, maxval=num_actions, dtype=tf.int32
    )
    return coins, random


def graph_epsilon_greedy(
    q_values: tf.Tensor, epsilon: tf.Tensor, seed: tf.Tensor, num_actions: int
) -> tf.Tensor:
    """:meth:`EpsilonGreedy.epsilon_greedy` of a batch in the graph: int32 ``[N]`` actions
    (from 0) for the Q-values ``[N, A]`` (static ``N``), random where the coin is below
    ``epsilon`` (float64 ``[]``), else the first largest value's; the coins and random
    actions :func:`graph_epsilon_draws` of ``seed`` (int32 ``[2]``)."""
    greedy = tf.argmax(q_values, axis=-1, output_type=tf.int32)
    coins, random = graph_epsilon_draws(seed, q_values.shape[0], num_actions)
    return tf.where(coins < epsilon, random, greedy)
