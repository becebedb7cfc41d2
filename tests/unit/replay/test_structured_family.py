"""Prioritized replay and n-step returns with Dict and Tuple observations (issue 36, item 1:
"it works with every replay rlkit has"): the n-step walk returns each part of the
observation reached, priorities come back by slot, draws follow them, and a DQN with both
learns on a Dict environment and resumes its tree exactly."""

from __future__ import annotations

import gymnasium as gym
import keras
import numpy as np
import pytest

import rlkit
from rlkit.replay.prioritized import PrioritizedSampler
from rlkit.replay.structured import StructuredReplay

DICT_SHAPES = {"t": (1,), "image": (2, 2)}
DICT_DTYPES = {"t": np.float32, "image": np.uint8}


def dict_obs(t: int) -> dict:
    """An observation that says its step in both parts (float and uint8)."""
    return {"t": np.array([t], np.float32), "image": np.full((2, 2), t, np.uint8)}


def test_n_step_walk_returns_every_part_of_the_observation_reached():
    memory = StructuredReplay(16, DICT_SHAPES, DICT_DTYPES, n_step=3, gamma=0.5)
    memory.start(0, dict_obs(0))
    for t in range(1, 5):  # rewards 1..4; the episode terminates at its fourth step
        memory.append(0, 0, float(t), dict_obs(t), t == 4, False)
        if t == 4:
            memory.start(0, dict_obs(10))
    memory.append(0, 1, 7.0, dict_obs(11), False, True)  # truncated after one step
    b = memory._gather(np.arange(5))
    # from s0: 1 + .5*2 + .25*3 = 2.75, bootstraps from s3 with .125
    # from s1: 2 + 1.5 + 1 = 4.5 ends at the termination (s4): no bootstrap
    # s2: 3 + 2 = 5, terminated; s3: 4, terminated; s10: 7, truncated: bootstrap .5
    np.testing.assert_allclose(b.rewards, [2.75, 4.5, 5, 4, 7])
    np.testing.assert_allclose(b.discount, [0.125, 0, 0, 0, 0.5])
    np.testing.assert_array_equal(b.next_obs["t"][:, 0], [3, 4, 4, 4, 11])
    np.testing.assert_array_equal(b.next_obs["image"][:, 0, 0], [3, 4, 4, 4, 11])
    np.testing.assert_array_equal(b.obs["image"][:, 1, 1], [0, 1, 2, 3, 10])
    assert b.next_obs["image"].dtype == np.uint8 and b.obs["t"].dtype == np.float32


def test_prioritized_draws_of_a_tuple_replay_follow_the_priorities_given_back():
    sampler = PrioritizedSampler(64, priority_exponent=1.0, importance_exponent=1.0)
    memory = StructuredReplay(64, ((1,), (3,)), (np.float32, np.int64), seed=0, sampler=sampler)
    memory.start(0, (np.zeros(1, np.float32), np.zeros(3, np.int64)))
    for t in range(1, 9):
        memory.append(0, 0, 0.0, (np.full(1, t, np.float32), np.full(3, t, np.int64)),
                      False, False)  # fmt: skip
    # slot i's TD error |delta| = i + 1: P(i) = (i + 1) / 36 (alpha 1, epsilon 1e-10)
    memory.update_priorities(np.arange(8), np.arange(1.0, 9.0))
    batch = memory.sample(8, 4000)
    assert isinstance(batch.obs, tuple) and batch.obs[1].shape == (4000, 8, 3)
    np.testing.assert_array_equal(batch.obs[0][..., 0], batch.indices)  # slot i holds obs i
    np.testing.assert_array_equal(batch.next_obs[1][..., 0], batch.indices + 1)
    counts = np.bincount(batch.indices.ravel(), minlength=8) / batch.indices.size
    expected = np.arange(1.0, 9.0) / 36.0
    np.testing.assert_allclose(counts, expected, atol=0.006)  # 32,000 draws: ~5 sigma
    # weights (N P)^-1 over each minibatch's largest (beta 1)
    weights = (8 * expected[batch.indices]) ** -1.0
    np.testing.assert_allclose(batch.weights, weights / weights.max(-1, keepdims=True),
                               rtol=1e-6)  # fmt: skip


class Corridor(gym.Env):
    """Walk right along 6 cells to reward 1; a Dict observation (position, uint8 picture)."""

    action_space = gym.spaces.Discrete(2)
    observation_space = gym.spaces.Dict({
        "position": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
        "picture": gym.spaces.Box(0, 255, (6,), np.uint8),
    })  # fmt: skip

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.cell = 0
        return self._obs(), {}

    def step(self, action):
        self.cell = min(5, max(0, self.cell + (1 if action == 1 else -1)))
        done = self.cell == 5
        return self._obs(), float(done), done, False, {}

    def _obs(self):
        picture = np.zeros(6, np.uint8)
        picture[self.cell] = 255
        return {"position": np.array([self.cell / 5], np.float32), "picture": picture}


def corridor_network(observation_space, action_space):
    inputs = {key: keras.Input(space.shape, dtype=space.dtype, name=key)
              for key, space in observation_space.spaces.items()}  # fmt: skip
    picture = keras.ops.cast(inputs["picture"], "float32") / 255.0
    x = keras.layers.Concatenate()([inputs["position"], picture])
    x = keras.layers.Dense(16, activation="relu")(x)
    return keras.Model(inputs, keras.layers.Dense(int(action_space.n))(x))


@pytest.mark.slow
def test_dqn_with_priorities_and_n_step_learns_on_a_dict_env_and_resumes_its_tree():
    settings = dict(q_network=corridor_network, prioritized=True, n_step=3, buffer_size=200,
                    learning_starts=32, train_freq=8, batch_size=16, jit_compile=False,
                    eps_anneal_steps=100)  # fmt: skip
    env = gym.wrappers.TimeLimit(Corridor(), 40)
    agent = rlkit.agents.DQN.from_env(env, seed=3, **settings)
    assert isinstance(agent.replay, StructuredReplay)
    assert agent.replay.sampler is agent.prioritized
    rlkit.train(agent, env, steps=120)
    assert agent.num_updates > 0
    values = agent.prioritized.tree.values()[: len(agent.replay)]
    assert len(np.unique(values)) > 10  # the learner's TD errors came back as priorities
    # a resumed agent draws exactly what the first draws next
    twin = rlkit.agents.DQN.from_env(env, seed=3, **settings)
    twin.replay.load_state_dict(agent.replay.state_dict())  # what a checkpoint keeps
    first, second = agent.replay.sample(16, 2), twin.replay.sample(16, 2)
    np.testing.assert_array_equal(first.indices, second.indices)
    np.testing.assert_array_equal(first.weights, second.weights)
    np.testing.assert_array_equal(first.next_obs["picture"], second.next_obs["picture"])
    np.testing.assert_array_equal(first.rewards, second.rewards)
