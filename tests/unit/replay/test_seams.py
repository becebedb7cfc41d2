"""The seams for the DQN family (issue 35): the loss protocol, samplers apart from storage,
n-step returns along the replay's links, priorities back to the sampler, the replay's own
checkpoint state and its one migration, gymnasium's vector autoreset modes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents import DDPG, DQN
from rlkit.core.errors import UsageError
from rlkit.learn import value_losses
from rlkit.learn.value_losses import DQN3Loss, HuberLoss, LossOutput, SquaredLoss
from rlkit.replay import saved
from rlkit.replay.batch import Batch
from rlkit.replay.frames import FrameReplay
from rlkit.replay.memory import ReplayMemory
from rlkit.replay.samplers import UniformSampler

OBS = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
SMALL = dict(hidden_sizes=(8, 8), jit_compile=False, batch_size=4, learning_starts=0)

# -- the loss protocol ---------------------------------------------------------------------
Q = tf.constant([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
ACTIONS = tf.constant([1, 0, 0])
REWARDS = tf.constant([1.0, -2.0, 0.5])
PCONT = tf.constant([0.81, 0.0, 0.9])  # gamma^2 (a 2-step return), terminated, gamma
NEXT_Q = tf.constant([[2.0, 4.0], [7.0, 7.0], [-1.0, -3.0]])
# delta = r + pcont * max Q'(s2) - Q(s, a): 1 + 0.81*4 - 2 = 2.24, -2 + 0 - 0.5 = -2.5,
# 0.5 + 0.9*(-1) - 3 = -3.4
DELTA = [2.24, -2.5, -3.4]


def test_squared_huber_and_dqn3_losses_by_hand():
    squared = SquaredLoss()(Q, ACTIONS, REWARDS, PCONT, NEXT_Q, None)
    np.testing.assert_allclose(squared.td_error.numpy(), DELTA, rtol=1e-6)
    np.testing.assert_allclose(squared.loss.numpy(), [0.5 * 2.24**2, 3.125, 5.78], rtol=1e-6)
    np.testing.assert_allclose(squared.value.numpy(), [2.0, 0.5, 3.0])
    assert squared.output_gradient is None
    huber = HuberLoss(1.0)(Q, ACTIONS, REWARDS, PCONT, NEXT_Q, None)
    # |x| - 0.5 beyond the threshold 1
    np.testing.assert_allclose(huber.loss.numpy(), [1.74, 2.0, 2.9], rtol=1e-6)
    dqn3 = DQN3Loss(1.0)(Q, ACTIONS, REWARDS, PCONT, NEXT_Q, None)
    np.testing.assert_allclose(dqn3.loss.numpy(), huber.loss.numpy())
    # -clip(delta) at the taken action only
    np.testing.assert_allclose(dqn3.output_gradient.numpy(), [[0, -1], [1, 0], [1, 0]])
    unclipped = DQN3Loss(0.0)(Q, ACTIONS, REWARDS, PCONT, NEXT_Q, None)
    np.testing.assert_allclose(unclipped.output_gradient.numpy(), [[0, -2.24], [2.5, 0], [3.4, 0]],
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(unclipped.loss.numpy(), squared.loss.numpy())


def test_double_dqn_bootstrap_through_the_protocol():
    online = tf.constant([[9.0, 0.0], [0.0, 9.0], [0.0, 9.0]])  # picks 0, 1, 1
    out = SquaredLoss()(Q, ACTIONS, REWARDS, PCONT, NEXT_Q, online)
    # 1 + 0.81*2 - 2 = 0.62, -2.5, 0.5 + 0.9*(-3) - 3 = -5.2
    np.testing.assert_allclose(out.td_error.numpy(), [0.62, -2.5, -5.2], rtol=1e-6)


def test_config_names_pick_the_losses():
    assert value_losses.loss_from_config("dqn3", 1.0) == DQN3Loss(1.0)
    assert value_losses.loss_from_config("huber", 2.0) == HuberLoss(2.0)
    assert value_losses.loss_from_config("huber", 0.0) == SquaredLoss()
    assert value_losses.loss_from_config("mse", 1.0) == SquaredLoss()


def batch_of(n=4, dim=3, seed=0):
    rng = np.random.default_rng(seed)
    return Batch(
        rng.normal(size=(n, dim)).astype(np.float32), rng.integers(0, 2, n),
        rng.normal(size=n).astype(np.float32), rng.normal(size=(n, dim)).astype(np.float32),
        np.array([0, 1, 0, 0], bool), np.zeros(n, bool),
    )  # fmt: skip


def test_a_loss_of_ones_own_runs_in_the_learner_and_is_refused_unless_given_again(tmp_path):
    calls = []

    def double_dqn_squared(q, actions, rewards, pcont, next_q_target, next_q_online):
        calls.append(next_q_online is not None)
        best = tf.argmax(next_q_online, axis=-1, output_type=tf.int32)
        target = rewards + pcont * tf.gather(next_q_target, best, axis=1, batch_dims=1)
        q_taken = tf.gather(q, actions, axis=1, batch_dims=1)
        delta = tf.stop_gradient(target) - q_taken
        return LossOutput(0.5 * tf.square(delta), delta, q_taken)

    env = gym.make("CartPole-v1")
    mine = DQN.from_env(env, seed=2, loss=double_dqn_squared, double_dqn=True, **SMALL)
    mse = DQN.from_env(env, seed=2, loss="mse", double_dqn=True, **SMALL)
    assert mine.config.loss == "<python object>"
    batch = batch_of(dim=4)
    for g, h in zip(mine.gradients(batch), mse.gradients(batch), strict=True):
        np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=1e-6)
    assert calls and all(calls)
    mine.save(tmp_path / "a")
    with pytest.raises(UsageError, match="loss was given in Python"):
        DQN.load(tmp_path / "a")
    assert DQN.load(tmp_path / "a", loss=double_dqn_squared).config.loss == "<python object>"


def test_importance_weights_scale_each_example():
    agent = DQN(OBS, gym.spaces.Discrete(2), seed=1, loss="mse", reduction="sum", **SMALL)
    batch = batch_of()
    weighted = Batch(**{**batch.__dict__, "weights": np.array([2, 0, 0, 0], np.float32)})
    alone = Batch(**{k: (None if v is None else v[:1]) for k, v in batch.__dict__.items()})
    for g, h in zip(agent.gradients(weighted), agent.gradients(alone), strict=True):
        np.testing.assert_allclose(g.numpy(), 2 * h.numpy(), rtol=1e-5, atol=1e-7)


# -- samplers and n-step returns -------------------------------------------------------------
def test_uniform_sampler_draws_as_the_memory_always_did():
    memory = ReplayMemory(50, (2,), seed=3, gamma=0.9)
    for i in range(30):
        memory.add([i, 0], 0, float(i), [i + 1, 0], False, False)
    twin = np.random.default_rng(3)
    batch = memory.sample(5, 2)
    np.testing.assert_array_equal(batch.indices, twin.integers(0, 30, size=(2, 5)))
    np.testing.assert_array_equal(batch.rewards, batch.indices.astype(np.float32))
    assert batch.weights.dtype == np.float32 and (batch.weights == 1).all()
    assert batch.discount.dtype == np.float32 and (batch.discount == np.float32(0.9)).all()


def episode_memory(n_step, gamma=0.5, **kwargs):
    """Stream 0: r = 1, 2, 3 (terminated); stream 1: r = 10, 20, 30, 40 (truncated) then
    50 (the newest, in progress), written interleaved as a vector env writes them."""
    memory = ReplayMemory(64, (1,), n_step=n_step, gamma=gamma, **kwargs)
    memory.start_batch(np.array([[0.0], [100.0]]), [0, 1])
    rows = [((1, 10), (0, 0)), ((2, 20), (0, 0)), ((3, 30), (1, 0))]
    for t, (rewards, terminated) in enumerate(rows):
        memory.append_batch(np.zeros(2), np.array(rewards, np.float32),
                            np.array([[t + 1.0], [101.0 + t]]), np.array(terminated, bool),
                            np.zeros(2, bool))  # fmt: skip
    memory.start(0, [50.0])
    for t, (reward, truncated) in enumerate([(40, True), (50, False)]):
        if t == 1:
            memory.start(1, [200.0])
        memory.append(1, 0, reward, [104.0 + 100 * t], False, truncated)
    return memory  # slots: 0 s0r1, 1 s1r10, 2 s0r2, 3 s1r20, 4 s0r3, 5 s1r30, 6 s1r40, 7 s1r50


def test_n_step_returns_by_hand_across_ends_and_streams():
    memory = episode_memory(3)
    b = memory._gather(np.arange(8))
    # s0 from r1: 1 + .5*2 + .25*3 = 2.75, terminated at the third step: no bootstrap
    # s0 from r3: 3, terminated; s1 from r10: 10 + 10 + 7.5 = 27.5, gamma^3 = .125
    # s1 from r30: 30 + .5*40 = 50, truncated after 2 steps: bootstraps with .25
    # s1 from r50 (the newest of its stream): 50, one step, .5
    np.testing.assert_allclose(b.rewards, [2.75, 27.5, 3.5, 20 + 15 + 10, 3, 50, 40, 50])
    np.testing.assert_allclose(b.discount, [0, 0.125, 0, 0.125, 0, 0.25, 0.5, 0.5])
    np.testing.assert_array_equal(b.terminated, [1, 0, 1, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(b.truncated, [0, 0, 0, 1, 0, 1, 1, 0])
    # the bootstrap's observation is the one after the last step walked
    np.testing.assert_allclose(b.next_obs[:, 0], [3, 103, 3, 104, 3, 104, 104, 204])
    np.testing.assert_allclose(b.obs[:, 0], [0, 100, 1, 101, 2, 102, 103, 200])


def test_one_step_is_the_transition_itself():
    one = episode_memory(1)._gather(np.arange(8))
    np.testing.assert_allclose(one.rewards, [1, 10, 2, 20, 3, 30, 40, 50])
    np.testing.assert_allclose(one.discount, [0.5, 0.5, 0.5, 0.5, 0, 0.5, 0.5, 0.5])
    np.testing.assert_allclose(one.next_obs[:, 0], [1, 101, 2, 102, 3, 103, 104, 204])


def test_n_step_needs_a_gamma_and_a_positive_horizon():
    with pytest.raises(ValueError, match="n_step"):
        ReplayMemory(8, (1,), n_step=3)
    with pytest.raises(ValueError, match="n_step"):
        ReplayMemory(8, (1,), n_step=0, gamma=0.9)
    with pytest.raises(UsageError, match="n_step"):
        DQN(OBS, gym.spaces.Discrete(2), n_step=0)


def test_frame_replay_n_step_next_stack_is_the_stack_after_the_last_step():
    memory = FrameReplay(32, (1, 1, 2), n_step=2, gamma=0.5)
    memory.start(0, np.array([[[0, 1]]], np.uint8))
    for t in range(2, 5):
        memory.append(0, 0, float(t), np.array([[[t - 1, t]]], np.uint8), t == 4, False)
    b = memory._gather(np.arange(3))
    np.testing.assert_array_equal(b.obs[:, 0, 0], [[0, 1], [1, 2], [2, 3]])
    np.testing.assert_array_equal(b.next_obs[:, 0, 0], [[2, 3], [3, 4], [3, 4]])
    np.testing.assert_allclose(b.rewards, [2 + 1.5, 3 + 2, 4])
    np.testing.assert_allclose(b.discount, [0.25, 0, 0])


# -- priorities back to the sampler ----------------------------------------------------------
class RecordingSampler(UniformSampler):
    """Uniform, recording what comes back, with a state of its own."""

    def __init__(self):
        self.given: list[tuple[np.ndarray, np.ndarray]] = []
        self.writes = 0

    def written(self, slots):
        self.writes += len(slots)

    def update_priorities(self, slots, td_errors):
        self.given.append((np.array(slots), np.array(td_errors)))

    def state_dict(self):
        return {"writes": np.array([self.writes])}

    def load_state_dict(self, state):
        self.writes = int(state["writes"][0])


@pytest.mark.slow
@pytest.mark.parametrize("agent_class", [DQN, DDPG])
def test_a_blocks_td_errors_reach_the_sampler_after_the_block(agent_class):
    if agent_class is DQN:
        env = gym.make("CartPole-v1")
        agent = DQN.from_env(env, seed=0, **SMALL)
    else:
        env = gym.make("Pendulum-v1")
        agent = DDPG.from_env(env, seed=0, actor_hidden_sizes=(8,), critic_hidden_sizes=(8,),
                              jit_compile=False, batch_size=4, learning_starts=0)  # fmt: skip
    agent.replay.sampler = sampler = RecordingSampler()
    obs, _ = env.reset(seed=0)
    agent.observe_first(obs)
    env.action_space.seed(0)
    for _ in range(12):
        action = env.action_space.sample()
        obs, reward, terminated, truncated, _ = env.step(action)
        agent.observe(action, reward, obs, terminated, truncated)
        if terminated or truncated:
            obs, _ = env.reset()
            agent.observe_first(obs)
    assert sampler.writes == 12
    block = agent.replay.sample(4, 3)

    def td_now(k):  # minibatch k's TD errors with the weights as they are now
        mini = Batch(**{key: (None if v is None else v[k]) for key, v in block.__dict__.items()})
        if agent_class is DQN:
            return agent.learner.td_errors(mini)
        q = agent.critics[0].model([mini.obs, mini.actions]).numpy().reshape(-1)
        return agent.learner.td_targets(mini) - q

    before = [td_now(0), td_now(1)]
    agent.learn(block)
    ((slots, td_errors),) = sampler.given  # once, after the whole block
    np.testing.assert_array_equal(slots, block.indices)
    assert td_errors.shape == (3, 4)
    # each minibatch's errors are those its own update measured: the first before any
    # update of the block, the second after the first update
    np.testing.assert_allclose(td_errors[0], before[0], rtol=1e-5, atol=1e-6)
    assert np.abs(td_errors[1] - before[1]).max() > 1e-6


# -- the replay's checkpoint ------------------------------------------------------------------
def test_sampler_state_travels_with_the_replay_state():
    memory = episode_memory(2, sampler=RecordingSampler())
    state = memory.state_dict()
    assert int(state["sampler/writes"][0]) == 8
    restored = episode_memory(1, sampler=RecordingSampler())
    restored.sampler.writes = 0
    restored.load_state_dict(state)
    assert restored.sampler.writes == 8
    np.testing.assert_array_equal(restored.rewards[:8], memory.rewards[:8])


def test_migrate_upgrades_older_formats_in_one_place():
    memory = episode_memory(1)
    state = memory.state_dict()
    older = {k: v for k, v in state.items() if k not in ("first_obs", "first_streams")}
    migrated = saved.migrate(older)
    assert "first_obs" not in older  # the state given is not changed
    assert migrated["format"][0] == saved.STATE_FORMAT and len(migrated["first_streams"]) == 0
    # format 2 kept ended episodes in open_streams: migrate drops them
    older["open_streams"] = np.array([[0, 4], [1, 7]], np.int64)  # slot 4 terminated
    np.testing.assert_array_equal(saved.migrate(older)["open_streams"], [[1, 7]])
    size = int(state["position"][1])
    format1 = {k: state[k] for k in ("obs", "actions", "rewards", "terminated", "truncated",
                                     "position", "rng_state")}  # fmt: skip
    format1["next_obs"] = memory._gather(np.arange(size)).next_obs
    one = saved.migrate(format1)
    assert (one["next_kind"] == saved.STORED).all() and len(one["open_streams"]) == 0
    fresh = ReplayMemory(64, (1,))
    fresh.load_state_dict(format1)
    np.testing.assert_array_equal(fresh._gather(np.arange(size)).next_obs, format1["next_obs"])


# -- gymnasium's vector autoreset modes ---------------------------------------------------------
def vector_env(mode):
    return gym.make_vec("CartPole-v1", 2, vectorization_mode="sync",
                        vector_kwargs={"autoreset_mode": mode})  # fmt: skip


@pytest.mark.parametrize("mode", ["default", gym.vector.AutoresetMode.NEXT_STEP,
                                  gym.vector.AutoresetMode.DISABLED])  # fmt: skip
def test_vector_envs_that_do_not_reset_in_the_same_step_are_refused_in_one_line(mode):
    import rlkit

    env = gym.make_vec("CartPole-v1", 2) if mode == "default" else vector_env(mode)
    agent = DQN.from_env(env, seed=0, **SMALL)
    with pytest.raises(UsageError, match="autoresets in .* mode.*SAME_STEP") as error:
        rlkit.train(agent, env, steps=10)
    assert "\n" not in str(error.value)


def test_a_same_step_vector_env_trains():
    import rlkit

    env = vector_env(gym.vector.AutoresetMode.SAME_STEP)
    agent = DQN.from_env(env, seed=0, **SMALL)
    rlkit.train(agent, env, steps=200)
    assert agent.num_steps >= 200
