"""The compiled loop's epsilon-greedy acting (:func:`rlkit.agents.dqn.acting.
graph_epsilon_greedy`) against the Python loop's (:meth:`rlkit.agents.dqn.acting.
EpsilonGreedy.epsilon_greedy`), fed the same Q-values, epsilon and random numbers: the same
actions, bit for bit (the graph's coins and random actions, :func:`graph_epsilon_draws` of a
seed, are handed to the Python rule in place of its generator's). Their random streams
differ by design (stateless seeds against numpy's generator); the draws' distributions are
checked against the generator's contract (coins uniform in [0, 1), actions uniform in
[0, A)) within stated binomial tolerances."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents.dqn.acting import EpsilonGreedy, graph_epsilon_draws, graph_epsilon_greedy
from rlkit.core.spaces import observation_format


class Numbers:
    """A generator that hands out given numbers: ``random(n)`` the coins, ``integers(A,
    size=n)`` the random actions (what :meth:`EpsilonGreedy.epsilon_greedy` draws, in order)."""

    def __init__(self, coins: np.ndarray, actions: np.ndarray) -> None:
        self.coins, self.actions = coins, actions

    def random(self, size=None):
        return self.coins if size is not None else float(self.coins[0])

    def integers(self, high, size=None):
        assert np.all(self.actions < high)
        return self.actions.astype(np.int64) if size is not None else int(self.actions[0])


def python_rule(q_values: np.ndarray) -> EpsilonGreedy:
    space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    rule = EpsilonGreedy(observation_format(space), q_values.shape[-1], lambda step: 0.0,
                         np.random.default_rng(0))  # fmt: skip
    rule.follow(lambda x: q_values if x.ndim == 2 else q_values[0])
    return rule


SHAPES = [(1, 2), (4, 3), (16, 6), (64, 18)]


def cases(shapes):
    """Q-values ``[N, A]`` (some rows with ties: the first largest wins on both sides) and
    epsilons, with the seeds the graph draws its numbers from."""
    rng = np.random.default_rng(3)
    for k, (rows, actions) in enumerate(shapes):
        q = rng.normal(size=(rows, actions)).astype(np.float32)
        q[::3, -1] = q[::3, 0]  # ties
        q[1::5] = 0.5  # a row all equal
        for epsilon in (0.0, 0.05, 0.5, 0.999, 1.0):
            yield q, epsilon, tf.constant([k, int(epsilon * 1000)], tf.int32)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("jit", "shapes"), [(False, SHAPES), (True, SHAPES[-1:])], ids=["eager", "xla"]
)
def test_the_same_numbers_make_the_same_actions(jit, shapes):
    """Eagerly for every shape; compiled with XLA (as the loop acts) for the largest (one
    compilation a shape)."""

    def act(q, epsilon, seed):
        return graph_epsilon_greedy(q, epsilon, seed, q.shape[-1]), *graph_epsilon_draws(
            seed, q.shape[0], q.shape[-1])  # fmt: skip

    act = tf.function(act, jit_compile=True) if jit else act
    explored = 0
    for q, epsilon, seed in cases(shapes):
        actions, coins, random = act(tf.constant(q), tf.constant(epsilon, tf.float64), seed)
        coins, random = coins.numpy(), random.numpy()
        rule = python_rule(q)
        want = rule.epsilon_greedy(q, len(q), epsilon, Numbers(coins, random))
        np.testing.assert_array_equal(actions.numpy(), want, err_msg=f"epsilon {epsilon}")
        # one observation at a time: the same decision row by row
        for row in range(len(q)):
            numbers = Numbers(coins[row : row + 1], random[row : row + 1])
            one = python_rule(q[row : row + 1]).epsilon_greedy(q[row], None, epsilon, numbers)
            assert one == want[row]
        explored += int(np.sum(coins < epsilon))
    assert explored > 5  # both branches were taken


def test_the_graphs_draws_are_uniform_coins_and_uniform_actions():
    """The numbers the twins are fed are what numpy's ``random``/``integers`` promise: coins
    in [0, 1) with mean 1/2 and the share below 0.1 near 0.1, every action about 1/A of the
    time (each within 5 binomial standard deviations), over 200 seeds of 64 rows."""
    draws = [graph_epsilon_draws(tf.constant([7, k], tf.int32), 64, 6) for k in range(200)]
    coins = np.concatenate([c.numpy() for c, _ in draws])
    actions = np.concatenate([a.numpy() for _, a in draws])
    n = coins.size
    assert coins.dtype == np.float64 and coins.min() >= 0.0 and coins.max() < 1.0
    assert abs(coins.mean() - 0.5) < 5 * np.sqrt(1 / 12 / n)
    assert abs(np.mean(coins < 0.1) - 0.1) < 5 * np.sqrt(0.1 * 0.9 / n)
    counts = np.bincount(actions, minlength=6)
    assert counts.size == 6 and actions.min() >= 0
    np.testing.assert_allclose(counts / n, 1 / 6, atol=5 * np.sqrt(1 / 6 * 5 / 6 / n))
