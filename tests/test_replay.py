import gymnasium as gym
import numpy as np
import pytest

from rlkit import ReplayMemory


def fill(memory, n, start=0):
    for i in range(start, start + n):
        memory.add([i, -i], i % 2, float(i), [i + 1, -i - 1], i % 3 == 0, i % 5 == 0)


def test_sized_from_spaces_with_their_dtypes():
    env = gym.make("CartPole-v1")
    memory = ReplayMemory.from_spaces(10, env.observation_space, env.action_space)
    assert memory.obs.shape == (10, 4) and memory.obs.dtype == np.float32
    assert memory.next_obs.shape == (10, 4)
    assert memory.actions.shape == (10,) and memory.actions.dtype == np.int64
    assert memory.rewards.dtype == np.float32
    assert memory.terminated.dtype == bool and memory.truncated.dtype == bool
    box = gym.spaces.Box(-1, 1, (3,), np.float32)
    memory = ReplayMemory.from_spaces(5, env.observation_space, box)
    assert memory.actions.shape == (5, 3) and memory.actions.dtype == np.float32


def test_capacity_and_wrap_around_overwrite_oldest():
    memory = ReplayMemory(4, obs_shape=(2,))
    fill(memory, 3)
    assert len(memory) == 3
    fill(memory, 3, start=3)  # transitions 0..5 into 4 slots
    assert len(memory) == 4
    assert sorted(memory.rewards.tolist()) == [2.0, 3.0, 4.0, 5.0]
    ordered = memory.ordered()
    np.testing.assert_array_equal(ordered.rewards, [2, 3, 4, 5])
    np.testing.assert_array_equal(ordered.obs[:, 0], [2, 3, 4, 5])
    np.testing.assert_array_equal(ordered.next_obs[:, 0], [3, 4, 5, 6])


def test_add_batch_wraps_like_add():
    one, many = ReplayMemory(5, obs_shape=(2,)), ReplayMemory(5, obs_shape=(2,))
    fill(one, 7)
    i = np.arange(7)
    obs = np.stack([i, -i], axis=1)
    many.add_batch(obs[:4], i[:4] % 2, i[:4], obs[:4] + [1, -1], i[:4] % 3 == 0, i[:4] % 5 == 0)
    many.add_batch(obs[4:], i[4:] % 2, i[4:], obs[4:] + [1, -1], i[4:] % 3 == 0, i[4:] % 5 == 0)
    for name in ("obs", "actions", "rewards", "next_obs", "terminated", "truncated"):
        np.testing.assert_array_equal(getattr(one, name), getattr(many, name))


def test_terminated_and_truncated_kept_apart():
    memory = ReplayMemory(3, obs_shape=(1,))
    memory.add([0], 0, 1.0, [1], True, False)
    memory.add([1], 1, 1.0, [2], False, True)
    memory.add([2], 0, 1.0, [3], False, False)
    batch = memory.ordered()
    np.testing.assert_array_equal(batch.terminated, [True, False, False])
    np.testing.assert_array_equal(batch.truncated, [False, True, False])


def test_seeded_sampling_is_reproducible_and_uniform_over_held():
    a, b = ReplayMemory(100, obs_shape=(2,), seed=7), ReplayMemory(100, obs_shape=(2,), seed=7)
    fill(a, 30)
    fill(b, 30)
    x, y = a.sample(16, num_batches=3), b.sample(16, num_batches=3)
    assert x.obs.shape == (3, 16, 2) and x.rewards.shape == (3, 16)
    np.testing.assert_array_equal(x.rewards, y.rewards)
    # only the 30 written slots are ever drawn, and a sample keeps rows together
    assert x.rewards.max() < 30
    np.testing.assert_array_equal(x.obs[..., 0], x.rewards)
    np.testing.assert_array_equal(x.next_obs[..., 0], x.rewards + 1)
    c = ReplayMemory(100, obs_shape=(2,), seed=8)
    fill(c, 30)
    assert not np.array_equal(c.sample(16).rewards, a.sample(16).rewards)


def test_sample_larger_than_held_is_a_clear_error():
    memory = ReplayMemory(100, obs_shape=(2,))
    fill(memory, 5)
    with pytest.raises(ValueError, match="holds 5"):
        memory.sample(6)


def test_clear_and_state_round_trip():
    memory = ReplayMemory(4, obs_shape=(2,), seed=1)
    fill(memory, 6)
    state = {k: np.copy(v) for k, v in memory.state_dict().items()}
    expected = memory.sample(3).rewards
    other = ReplayMemory(4, obs_shape=(2,), seed=99)
    other.load_state_dict(state)
    np.testing.assert_array_equal(other.sample(3).rewards, expected)
    memory.clear()
    assert len(memory) == 0


def test_one_million_cartpole_transitions_fit_in_100_mb():
    memory = ReplayMemory(1_000_000, obs_shape=(4,))
    assert memory.nbytes < 100 * 2**20
