"""rlkit's MinAtar Breakout (rlkit/envs/tf/minatar_breakout.py) against ``minatar``'s, step for
step (tests/unit/envs/minatar_trace.py), and its resets against ``minatar``'s."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from rlkit.envs.tf import make_tf_env
from rlkit.envs.tf.minatar_base import GAME
from rlkit.envs.tf.minatar_breakout import BALL_DIR, BALL_X, BRICKS, STRIKE, Breakout
from tests.unit.envs.minatar_trace import (
    assert_replays,
    minatar_resets,
    minatar_trace,
)


def to_physics(game) -> list[int]:
    """minatar's Breakout game as rlkit's game columns."""
    head = [game.ball_x, game.ball_y, game.ball_dir, game.pos, game.last_x, game.last_y,
            int(game.strike)]  # fmt: skip
    return [int(v) for v in head] + [int(v) for v in game.brick_map.ravel()]


def draws_of(calls) -> list[float]:
    assert calls == []  # Breakout draws nothing in a step (its reset draws the start side)
    return []


def perturb(game, rng: np.random.Generator) -> None:
    """One transition in 25 from a board with 0 to 2 bricks left (the refill is reached)."""
    if rng.random() < 0.04 and not game.terminal:
        keep = rng.integers(0, 3)
        cells = np.argwhere(game.brick_map == 1)
        game.brick_map[:] = 0
        for y, x in cells[rng.permutation(len(cells))[:keep]]:
            game.brick_map[y, x] = 1


def check(n: int, seed: int, compiled: bool) -> None:
    env = Breakout()
    trace = minatar_trace(env, n, to_physics, draws_of, perturb, seed=seed)
    assert_replays(env, trace, compiled)
    # the test reaches what it claims to: bricks broken, passes through (strike), bounces
    # off the paddle both ways, refills, terminations, sticky actions
    after = trace["after"]
    assert trace["reward"].sum() >= n // 50
    assert (after[:, STRIKE] == 1).sum() >= n // 50
    assert trace["terminal"].sum() >= n // 200
    refilled = (trace["physics"][:, GAME + BRICKS :].sum(1) == 0) & (after[:, BRICKS:].sum(1) == 30)
    assert refilled.sum() >= 1
    assert (trace["draws"][:, 0] < 0.1).sum() >= n // 20


def test_step_for_step_equal_to_minatar_quick():
    check(600, seed=0, compiled=False)  # eager: no compile time


@pytest.mark.slow
def test_step_for_step_equal_to_minatar():
    check(10_000, seed=1, compiled=True)


def test_resets_drawn_as_minatar_draws_them():
    env = make_tf_env("rlkit/MinAtar-Breakout-v0")
    state, obs = env.reset(tf.constant([3, 4]), 4000)
    game = state.physics.numpy()[:, GAME:]
    games, theirs = minatar_resets("MinAtar/Breakout-v0", 200)
    # every reset is one of minatar's two (the ball at the left going down-right, or right)
    assert {tuple(to_physics(g)) for g in games} == {tuple(r) for r in np.unique(game, axis=0)}
    right = game[:, BALL_X] == 9
    np.testing.assert_array_equal(game[:, BALL_DIR], np.where(right, 3, 2))
    assert abs(right.mean() - 0.5) < 0.04  # 5 standard deviations of 4000 fair coins
    assert abs(np.mean([g.ball_x == 9 for g in games]) - 0.5) < 0.15
    assert {o.tobytes() for o in obs.numpy()} == {o.tobytes() for o in theirs}
    assert obs.dtype == tf.bool and obs.shape == (4000, 10, 10, 4)


def test_a_terminal_state_stays_terminal_with_reward_zero():
    env = Breakout()
    state, _ = env.reset(tf.constant([0, 0]), 2)
    physics = state.physics.numpy()
    physics[:, 3] = [1, 0]  # TERMINAL
    draws = tf.constant([[0.5], [0.5]], tf.float64)
    after, reward, terminal = env.advance_with(tf.constant(physics), tf.constant([1, 1]), draws)
    np.testing.assert_array_equal(after.numpy()[0, GAME:], physics[0, GAME:])
    assert terminal.numpy().tolist() == [True, False] and reward.numpy()[0] == 0.0
    assert after.numpy()[0, 0] == 1  # the action is still remembered for the sticky test


def test_sticky_action_repeats_the_last_one_below_one_tenth():
    env = Breakout()
    state, _ = env.reset(tf.constant([0, 0]), 2)
    physics = state.physics.numpy()
    physics[:, 0] = 3  # the last action: right
    draws = tf.constant([[0.0999], [0.1]], tf.float64)
    after, _, _ = env.advance_with(tf.constant(physics), tf.constant([1, 1]), draws)
    # the paddle starts at 4: the first copy repeats "right" (5), the second goes left (3)
    assert after.numpy()[:, 0].tolist() == [3, 1]
    assert after.numpy()[:, GAME + 3].tolist() == [5, 3]
