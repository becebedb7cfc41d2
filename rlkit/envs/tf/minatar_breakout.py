"""MinAtar's Breakout in TensorFlow, equal step for step to ``minatar``'s
(``minatar/environments/breakout.py``, version 1.0.15) as ``MinAtar/Breakout-v0`` plays it.

A paddle on the bottom row (``pos``, moved by left/right) bounces a ball that travels only
along diagonals (``ball_dir`` 0..3 = up-left, up-right, down-right, down-left) and breaks
three rows of bricks (rows 1..3): +1 a brick; when the ball comes down to the bottom row with
no brick left, three fresh rows appear. The ball bounces off walls and the ceiling, off a
brick it breaks, and off the paddle: straight back up when the paddle is under where the
ball was, sideways back up when it is under where the ball goes; else the episode ends.
``strike`` (the ball moved into a brick on the previous step) lets it pass through a brick
on the next. Observation channels: paddle, ball, trail (the ball's last cell), brick.
Randomness: the start side only (ball at x = 0 going down-right, or x = 9 going down-left).
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.envs.tf.minatar_base import (
    GAME,
    LEFT,
    RIGHT,
    SIZE,
    MinAtarEnv,
    board,
    cell,
    choose,
    flat,
)

#: the game's columns (of ``physics[:, GAME:]``)
BALL_X, BALL_Y, BALL_DIR, POS, LAST_X, LAST_Y, STRIKE = range(7)
BRICKS = 7  # the brick map, 10x10 row-major, from this column

_DX = (-1, 1, 1, -1)  # by ball_dir
_DY = (-1, -1, 1, 1)


def _turn(direction: tf.Tensor, table: tuple[int, int, int, int]) -> tf.Tensor:
    """``table[direction]`` (MinAtar's ``[..][self.ball_dir]``)."""
    return tf.gather(tf.constant(table, tf.int32), direction)


class Breakout(MinAtarEnv):
    """``N`` games of MinAtar's Breakout; physics int32 ``[N, 4 + 107]``."""

    gym_id = "MinAtar/Breakout-v0"
    channels = 4
    game_dim = BRICKS + SIZE * SIZE
    physics_dim = GAME + game_dim
    obs_shape = (SIZE, SIZE, channels)
    obs_dim = SIZE * SIZE * channels
    num_draws = 0
    num_reset_draws = 1

    def reset_game(self, draws: tf.Tensor) -> tf.Tensor:
        right = choose(draws[:, 0], 2) == 1  # randint(2): [(0, 2), (9, 3)][ball_start]
        n = tf.shape(draws)[0]
        ones = tf.ones([n], tf.int32)
        ball_x = tf.where(right, 9, 0) * ones
        ball_dir = tf.where(right, 3, 2) * ones
        ball_y = 3 * ones
        bricks = tf.tile(flat(tf.constant([[0] * 10] + [[1] * 10] * 3 + [[0] * 10] * 6)), [n, 1])
        columns = [ball_x, ball_y, ball_dir, 4 * ones, ball_x, ball_y, 0 * ones]
        return tf.concat([tf.stack(columns, axis=1), bricks], axis=1)

    def play(
        self, game: tf.Tensor, actions: tf.Tensor, draws: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        ball_x, ball_y, ball_dir = game[:, BALL_X], game[:, BALL_Y], game[:, BALL_DIR]
        bricks = game[:, BRICKS:]
        pos = game[:, POS]
        pos = tf.where(actions == LEFT, tf.maximum(0, pos - 1), pos)
        pos = tf.where(actions == RIGHT, tf.minimum(9, pos + 1), pos)
        last_x, last_y = ball_x, ball_y
        new_x = ball_x + _turn(ball_dir, _DX)
        new_y = ball_y + _turn(ball_dir, _DY)
        # the side walls
        side = (new_x < 0) | (new_x > 9)
        new_x = tf.clip_by_value(new_x, 0, 9)
        ball_dir = tf.where(side, _turn(ball_dir, (1, 0, 3, 2)), ball_dir)
        # the ceiling, else a brick, else the bottom row
        ceiling = new_y < 0
        index = tf.clip_by_value(new_y, 0, 9) * SIZE + new_x
        brick_there = tf.gather(bricks, index, batch_dims=1) == 1
        hit = ~ceiling & brick_there
        breaks = hit & (game[:, STRIKE] == 0)
        bottom = ~ceiling & ~brick_there & (new_y == 9)
        straight = bottom & (last_x == pos)  # the paddle under where the ball was
        sideways = bottom & ~straight & (new_x == pos)  # under where it goes
        terminal = bottom & ~straight & ~sideways
        reward = tf.cast(breaks, tf.float64)
        bricks = bricks * (1 - flat(cell(new_y, new_x, breaks)))
        cleared = tf.reduce_sum(bricks, axis=1) == 0
        refill = flat(tf.constant([[0] * 10] + [[1] * 10] * 3 + [[0] * 10] * 6))
        bricks = tf.where((bottom & cleared)[:, None], tf.maximum(bricks, refill), bricks)
        ball_dir = tf.where(ceiling | breaks | straight, _turn(ball_dir, (3, 2, 1, 0)), ball_dir)
        ball_dir = tf.where(sideways, _turn(ball_dir, (2, 3, 0, 1)), ball_dir)
        new_y = tf.where(ceiling, 0, new_y)
        new_y = tf.where(breaks | straight | sideways, last_y, new_y)
        strike = tf.cast(hit, tf.int32)
        columns = [new_x, new_y, ball_dir, pos, last_x, last_y, strike]
        return tf.concat([tf.stack(columns, axis=1), bricks], axis=1), reward, terminal

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        game = physics[:, GAME:]
        paddle = cell(tf.fill(tf.shape(game[:, POS]), 9), game[:, POS])
        ball = cell(game[:, BALL_Y], game[:, BALL_X])
        trail = cell(game[:, LAST_Y], game[:, LAST_X])
        bricks = board(game, BRICKS) > 0
        return tf.stack([paddle, ball, trail, bricks], axis=3)
