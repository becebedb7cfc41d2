"""rlkit's MinAtar Asterix (rlkit/envs/tf/minatar_asterix.py) against ``minatar``'s, step for
step (tests/unit/envs/minatar_trace.py), and its reset."""

from __future__ import annotations

import numpy as np
import pytest

from rlkit.envs.tf.minatar_asterix import ALIVE, LANES, RAMP_INDEX, SPAWN_SPEED, Asterix
from rlkit.envs.tf.minatar_base import GAME
from tests.unit.envs.minatar_trace import (
    assert_fixed_reset,
    assert_replays,
    index_draw,
    minatar_trace,
)


def to_physics(game) -> list[int]:
    """minatar's Asterix game as rlkit's game columns (an empty lane: all 0)."""
    head = [game.player_x, game.player_y, game.spawn_speed, game.spawn_timer, game.move_speed,
            game.move_timer, game.ramp_timer, game.ramp_index]  # fmt: skip
    lanes = [e if e is not None else [0, 0, False, False] for e in game.entities]
    for i, e in enumerate(lanes):
        assert game.entities[i] is None or e[1] == i + 1
    alive = [int(e is not None) for e in game.entities]
    columns = [*alive, *(e[0] for e in lanes), *(e[2] for e in lanes), *(e[3] for e in lanes)]
    return [int(v) for v in [*head, *columns]]


def draws_of(calls) -> list[float]:
    """A spawn draws ``rand()`` (direction), ``rand()`` (kind), then ``randint(free lanes)``
    when a lane is free; other steps nothing (unused slots: any value)."""
    if not calls:
        return [0.5, 0.5, 0.5]
    (a, _, lr), (b, _, gold), *rest = calls
    assert a == b == "rand"
    if not rest:
        return [float(lr), float(gold), 0.5]
    ((c, (n,), lane),) = rest
    assert c == "randint"
    return [float(lr), float(gold), index_draw(int(lane), n)]


def perturb(game, rng: np.random.Generator) -> None:
    """Now and then: later in the difficulty ramp (fast spawns fill every lane), the ramp
    about to step."""
    if game.terminal:
        return
    if rng.random() < 0.01:
        game.ramp_index = int(rng.integers(0, 20))
        game.spawn_speed = max(1, 10 - game.ramp_index)
        game.move_speed = max(1, 5 - game.ramp_index // 2)
        game.spawn_timer = min(game.spawn_timer, game.spawn_speed)
        game.move_timer = min(game.move_timer, game.move_speed)
    if rng.random() < 0.01:
        game.ramp_timer = int(rng.integers(-1, 2))


def check(n: int, seed: int, compiled: bool) -> None:
    env = Asterix()
    trace = minatar_trace(env, n, to_physics, draws_of, perturb, seed=seed)
    assert_replays(env, trace, compiled)
    before, after = trace["physics"][:, GAME:], trace["after"]
    assert trace["reward"].sum() >= n // 200  # gold
    assert trace["terminal"].sum() >= n // 200  # enemies
    assert (after[:, RAMP_INDEX] > before[:, RAMP_INDEX]).sum() >= max(1, n // 1000)
    assert (before[:, ALIVE : ALIVE + LANES].sum(1) == LANES).sum() >= 1 or n < 5000  # full
    assert (after[:, SPAWN_SPEED] == 1).sum() >= 1


def test_step_for_step_equal_to_minatar_quick():
    check(600, seed=0, compiled=False)  # eager: no compile time


@pytest.mark.slow
def test_step_for_step_equal_to_minatar():
    check(10_000, seed=1, compiled=True)


def test_reset_is_minatars():
    assert_fixed_reset("Asterix", to_physics, channels=4)
