"""Helpers of the step-for-step tests of rlkit's MinAtar games against ``minatar`` itself.

:func:`minatar_trace` plays random-action transitions of ``minatar``'s own gymnasium env
(``MinAtar/<Game>-v0``, as rlkit makes it), records the exact state each one starts from
(copied into rlkit's physics layout by the game's ``to_physics``), every random number
``minatar`` draws during the step (its ``np.random.RandomState`` wrapped by
:class:`RecordingRandom`, turned into rlkit's draw slots by the game's ``draws_of``) and what
the step returned. :func:`replay` steps all the recorded states at once through
``MinAtarEnv.advance_with`` fed those draws.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import tensorflow as tf

from rlkit.envs.tf.minatar_base import GAME, MinAtarEnv


class RecordingRandom:
    """A ``np.random.RandomState`` that records each call as ``(method, args, result)``."""

    def __init__(self, random: np.random.RandomState) -> None:
        self.random = random
        self.calls: list[tuple[str, tuple, Any]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.random, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            out = method(*args, **kwargs)
            self.calls.append((name, args, np.copy(out)))  # (minatar changes arrays in place)
            return out

        return call


def index_draw(value: int, n: int) -> float:
    """The uniform in rlkit's draw slot that gives index ``value`` of ``n`` (the middle of its
    interval: :func:`rlkit.envs.tf.minatar_base.choose` maps it back)."""
    return (value + 0.5) / n


def make_minatar(gym_id: str, seed: int) -> tuple[gym.Env, RecordingRandom]:
    """``minatar``'s env for ``gym_id``, reset with ``seed``, its random numbers recorded."""
    from rlkit.envs.make import make_env

    env = make_env(gym_id, disable_env_checker=True)
    env.reset(seed=seed)
    game = env.unwrapped.game
    recorder = RecordingRandom(game.random)
    game.random = game.env.random = recorder
    return env, recorder


def minatar_trace(
    tf_env: MinAtarEnv,
    n: int,
    to_physics: Callable[[Any], list[int]],
    draws_of: Callable[[list[tuple[str, tuple, Any]]], list[float]],
    perturb: Callable[[Any, np.random.Generator], None] | None = None,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """``n`` transitions of ``minatar``'s ``tf_env.gym_id``: physics int32 ``[n, K]`` (keys 0),
    action, draws float64 ``[n, 1 + num_draws]``, obs bool, reward, terminal, and the game
    columns after the step. ``to_physics(game)``: the game columns of ``minatar``'s game
    object; ``draws_of(calls)``: the game's draw slots from the calls of one step (the sticky
    test excluded); ``perturb(game, rng)``: moves the game to a rarer state, now and then."""
    env, recorder = make_minatar(tf_env.gym_id, seed)
    outer, game = env.unwrapped.game, env.unwrapped.game.env
    rng = np.random.default_rng(seed)
    rec: dict[str, list] = {k: [] for k in ("physics", "action", "draws", "obs", "reward",
                                            "terminal", "after")}  # fmt: skip
    for _ in range(n):
        if perturb is not None:
            perturb(game, rng)
        action = int(rng.integers(6))
        physics = [outer.last_action, 0, 0, int(game.terminal), *to_physics(game)]
        recorder.calls.clear()
        obs, reward, terminal, truncated, _ = env.step(action)
        assert not truncated
        (name, _, sticky), *calls = recorder.calls
        assert name == "rand"
        draws = [sticky, *draws_of(calls)]
        assert len(draws) == 1 + tf_env.num_draws
        values = (physics, action, draws, obs, reward, terminal, to_physics(game))
        for key, value in zip(rec, values, strict=True):
            rec[key].append(value)
        if terminal:
            env.reset()
    out = {k: np.array(v) for k, v in rec.items()}
    out["physics"] = out["physics"].astype(np.int32)
    return out


def replay(
    tf_env: MinAtarEnv, trace: dict[str, np.ndarray], compiled: bool
) -> dict[str, np.ndarray]:
    """All the trace's transitions at once through ``advance_with`` (fed the recorded draws),
    XLA-compiled or eager (no compile time: the quick tests): ``obs``, ``reward``,
    ``terminal`` and the game columns ``after``."""
    advance, observe = tf_env.advance_with, tf_env.observe
    if compiled:
        advance = tf.function(advance, jit_compile=True)
        observe = tf.function(observe, jit_compile=True)
    physics, reward, terminal = advance(
        tf.constant(trace["physics"]), tf.constant(trace["action"], tf.int32),
        tf.constant(trace["draws"], tf.float64),
    )  # fmt: skip
    obs = observe(physics)
    return {
        "obs": obs.numpy(),
        "reward": reward.numpy(),
        "terminal": terminal.numpy(),
        "after": physics.numpy()[:, GAME:],
    }


def assert_replays(
    tf_env: MinAtarEnv, trace: dict[str, np.ndarray], compiled: bool = True
) -> dict[str, np.ndarray]:
    """rlkit's step equals ``minatar``'s on every transition of ``trace``: the observation,
    reward and terminal flag, and every game column after the step (hidden timers too)."""
    ours = replay(tf_env, trace, compiled)
    assert ours["obs"].dtype == trace["obs"].dtype == np.bool_
    np.testing.assert_array_equal(ours["terminal"], trace["terminal"])
    np.testing.assert_array_equal(ours["reward"], trace["reward"].astype(np.float64))
    np.testing.assert_array_equal(ours["after"], trace["after"])
    np.testing.assert_array_equal(ours["obs"], trace["obs"])
    return ours


def minatar_resets(gym_id: str, n: int) -> tuple[list[Any], np.ndarray]:
    """``n`` of ``minatar``'s reset games (deep copies, seeds 0..n-1) and their observations."""
    import copy

    from rlkit.envs.make import make_env

    env = make_env(gym_id, disable_env_checker=True)
    games, observations = [], []
    for seed in range(n):
        obs, _ = env.reset(seed=seed)
        games.append(copy.deepcopy(env.unwrapped.game.env))
        observations.append(obs)
    return games, np.array(observations)


def assert_fixed_reset(game: str, to_physics: Callable[[Any], np.ndarray], channels: int) -> None:
    """A game whose reset draws nothing (``game``: ``"Asterix"`` …): 8 copies reset by
    rlkit's env hold minatar's reset game (``to_physics``: minatar's game -> the physics'
    game columns) and show its observation ``[10, 10, channels]``."""
    from rlkit.envs.tf import make_tf_env

    env = make_tf_env(f"rlkit/MinAtar-{game}-v0")
    state, obs = env.reset(tf.constant([3, 4]), 8)
    games, theirs = minatar_resets(f"MinAtar/{game}-v0", 2)
    for row in state.physics.numpy()[:, GAME:]:
        np.testing.assert_array_equal(row, to_physics(games[0]))
    for o in obs.numpy():
        np.testing.assert_array_equal(o, theirs[0])
    assert obs.shape == (8, 10, 10, channels)
