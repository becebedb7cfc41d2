"""C51 and QR-DQN on the value-learning seam (issue 36, item 3): their losses by hand through
the protocol (action-major outputs, the bootstrap action, Double DQN), acting on expected
values, the agents end to end from Python and the CLI, and bad settings in one line."""

from __future__ import annotations

import math

import gymnasium as gym
import keras
import numpy as np
import pytest
import tensorflow as tf

import rlkit
from rlkit.agents import C51, MDQN, QRDQN, Rainbow
from rlkit.agents.dqn.heads import CategoricalHead, QuantileHead
from rlkit.cli.main import main
from rlkit.core.errors import UsageError
from rlkit.learn.value_losses import CategoricalLoss, QuantileLoss

SMALL = dict(hidden_sizes=(16,), jit_compile=False, batch_size=16, learning_starts=0,
             buffer_size=1000, train_freq=50, gradient_steps=4)  # fmt: skip


def test_categorical_loss_by_hand():
    loss = CategoricalLoss((-1.0, 0.0, 1.0))
    # online logits, action-major [B=1, A*N=6]: action 0 has probabilities 1/4, 1/2, 1/4
    q = tf.constant([[0.0, math.log(2.0), 0.0, 0.0, 0.0, 0.0]])
    # the target net puts action 1's mass on atom +1 (greedy: expected value 1 > 0)
    next_target = tf.constant([[0.0, 0.0, 0.0, 0.0, 0.0, 50.0]])
    out = loss(q, tf.constant([0]), tf.constant([0.0]), tf.constant([0.5]), next_target, None)
    # r + 0.5 * 1 = 0.5: half on atom 0, half on atom 1 -> m = [0, .5, .5]
    # cross-entropy -(.5 ln 1/2 + .5 ln 1/4) = 1.5 ln 2
    np.testing.assert_allclose(out.loss.numpy(), [1.5 * math.log(2.0)], rtol=1e-5)
    np.testing.assert_allclose(out.td_error.numpy(), out.loss.numpy())
    np.testing.assert_allclose(out.value.numpy(), [0.0], atol=1e-6)  # -1/4 + 1/4
    # Double DQN: the online net picks action 0 at s2, where the target net is uniform:
    # [1/3 each] shifted to -0.5, 0, 0.5 -> m = [1/6, 2/3, 1/6]
    online_next = tf.constant([[0.0, 0.0, 9.0, 9.0, 0.0, 0.0]])
    double = loss(q, tf.constant([0]), tf.constant([0.0]), tf.constant([0.5]), next_target,
                  online_next)  # fmt: skip
    m = np.array([1 / 6, 2 / 3, 1 / 6])
    expected = -(m * np.log([0.25, 0.5, 0.25])).sum()
    np.testing.assert_allclose(double.loss.numpy(), [expected], rtol=1e-5)


def test_quantile_loss_by_hand():
    loss = QuantileLoss(num_quantiles=2, kappa=1.0)  # fractions 1/4, 3/4
    q = tf.constant([[0.0, 0.0, 7.0, 7.0]])  # action 0: quantiles 0, 0 (mean 0)
    next_target = tf.constant([[1.0, 1.0, 5.0, 5.0]])  # greedy: action 1
    out = loss(q, tf.constant([0]), tf.constant([0.0]), tf.constant([0.5]), next_target, None)
    # targets 2.5, 2.5; u = 2.5 > kappa: Huber 1 * (2.5 - 0.5) = 2, / kappa; weights tau:
    # sum_i mean_j tau_i * 2 = (1/4 + 3/4) * 2
    np.testing.assert_allclose(out.loss.numpy(), [2.0], rtol=1e-6)
    np.testing.assert_allclose(out.value.numpy(), [0.0])
    online_next = tf.constant([[3.0, 3.0, 0.0, 0.0]])  # Double DQN picks action 0: targets .5
    double = loss(q, tf.constant([0]), tf.constant([0.0]), tf.constant([0.5]), next_target,
                  online_next)  # fmt: skip
    np.testing.assert_allclose(double.loss.numpy(), [0.125], rtol=1e-6)  # 0.5 * 0.5^2


def test_heads_give_acting_expected_values():
    head = CategoricalHead(3, -1.0, 1.0)
    outputs = np.array([[0.0, math.log(3.0), 0.0, 0.0, 0.0, 0.0]], np.float32)
    # action 0: 1/5, 3/5, 1/5 -> 0; action 1: uniform -> 0; batch and single rows alike
    np.testing.assert_allclose(head.q_values(outputs), [[0.0, 0.0]], atol=1e-6)
    skew = np.array([0.0, 0.0, math.log(2.0), 0.0, 0.0, 0.0], np.float32)
    np.testing.assert_allclose(head.q_values(skew), [0.25, 0.0], atol=1e-6)  # (-1+0+2)/4
    quantiles = QuantileHead(2, 1.0)
    np.testing.assert_allclose(quantiles.q_values(np.array([1.0, 3.0, -2.0, 0.0])), [2.0, -1.0])


@pytest.mark.slow
@pytest.mark.parametrize("agent_class", [C51, QRDQN])
def test_the_agents_learn_save_and_load(agent_class, tmp_path):
    env = gym.make("CartPole-v1")
    agent = agent_class.from_env(env, seed=0, prioritized=True, n_step=3, **SMALL)
    width = agent.learner.q.model.output_shape[-1]
    per_action = agent.config.num_atoms if agent_class is C51 else agent.config.num_quantiles
    assert width == 2 * per_action
    rlkit.train(agent, env, steps=300)
    assert agent.num_updates > 0
    assert agent.q_values(np.zeros(4, np.float32)).shape == (2,)
    agent.save(tmp_path / "a")
    loaded = rlkit.load(tmp_path / "a")
    assert type(loaded) is agent_class and loaded.config == agent.config
    probe = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    np.testing.assert_allclose(loaded.q_values(probe), agent.q_values(probe), rtol=1e-5)


def test_a_users_network_must_give_n_values_per_action():
    def build(observation_space, action_space):
        inputs = keras.Input(observation_space.shape)
        return keras.Model(inputs, keras.layers.Dense(int(action_space.n))(inputs))

    with pytest.raises(UsageError, match="102"):  # 2 actions x 51 atoms
        C51.from_env(gym.make("CartPole-v1"), q_network=build, **SMALL)


@pytest.mark.parametrize(
    "agent, setting, words",
    [("c51", "v_min=20", "v_min"), ("c51", "num_atoms=1", "num_atoms"),
     ("c51", "loss=dqn3", "does not combine"), ("qrdqn", "num_quantiles=1", "num_quantiles"),
     ("qrdqn", "kappa=-1", "kappa"), ("qrdqn", "loss=huber", "qrdqn learns a distribution"),
     ("c51", "v_min=-inf", "v_min: must be a finite number"),
     ("rainbow", "v_max=inf", "v_max: must be a finite number"),
     ("rainbow", "loss=dqn3", "rainbow learns a distribution")],
)  # fmt: skip
def test_bad_settings_are_one_line(agent, setting, words, tmp_path, capsys):
    code = main(["train", agent, "--steps", "10", "--set", setting, "--out", str(tmp_path)])
    assert code == 2 and not any(tmp_path.iterdir())
    assert words in capsys.readouterr().err.strip().splitlines()[-1]
    agent_class = {"c51": C51, "qrdqn": QRDQN, "rainbow": Rainbow}[agent]
    key, _, value = setting.partition("=")
    with pytest.raises(UsageError, match=words):
        agent_class.from_env(gym.make("CartPole-v1"), **{key: value})


def test_listed_where_users_look(capsys):
    assert main(["train", "--help"]) == 0
    listed = capsys.readouterr().out
    assert "c51" in listed and "qrdqn" in listed
    assert main(["config", "c51"]) == 0
    shown = capsys.readouterr().out
    assert "num_atoms" in shown and "v_max" in shown


@pytest.mark.slow
@pytest.mark.parametrize("agent_class", [C51, QRDQN, Rainbow, MDQN])
def test_an_export_acts_on_the_expected_values(agent_class, tmp_path):
    env = gym.make("CartPole-v1")
    agent = agent_class.from_env(env, seed=3, **SMALL)  # Rainbow: noisy, exported at its mean
    rlkit.train(agent, env, steps=200)
    agent.export(tmp_path / "policy", env=env, check_observations=300)
    served = tf.saved_model.load(str(tmp_path / "policy"))
    probe = np.random.default_rng(1).normal(size=(64, 4)).astype(np.float32)
    q = served.signatures["q_values"](tf.constant(probe))["q_values"].numpy()
    np.testing.assert_allclose(q, agent.q_values(probe), rtol=1e-4, atol=1e-5)
    actions = served.signatures["action"](tf.constant(probe))["action"].numpy()
    np.testing.assert_array_equal(actions, agent.act(probe, explore=False))


def test_a_dueling_distributional_head_combines_per_atom():
    agent = C51.from_env(gym.make("CartPole-v1"), seed=4, dueling=True, num_atoms=3, **SMALL)
    q = agent.learner.q
    obs = np.random.default_rng(2).normal(size=(5, 4)).astype(np.float32)
    features = obs
    for layer in q.hidden:
        features = layer(features)
    value = q.heads[0](features).numpy()  # [5, 3]: one value per atom
    advantage = q.heads[1](features).numpy().reshape(5, 2, 3)
    expected = value[:, None, :] + advantage - advantage.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(q.model(obs).numpy(), expected.reshape(5, 6), rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(q.numpy_snapshot()(obs), expected.reshape(5, 6), rtol=1e-5,
                               atol=1e-6)  # fmt: skip


# -- noisy networks and Rainbow ------------------------------------------------------------------
def test_a_noisy_network_explores_by_its_noise_and_evaluates_on_its_mean():
    from rlkit.agents import DQN

    env = gym.make("CartPole-v1")
    agent = DQN.from_env(env, seed=5, noisy=True, eps_start=0.0, eps_end=0.0, **SMALL)
    q = agent.learner.q
    assert all(type(layer).__name__ == "NoisyDense" for layer in [*q.hidden, *q.heads])
    obs = np.random.default_rng(3).normal(size=(6, 4)).astype(np.float32)
    exploring = agent.learner.exploring_policy()
    first, second = exploring(obs), exploring(obs)
    assert not np.allclose(first, second)  # fresh noise on every call
    mean = q.model(obs).numpy()  # no noise outside training
    np.testing.assert_allclose(q.numpy_snapshot()(obs), mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(agent.act(obs, explore=False), mean.argmax(axis=-1))
    acted = {tuple(agent.act(obs)) for _ in range(20)}
    assert len(acted) > 1  # exploring acts on noisy values (epsilon is 0)


@pytest.mark.slow
def test_noise_resumes_exactly_from_a_save(tmp_path):
    from rlkit.agents import DQN

    env = gym.make("CartPole-v1")
    agent = DQN.from_env(env, seed=6, noisy=True, eps_start=0.0, eps_end=0.0, **SMALL)
    obs = np.zeros((2, 4), np.float32)
    agent.learner.exploring_policy()(obs)  # the noise moves on
    assert "q_noise" in agent.checkpoint_variables()
    agent.save(tmp_path / "a")
    loaded = rlkit.load(tmp_path / "a")
    np.testing.assert_array_equal(loaded.learner.exploring_policy()(obs),
                                  agent.learner.exploring_policy()(obs))  # fmt: skip


def test_noisy_with_epsilon_is_refused_in_one_line():
    from rlkit.agents import DQN

    with pytest.raises(UsageError, match="explore by their noise"):
        DQN.from_env(gym.make("CartPole-v1"), noisy=True)


@pytest.mark.slow
def test_rainbow_is_c51_with_every_part_on():
    from rlkit.agents import Rainbow

    env = gym.make("CartPole-v1")
    agent = Rainbow.from_env(env, seed=0, **SMALL)
    cfg = agent.config
    assert (cfg.prioritized, cfg.n_step, cfg.dueling, cfg.double_dqn, cfg.noisy) == (
        True, 3, True, True, True)  # fmt: skip
    assert (cfg.eps_start, cfg.eps_end, cfg.num_atoms, cfg.loss) == (0, 0, 51, "categorical")
    assert agent.prioritized is agent.replay.sampler
    assert len(agent.learner.q.heads) == 2  # value per atom and advantages, both noisy
    rlkit.train(agent, env, steps=300)
    assert agent.num_updates > 0
    assert len(np.unique(agent.prioritized.tree.values()[: len(agent.replay)])) > 10


@pytest.mark.slow
@pytest.mark.parametrize("agent_class", [C51, QRDQN])
def test_minatar_acting_reads_the_numpy_mirror_the_update_block_returned(agent_class,
                                                                         monkeypatch):  # fmt: skip
    """On MinAtar's torso greedy acting is numpy, refreshed from the weights each block of
    updates returned (never a TensorFlow call, never a read of the variables): its values
    are the Keras model's after the updates."""
    from rlkit.envs.make import make_env
    from rlkit.networks.numpy_conv import NumpyConvNet

    env = make_env("MinAtar/Breakout-v0")
    agent = agent_class.from_env(env, seed=0, torso="minatar", conv_padding="same",
                                 hidden_sizes=(), jit_compile=False, batch_size=8,
                                 learning_starts=0, buffer_size=500, train_freq=40,
                                 gradient_steps=2)  # fmt: skip
    learner = agent.learner
    assert isinstance(learner.q.numpy_snapshot(), NumpyConvNet)
    assert len(learner.q.mirror_weights()) == 4  # the convolution's and the head's

    def refused(*args):
        raise AssertionError("acting read the network instead of the block's weights")

    monkeypatch.setattr(learner.q, "numpy_snapshot", refused)
    monkeypatch.setattr(learner.q, "_compiled", refused)
    rlkit.train(agent, env, steps=120)
    assert agent.num_updates == 6
    obs = np.random.default_rng(0).random((50, 10, 10, 4)) < 0.1
    want = learner.head.q_values(learner.q.model(obs).numpy())
    np.testing.assert_allclose(agent.q_values(obs), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(agent.q_values(obs).argmax(-1), want.argmax(-1))
