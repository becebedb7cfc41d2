"""rlkit's MinAtar Freeway (rlkit/envs/tf/minatar_freeway.py) against ``minatar``'s, step for
step (tests/unit/envs/minatar_trace.py), and its resets against ``minatar``'s."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from rlkit.envs.tf import make_tf_env
from rlkit.envs.tf.minatar_base import GAME
from rlkit.envs.tf.minatar_freeway import CAR_SPEED, CAR_TIMER, CAR_X, CARS, POS, Freeway
from tests.unit.envs.minatar_trace import (
    assert_replays,
    index_draw,
    minatar_resets,
    minatar_trace,
)


def to_physics(game) -> list[int]:
    """minatar's Freeway game as rlkit's game columns."""
    cars = np.array(game.cars)  # [8, (x, y, timer, speed)]
    assert np.array_equal(cars[:, 1], np.arange(1, 9))
    head = [game.pos, game.move_timer, game.terminate_timer]
    return [int(v) for v in [*head, *cars[:, 0], *cars[:, 2], *cars[:, 3]]]


def draws_of(calls) -> list[float]:
    """A crossing draws ``randint(1, 6, 8)`` then ``rand(8)``; other steps nothing (their
    slots are unused: any value)."""
    if not calls:
        return [0.5] * (2 * CARS)
    (name, args, speeds), (name2, _, signs) = calls
    assert name == "randint" and args == (1, 6, 8) and name2 == "rand"
    return [index_draw(int(s) - 1, 5) for s in speeds] + [float(u) for u in signs]


def perturb(game, rng: np.random.Generator) -> None:
    """Now and then the chicken near the top (crossings are reached), near the end of time."""
    if game.terminal:
        return
    if rng.random() < 0.05:
        game.pos = int(rng.integers(1, 4))
    if rng.random() < 0.01:
        game.terminate_timer = int(rng.integers(0, 3))


def check(n: int, seed: int, compiled: bool) -> None:
    env = Freeway()
    trace = minatar_trace(env, n, to_physics, draws_of, perturb, seed=seed)
    assert_replays(env, trace, compiled)
    before, after = trace["physics"][:, GAME:], trace["after"]
    assert trace["reward"].sum() >= n // 200  # crossings
    assert trace["terminal"].sum() >= 1  # the time limit
    hit = (after[:, POS] == 9) & (before[:, POS] < 8) & (trace["reward"] == 0)
    assert hit.sum() >= n // 100  # run over by a car


def test_step_for_step_equal_to_minatar_quick():
    check(600, seed=0, compiled=False)  # eager: no compile time


@pytest.mark.slow
def test_step_for_step_equal_to_minatar():
    check(10_000, seed=1, compiled=True)


def test_resets_drawn_as_minatar_draws_them():
    env = make_tf_env("rlkit/MinAtar-Freeway-v0")
    state, obs = env.reset(tf.constant([3, 4]), 4000)
    ours = state.physics.numpy()[:, GAME:]
    games, theirs = minatar_resets("MinAtar/Freeway-v0", 400)
    theirs_phys = np.array([to_physics(g) for g in games], np.int32)
    for rows in (ours, theirs_phys):
        speed = rows[:, CAR_SPEED : CAR_SPEED + CARS]
        np.testing.assert_array_equal(rows[:, :3], np.tile([9, 3, 2500], (len(rows), 1)))
        np.testing.assert_array_equal(rows[:, CAR_X : CAR_X + CARS], 0)
        np.testing.assert_array_equal(rows[:, CAR_TIMER : CAR_TIMER + CARS], np.abs(speed))
        assert set(np.unique(speed)) == {-5, -4, -3, -2, -1, 1, 2, 3, 4, 5}
    # each car's signed speed uniform over the ten values: 4000 x 8 draws within 0.01 of
    # 1/10 each (6 standard deviations), minatar's 400 x 8 within 0.03
    for rows, tol in ((ours, 0.01), (theirs_phys, 0.03)):
        speed = rows[:, CAR_SPEED : CAR_SPEED + CARS].ravel()
        freq = np.array([np.mean(speed == v) for v in (-5, -4, -3, -2, -1, 1, 2, 3, 4, 5)])
        assert np.all(np.abs(freq - 0.1) < tol), freq
    np.testing.assert_array_equal(obs.numpy(), env.observe(state.physics).numpy())
    np.testing.assert_array_equal(
        env.observe(tf.constant(np.c_[np.zeros((400, GAME), np.int32), theirs_phys])).numpy(),
        theirs,
    )
