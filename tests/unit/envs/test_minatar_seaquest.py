"""rlkit's MinAtar Seaquest (rlkit/envs/tf/minatar_seaquest.py) against ``minatar``'s, step for
step (tests/unit/envs/minatar_trace.py), and its reset."""

from __future__ import annotations

import numpy as np
import pytest

from rlkit.envs.tf.minatar_base import GAME
from rlkit.envs.tf.minatar_seaquest import DIVER_COUNT, OFFSETS, POOLS, RAMP_INDEX, Seaquest
from tests.unit.envs.minatar_trace import (
    assert_fixed_reset,
    assert_replays,
    index_draw,
    minatar_trace,
)

#: minatar's lists, in the order of rlkit's POOLS
LISTS = ("f_bullets", "e_bullets", "e_fish", "e_subs", "divers")


def to_physics(game) -> list[int]:
    """minatar's Seaquest game as rlkit's game columns (each list in its block, in order)."""
    head = [game.sub_x, game.sub_y, game.sub_or, game.oxygen, game.diver_count,
            game.e_spawn_speed, game.e_spawn_timer, game.d_spawn_timer, game.move_speed,
            game.ramp_index, game.shot_timer, game.surface]  # fmt: skip
    out = [int(v) for v in head]
    for (_, slots, fields), name in zip(POOLS, LISTS, strict=True):
        items = getattr(game, name)
        assert len(items) <= slots, (name, len(items))
        block = np.zeros((len(fields), slots), np.int64)
        for k, item in enumerate(items):
            block[:, k] = [1, *(int(v) for v in item)]
        out += block.ravel().tolist()
    return out


def draws_of(calls) -> list[float]:
    """An enemy spawn draws rand (side), rand (kind), randint(1, 9) (row); a diver's spawn
    (after it) rand, randint(1, 9); slots not drawn: any value."""
    names = [c[0] for c in calls]
    enemy, diver = [0.5, 0.5, 0.5], [0.5, 0.5]
    if names[:3] == ["rand", "rand", "randint"]:
        (_, _, lr), (_, _, kind), (_, _, row), *calls = calls
        enemy = [float(lr), float(kind), index_draw(int(row) - 1, 8)]
    if calls:
        (a, _, lr), (b, _, row) = calls
        assert (a, b) == ("rand", "randint")
        diver = [float(lr), index_draw(int(row) - 1, 8)]
    return enemy + diver


def perturb(game, rng: np.random.Generator) -> None:
    """Now and then: divers aboard (surfacing with 1..6 of them), little oxygen, the sub just
    under the surface, a bullet, fish, sub or diver next to it heading for it, a ramped-up game
    (fast spawns, fast enemies)."""
    if game.terminal:
        return
    if rng.random() < 0.02:
        game.diver_count = int(rng.integers(0, 7))
    if rng.random() < 0.01:
        game.oxygen = int(rng.integers(0, 15))
    if rng.random() < 0.03:
        game.sub_y = int(rng.integers(0, 3))
    if rng.random() < 0.05 and game.sub_y > 0:  # a bullet or an enemy heading for the sub
        d = int(rng.integers(1, 3)) * (1 if rng.random() < 0.5 else -1)
        x, right = game.sub_x + d, d < 0
        kind = int(rng.integers(0, 4))
        if 0 <= x <= 9 and kind == 0:
            game.e_bullets.append([x, game.sub_y, right])
        elif 0 <= x <= 9 and kind == 3 and len(game.divers) < 2:
            game.divers.append([x, game.sub_y, right, int(rng.integers(0, 6))])
        elif 0 <= x <= 9 and not any(e[1] == game.sub_y and e[2] != right
                                     for e in game.e_subs + game.e_fish):  # fmt: skip
            timer = int(rng.integers(0, game.move_speed + 1))
            if kind == 1:
                game.e_fish.append([x, game.sub_y, right, timer])
            else:
                game.e_subs.append([x, game.sub_y, right, timer, int(rng.integers(0, 11))])
    if rng.random() < 0.005:
        game.ramp_index = int(rng.integers(0, 40))
        game.e_spawn_speed = max(1, 20 - game.ramp_index)
        game.move_speed = max(2, 5 - game.ramp_index // 2)
        game.e_spawn_timer = min(game.e_spawn_timer, game.e_spawn_speed)


def check(n: int, seed: int, compiled: bool) -> dict[str, np.ndarray]:
    env = Seaquest()
    trace = minatar_trace(env, n, to_physics, draws_of, perturb, seed=seed)
    assert_replays(env, trace, compiled)
    before, after = trace["physics"][:, GAME:], trace["after"]
    assert trace["reward"].sum() >= n // 500  # enemies shot
    assert trace["terminal"].sum() >= n // 200
    assert (trace["reward"] >= 2).sum() >= 1 or n < 5000  # a surfacing bonus
    assert (after[:, RAMP_INDEX] > before[:, RAMP_INDEX]).sum() >= max(1, n // 1000)
    assert (after[:, DIVER_COUNT] > before[:, DIVER_COUNT]).sum() >= max(1, n // 1000)
    return trace


@pytest.mark.slow
def test_step_for_step_equal_to_minatar_quick():
    check(1000, seed=0, compiled=False)  # eager: no compile time


@pytest.mark.slow
def test_step_for_step_equal_to_minatar():
    trace = check(10_000, seed=1, compiled=True)
    # the most items seen at once, against each block's room
    for name, slots, _ in POOLS:
        alive = trace["physics"][:, GAME + OFFSETS[name] : GAME + OFFSETS[name] + slots]
        print(name, alive.sum(1).max(), "of", slots)
        assert alive.sum(1).max() <= slots // 2


def test_reset_is_minatars():
    assert_fixed_reset("Seaquest", to_physics, channels=10)
