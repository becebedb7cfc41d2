"""Prioritized replay and n-step returns in the agents (issue 36, items 1 and 2): the
sampler the config asks for, priorities from the learner's TD errors, beta's schedule,
every replay kind, exact resume of the sum tree, and bad settings refused in one line."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit
from rlkit.agents import DDPG, DQN
from rlkit.cli.main import main
from rlkit.core.errors import UsageError
from rlkit.replay.frames import FrameReplay
from rlkit.replay.prioritized import PrioritizedSampler
from rlkit.replay.samplers import UniformSampler

SMALL = dict(hidden_sizes=(8,), jit_compile=False, batch_size=8, learning_starts=0,
             buffer_size=500)  # fmt: skip


def fill(agent, env, steps, seed=0):
    obs, _ = env.reset(seed=seed)
    agent.observe_first(obs)
    for _ in range(steps):
        action = env.action_space.sample()
        obs, reward, terminated, truncated, _ = env.step(action)
        agent.observe(action, reward, obs, terminated, truncated)
        if terminated or truncated:
            obs, _ = env.reset()
            agent.observe_first(obs)


def test_the_config_picks_the_sampler():
    env = gym.make("CartPole-v1")
    assert isinstance(DQN.from_env(env, **SMALL).replay.sampler, UniformSampler)
    agent = DQN.from_env(env, prioritized=True, priority_exponent=0.5, **SMALL)
    assert isinstance(agent.replay.sampler, PrioritizedSampler)
    assert agent.replay.sampler is agent.prioritized
    assert agent.prioritized.priority_exponent == 0.5


@pytest.mark.slow
def test_priorities_are_the_learners_td_errors():
    env = gym.make("CartPole-v1")
    env.action_space.seed(0)
    agent = DQN.from_env(env, seed=0, prioritized=True, priority_exponent=0.5,
                         priority_epsilon=0.01, **SMALL)  # fmt: skip
    fill(agent, env, 40)
    tree = agent.prioritized.tree
    np.testing.assert_array_equal(tree.values()[:40], 1.0)  # new ones: the max recorded (1)
    batch = agent.replay.sample(8, 1)
    single = rlkit.replay.batch.Batch(**{k: (None if v is None else v[0])
                                         for k, v in batch.__dict__.items()})  # fmt: skip
    td = agent.learner.td_errors(single)  # before the update: what the block measures
    agent.learn(batch)
    expected = (np.abs(td.astype(np.float64)) + 0.01) ** 0.5
    last = {int(s): e for s, e in zip(batch.indices[0], expected, strict=True)}  # last wins
    np.testing.assert_allclose(tree.get(np.array(list(last))), list(last.values()), rtol=1e-5)
    # a transition written now gets the largest priority recorded
    fill(agent, env, 1, seed=1)
    newest = (agent.replay._next - 1) % agent.replay.capacity
    tree = agent.prioritized.tree  # (read again: written slots join the tree when it is read)
    assert tree.get(np.array([newest]))[0] == pytest.approx(tree.max_recorded)


@pytest.mark.slow
def test_beta_rises_linearly_to_one_after_learning_starts():
    env = gym.make("CartPole-v1")
    settings = {**SMALL, "learning_starts": 100}
    agent = DQN.from_env(env, prioritized=True, importance_exponent=0.4,
                         importance_anneal_steps=1000, **settings)  # fmt: skip
    # 0.4 until step 100, then + 0.6 * (step - 100) / 1000, 1 from step 1100
    assert agent.importance_exponent(50) == pytest.approx(0.4)
    assert agent.importance_exponent(600) == pytest.approx(0.7)
    assert agent.importance_exponent(5000) == pytest.approx(1.0)
    fixed = DQN.from_env(env, prioritized=True, importance_exponent=0.5, **SMALL)
    assert fixed.importance_exponent(10**6) == 0.5  # Dopamine's fixed beta
    fill(agent, env, 700)
    agent.update()
    assert agent.prioritized.importance_exponent == pytest.approx(0.76)  # at step 700


def test_importance_weights_reach_the_batch():
    env = gym.make("CartPole-v1")
    env.action_space.seed(1)
    agent = DQN.from_env(env, seed=1, prioritized=True, importance_exponent=1.0, **SMALL)
    fill(agent, env, 60)
    agent.prioritized.update_priorities(np.arange(60), np.linspace(0.1, 6.0, 60))
    batch = agent.replay.sample(8, 2)
    probabilities = agent.prioritized.tree.get(batch.indices) / agent.prioritized.tree.total
    expected = 1 / (60 * probabilities)  # beta = 1
    expected /= expected.max(axis=-1, keepdims=True)
    np.testing.assert_allclose(batch.weights, expected, rtol=1e-5)
    assert batch.weights.min() < 0.9


@pytest.mark.slow
def test_exact_resume_keeps_the_tree():
    env = gym.make("CartPole-v1")
    env.action_space.seed(2)
    agent = DQN.from_env(env, seed=2, prioritized=True, **SMALL)
    fill(agent, env, 50)
    agent.learn(agent.replay.sample(8, 2))
    state = agent.replay.state_dict()
    twin = DQN.from_env(env, seed=2, prioritized=True, **SMALL)
    twin.replay.load_state_dict(state)
    np.testing.assert_array_equal(twin.prioritized.tree.values(), agent.prioritized.tree.values())
    assert twin.prioritized.tree.max_recorded == agent.prioritized.tree.max_recorded
    np.testing.assert_array_equal(twin.replay.sample(8, 3).indices,
                                  agent.replay.sample(8, 3).indices)  # fmt: skip


def test_frame_replay_with_priorities_gives_one_draws_weights():
    memory = FrameReplay(40, (2, 2, 4), seed=0, sampler=PrioritizedSampler(40, 1.0, 1.0),
                         n_step=3, gamma=0.9)  # fmt: skip
    rng = np.random.default_rng(0)
    for _ in range(4):
        stack = np.zeros((2, 2, 4), np.uint8)
        stack[..., -1] = rng.integers(1, 255, (2, 2))
        memory.start(0, stack)
        for t in range(15):
            stack = np.concatenate([stack[..., 1:], rng.integers(1, 255, (2, 2, 1))], -1)
            memory.append(0, 0, 1.0, stack.astype(np.uint8), t == 14, False)
    memory.update_priorities(np.arange(40), np.arange(40) % 7 + 0.5)
    batch = memory.sample(16, 4)
    assert batch.obs.shape == (4, 16, 2, 2, 4) and batch.weights.shape == (4, 16)
    np.testing.assert_allclose(batch.weights, memory.sampler.weights(batch.indices, 40))
    assert (batch.weights.max(axis=-1) == 1).all()


@pytest.mark.slow
def test_ddpg_td3_with_priorities_and_n_step_on_two_envs():
    same_step = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
    env = gym.make_vec("Pendulum-v1", 2, vectorization_mode="sync", vector_kwargs=same_step)
    agent = DDPG.from_env(
        env, seed=0, td3=True, prioritized=True, n_step=3, actor_hidden_sizes=(8,),
        critic_hidden_sizes=(8,), jit_compile=False, batch_size=16, learning_starts=100,
        train_freq=50, gradient_steps=10,
    )  # fmt: skip
    rlkit.train(agent, env, steps=400)
    values = agent.prioritized.tree.values()[: len(agent.replay)]
    assert len(np.unique(values)) > 20  # the critic's TD errors came back
    assert agent.replay._gather(np.arange(10)).discount.max() == pytest.approx(0.98**3)


@pytest.mark.parametrize(
    "setting, words",
    [("priority_exponent=-1", "priority_exponent"), ("importance_exponent=1.5", "importance"),
     ("n_step=0", "n_step"), ("priority_epsilon=0", "priority_epsilon")],
)  # fmt: skip
def test_bad_settings_are_one_line_from_python_and_exit_2_from_the_cli(setting, words, tmp_path,
                                                                       capsys):  # fmt: skip
    key, _, value = setting.partition("=")
    with pytest.raises(UsageError, match=words):
        DQN.from_env(gym.make("CartPole-v1"), **{key: value})
    code = main(["train", "dqn", "--steps", "10", "--set", setting, "--out", str(tmp_path)])
    assert code == 2 and not any(tmp_path.iterdir())
    assert words in capsys.readouterr().err.strip().splitlines()[-1]
