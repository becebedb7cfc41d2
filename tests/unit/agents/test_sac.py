"""SAC against its formulas (Haarnoja et al. 2018; rlkit.learn.max_entropy) by hand, one update
against a reference written from SB3's ``SAC.train`` step by step, acting's numpy twin against
the graph's sample, and bad input in one line."""

from __future__ import annotations

import math

import gymnasium as gym
import keras
import numpy as np
import pytest
import tensorflow as tf

import rlkit
from rlkit.agents.sac.acting import squashed_action
from rlkit.core.errors import UsageError
from rlkit.learn import max_entropy as me
from rlkit.replay.memory import Batch


def normal_log_pdf(x, mean, std):
    return -0.5 * ((x - mean) / std) ** 2 - math.log(std) - 0.5 * math.log(2 * math.pi)


@pytest.mark.parametrize("u", [-12.0, -3.0, -0.4, 0.0, 0.7, 2.5, 15.0])
def test_squashed_log_prob_is_the_change_of_variables_closed_form(u):
    mean, log_std = 0.3, -0.2
    noise = (u - mean) / math.exp(log_std)
    action, log_prob = me.squashed_sample(tf.constant([[mean]]), tf.constant([[log_std]]),
                                          tf.constant([[noise]]))  # fmt: skip
    # log N(u) - log(1 - tanh(u)^2) in float64, with 1 - tanh^2 = sech^2 = 4 / (e^u + e^-u)^2
    expected = normal_log_pdf(u, mean, math.exp(log_std))
    expected -= math.log(4.0) - 2 * (abs(u) + math.log1p(math.exp(-2 * abs(u))))
    assert action.numpy()[0, 0] == pytest.approx(math.tanh(u), abs=1e-6)
    assert np.isfinite(log_prob.numpy()[0])
    assert log_prob.numpy()[0] == pytest.approx(expected, rel=1e-5, abs=1e-4)


def test_the_direct_form_overflows_where_the_stable_one_does_not():
    u = tf.constant([12.0])
    with np.errstate(divide="ignore"):
        assert not np.isfinite(np.log(1.0 - np.tanh(np.float32(12.0)) ** 2))
    assert me.log_one_minus_tanh_squared(u).numpy()[0] == pytest.approx(
        math.log(4.0) - 2 * (12.0 + math.log1p(math.exp(-24.0))), rel=1e-6
    )


def test_squashed_density_matches_a_monte_carlo_histogram_of_its_samples():
    rng = np.random.default_rng(0)
    mean, log_std, n = 0.4, 0.1, 400_000
    samples = np.tanh(mean + math.exp(log_std) * rng.standard_normal(n))
    edges = np.linspace(-0.99, 0.99, 34)
    counts, _ = np.histogram(samples, edges)
    # the density at each bin's midpoint, from the formula, times the bin's width
    mid = (edges[:-1] + edges[1:]) / 2
    noise = (np.arctanh(mid) - mean) / math.exp(log_std)
    _, log_prob = me.squashed_sample(tf.fill([len(mid), 1], mean), tf.fill([len(mid), 1], log_std),
                                     tf.constant(noise[:, None], tf.float32))  # fmt: skip
    predicted = np.exp(log_prob.numpy()) * np.diff(edges) * n
    np.testing.assert_allclose(counts, predicted, rtol=0.05, atol=60)


def test_log_std_is_bounded_by_clip_or_tanh():
    raw = tf.constant([-30.0, 0.0, 5.0])
    np.testing.assert_allclose(me.bound_log_std(raw, -20, 2, "clip"), [-20, 0, 2])
    # CleanRL: -5 + 0.5 (2 - -5)(tanh(x) + 1)
    tanh = me.bound_log_std(raw, -5, 2, "tanh").numpy()
    np.testing.assert_allclose(tanh, -5 + 3.5 * (np.tanh([-30.0, 0.0, 5.0]) + 1), rtol=1e-6)
    np.testing.assert_allclose(me.numpy_bound_log_std(raw.numpy(), -5, 2, "tanh"), tanh)


def test_soft_target_by_hand():
    # y = r + pcont (min Q' - alpha log pi)
    y = me.soft_bootstrap_target(tf.constant([1.0, -0.5]), tf.constant([0.99, 0.0]),
                                 tf.constant([2.0, 7.0]), tf.constant([-1.5, 3.0]),
                                 tf.constant(0.2))  # fmt: skip
    np.testing.assert_allclose(y.numpy(), [1.0 + 0.99 * (2.0 + 0.3), -0.5], rtol=1e-6)


@pytest.mark.parametrize("form", ["alpha", "log_alpha"])
def test_temperature_gradients_in_log_alpha_by_hand(form):
    log_alpha = tf.Variable(math.log(0.5))
    log_prob = tf.constant([-0.3, 1.1, 0.4])
    target = -1.0
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(me.temperature_loss(log_alpha, log_prob, target, form))
    grad = tape.gradient(loss, log_alpha).numpy()
    gap = np.mean([-0.3, 1.1, 0.4]) + target
    # d/d log_alpha of -alpha gap = -alpha gap (the paper's); of -log_alpha gap = -gap (SB3's)
    expected = -0.5 * gap if form == "alpha" else -gap
    assert grad == pytest.approx(expected, rel=1e-6)
    assert loss.numpy() == pytest.approx(-(0.5 if form == "alpha" else math.log(0.5)) * gap)


def tiny_agent(**overrides):
    env = gym.make("Pendulum-v1")
    settings = dict(actor_hidden_sizes=(8,), critic_hidden_sizes=(8,), batch_size=4,
                    learning_starts=0, jit_compile=False, learning_rate=1e-2)  # fmt: skip
    return rlkit.agents.SAC.from_env(env, seed=3, **{**settings, **overrides}), env


def random_batch(agent, size=4, seed=0):
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(size, 3)).astype(np.float32)
    return Batch(obs=obs, actions=rng.uniform(-2, 2, (size, 1)).astype(np.float32),
                 rewards=rng.normal(size=size).astype(np.float32),
                 next_obs=rng.normal(size=(size, 3)).astype(np.float32),
                 terminated=np.array([0, 1, 0, 0], bool),
                 truncated=np.zeros(size, bool))  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("form", ["alpha", "log_alpha"])
def test_one_update_equals_sb3s_train_step_written_out(form):
    """SB3 ``SAC.train``: alpha step, critic step, actor step (critics as just updated), then
    Polyak targets; the reference below does it on copies with its own Adam optimizers."""
    agent, _ = tiny_agent(temperature_loss=form)
    learner = agent.learner
    batch = random_batch(agent)
    noise = np.random.default_rng(5).standard_normal((2, 4, 1)).astype(np.float32)
    copies = {k: [tf.Variable(v.numpy()) for v in vs] for k, vs in learner.variables().items()}
    # --- the reference, on the copies ---
    actor, critics = learner.actor.model, [c.model for c in learner.critics]

    def run(model, weights, x):
        return model.stateless_call(weights, [], x)[0]

    def pi(weights, obs, eps):
        out = run(actor, weights, obs)
        log_std = tf.clip_by_value(out[:, 1:], -20.0, 2.0)
        u = out[:, :1] + tf.exp(log_std) * eps
        logp = tf.reduce_sum(normal_log_pdf_tf(u, out[:, :1], tf.exp(log_std))
                             - tf.math.log(1 - tf.tanh(u) ** 2), axis=-1)  # fmt: skip
        return 2.0 * tf.tanh(u), logp  # Pendulum's bounds are +-2

    adam = [keras.optimizers.Adam(1e-2, epsilon=1e-8) for _ in range(3)]
    obs, next_obs = tf.constant(batch.obs), tf.constant(batch.next_obs)
    log_alpha = copies["log_alpha"][0]
    alpha = tf.exp(log_alpha)
    alpha = tf.constant(alpha.numpy())
    with tf.GradientTape(persistent=True) as tape:
        act_pi, logp = pi(copies["actor"], obs, noise[0])
        gap = tf.stop_gradient(logp - 1.0)  # target entropy -|A| = -1
        alpha_loss = tf.reduce_mean(-(tf.exp(log_alpha) if form == "alpha" else log_alpha) * gap)
    adam[0].apply_gradients([(tape.gradient(alpha_loss, log_alpha), log_alpha)])
    next_a, next_logp = pi(copies["actor"], next_obs, noise[1])
    next_q = tf.minimum(run(critics[0], copies["critic0_target"], [next_obs, next_a]),
                        run(critics[1], copies["critic1_target"], [next_obs, next_a]))  # fmt: skip
    pcont = 0.99 * (1 - batch.terminated)
    y = batch.rewards + pcont * (next_q - alpha * next_logp)
    critic_vars = copies["critic0"] + copies["critic1"]
    with tf.GradientTape() as ctape:
        closs = sum(0.5 * tf.reduce_mean((run(c, copies[f"critic{k}"], [obs, batch.actions]) - y)
                                         ** 2) for k, c in enumerate(critics))  # fmt: skip
    adam[1].apply_gradients(zip(ctape.gradient(closs, critic_vars), critic_vars, strict=True))
    with tape:
        q_pi = tf.minimum(run(critics[0], copies["critic0"], [obs, act_pi]),
                          run(critics[1], copies["critic1"], [obs, act_pi]))  # fmt: skip
        aloss = tf.reduce_mean(alpha * logp - q_pi)
    grads = tape.gradient(aloss, copies["actor"])
    adam[2].apply_gradients(zip(grads, copies["actor"], strict=True))
    for k in (0, 1):
        for t, o in zip(copies[f"critic{k}_target"], copies[f"critic{k}"], strict=True):
            t.assign(0.995 * t + 0.005 * o)
    # --- rlkit's update, on the agent ---
    stacked = batch.as_block()
    learner.rng = FixedNormal(noise[:, None].transpose(1, 2, 0, 3))
    metrics, _ = learner.learn(stacked, step=0)
    assert metrics["critic_loss"] == pytest.approx(float(closs), rel=1e-5)
    assert metrics["actor_loss"] == pytest.approx(float(aloss), rel=1e-4, abs=1e-5)
    assert metrics["alpha_loss"] == pytest.approx(float(alpha_loss), rel=1e-5, abs=1e-7)
    for group, variables in learner.variables().items():
        for mine, theirs in zip(variables, copies[group], strict=True):
            np.testing.assert_allclose(np.asarray(mine), theirs.numpy(), rtol=2e-5, atol=2e-6,
                                       err_msg=group)  # fmt: skip


def normal_log_pdf_tf(x, mean, std):
    return -0.5 * ((x - mean) / std) ** 2 - tf.math.log(std) - 0.5 * math.log(2 * math.pi)


class FixedNormal:
    """A stand-in generator whose standard_normal gives the array it holds."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def standard_normal(self, shape):
        assert tuple(shape) == self.values.shape, (shape, self.values.shape)
        return self.values


def test_acting_twin_takes_the_graphs_sampled_and_greedy_actions():
    agent, _ = tiny_agent()
    obs = np.random.default_rng(1).normal(size=(16, 3)).astype(np.float32)
    noise = np.random.default_rng(2).standard_normal((16, 1)).astype(np.float32)
    sampled, _ = agent.learner.sample(tf.constant(obs), tf.constant(noise))
    out = agent.learner.policy()(obs)
    np.testing.assert_allclose(squashed_action(out, noise, agent.bounds, agent.config),
                               sampled.numpy(), rtol=1e-5, atol=1e-6)  # fmt: skip
    mean, _ = agent.learner.distribution(tf.constant(obs))
    greedy = agent.bounds.from_unit(np.tanh(mean.numpy()))
    np.testing.assert_allclose(agent.act(obs, explore=False), greedy, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_fixed_alpha_stays_and_learned_alpha_moves():
    fixed, env = tiny_agent(ent_coef="0.2")
    learned, _ = tiny_agent(ent_coef="auto_0.1")
    assert learned.alpha == pytest.approx(0.1)
    for agent in (fixed, learned):
        rlkit.train(agent, env, steps=40)
    assert fixed.alpha == pytest.approx(0.2)
    assert learned.alpha != pytest.approx(0.1)


@pytest.mark.slow
def test_targets_are_ema_shadows_moved_by_polyak_tau():
    agent, _ = tiny_agent(tau=0.1)
    learner = agent.learner
    before = [v.numpy() for v in learner.critic_target_variables(1)]
    stacked = random_batch(agent).as_block()
    learner.learn(stacked, step=0)
    online = [np.asarray(v) for v in learner.critics[1].variables]
    for target, old, new in zip(learner.critic_target_variables(1), before, online, strict=True):
        np.testing.assert_allclose(target.numpy(), 0.9 * old + 0.1 * new, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"ent_coef": "-1"}, "ent_coef"),
        ({"ent_coef": "auto_nan"}, "ent_coef"),
        ({"ent_coef": "warm"}, "ent_coef"),
        ({"target_entropy": "inf"}, "target_entropy"),
        ({"log_std_min": 3.0}, "log_std_min"),
        ({"tau": 0.0}, "tau"),
        ({"tau": 1.5}, "tau"),
        ({"use_sde": True, "sde_sample_freq": 0}, "sde_sample_freq"),
    ],
)
def test_bad_settings_are_refused_in_one_line(overrides, message):
    with pytest.raises(UsageError, match=message) as error:
        tiny_agent(**overrides)
    assert "\n" not in str(error.value)


def test_an_action_space_it_cannot_act_in_is_refused_naming_who_can():
    from rlkit.agents.sac.config import check_spaces

    with pytest.raises(UsageError, match="sac takes Box .* or Discrete actions.*reinforce"):
        check_spaces(gym.spaces.Box(-1, 1, (3,)), gym.spaces.MultiDiscrete([2, 3]))


@pytest.mark.slow
def test_save_and_load_keep_the_policy_and_alpha(tmp_path):
    agent, env = tiny_agent()
    rlkit.train(agent, env, steps=30)
    agent.save(tmp_path / "sac")
    back = rlkit.load(tmp_path / "sac")
    obs = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    np.testing.assert_array_equal(back.act(obs, explore=False), agent.act(obs, explore=False))
    assert back.alpha == agent.alpha


def build_actor(observation_space, action_space):
    """A policy of one's own: [B, 3] -> [B, 2] (mean, raw log std)."""
    inputs = keras.Input((3,))
    hidden = keras.layers.Dense(16, activation="tanh")(inputs)
    return keras.Model(inputs, keras.layers.Dense(2)(hidden))


def build_critic(observation_space, action_space):
    """A critic of one's own: [observation, action] -> [B, 1]."""
    obs, action = keras.Input((3,)), keras.Input((1,))
    hidden = keras.layers.Dense(16, activation="relu")(keras.layers.Concatenate()([obs, action]))
    return keras.Model([obs, action], keras.layers.Dense(1)(hidden))


@pytest.mark.slow
def test_networks_of_ones_own_train_save_and_load(tmp_path):
    env = gym.make("Pendulum-v1")
    small = {"learning_starts": 10, "batch_size": 8, "jit_compile": False}
    agent = rlkit.agents.SAC.from_env(env, seed=0, actor=build_actor, critic=build_critic,
                                      **small)  # fmt: skip
    assert agent.learner.actor.model.layers[-1].units == 2
    before = [v.numpy().copy() for v in agent.critic_target_variables(1)]
    rlkit.train(agent, env, steps=30)
    assert agent.num_updates > 0
    moved = [v.numpy() for v in agent.critic_target_variables(1)]
    assert any(not np.array_equal(a, b) for a, b in zip(before, moved, strict=True))
    agent.save(tmp_path / "own")
    obs = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    back = rlkit.load(tmp_path / "own", actor=build_actor, critic=build_critic)
    np.testing.assert_array_equal(back.act(obs, explore=False), agent.act(obs, explore=False))


def test_a_policy_of_the_wrong_width_is_refused_in_one_line():
    def narrow(observation_space, action_space):
        inputs = keras.Input((3,))
        return keras.Model(inputs, keras.layers.Dense(1)(inputs))

    with pytest.raises(UsageError, match=r"actor") as error:
        rlkit.agents.SAC.from_env(gym.make("Pendulum-v1"), actor=narrow)
    assert "\n" not in str(error.value)


def test_discrete_sac_refuses_networks_of_ones_own():
    with pytest.raises(UsageError, match="discrete SAC's networks are rlkit's"):
        rlkit.agents.SAC.from_env(gym.make("CartPole-v1"), actor=build_actor)
