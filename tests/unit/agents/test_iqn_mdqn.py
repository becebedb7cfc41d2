"""IQN and Munchausen DQN as agents (issue 36): their losses by hand at the agent level, IQN's
fractions (acting's K-sample mean, exact resume of their streams), a user's torso, the CLI,
the presets picked by themselves, and bad settings in one line."""

from __future__ import annotations

import math

import gymnasium as gym
import keras
import numpy as np
import pytest
import tensorflow as tf

import rlkit
from rlkit.agents import IQN, MDQN
from rlkit.agents.registry import AGENTS
from rlkit.config import presets
from rlkit.core.errors import UsageError
from rlkit.learn.value_losses import MunchausenLoss
from rlkit.replay.memory import Batch

SMALL = dict(hidden_sizes=(16,), jit_compile=False, batch_size=16, learning_starts=0,
             buffer_size=1000, train_freq=50, gradient_steps=4)  # fmt: skip
FEW = dict(num_tau_samples=4, num_tau_prime_samples=5, num_quantile_samples=3)
ONE_D = gym.spaces.Box(-10.0, 10.0, (1,), np.float32)


def batch_of(obs, actions, rewards, next_obs, terminated) -> Batch:
    rows = len(actions)
    return Batch(np.asarray(obs, np.float32).reshape(rows, 1), np.asarray(actions, np.int64),
                 np.asarray(rewards, np.float32), np.asarray(next_obs, np.float32).reshape(rows, 1),
                 np.asarray(terminated, np.float32), np.zeros(rows, np.float32))  # fmt: skip


def set_iqn_weights(network, kernel, bias) -> None:
    """One input feature x, one cosine cos(pi tau) with weight 1 and bias 0, no hidden layer:
    Z_a(x, tau) = kernel[a] * x * relu(cos(pi tau)) + bias[a]."""
    embedding = next(layer for layer in network.model.layers if "tau_embedding" in layer.name)
    embedding.kernel.assign([[1.0]])
    embedding.bias.assign([0.0])
    network.heads[0].kernel.assign([kernel])
    network.heads[0].bias.assign(bias)


def z_by_hand(kernel, bias, x, tau):
    cosine = max(math.cos(math.pi * tau), 0.0)
    return np.array([k * x * cosine + b for k, b in zip(kernel, bias, strict=True)])


def iqn_loss_by_hand(online, target, chooser, x, a, r, pcont, x2, taus, tau_primes, tau_k):
    """sum_i mean_j |tau_i - 1{u_ij < 0}| huber(u_ij) (kappa 1), pair by pair."""
    means = np.mean([z_by_hand(*chooser, x2, t) for t in tau_k], axis=0)
    a_star = int(np.argmax(means))
    targets = [r + pcont * z_by_hand(*target, x2, t)[a_star] for t in tau_primes]
    total = 0.0
    for tau in taus:
        theta = z_by_hand(*online, x, tau)[a]
        pairs = []
        for y in targets:
            u = y - theta
            huber = 0.5 * u * u if abs(u) <= 1.0 else abs(u) - 0.5
            pairs.append(abs(tau - (1.0 if u < 0 else 0.0)) * huber)
        total += np.mean(pairs)
    return total


@pytest.mark.parametrize("double_dqn", [False, True])
def test_iqn_loss_by_hand_on_a_tiny_network(double_dqn):
    agent = IQN(ONE_D, gym.spaces.Discrete(2), hidden_sizes=(), quantile_embedding_dim=1,
                num_tau_samples=2, num_tau_prime_samples=3, num_quantile_samples=2,
                double_dqn=double_dqn, jit_compile=False, gamma=0.9)  # fmt: skip
    online, target = ([1.0, -1.0], [0.0, 0.5]), ([-1.0, 1.0], [0.0, 0.0])
    set_iqn_weights(agent.learner.q, *online)
    set_iqn_weights(agent.learner.q_target, *target)
    taus, tau_primes, tau_k = [0.1, 0.3], [0.2, 0.4, 0.05], [0.1, 0.2]
    fractions = tuple(tf.constant([t], tf.float32) for t in (taus, tau_primes, tau_k))
    batch = batch_of([1.0], [0], [1.0], [2.0], [0.0])
    obs, actions, rewards, next_obs, pcont, _ = agent.learner.unpack(*agent.learner.tensors(batch))
    out = agent.learner.per_example_loss(obs, actions, rewards, next_obs, pcont, fractions)
    # the target net prefers action 1 at x' = 2, the online net action 0 (Double DQN's)
    chooser = online if double_dqn else target
    expected = iqn_loss_by_hand(online, target, chooser, 1.0, 0, 1.0, 0.9, 2.0, taus,
                                tau_primes, tau_k)  # fmt: skip
    np.testing.assert_allclose(out.loss.numpy(), [expected], rtol=1e-5)
    np.testing.assert_allclose(out.td_error.numpy(), out.loss.numpy())
    value = np.mean([z_by_hand(*online, 1.0, t)[0] for t in taus])
    np.testing.assert_allclose(out.value.numpy(), [value], rtol=1e-5)
    # a terminal transition: every target is r, whatever the next state
    ended = agent.learner.per_example_loss(obs, actions, rewards, next_obs, tf.constant([0.0]),
                                           fractions)  # fmt: skip
    alone = iqn_loss_by_hand(online, target, chooser, 1.0, 0, 1.0, 0.0, 2.0, taus, tau_primes,
                             tau_k)  # fmt: skip
    np.testing.assert_allclose(ended.loss.numpy(), [alone], rtol=1e-5)


@pytest.mark.slow
def test_iqn_acts_on_the_mean_over_k_fractions_and_its_streams_resume(tmp_path):
    env = gym.make("CartPole-v1")
    agent = IQN.from_env(env, seed=1, prioritized=True, n_step=3, **FEW, **SMALL)
    assert agent.learner.q.model.output_shape == (None, None, 2)  # [B, N, A]
    rlkit.train(agent, env, steps=300)
    assert agent.num_updates > 0
    written = agent.prioritized.tree.values()[: len(agent.replay)]
    assert len(np.unique(written)) > 10  # IQN's per-example loss is the priority
    obs = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    generator = agent.learner.fractions["evaluate"]
    before = generator.state.numpy().copy()
    q = agent.q_values(obs)
    generator.state.assign(before)  # the same K fractions again, drawn by hand
    taus = keras.random.uniform((6, 3), seed=generator)
    np.testing.assert_allclose(q, agent.learner.q.values(tf.constant(obs), taus).numpy().mean(1),
                               rtol=1e-5)  # fmt: skip
    assert "iqn_fractions" in agent.checkpoint_variables()
    agent.save(tmp_path / "a")
    loaded = rlkit.load(tmp_path / "a")
    assert type(loaded) is IQN and loaded.config == agent.config
    for use in ("learn", "act", "evaluate"):  # every stream goes on where it stopped
        np.testing.assert_array_equal(loaded.learner.fractions[use].state.numpy(),
                                      agent.learner.fractions[use].state.numpy())  # fmt: skip
    np.testing.assert_array_equal(loaded.learner.exploring_policy()(obs),
                                  agent.learner.exploring_policy()(obs))  # fmt: skip
    a, b = agent.learner.draw_fractions(4), loaded.learner.draw_fractions(4)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_a_users_torso_feeds_iqns_head_or_is_refused_naming_its_shape():
    def torso(observation_space, action_space):
        inputs = keras.Input(observation_space.shape)
        return keras.Model(inputs, keras.layers.Dense(8, activation="relu")(inputs))

    def square(observation_space, action_space):
        inputs = keras.Input(observation_space.shape)
        return keras.Model(inputs, keras.layers.Reshape((2, 2))(inputs))

    env = gym.make("CartPole-v1")
    agent = IQN.from_env(env, q_network=torso, **FEW, **SMALL)
    assert agent.q_values(np.zeros(4, np.float32)).shape == (2,)
    with pytest.raises(UsageError, match=r"returns \[batch, 2, 2\]"):
        IQN.from_env(env, q_network=square, **FEW, **SMALL)


@pytest.mark.slow
def test_an_iqn_export_acts_on_the_k_midpoints_by_hand(tmp_path):
    """Z_a(x, tau) = k_a x relu(cos(pi tau)) + b_a at the K = 2 midpoints 1/4, 3/4:
    relu(cos(pi / 4)) = sqrt(2) / 2, relu(cos(3 pi / 4)) = 0, so Q_a = k_a x sqrt(2) / 4 + b_a;
    rlkit's own values at those fractions and the SavedModel's both give it, and the export
    records the fractions."""
    from rlkit.exporting.exported import ExportedPolicy

    agent = IQN(ONE_D, gym.spaces.Discrete(2), hidden_sizes=(), quantile_embedding_dim=1,
                num_tau_samples=2, num_tau_prime_samples=3, num_quantile_samples=2,
                jit_compile=False, eval_epsilon=0.0)  # fmt: skip
    kernel, bias = [1.0, -1.0], [0.0, 0.5]
    set_iqn_weights(agent.learner.q, kernel, bias)
    np.testing.assert_array_equal(agent.export_fractions(), [0.25, 0.75])
    xs = np.array([[-2.0], [0.0], [0.5], [1.0], [3.0]], np.float32)
    want = np.array([[k * x * math.sqrt(2) / 4 + b for k, b in zip(kernel, bias, strict=True)]
                     for x in xs[:, 0]])  # fmt: skip
    np.testing.assert_allclose(agent.export_q_values(xs), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(agent.export_q_values(xs[3]), want[3], rtol=1e-6, atol=1e-6)
    result = agent.export(tmp_path / "p", check_observations=20)
    assert result.metadata["fractions"] == [0.25, 0.75]
    policy = ExportedPolicy(tmp_path / "p")
    np.testing.assert_allclose(policy.run("q_values", xs)["q_values"], want, rtol=1e-6,
                               atol=1e-6)  # fmt: skip
    np.testing.assert_array_equal(policy.act(xs), want.argmax(-1))


@pytest.mark.slow
@pytest.mark.parametrize("format", ["saved_model", "tflite"])
def test_a_trained_iqn_exports_and_its_check_passes(format, tmp_path):
    """A trained IQN's export (SavedModel or TFLite) acts as rlkit's own network at the same
    fixed fractions on every checked observation; exporting moves none of the fraction
    streams (acting and evaluation draw as they would have)."""
    env = gym.make("CartPole-v1")
    agent = IQN.from_env(env, seed=1, **FEW, **SMALL)
    rlkit.train(agent, env, steps=120)
    states = [g.state.numpy().copy() for g in agent.learner.fractions.values()]
    result = agent.export(tmp_path / "p", format=format, env=env, check_observations=64)
    assert "equal the agent's greedy act on" in result.lines[0]
    for generator, state in zip(agent.learner.fractions.values(), states, strict=True):
        np.testing.assert_array_equal(generator.state.numpy(), state)
    assert len(result.metadata["fractions"]) == FEW["num_quantile_samples"]


# -- Munchausen DQN ------------------------------------------------------------------------------
def munchausen_by_hand(q_s, q_next, a, r, pcont, tau, alpha, l0):
    def log_pi(q):
        z = np.asarray(q) / tau
        return z - (z.max() + math.log(np.exp(z - z.max()).sum()))

    bonus = min(max(tau * log_pi(q_s)[a], l0), 0.0)
    pi = np.exp(log_pi(q_next))
    soft = float(np.sum(pi * (np.asarray(q_next) - tau * log_pi(q_next))))
    return r + alpha * bonus + pcont * soft


def test_munchausen_loss_by_hand():
    loss = MunchausenLoss(tau=0.5, alpha=0.9, clip_value_min=-1.0, clip_delta=1.0)
    q = tf.constant([[0.5, 2.0]])
    q_target = tf.constant([[1.0, 2.0]])
    next_target = tf.constant([[0.0, 1.0]])
    out = loss(q, tf.constant([0]), tf.constant([1.0]), tf.constant([0.9]), next_target, None,
               q_target=q_target)  # fmt: skip
    # tau log pi(0|s) = 1 - 2 - 0.5 log(1 + e^-2) = -1.0635 -> clipped to -1: bonus -0.9;
    # soft value at s' = 0.5 log(e^0 + e^2) = 1.0635 -> y = 1 - 0.9 + 0.9 * 1.0635
    y = 1.0 - 0.9 + 0.9 * 0.5 * math.log(1.0 + math.e**2)
    np.testing.assert_allclose(y, munchausen_by_hand([1, 2], [0, 1], 0, 1.0, 0.9, 0.5, 0.9, -1))
    np.testing.assert_allclose(out.td_error.numpy(), [y - 0.5], rtol=1e-5)
    delta = y - 0.5  # 0.557 <= 1: the squared half of Huber's
    np.testing.assert_allclose(out.loss.numpy(), [0.5 * delta**2], rtol=1e-5)
    np.testing.assert_allclose(out.value.numpy(), [0.5])


def test_mdqn_reads_the_target_network_at_both_states():
    agent = MDQN(ONE_D, gym.spaces.Discrete(2), hidden_sizes=(), jit_compile=False, gamma=0.9)
    q, q_target = agent.learner.q, agent.learner.q_target
    q_target.heads[0].kernel.assign([[1.0, -1.0]])  # target: q(x) = (x, 0.5 - x)
    q_target.heads[0].bias.assign([0.0, 0.5])
    q.heads[0].kernel.assign([[2.0, 0.0]])  # online: q(x) = (2x, 0)
    q.heads[0].bias.assign([0.0, 0.0])
    batch = batch_of([1.0, 0.5], [0, 1], [1.0, -1.0], [2.0, 0.0], [0.0, 1.0])
    td = agent.td_errors(batch)
    cfg = agent.config
    first = munchausen_by_hand([1.0, -0.5], [2.0, -1.5], 0, 1.0, 0.9, cfg.tau, cfg.alpha,
                               cfg.clip_value_min) - 2.0  # fmt: skip
    second = munchausen_by_hand([0.5, 0.0], [0.0, 0.5], 1, -1.0, 0.0, cfg.tau, cfg.alpha,
                                cfg.clip_value_min) - 0.0  # fmt: skip
    np.testing.assert_allclose(td, [first, second], rtol=1e-5, atol=1e-6)
    assert (cfg.tau, cfg.alpha, cfg.clip_value_min) == (0.03, 0.9, -1.0)  # the paper's


@pytest.mark.slow
def test_mdqn_learns_and_reloads(tmp_path):
    env = gym.make("CartPole-v1")
    agent = MDQN.from_env(env, seed=0, **SMALL)
    rlkit.train(agent, env, steps=300)
    assert agent.num_updates > 0
    agent.save(tmp_path / "m")
    loaded = rlkit.load(tmp_path / "m")
    probe = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32)
    np.testing.assert_allclose(loaded.q_values(probe), agent.q_values(probe), rtol=1e-5)


@pytest.mark.parametrize(
    "agent, env, preset",
    [("iqn", "MinAtar/Breakout-v0", "iqn/minatar"), ("iqn", "ALE/Pong-v5", "iqn/atari"),
     ("rainbow", "ALE/Breakout-v5", "rainbow/atari"), ("c51", "ALE/Breakout-v5", "c51/atari"),
     ("qrdqn", "ALE/Breakout-v5", "qrdqn/atari"), ("ddpg", "Pendulum-v1", "ddpg/Pendulum-v1")],
)  # fmt: skip
def test_presets_are_picked_by_themselves(agent, env, preset):
    picked = presets.for_env(agent, env, families=AGENTS[agent].preset_families)
    assert picked is not None and picked.name == preset


def test_the_presets_cite_a_source_line_for_every_agent_value():
    for name in (
        "rainbow/atari",
        "c51/atari",
        "qrdqn/atari",
        "iqn/atari",
        "iqn/minatar",
        "rainbow/minatar",
        "qrdqn/minatar",
        "dqn/dopamine-minatar",
    ):
        preset = presets.lookup(*name.split("/"))
        agent_lines = preset.text.split("[agent]", 1)[1].splitlines()
        cited = [line for line in agent_lines if "=" in line and not line.startswith("#")]
        uncited = [line for line in cited if "#" not in line]
        assert not uncited, f"{name}: {uncited}"  # every value names where it comes from


@pytest.mark.parametrize(
    "agent, key",
    [("iqn", "num_tau_samples"), ("mdqn", "alpha"), ("c51", "num_atoms"),
     ("rainbow", "num_atoms"), ("rainbow", "n_step"), ("qrdqn", "num_quantiles")],
)  # fmt: skip
def test_their_tune_spaces_hold_at_both_ends(agent, key):
    from rlkit.agents.registry import agent_spec
    from rlkit.sweeps.search_spaces import resolve_space

    space = resolve_space(agent, agent_spec(agent).config_class, {}, {})
    assert key in space and "learning_rate" in space


def test_a_dueling_iqn_head_combines_per_fraction():
    agent = IQN.from_env(gym.make("CartPole-v1"), seed=2, dueling=True, **FEW, **SMALL)
    q = agent.learner.q
    obs = tf.constant(np.random.default_rng(4).normal(size=(3, 4)).astype(np.float32))
    taus = tf.constant([[0.1, 0.5], [0.2, 0.9], [0.7, 0.3]], tf.float32)
    embedding = next(layer for layer in q.model.layers if "tau_embedding" in layer.name)
    x = embedding(obs, taus)
    for layer in q.hidden:
        x = layer(x)
    value, advantage = q.heads[0](x).numpy(), q.heads[1](x).numpy()  # [3, 2, 1], [3, 2, 2]
    expected = value + advantage - advantage.mean(axis=-1, keepdims=True)
    np.testing.assert_allclose(q.values(obs, taus).numpy(), expected, rtol=1e-5, atol=1e-6)
