"""The experience protocol: observe_first / observe per stream, one loop step path.

Replay links a transition to the next one because the protocol says the episode goes on,
not by comparing observations; the six-value ``observe`` of a loop of one's own keeps
working; one environment and a vector env go through the same step.
"""

import gymnasium as gym
import numpy as np
import pytest

from rlkit import ReplayMemory
from rlkit.agents import DQN, Reinforce
from rlkit.envs.make import make_vector_env
from rlkit.replay.frames import FrameReplay
from rlkit.replay.saved import LINKED, STORED
from rlkit.run.loop import Trainer

SMALL = {"hidden_sizes": [16], "buffer_size": 500, "learning_starts": 50, "batch_size": 8}


# -- the replay's streams --------------------------------------------------------------------
def test_append_links_within_an_episode_without_comparing():
    memory = ReplayMemory(10, obs_shape=(2,))
    memory.start(0, [0.0, 0.0])
    # next observations that compare equal to nothing in particular: NaN, -0.0
    memory.append(0, 0, 1.0, [np.nan, -0.0], False, False)
    memory.append(0, 1, 2.0, [3.0, 3.0], True, False)
    memory.start(0, [3.0, 3.0])  # the same bytes as the last next_obs: a new episode all the same
    memory.append(0, 0, 3.0, [4.0, 4.0], False, False)
    np.testing.assert_array_equal(memory.next_kind[:3], [LINKED, STORED, STORED])
    batch = memory.ordered()
    np.testing.assert_array_equal(batch.obs[1], [np.nan, -0.0])
    assert np.signbit(batch.obs[1, 1])  # the stored bits, -0.0 included
    np.testing.assert_array_equal(batch.next_obs[0], batch.obs[1])
    np.testing.assert_array_equal(batch.obs[2], [3.0, 3.0])
    np.testing.assert_array_equal(batch.next_obs[2], [4.0, 4.0])


def test_append_before_start_is_refused_and_changes_nothing():
    memory = ReplayMemory(4, obs_shape=(1,))
    with pytest.raises(ValueError, match="observe_first"):
        memory.append(0, 0, 1.0, [1.0], False, False)
    assert len(memory) == 0
    memory.start(0, [0.0])
    memory.append(0, 0, 1.0, [1.0], True, False)
    with pytest.raises(ValueError, match="stream 0 has no episode in progress"):
        memory.append(0, 0, 1.0, [2.0], False, False)  # the episode ended: start it again
    memory.start(0, [2.0])
    with pytest.raises(ValueError, match="stream 1"):
        memory.append_batch([0, 0], [1.0, 1.0], [[1.0], [1.0]], [False] * 2, [False] * 2)
    assert len(memory) == 1


def test_streams_interleave_and_restart_one_by_one():
    memory = ReplayMemory(20, obs_shape=(1,))
    memory.start_batch([[0.0], [100.0]], [0, 1])
    memory.append_batch([0, 0], [0.0, 0.0], [[1.0], [101.0]], [False, False], [False, False])
    memory.append_batch([0, 0], [0.0, 0.0], [[2.0], [102.0]], [False, True], [False, False])
    memory.start_batch([[200.0]], [1])  # only stream 1 restarts
    memory.append_batch([0, 0], [0.0, 0.0], [[3.0], [201.0]], [False, False], [False, False])
    batch = memory.ordered()
    np.testing.assert_array_equal(batch.obs[:, 0], [0, 100, 1, 101, 2, 200])
    np.testing.assert_array_equal(batch.next_obs[:, 0], [1, 101, 2, 102, 3, 201])
    assert memory.next_kind[3] == STORED  # stream 1's episode ended there


def test_a_streams_current_observation_outlives_the_overwritten_transition():
    memory = ReplayMemory(1, obs_shape=(1,))  # every append overwrites the last transition
    memory.start(0, [0.0])
    for t in range(1, 5):
        memory.append(0, 0, float(t), [float(t)], False, False)
        batch = memory.ordered()
        assert (batch.obs[0, 0], batch.next_obs[0, 0]) == (t - 1, t)


def test_clear_keeps_the_episode_in_progress():
    memory = ReplayMemory(8, obs_shape=(1,))
    memory.start(0, [0.0])
    memory.append(0, 0, 0.0, [1.0], False, False)
    memory.clear()
    memory.append(0, 0, 0.0, [2.0], False, False)
    batch = memory.ordered()
    np.testing.assert_array_equal(batch.obs[:, 0], [1.0])
    np.testing.assert_array_equal(batch.next_obs[:, 0], [2.0])


def test_checkpoint_keeps_started_streams_and_old_states_load():
    memory = ReplayMemory(8, obs_shape=(1,), seed=0)
    memory.start_batch([[0.0], [10.0]], [0, 1])
    memory.append_batch([0, 0], [0.0, 0.0], [[1.0], [11.0]], [False, True], [False, False])
    memory.start(1, [20.0])  # stream 1 began an episode with no transition yet
    state = memory.state_dict()
    again = ReplayMemory(8, obs_shape=(1,), seed=1)
    again.load_state_dict(state)
    for m in (memory, again):
        m.append_batch([0, 0], [0.0, 0.0], [[2.0], [21.0]], [False, False], [False, False])
    np.testing.assert_array_equal(again.ordered().obs, memory.ordered().obs)
    np.testing.assert_array_equal(again.ordered().next_obs, memory.ordered().next_obs)
    np.testing.assert_array_equal(again.ordered().obs[:, 0], [0, 10, 1, 20])
    # a state of the format before observe_first: the ended episode is not in progress
    old = {k: v for k, v in state.items() if k not in ("first_obs", "first_streams")}
    old["open_streams"] = np.array([[0, 0], [1, 1]], np.int64)  # it kept ended ones too
    older = ReplayMemory(8, obs_shape=(1,))
    older.load_state_dict(old)
    assert older.in_progress(0) and not older.in_progress(1)


def test_frame_replay_checks_only_where_an_episode_starts():
    memory = FrameReplay(20, obs_shape=(2, 2, 3))
    frame = lambda v: np.full((2, 2), v, np.uint8)  # noqa: E731
    stack = lambda *vs: np.stack([frame(v) for v in vs], axis=-1)  # noqa: E731
    with pytest.raises(ValueError, match="zero-padded"):
        memory.start(0, stack(1, 2, 3))
    memory.start(0, stack(0, 0, 1))
    memory.append(0, 0, 0.0, stack(0, 1, 2), False, False)
    memory.append(0, 0, 0.0, stack(1, 2, 3), False, False)
    memory.append(0, 0, 0.0, stack(2, 3, 4), True, False)
    batch = memory.ordered()
    np.testing.assert_array_equal(batch.obs[2], stack(1, 2, 3))
    np.testing.assert_array_equal(batch.next_obs[2], stack(2, 3, 4))
    np.testing.assert_array_equal(batch.obs[0], stack(0, 0, 1))


# -- the agents' protocol --------------------------------------------------------------------
def manual_run(agent, env, steps, whole: bool):
    """``steps`` steps of one's own loop: six-value observe (whole) or the protocol."""
    env.action_space.seed(0)
    obs, _ = env.reset(seed=0)
    if not whole:
        agent.observe_first(obs)
    for _ in range(steps):
        action = agent.act(obs)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        if whole:
            agent.observe(obs, action, reward, next_obs, terminated, truncated)
        else:
            agent.observe(action, reward, next_obs, terminated, truncated)
        agent.update()
        obs = next_obs
        if terminated or truncated:
            obs, _ = env.reset()
            if not whole:
                agent.observe_first(obs)


@pytest.mark.slow
def test_six_value_observe_and_the_protocol_and_the_trainer_learn_the_same():
    agents = [DQN.from_env(gym.make("CartPole-v1"), seed=3, **SMALL) for _ in range(3)]
    manual_run(agents[0], gym.make("CartPole-v1"), 300, whole=True)
    manual_run(agents[1], gym.make("CartPole-v1"), 300, whole=False)
    Trainer(agents[2], gym.make("CartPole-v1"), seed=0).run(300)
    first = agents[0]
    for other in agents[1:]:
        for name in ("obs", "actions", "rewards", "next_obs", "terminated", "truncated"):
            np.testing.assert_array_equal(getattr(other.replay, name), getattr(first.replay, name))
        for a, b in zip(other.q.model.weights, first.q.model.weights, strict=True):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    # within an episode every next observation is linked, not kept apart
    ended = first.replay.terminated[:300] | first.replay.truncated[:300]
    assert (agents[1].replay.next_kind[:299][~ended[:299]] == LINKED).all()


@pytest.mark.slow
def test_a_vector_env_links_each_stream_and_restarts_the_ended_ones():
    env = make_vector_env("CartPole-v1", 3)
    agent = DQN.from_env(env, seed=0, **SMALL)
    Trainer(agent, env, seed=0).run(600)
    batch = agent.replay.ordered()  # row 3t + j: stream j's step t
    ended = batch.terminated | batch.truncated
    follows = ~ended[:-3]
    np.testing.assert_array_equal(batch.next_obs[:-3][follows], batch.obs[3:][follows])
    assert ended.sum() > 3  # episodes did end (and restart) along the way
    restarted = np.flatnonzero(ended[:-3]) + 3
    assert np.abs(batch.obs[restarted]).max() <= 0.05  # CartPole's reset states


def test_observe_needs_observe_first_and_five_or_six_values():
    env = gym.make("CartPole-v1")
    agent = DQN.from_env(env, **SMALL)
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="observe_first"):
        agent.observe(0, 1.0, obs, False, False)
    with pytest.raises(TypeError, match="got 4 values"):
        agent.observe(0, 1.0, obs, False)
    assert agent.num_steps == 0


def test_a_second_run_on_the_same_agent_starts_new_episodes():
    agent = DQN.from_env(gym.make("CartPole-v1"), **SMALL)
    Trainer(agent, gym.make("CartPole-v1"), seed=0).run(35)
    assert agent.replay.in_progress(0) and not agent.replay.terminated[34]  # mid-episode
    Trainer(agent, gym.make("CartPole-v1"), seed=7).run(80)  # a new env
    start, _ = gym.make("CartPole-v1").reset(seed=7)
    np.testing.assert_array_equal(agent.replay.obs[35], start)
    assert agent.replay.next_kind[34] == STORED  # the first run's last step is not linked on
    assert agent.replay.truncated[34]  # and its episode was cut there (a return ends there)


@pytest.mark.slow
def test_reinforce_goes_on_after_a_full_memory_emptied_mid_episode():
    env = gym.make("CartPole-v1")
    agent = Reinforce.from_env(env, seed=0, buffer_size=8)
    obs, _ = env.reset(seed=1)
    agent.observe_first(obs)
    seen = [obs]
    for _ in range(12):  # the memory fills at 8 and the update empties it, mid-episode
        obs, reward, terminated, truncated, _ = env.step(agent.act(obs))
        agent.observe(0, reward, obs, terminated, truncated)
        seen.append(obs)
        agent.update()
        assert not (terminated or truncated)
    batch = agent.memory.ordered()
    np.testing.assert_array_equal(batch.obs, np.array(seen[8:12], np.float32))
    np.testing.assert_array_equal(batch.next_obs, np.array(seen[9:13], np.float32))


def test_frame_replay_after_clear_rebuilds_the_stacks_it_is_given():
    memory = FrameReplay(4, obs_shape=(1, 1, 2))
    stack = lambda a, b: np.array([[[a, b]]], np.uint8)  # noqa: E731
    memory.start(0, stack(0, 1))
    memory.append(0, 0, 0.0, stack(1, 2), True, False)
    memory.clear()
    memory.start(0, stack(0, 5))
    memory.append(0, 0, 0.0, stack(5, 6), False, False)
    memory.append(0, 0, 0.0, stack(6, 7), False, False)
    batch = memory.ordered()
    np.testing.assert_array_equal(batch.obs, [stack(0, 5), stack(5, 6)])
    np.testing.assert_array_equal(batch.next_obs, [stack(5, 6), stack(6, 7)])


def test_frame_replay_too_small_for_its_stacks_says_so_instead_of_hanging():
    memory = FrameReplay(2, obs_shape=(1, 1, 4))
    memory.start(0, np.array([[[0, 0, 0, 1]]], np.uint8))
    for t in range(2, 6):
        frames = np.clip([t - 3, t - 2, t - 1, t], 0, None).astype(np.uint8)
        memory.append(0, 0, 0.0, frames.reshape(1, 1, 4), False, False)
    with pytest.raises(ValueError, match="whole stack of 4 frames"):
        memory.sample(1)


def test_a_vector_env_may_give_python_lists():
    env = make_vector_env("CartPole-v1", 2)
    agent = DQN.from_env(env, **SMALL)
    obs, _ = env.reset(seed=0)
    agent.observe_first(obs)
    next_obs, *_ = env.step(np.array([0, 1]))
    agent.observe([0, 1], [1.0, 1.0], next_obs, [False, False], [False, False])
    assert agent.num_steps == 2 and len(agent.replay) == 2


@pytest.mark.slow
def test_an_agent_of_one_environment_refuses_a_batch():
    from rlkit.core.errors import UsageError

    agent = Reinforce.from_env(gym.make("CartPole-v1"))
    batch = np.zeros((2, 4), np.float32)
    with pytest.raises(UsageError, match="one environment at a time"):
        agent.observe_first(batch)
    agent.observe_first(batch[0])
    with pytest.raises(UsageError, match="one environment at a time"):
        agent.observe([0, 1], np.ones(2), batch, np.zeros(2, bool), np.zeros(2, bool))
    assert agent.num_steps == 0


@pytest.mark.slow
def test_ddpg_acts_on_loaded_weights_after_a_block_run_by_hand():
    from rlkit.agents import DDPG

    env = gym.make("Pendulum-v1")
    agent = DDPG.from_env(env, seed=0, buffer_size=200, learning_starts=0, batch_size=8,
                          actor_hidden_sizes=[8], critic_hidden_sizes=[8])  # fmt: skip
    manual_run(agent, env, 20, whole=False)
    agent.learn(agent.replay.sample(8, 1))  # by hand: the block's weights wait for acting
    for variable in agent.actor.variables:
        variable.assign(np.zeros(variable.shape, np.float32))
    agent.after_restore()  # (what a load does after writing the weights)
    obs, _ = env.reset(seed=1)
    np.testing.assert_array_equal(agent.act(obs, explore=False), np.zeros(1, np.float32))


def test_ddpg_noise_starts_afresh_when_a_new_run_cuts_an_episode():
    from rlkit.agents import DDPG

    small = {"buffer_size": 500, "actor_hidden_sizes": [8], "critic_hidden_sizes": [8]}
    agent = DDPG.from_env(gym.make("Pendulum-v1"), seed=0, noise="ou", learning_starts=0, **small)
    Trainer(agent, gym.make("Pendulum-v1"), seed=0).run(30)  # mid-episode (200 steps each)
    assert np.abs(agent.acting.noise.state).max() > 0
    agent.observe_first(gym.make("Pendulum-v1").reset(seed=1)[0])
    np.testing.assert_array_equal(agent.acting.noise.state, 0.0)
