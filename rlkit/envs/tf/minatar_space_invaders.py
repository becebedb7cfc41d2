"""MinAtar's Space Invaders in TensorFlow, equal step for step to ``minatar``'s
(``minatar/environments/space_invaders.py``, version 1.0.15) as ``MinAtar/SpaceInvaders-v0``
plays it.

A cannon on the bottom row (``pos``) moves left/right or fires (a friendly bullet from row 9,
at most one every 5 steps); friendly bullets move up a row a step, enemy bullets down. A block
of 4x6 aliens moves sideways one column every ``move_timer`` steps (the interval is the number
of aliens left, at most ``move_interval``), and down a row (wrapping round, as ``np.roll``
does) when it reaches a wall, turning. Every 10 steps the alien nearest the cannon's column
(the lowest one of the nearest column holding any; the left one on a tie) fires. +1 an alien
hit; the episode ends when an enemy bullet or an alien reaches the cannon, or an alien on the
bottom row meets a wall. When all aliens are gone a new block comes, and (difficulty
ramping) ``move_interval`` drops by one, down to 6. No randomness but the sticky actions.
Observation channels: cannon, alien, alien moving left, alien moving right, friendly bullet,
enemy bullet.
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.envs.tf.minatar_base import FIRE, GAME, LEFT, RIGHT, SIZE, MinAtarEnv, board, cell, flat

SHOT_COOL_DOWN = 5
ENEMY_MOVE_INTERVAL = 12
ENEMY_SHOT_INTERVAL = 10

#: the game's columns (of ``physics[:, GAME:]``)
POS, ALIEN_DIR, MOVE_INTERVAL, MOVE_TIMER, ALIEN_SHOT_TIMER, SHOT_TIMER, RAMP = range(7)
F_BULLETS, E_BULLETS, ALIENS = 7, 107, 207  # 10x10 maps, row-major, from these columns

#: a fresh block of aliens: rows 0..3, columns 2..7
_BLOCK = [[0, 0, 1, 1, 1, 1, 1, 1, 0, 0]] * 4 + [[0] * 10] * 6


def _shift_rows(grid: tf.Tensor, up: bool) -> tf.Tensor:
    """``[N, 10, 10]`` moved a row up (row 0 lost, row 9 empty) or down (row 0 empty)."""
    empty = tf.zeros_like(grid[:, :1])
    if up:
        return tf.concat([grid[:, 1:], empty], axis=1)
    return tf.concat([empty, grid[:, :-1]], axis=1)


class SpaceInvaders(MinAtarEnv):
    """``N`` games of MinAtar's Space Invaders; physics int32 ``[N, 4 + 307]``."""

    gym_id = "MinAtar/SpaceInvaders-v0"
    channels = 6
    game_dim = ALIENS + SIZE * SIZE
    physics_dim = GAME + game_dim
    obs_shape = (SIZE, SIZE, channels)
    obs_dim = SIZE * SIZE * channels
    num_draws = 0
    num_reset_draws = 1

    def reset_game(self, draws: tf.Tensor) -> tf.Tensor:
        n = tf.shape(draws)[0]
        head = tf.constant([5, -1, ENEMY_MOVE_INTERVAL, ENEMY_MOVE_INTERVAL,
                            ENEMY_SHOT_INTERVAL, 0, 0], tf.int32)  # fmt: skip
        maps = tf.concat([tf.zeros([200], tf.int32), tf.reshape(tf.constant(_BLOCK), [100])], 0)
        return tf.tile(tf.concat([head, maps], 0)[None], [n, 1])

    def play(
        self, game: tf.Tensor, actions: tf.Tensor, draws: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        pos, alien_dir = game[:, POS], game[:, ALIEN_DIR]
        move_interval, move_timer = game[:, MOVE_INTERVAL], game[:, MOVE_TIMER]
        alien_shot_timer, shot_timer, ramp = (
            game[:, k] for k in (ALIEN_SHOT_TIMER, SHOT_TIMER, RAMP)
        )
        friendly = board(game, F_BULLETS) > 0
        enemy = board(game, E_BULLETS) > 0
        aliens = board(game, ALIENS) > 0
        nine = tf.fill(tf.shape(pos), 9)
        # the player: fire (when the gun is cool), else move
        fire = (actions == FIRE) & (shot_timer == 0)
        friendly = friendly | cell(nine, pos, fire)
        shot_timer = tf.where(fire, SHOT_COOL_DOWN, shot_timer)
        pos = tf.where(actions == LEFT, tf.maximum(0, pos - 1), pos)
        pos = tf.where(actions == RIGHT, tf.minimum(9, pos + 1), pos)
        # bullets
        friendly = _shift_rows(friendly, up=True)
        enemy = _shift_rows(enemy, up=False)
        at_cannon = cell(nine, pos)
        terminal = tf.reduce_any(enemy & at_cannon, axis=[1, 2])
        terminal |= tf.reduce_any(aliens & at_cannon, axis=[1, 2])
        # the aliens move
        moves = move_timer == 0
        count = tf.reduce_sum(tf.cast(aliens, tf.int32), axis=[1, 2])
        move_timer = tf.where(moves, tf.minimum(count, move_interval), move_timer)
        columns = tf.reduce_any(aliens, axis=1)  # [N, 10]: a column holds an alien
        turns = moves & ((columns[:, 0] & (alien_dir < 0)) | (columns[:, 9] & (alien_dir > 0)))
        terminal |= turns & tf.reduce_any(aliens[:, 9], axis=1)
        alien_dir = tf.where(turns, -alien_dir, alien_dir)
        down = tf.roll(aliens, 1, axis=1)
        sideways = tf.where((alien_dir < 0)[:, None, None], tf.roll(aliens, -1, axis=2),
                            tf.roll(aliens, 1, axis=2))  # fmt: skip
        aliens = tf.where(
            turns[:, None, None], down, tf.where(moves[:, None, None], sideways, aliens)
        )
        terminal |= moves & tf.reduce_any(aliens & at_cannon, axis=[1, 2])
        # the nearest alien fires: the nearest column with an alien (left first), its lowest
        shoots = alien_shot_timer == 0
        alien_shot_timer = tf.where(shoots, ENEMY_SHOT_INTERVAL, alien_shot_timer)
        xs = tf.range(SIZE)[None, :]
        order = 2 * tf.abs(xs - pos[:, None]) + tf.cast(xs > pos[:, None], tf.int32)
        columns = tf.reduce_any(aliens, axis=1)
        column = tf.argmin(tf.where(columns, order, 100), axis=1, output_type=tf.int32)
        in_column = tf.gather(tf.transpose(aliens, [0, 2, 1]), column, batch_dims=1)  # [N, 10]
        row = tf.reduce_max(tf.where(in_column, tf.range(SIZE)[None, :], -1), axis=1)
        enemy = enemy | cell(row, column, shoots)
        # hits
        kills = aliens & friendly
        reward = tf.cast(tf.reduce_sum(tf.cast(kills, tf.int32), axis=[1, 2]), tf.float64)
        aliens = aliens & ~kills
        friendly = friendly & ~kills
        # timers, and a new block when all are gone
        shot_timer = shot_timer - tf.cast(shot_timer > 0, tf.int32)
        move_timer -= 1
        alien_shot_timer -= 1
        cleared = ~tf.reduce_any(aliens, axis=[1, 2])
        faster = cleared & (move_interval > 6)
        move_interval -= tf.cast(faster, tf.int32)
        ramp += tf.cast(faster, tf.int32)
        aliens = aliens | (cleared[:, None, None] & (tf.constant(_BLOCK) > 0)[None])
        head = [pos, alien_dir, move_interval, move_timer, alien_shot_timer, shot_timer, ramp]
        game = tf.concat([tf.stack(head, axis=1), flat(friendly), flat(enemy), flat(aliens)], 1)
        return game, reward, terminal

    def observe(self, physics: tf.Tensor) -> tf.Tensor:
        game = physics[:, GAME:]
        pos, left = game[:, POS], (game[:, ALIEN_DIR] < 0)[:, None, None]
        aliens = board(game, ALIENS) > 0
        cannon = cell(tf.fill(tf.shape(pos), 9), pos)
        planes = [cannon, aliens, aliens & left, aliens & ~left, board(game, F_BULLETS) > 0,
                  board(game, E_BULLETS) > 0]  # fmt: skip
        return tf.stack(planes, axis=3)
