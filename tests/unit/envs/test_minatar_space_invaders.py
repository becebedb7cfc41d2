"""rlkit's MinAtar Space Invaders (rlkit/envs/tf/minatar_space_invaders.py) against
``minatar``'s, step for step (tests/unit/envs/minatar_trace.py), and its reset."""

from __future__ import annotations

import numpy as np
import pytest

from rlkit.envs.tf.minatar_base import GAME
from rlkit.envs.tf.minatar_space_invaders import ALIEN_DIR, ALIENS, RAMP, SpaceInvaders
from tests.unit.envs.minatar_trace import (
    assert_fixed_reset,
    assert_replays,
    minatar_trace,
)


def to_physics(game) -> list[int]:
    """minatar's Space Invaders game as rlkit's game columns."""
    head = [game.pos, game.alien_dir, game.enemy_move_interval, game.alien_move_timer,
            game.alien_shot_timer, game.shot_timer, game.ramp_index]  # fmt: skip
    maps = (game.f_bullet_map, game.e_bullet_map, game.alien_map)
    return [int(v) for v in head] + [int(v) for m in maps for v in m.ravel()]


def draws_of(calls) -> list[float]:
    assert calls == []  # no randomness in Space Invaders but the sticky actions
    return []


def perturb(game, rng: np.random.Generator) -> None:
    """Now and then: a few aliens left (new blocks and the difficulty ramp are reached), the
    block moved down (aliens reach the bottom row), a faster block, the column over the
    cannon emptied (the nearest alien's tie between left and right is reached)."""
    if game.terminal:
        return
    others = np.delete(game.alien_map, game.pos, axis=1)
    if rng.random() < 0.05 and others.any():  # (an empty board would not fire: minatar fails)
        game.alien_map[:, game.pos] = 0
    if rng.random() < 0.03:
        cells = np.argwhere(game.alien_map == 1)
        game.alien_map[:] = 0
        for y, x in cells[rng.permutation(len(cells))[: rng.integers(1, 4)]]:
            game.alien_map[y, x] = 1
    if rng.random() < 0.02:
        game.alien_map = np.roll(game.alien_map, int(rng.integers(1, 6)), axis=0)
    if rng.random() < 0.01:
        game.enemy_move_interval = int(rng.integers(6, 13))
        game.ramp_index = 12 - game.enemy_move_interval


def check(n: int, seed: int, compiled: bool) -> None:
    env = SpaceInvaders()
    trace = minatar_trace(env, n, to_physics, draws_of, perturb, seed=seed)
    assert_replays(env, trace, compiled)
    before, after = trace["physics"][:, GAME:], trace["after"]
    assert trace["reward"].sum() >= n // 50  # aliens hit
    assert trace["terminal"].sum() >= n // 300
    assert (after[:, RAMP] > before[:, RAMP]).sum() >= max(1, n // 2000)  # new blocks, faster
    assert (after[:, ALIEN_DIR] != before[:, ALIEN_DIR]).sum() >= n // 100  # turns
    assert (after[:, ALIENS + 90 : ALIENS + 100].sum(1) > 0).sum() >= n // 100  # bottom row


def test_step_for_step_equal_to_minatar_quick():
    check(600, seed=0, compiled=False)  # eager: no compile time


@pytest.mark.slow
def test_step_for_step_equal_to_minatar():
    check(10_000, seed=1, compiled=True)


def test_reset_is_minatars():
    assert_fixed_reset("SpaceInvaders", to_physics, channels=6)
