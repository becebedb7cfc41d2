"""MinAtar's Freeway in TensorFlow, equal step for step to ``minatar``'s
(``minatar/environments/freeway.py``, version 1.0.15) as ``MinAtar/Freeway-v0`` plays it.

A chicken in column 4 (row ``pos``, starting at 9) crosses eight lanes of traffic (rows
1..8, one car each) upward: up/down move it a row, at most once every 3 steps. Reaching row 0
gives +1, sends it back to row 9 and gives every car a new speed and direction (their places
stay). A car in lane ``i`` moves one cell (wrapping round) every ``|speed|`` + 1 steps, right
for a positive speed; a car on the chicken's cell, before or after its move, sends the chicken
back to row 9. The episode ends after 2500 steps (terminal, not truncated). Randomness: the
speeds (1..5, ``randint(1, 6, 8)``) and directions (``sign(rand(8) - 0.5)``) at a reset and a
crossing. Observation channels: chicken, car, and the car's trail (the cell behind it) in one
of five channels by its speed.
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.envs.tf.minatar_base import DOWN, GAME, SIZE, UP, MinAtarEnv, cell, choose

PLAYER_SPEED = 3
TIME_LIMIT = 2500
CARS = 8

#: the game's columns (of ``physics[:, GAME:]``)
POS, MOVE_TIMER, TERMINATE_TIMER = range(3)
CAR_X, CAR_TIMER, CAR_SPEED = 3, 3 + CARS, 3 + 2 * CARS  # eight columns each (lanes 1..8)


def random_cars(draws: tf.Tensor) -> tf.Tensor:
    """int32 ``[N, 8]`` signed speeds from uniforms ``[N, 16]``: ``randint(1, 6, 8)`` from the
    first eight, the sign of ``rand(8) - 0.5`` from the last eight (+1 at exactly 0.5, where
    minatar's speed would be 0: a probability of 2**-32 a car here)."""
    speeds = 1 + choose(draws[:, :CARS], 5)
    return tf.where(draws[:, CARS:] < 0.5, -speeds, speeds)


class Freeway(MinAtarEnv):
    """``N`` games of MinAtar's Freeway; physics int32 ``[N, 4 + 27]``."""

    gym_id = "MinAtar/Freeway-v0"
    channels = 7
    game_dim = 3 + 3 * CARS
    physics_dim = GAME + game_dim
    obs_shape = (SIZE, SIZE, channels)
    obs_dim = SIZE * SIZE * channels
    num_draws = 2 * CARS
    num_reset_draws = 2 * CARS

    def reset_game(self, draws: tf.Tensor) -> tf.Tensor:
        speeds = random_cars(draws)
        ones = tf.ones_like(speeds[:, :1])
        head = tf.concat([9 * ones, PLAYER_SPEED * ones, TIME_LIMIT * ones], axis=1)
        return tf.concat([head, tf.zeros_like(speeds), tf.abs(speeds), speeds], axis=1)

    def play(
        self, game: tf.Tensor, actions: tf.Tensor, draws: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        pos, move_timer = game[:, POS], game[:, MOVE_TIMER]
        x = game[:, CAR_X : CAR_X + CARS]
        timer = game[:, CAR_TIMER : CAR_TIMER + CARS]
        speed = game[:, CAR_SPEED : CAR_SPEED + CARS]
        ready = move_timer == 0
        up, down = ready & (actions == UP), ready & (actions == DOWN)
        move_timer = tf.where(up | down, PLAYER_SPEED, move_timer)
        pos = tf.where(up, tf.maximum(0, pos - 1), pos)
        pos = tf.where(down, tf.minimum(9, pos + 1), pos)
        # a crossing: +1, back to the bottom, new speeds and directions (places kept)
        crossed = pos == 0
        reward = tf.cast(crossed, tf.float64)
        new_speed = random_cars(draws)
        speed = tf.where(crossed[:, None], new_speed, speed)
        timer = tf.where(crossed[:, None], tf.abs(new_speed), timer)
        pos = tf.where(crossed, 9, pos)
        # the cars: a car on the chicken's cell before or after its move sends it back
        lane = tf.range(1, CARS + 1)[None, :]
        on_chicken = (lane == pos[:, None]) & (x == 4)
        moves = timer == 0
        x = tf.where(moves, tf.math.floormod(x + tf.where(speed > 0, 1, -1), SIZE), x)
        timer = tf.where(moves, tf.abs(speed), timer - 1)
        on_chicken |= moves & (lane == pos[:, None]) & (x == 4)
        pos = tf.where(tf.reduce_any(on_chicken, axis=1), 9, pos)
        move_timer -= tf.cast(move_timer > 0, tf.int32)
        terminate_timer = game[:, TERMINATE_TIMER] - 1
        terminal = terminate_timer < 0
        head = tf.stack([pos, move_timer, terminate_timer], axis=1)
        return tf.concat([head, x, timer, speed], axis=1), reward, terminal

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        game = physics[:, GAME:]
        x = game[:, CAR_X : CAR_X + CARS]
        speed = game[:, CAR_SPEED : CAR_SPEED + CARS]
        n = tf.shape(x)[0]
        lane = tf.tile(tf.range(1, CARS + 1)[None, :], [n, 1])
        chicken = cell(game[:, POS], tf.fill([n], 4))
        back = tf.math.floormod(x + tf.where(speed > 0, -1, 1), SIZE)
        trail = cell(tf.reshape(lane, [-1]), tf.reshape(back, [-1]))  # [N * 8, 10, 10]
        trail = tf.reshape(trail, [n, CARS, SIZE, SIZE])
        level = tf.one_hot(tf.abs(speed) - 1, 5, on_value=True, off_value=False)  # [N, 8, 5]
        trails = tf.reduce_any(trail[:, :, None] & level[:, :, :, None, None], axis=1)
        cars = tf.reduce_any(tf.reshape(cell(tf.reshape(lane, [-1]), tf.reshape(x, [-1])),
                                        [n, CARS, SIZE, SIZE]), axis=1)  # fmt: skip
        return tf.concat(
            [chicken[..., None], cars[..., None], tf.transpose(trails, [0, 2, 3, 1])], 3
        )
