"""What rlkit's MinAtar games in TensorFlow share (rlkit/envs/tf/minatar_base.py): the random
numbers, autoreset with the sticky action carried over, compiled rollouts, and the ids as
gymnasium envs. Each game's step-for-step test against ``minatar``: test_minatar_<game>.py."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from rlkit.core.errors import UsageError
from rlkit.envs.tf import MINATAR_IDS, make_tf_env
from rlkit.envs.tf.base import EnvState
from rlkit.envs.tf.minatar_base import GAME, LAST_ACTION, TERMINAL, hashed_uniforms, mix32
from tests.unit.envs.test_tf_envs import compiled_rollout


def lowbias32(x: int) -> int:
    """Wellons' lowbias32 in Python integers (the reference for mix32)."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    return x ^ (x >> 16)


def test_mix32_is_lowbias32():
    xs = [0, 1, 2, 12345, 2**31 - 1, 2**31, 2**32 - 1, 0xDEADBEEF]
    got = mix32(tf.constant(xs, tf.int64)).numpy().tolist()
    assert got == [lowbias32(x) for x in xs]
    assert lowbias32(1) == 0x2AF1D6B2 or lowbias32(1) != 0  # (a hash, not the identity)


def test_hashed_uniforms_are_uniform_and_a_pure_function_of_key_and_time():
    n = 20_000
    keys = tf.random.stateless_uniform([n, 2], [1, 2], 0, 2**31 - 1, tf.int32)
    time = tf.random.stateless_uniform([n], [3, 4], 0, 10_000, tf.int32)
    u = hashed_uniforms(keys[:, 0], keys[:, 1], time, 6).numpy()
    again = hashed_uniforms(keys[:, 0], keys[:, 1], time, 6).numpy()
    np.testing.assert_array_equal(u, again)
    assert u.dtype == np.float64 and u.min() >= 0.0 and u.max() < 1.0
    for k in range(6):  # each slot uniform: KS distance to U(0, 1) below 0.015 (p ~ 1e-4)
        s = np.sort(u[:, k])
        assert np.max(np.abs(s - np.arange(1, n + 1) / n)) < 0.015
    assert abs(np.corrcoef(u[:, 0], u[:, 1])[0, 1]) < 0.03  # slots unrelated
    later = hashed_uniforms(keys[:, 0], keys[:, 1], time + 1, 6).numpy()
    assert np.mean(later == u) < 1e-3  # the next step draws afresh
    # one copy's stream over time: uniform too (a copy does not repeat itself)
    one = hashed_uniforms(tf.fill([n], 7), tf.fill([n], 9), tf.range(n), 1).numpy()[:, 0]
    assert np.max(np.abs(np.sort(one) - np.arange(1, n + 1) / n)) < 0.015
    assert len(np.unique(one)) > n - 5


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(MINATAR_IDS))
def test_step_autoresets_ended_copies_keeping_the_sticky_action(env_id):
    env = make_tf_env(env_id)
    n = 8
    state, _ = env.reset(tf.constant([0, 1]), n)
    physics = state.physics.numpy()
    physics[:, LAST_ACTION] = 4
    physics[::2, TERMINAL] = 1  # half the copies already over: they end and restart
    state = EnvState(tf.constant(physics), tf.fill([n], 7))
    actions = tf.fill([n], 1)
    out = env.step(state, actions, tf.constant([5, 6]))
    after, final_obs, reward, terminated, truncated = env.transition(state, actions)
    fresh, fresh_obs = env.reset(tf.constant([5, 6]), n)
    done = terminated.numpy()
    assert done[::2].all() and not truncated.numpy().any()
    got = out.state.physics.numpy()
    np.testing.assert_array_equal(got[::2, 1:], fresh.physics.numpy()[::2, 1:])
    np.testing.assert_array_equal(got[:, LAST_ACTION], after.physics.numpy()[:, LAST_ACTION])
    np.testing.assert_array_equal(got[~done], after.physics.numpy()[~done])
    np.testing.assert_array_equal(out.obs.numpy()[::2], fresh_obs.numpy()[::2])
    np.testing.assert_array_equal(out.final_obs.numpy(), final_obs.numpy())
    np.testing.assert_array_equal(out.state.time.numpy(), np.where(done, 0, 8))
    assert out.obs.dtype == tf.bool and reward.dtype == tf.float64


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(MINATAR_IDS))
def test_compiled_while_loop_is_reproducible_from_its_seed(env_id):
    env = make_tf_env(env_id)
    rollout = compiled_rollout(env, 16, 2600)
    first, again, other = rollout(1), rollout(2 - 1), rollout(2)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[2], other[2]) or first[0] != other[0]
    assert first[1] >= 16  # every copy ended an episode (Freeway: after 2,500 steps)
    assert first[2].dtype == np.bool_ and first[2].shape == (16, *env.obs_shape)


#: Breakout in the quick loop, the other games with the slow tests (compiling each: 5-15 s)
ONE_QUICK = [
    e if e == "rlkit/MinAtar-Breakout-v0" else pytest.param(e, marks=pytest.mark.slow)
    for e in sorted(MINATAR_IDS)
]


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ONE_QUICK)
def test_gym_make_has_minatars_spaces_and_plays(env_id):
    from rlkit.envs.make import make_env

    ours = gym.make(env_id)
    theirs = make_env(make_tf_env(env_id).gym_id)  # minatar's (registered on first use)
    assert ours.observation_space == theirs.observation_space
    assert ours.action_space == theirs.action_space == gym.spaces.Discrete(6)
    obs, _ = ours.reset(seed=0)
    assert ours.observation_space.contains(obs)
    seen = {obs.tobytes()}
    for action in np.random.default_rng(0).integers(0, 6, 50):
        obs, reward, terminated, truncated, _ = ours.step(int(action))
        assert obs.dtype == np.bool_ and isinstance(reward, float) and not truncated
        seen.add(obs.tobytes())
        if terminated:
            ours.reset()
    assert len(seen) > 10  # the game moves


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ONE_QUICK)
def test_gym_env_passes_gymnasiums_checker(env_id):
    from gymnasium.utils.env_checker import check_env

    check_env(gym.make(env_id).unwrapped, skip_render_check=True)


@pytest.mark.slow
def test_gym_env_pickles_mid_episode_and_vector_env_steps_n_copies():
    env = gym.make("rlkit/MinAtar-SpaceInvaders-v0")
    env.reset(seed=3)
    for _ in range(10):
        env.step(5)
    copy = pickle.loads(pickle.dumps(env))
    for action in (0, 5, 1, 3, 5, 2, 2, 4):
        a, b = env.step(action), copy.step(action)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:4] == b[1:4]
    envs = gym.make_vec("rlkit/MinAtar-Breakout-v0", 5, vectorization_mode="vector_entry_point")
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (5, 10, 10, 4) and obs.dtype == np.bool_
    ended = 0
    for _ in range(60):
        obs, reward, terminated, truncated, infos = envs.step(envs.action_space.sample())
        ended += terminated.sum()
        if terminated.any():
            assert infos["final_obs"].shape == (5, 10, 10, 4)
    assert ended >= 1 and reward.dtype == np.float64


@pytest.mark.filterwarnings("ignore:.*render_mode")  # gymnasium warns before the env refuses
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"render_mode": "rgb_array"}, "does not render.*MinAtar/Breakout-v0 --video"),
        ({"difficulty_ramping": False}, "takes no environment arguments"),
        ({"sticky_action_prob": 0.0}, "takes no environment arguments"),
    ],
)
def test_unsupported_options_are_one_line_usage_errors(kwargs, message):
    from rlkit.envs.make import make_env

    with pytest.raises(UsageError, match=message) as caught:
        make_env("rlkit/MinAtar-Breakout-v0", **kwargs)
    assert "\n" not in str(caught.value)


def test_the_compiled_loop_runs_the_value_learners_on_them_and_says_so_for_others():
    from rlkit.agents.dqn.config import DQNConfig
    from rlkit.run.compiled.choice import choose_loop

    assert choose_loop("rlkit/MinAtar-Seaquest-v0", "dqn", DQNConfig())[0] is True
    assert choose_loop("rlkit/MinAtar-Seaquest-v0", "c51", object())[0] is True
    with pytest.raises(UsageError, match="--loop python"):
        choose_loop("rlkit/MinAtar-Breakout-v0", "iqn", object(), loop="compiled")


def test_a_game_physics_row_starts_with_the_shared_columns():
    env = make_tf_env("rlkit/MinAtar-Asterix-v0")
    state, _ = env.reset(tf.constant([0, 0]), 3)
    physics = state.physics.numpy()
    assert physics.dtype == np.int32 and physics.shape == (3, env.physics_dim)
    assert GAME == 4 and (physics[:, LAST_ACTION] == 0).all() and (physics[:, TERMINAL] == 0).all()
    assert len({tuple(k) for k in physics[:, 1:3]}) == 3  # a key of its own per copy
