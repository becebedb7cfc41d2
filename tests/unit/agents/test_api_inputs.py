"""Bad input to the Python API is one line (UsageError), found by labs/bad_inputs.py (issue 40,
item 11): an observation that does not fit the agent, a replay of no capacity."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit
from rlkit.core.errors import UsageError


@pytest.mark.slow
@pytest.mark.parametrize("agent_class", ["DQN", "Reinforce"])
def test_act_on_an_observation_of_another_shape_is_one_line(agent_class):
    env = gym.make("CartPole-v1")
    agent = getattr(rlkit.agents, agent_class).from_env(env, hidden_sizes=(8,))
    with pytest.raises(UsageError, match=r"shape \(7,\) .* expected shape \(4,\) or a batch"):
        agent.act(np.zeros(7))
    with pytest.raises(UsageError, match=r"shape \(2, 3\)"):
        agent.act(np.zeros((2, 3)))
    assert np.shape(agent.act(np.zeros((3, 4), np.float32))) == (3,)  # a batch still works


def test_ddpg_act_on_another_shape_is_one_line():
    agent = rlkit.agents.DDPG.from_env(gym.make("Pendulum-v1"), actor_hidden_sizes=(8,),
                                       critic_hidden_sizes=(8,))  # fmt: skip
    with pytest.raises(UsageError, match=r"expected shape \(3,\)"):
        agent.act(np.zeros(5))


@pytest.mark.parametrize("capacity", [0, -3, 2**31])
def test_a_replay_of_no_or_too_much_capacity_is_one_line(capacity):
    with pytest.raises(UsageError, match="capacity must lie in"):
        rlkit.ReplayMemory(capacity, (4,))


def test_load_with_another_network_says_the_network_does_not_fit(tmp_path):
    import keras

    def small(observation_space, action_space):
        inputs = keras.Input(observation_space.shape)
        hidden = keras.layers.Dense(8, activation="relu")(inputs)
        return keras.Model(inputs, keras.layers.Dense(int(action_space.n))(hidden))

    def wide(observation_space, action_space):
        inputs = keras.Input(observation_space.shape)
        hidden = keras.layers.Dense(32, activation="relu")(inputs)
        return keras.Model(inputs, keras.layers.Dense(int(action_space.n))(hidden))

    agent = rlkit.agents.DQN.from_env(gym.make("CartPole-v1"), q_network=small)
    agent.save(tmp_path / "a")
    with pytest.raises(UsageError, match=r"the network given \(q_network=\) does not fit"):
        rlkit.load(tmp_path / "a", q_network=wide)
    assert rlkit.load(tmp_path / "a", q_network=small).config.q_network == "<python object>"


@pytest.mark.parametrize("agent_class, key", [("DQN", "q_network"), ("DDPG", "actor")])
def test_a_plain_keras_network_of_ones_own_loads_by_itself(agent_class, key, tmp_path):
    import keras

    env = gym.make("CartPole-v1" if agent_class == "DQN" else "Pendulum-v1")
    width = 2 if agent_class == "DQN" else 1

    def build(observation_space, action_space):
        inputs = keras.Input(observation_space.shape)
        hidden = keras.layers.Dense(8, activation="relu")(inputs)
        return keras.Model(inputs, keras.layers.Dense(width)(hidden))

    agent = getattr(rlkit.agents, agent_class).from_env(env, seed=1, **{key: build})
    rlkit.train(agent, env, steps=50)
    agent.save(tmp_path / "a")
    assert (tmp_path / "a" / f"{key}.keras").is_file()
    loaded = rlkit.load(tmp_path / "a")  # no builder given
    probe = np.random.default_rng(0).normal(size=(4, *env.observation_space.shape))
    probe = probe.astype(np.float32)
    np.testing.assert_allclose(loaded.act(probe, explore=False), agent.act(probe, explore=False),
                               rtol=1e-5)  # fmt: skip
