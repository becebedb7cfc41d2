"""MinAtar's Asterix in TensorFlow, equal step for step to ``minatar``'s
(``minatar/environments/asterix.py``, version 1.0.15) as ``MinAtar/Asterix-v0`` plays it.

The player (starting at row 5, column 5) moves one cell a step within rows 1..8. Eight lanes
(rows 1..8) hold at most one entity each, an enemy or gold, entering from the left or right
edge: every ``spawn_speed`` steps one spawns in a random free lane (direction and kind drawn
first: right with probability 1/2, gold 1/3; nothing when all lanes are full), and every
``move_speed`` steps all move one cell (leaving at the far edge). Meeting gold (before or
after the entities move) gives +1 and removes it; meeting an enemy ends the episode.
Difficulty ramping: every 101 steps ``spawn_speed`` drops by one (from 10, down to 1) and,
every other time, ``move_speed`` too (from 5, down to 1). Observation channels: player,
enemy, trail (the cell behind an entity), gold.
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.envs.tf.minatar_base import DOWN, GAME, LEFT, RIGHT, SIZE, UP, MinAtarEnv, cell, choose

RAMP_INTERVAL = 100
INIT_SPAWN_SPEED = 10
INIT_MOVE_INTERVAL = 5
LANES = 8

#: the game's columns (of ``physics[:, GAME:]``)
PX, PY, SPAWN_SPEED, SPAWN_TIMER, MOVE_SPEED, MOVE_TIMER, RAMP_TIMER, RAMP_INDEX = range(8)
#: the lanes' entities, eight columns each (lane i at row i + 1); a lane without one is all 0
ALIVE, X, GOES_RIGHT, GOLD = 8, 8 + LANES, 8 + 2 * LANES, 8 + 3 * LANES


class Asterix(MinAtarEnv):
    """``N`` games of MinAtar's Asterix; physics int32 ``[N, 4 + 40]``."""

    gym_id = "MinAtar/Asterix-v0"
    channels = 4
    game_dim = 8 + 4 * LANES
    physics_dim = GAME + game_dim
    obs_shape = (SIZE, SIZE, channels)
    obs_dim = SIZE * SIZE * channels
    num_draws = 3  # a spawn's direction, kind and lane
    num_reset_draws = 1

    def reset_game(self, draws: tf.Tensor) -> tf.Tensor:
        head = [5, 5, INIT_SPAWN_SPEED, INIT_SPAWN_SPEED, INIT_MOVE_INTERVAL,
                INIT_MOVE_INTERVAL, RAMP_INTERVAL, 0] + [0] * (4 * LANES)  # fmt: skip
        return tf.tile(tf.constant(head, tf.int32)[None], [tf.shape(draws)[0], 1])

    def play(
        self, game: tf.Tensor, actions: tf.Tensor, draws: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        col = {k: game[:, k] for k in range(8)}
        alive, x, right, gold = (game[:, k : k + LANES] > 0 for k in (ALIVE, X, GOES_RIGHT, GOLD))
        x = game[:, X : X + LANES]
        # a spawn: direction and kind drawn, then the k-th free lane (if any)
        spawns = col[SPAWN_TIMER] == 0
        free = ~alive
        count = tf.reduce_sum(tf.cast(free, tf.int32), axis=1)
        k = choose(draws[:, 2], count)  # randint(len(slot_options))
        rank = tf.cumsum(tf.cast(free, tf.int32), axis=1) - 1
        new = (spawns & (count > 0))[:, None] & free & (rank == k[:, None])
        lr, is_gold = (draws[:, 0] < 0.5)[:, None], (draws[:, 1] < 1 / 3)[:, None]
        alive |= new
        x = tf.where(new, tf.where(lr, 0, 9), x)
        right = tf.where(new, lr, right)
        gold = tf.where(new, is_gold, gold)
        spawn_timer = tf.where(spawns, col[SPAWN_SPEED], col[SPAWN_TIMER])
        # the player
        px = tf.where(actions == LEFT, tf.maximum(0, col[PX] - 1), col[PX])
        px = tf.where(actions == RIGHT, tf.minimum(9, px + 1), px)
        py = tf.where(actions == UP, tf.maximum(1, col[PY] - 1), col[PY])
        py = tf.where(actions == DOWN, tf.minimum(8, py + 1), py)
        lane_row = tf.range(1, LANES + 1)[None, :]
        # meetings before the move, the move, meetings after it
        meet = alive & (x == px[:, None]) & (lane_row == py[:, None])
        reward = tf.reduce_sum(tf.cast(meet & gold, tf.float64), axis=1)
        terminal = tf.reduce_any(meet & ~gold, axis=1)
        alive &= ~(meet & gold)
        moves = col[MOVE_TIMER] == 0
        move_timer = tf.where(moves, col[MOVE_SPEED], col[MOVE_TIMER])
        x = tf.where(moves[:, None] & alive, x + tf.where(right, 1, -1), x)
        alive &= (x >= 0) & (x <= 9)
        meet = moves[:, None] & alive & (x == px[:, None]) & (lane_row == py[:, None])
        reward += tf.reduce_sum(tf.cast(meet & gold, tf.float64), axis=1)
        terminal |= tf.reduce_any(meet & ~gold, axis=1)
        alive &= ~(meet & gold)
        # timers and the difficulty ramp
        spawn_timer -= 1
        move_timer -= 1
        spawn_speed, move_speed = col[SPAWN_SPEED], col[MOVE_SPEED]
        ramp_timer, ramp_index = col[RAMP_TIMER], col[RAMP_INDEX]
        ramping = (spawn_speed > 1) | (move_speed > 1)
        waits = ramping & (ramp_timer >= 0)
        ramps = ramping & (ramp_timer < 0)
        ramp_timer = tf.where(waits, ramp_timer - 1, tf.where(ramps, RAMP_INTERVAL, ramp_timer))
        move_speed -= tf.cast(ramps & (move_speed > 1) & (ramp_index % 2 == 1), tf.int32)
        spawn_speed -= tf.cast(ramps & (spawn_speed > 1), tf.int32)
        ramp_index += tf.cast(ramps, tf.int32)
        head = [px, py, spawn_speed, spawn_timer, move_speed, move_timer, ramp_timer, ramp_index]
        lanes = [tf.cast(v & alive, tf.int32) for v in (alive, right, gold)]
        lanes.insert(1, tf.where(alive, x, 0))
        return tf.concat([tf.stack(head, axis=1), *lanes], axis=1), reward, terminal

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        game = physics[:, GAME:]
        alive, right, gold = (game[:, k : k + LANES] > 0 for k in (ALIVE, GOES_RIGHT, GOLD))
        x = game[:, X : X + LANES]
        n = tf.shape(x)[0]
        rows = tf.reshape(tf.tile(tf.range(1, LANES + 1)[None, :], [n, 1]), [-1])

        def lanes(xs: tf.Tensor, on: tf.Tensor) -> tf.Tensor:  # [N, 8] cells -> [N, 10, 10]
            grid = cell(rows, tf.reshape(xs, [-1]), tf.reshape(on, [-1]))
            return tf.reduce_any(tf.reshape(grid, [n, LANES, SIZE, SIZE]), axis=1)

        player = cell(game[:, PY], game[:, PX])
        back = x + tf.where(right, -1, 1)  # off the board: no trail (cell() drops it)
        planes = [player, lanes(x, alive & ~gold), lanes(back, alive), lanes(x, alive & gold)]
        return tf.stack(planes, axis=3)
