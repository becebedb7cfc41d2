"""What MinAtar's five games share, in TensorFlow: sticky actions, the action set, the
10x10xC boolean observation, and the per-copy random numbers.

MinAtar (``minatar.Environment``, as gymnasium's ``MinAtar/<Game>-v0`` ids make it) wraps
each game in the same way, and :class:`MinAtarEnv` does the same for ``N`` copies:

- **the full action set** of six actions, ``0..5`` = no-op, left, up, right, down, fire
  (what the ``-v0`` ids give; ``-v1`` ids use each game's minimal set);
- **sticky actions**: with probability ``0.1`` each step repeats the previous action
  (``last_action``, which MinAtar keeps across episodes: so does :meth:`MinAtarEnv.carry_over`)
  in place of the one chosen; the repeated action becomes the new ``last_action``;
- **no time limit** (``truncated`` is never true) and difficulty ramping on;
- a step from a terminal state changes nothing, gives reward 0 and is terminal again.

State: ``EnvState.physics`` is int32 ``[N, 4 + game_dim]``: columns :data:`LAST_ACTION`,
:data:`KEY0`, :data:`KEY1` (the copy's random key, drawn at reset), :data:`TERMINAL`, then the
game's own integer state (positions, timers, 10x10 maps flattened row-major) from column
:data:`GAME`. ``EnvState.time`` counts the episode's steps.

Random numbers: a step's uniforms (float64 in ``[0, 1)``, one per *draw slot*: slot 0 is
the sticky-action test, the game's own from slot 1) are a counter-based hash of
``(key0, key1, time, slot)`` (:func:`hashed_uniforms`): no random op, no seed argument, so a
step is a pure function of the state, as the one-copy ``transition`` needs. A reset draws
from its stateless seed. :meth:`MinAtarEnv.advance_with` takes the uniforms as an argument:
the step-for-step tests feed it the numbers ``minatar`` itself drew.
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.envs.tf.base import EnvState, TFEnv

STICKY_ACTION_PROB = 0.1
NUM_ACTIONS = 6
#: MinAtar's full action set (``Environment.env.action_map``: n, l, u, r, d, f)
NOOP, LEFT, UP, RIGHT, DOWN, FIRE = range(NUM_ACTIONS)
SIZE = 10  # the board is SIZE x SIZE cells
#: the columns every game's physics starts with
LAST_ACTION, KEY0, KEY1, TERMINAL = range(4)
GAME = 4  # the game's own state starts here

_M32 = 0xFFFFFFFF


def _mul32(x: tf.Tensor, c: int) -> tf.Tensor:
    """``x * c mod 2**32`` for int64 ``x`` in ``[0, 2**32)`` (no int64 overflow: ``c`` is
    split in 16-bit halves)."""
    lo, hi = c & 0xFFFF, c >> 16
    return (x * lo + ((x * hi) & 0xFFFF) * 65536) & _M32


def mix32(x: tf.Tensor) -> tf.Tensor:
    """A 32-bit integer hash (Wellons' ``lowbias32``) of int64 ``x`` in ``[0, 2**32)``."""
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 16))
    x = _mul32(x, 0x7FEB352D)
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 15))
    x = _mul32(x, 0x846CA68B)
    return tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 16))


def hashed_uniforms(key0: tf.Tensor, key1: tf.Tensor, time: tf.Tensor, num: int) -> tf.Tensor:
    """float64 ``[N, num]`` uniforms in ``[0, 1)`` (multiples of ``2**-32``) from the int32
    ``[N]`` keys and step counter: a pure function of its arguments."""
    k0, k1, t = (tf.cast(v, tf.int64) & _M32 for v in (key0, key1, time))
    base = mix32(tf.bitwise.bitwise_xor(mix32(tf.bitwise.bitwise_xor(mix32(k0), k1)), t))
    slots = mix32(tf.range(1, num + 1, dtype=tf.int64) * 0x9E3779B9 & _M32)
    bits = mix32(tf.bitwise.bitwise_xor(mix32(base)[:, None], slots[None, :]))
    return tf.cast(bits, tf.float64) * (1.0 / 2**32)


def choose(u: tf.Tensor, n: int | tf.Tensor) -> tf.Tensor:
    """int32 index in ``[0, n)`` from uniforms ``u``: ``floor(u * n)`` (numpy's ``randint(n)``
    and ``choice`` of ``n`` items, drawn from a uniform); ``n`` an int or int32 like ``u``
    (0 where ``n`` is 0)."""
    n = tf.cast(n, tf.int32)
    index = tf.cast(tf.floor(u * tf.cast(n, tf.float64)), tf.int32)
    return tf.maximum(tf.minimum(index, n - 1), 0)


def cell(y: tf.Tensor, x: tf.Tensor, on: tf.Tensor | None = None) -> tf.Tensor:
    """bool ``[N, 10, 10]``: the one cell ``(y, x)`` (int32 ``[N]``) of each copy set, none where
    ``on`` (bool ``[N]``) is false or the cell is off the board."""
    inside = (y >= 0) & (y < SIZE) & (x >= 0) & (x < SIZE)
    if on is not None:
        inside = inside & on
    index = tf.where(inside, y * SIZE + x, -1)  # one_hot of -1 is all zeros
    return tf.reshape(tf.one_hot(index, SIZE * SIZE, on_value=True, off_value=False), [-1, 10, 10])


def board(physics: tf.Tensor, start: int) -> tf.Tensor:
    """int32 ``[N, 10, 10]``: the map stored row-major in ``physics[:, start:start + 100]``."""
    return tf.reshape(physics[:, start : start + SIZE * SIZE], [-1, SIZE, SIZE])


def flat(grid: tf.Tensor) -> tf.Tensor:
    """int32 ``[N, 100]`` of a ``[N, 10, 10]`` map (bool or int), for the physics."""
    return tf.reshape(tf.cast(grid, tf.int32), [-1, SIZE * SIZE])


class MinAtarEnv(TFEnv):
    """Base of a MinAtar game on ``N`` copies (see the module docstring).

    A game sets ``gym_id``, ``channels`` (observation channels), ``game_dim`` (its columns),
    ``physics_dim = GAME + game_dim``, ``obs_shape = (10, 10, channels)``, ``num_draws``
    (uniforms a step may use) and ``num_reset_draws``, and writes
    :meth:`reset_game`, :meth:`play` and :meth:`observe`.
    """

    discrete_actions = NUM_ACTIONS
    max_episode_steps = 0  # no time limit
    physics_dtype = tf.int32
    obs_dtype = tf.bool
    channels: int = 0
    game_dim: int = 0
    num_draws: int = 0
    num_reset_draws: int = 1

    # --- what a game writes ----------------------------------------------------------------
    def reset_game(self, draws: tf.Tensor) -> tf.Tensor:
        """int32 ``[N, game_dim]``: fresh games from uniforms float64 ``[N, num_reset_draws]``."""
        raise NotImplementedError

    def play(
        self, game: tf.Tensor, actions: tf.Tensor, draws: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """One step of non-terminal games ``[N, game_dim]`` with the actions taken (after the
        sticky test, int32 ``[N]`` in 0..5) and uniforms float64 ``[N, num_draws]``:
        ``(game, reward float64 [N], terminal bool [N])``."""
        raise NotImplementedError

    # --- TFEnv ------------------------------------------------------------------------------
    def initial_physics(self, seed: tf.Tensor, num_envs: int | tf.Tensor) -> tf.Tensor:
        game_seed, key_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
        draws = tf.random.stateless_uniform(
            tf.stack([num_envs, self.num_reset_draws]), game_seed, dtype=tf.float64
        )
        keys = tf.random.stateless_uniform(
            tf.stack([num_envs, 2]), key_seed, minval=0, maxval=2**31 - 1, dtype=tf.int32
        )
        zeros = tf.zeros(tf.stack([num_envs, 1]), tf.int32)
        return tf.concat([zeros, keys, zeros, self.reset_game(draws)], axis=1)

    def advance(
        self, physics: tf.Tensor, actions: tf.Tensor, time: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        draws = hashed_uniforms(physics[:, KEY0], physics[:, KEY1], time, 1 + self.num_draws)
        return self.advance_with(physics, actions, draws)

    def advance_with(
        self, physics: tf.Tensor, actions: tf.Tensor, draws: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """:meth:`advance` with given uniforms float64 ``[N, 1 + num_draws]`` (slot 0: the
        sticky-action test): ``(physics, reward float64 [N], terminated bool [N])``."""
        actions = tf.cast(actions, tf.int32)
        sticky = draws[:, 0] < STICKY_ACTION_PROB
        actions = tf.where(sticky, physics[:, LAST_ACTION], actions)
        was_terminal = physics[:, TERMINAL] > 0
        game, reward, terminal = self.play(physics[:, GAME:], actions, draws[:, 1:])
        game = tf.where(was_terminal[:, None], physics[:, GAME:], game)
        reward = tf.where(was_terminal, tf.zeros_like(reward), reward)
        terminal = terminal | was_terminal
        common = tf.stack(
            [actions, physics[:, KEY0], physics[:, KEY1], tf.cast(terminal, tf.int32)], axis=1
        )
        return tf.concat([common, game], axis=1), reward, terminal

    def transition(
        self, state: EnvState, actions: tf.Tensor
    ) -> tuple[EnvState, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
        """One step without autoreset; never truncated (MinAtar's ``-v0`` ids have no limit)."""
        physics, reward, terminated = self.advance(state.physics, actions, state.time)
        truncated = tf.zeros_like(terminated)
        return (
            EnvState(physics, state.time + 1),
            self.observe(physics),
            reward,
            terminated,
            truncated,
        )

    def carry_over(self, ended: tf.Tensor, fresh: tf.Tensor) -> tf.Tensor:
        """A fresh game keeps the ended one's ``last_action`` (MinAtar's sticky action does)."""
        return tf.concat([ended[:, :1], fresh[:, 1:]], axis=1)
