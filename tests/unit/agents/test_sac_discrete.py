"""Discrete SAC (Christodoulou 2019) against its formulas by hand, one update against the
paper's equations written out on copies of the weights, acting's sampler against its
probabilities, and the observation kinds it takes (vectors, images, MinAtar)."""

from __future__ import annotations

import math

import gymnasium as gym
import keras
import numpy as np
import pytest
import tensorflow as tf

import rlkit
from rlkit.agents.sac.discrete import sample_categorical
from rlkit.learn import max_entropy as me
from rlkit.replay.memory import Batch


def test_soft_value_and_policy_loss_by_hand():
    probs = tf.constant([[0.25, 0.75]])
    log_probs = tf.math.log(probs)
    q = tf.constant([[1.0, 3.0]])
    alpha = tf.constant(0.5)
    # V = sum pi (q - alpha log pi); loss = sum pi (alpha log pi - q)
    value = 0.25 * (1 - 0.5 * math.log(0.25)) + 0.75 * (3 - 0.5 * math.log(0.75))
    assert me.categorical_soft_value(probs, log_probs, q, alpha).numpy()[0] == pytest.approx(value)
    loss = me.categorical_policy_loss(probs, log_probs, q, alpha).numpy()[0]
    assert loss == pytest.approx(-value, rel=1e-6)
    mean = me.categorical_log_prob_mean(probs, log_probs).numpy()[0]
    assert mean == pytest.approx(0.25 * math.log(0.25) + 0.75 * math.log(0.75))


def test_target_entropy_is_a_fraction_of_log_actions():
    agent = rlkit.agents.SAC.from_env(gym.make("CartPole-v1"), actor_hidden_sizes=(4,),
                                      critic_hidden_sizes=(4,))  # fmt: skip
    assert agent.learner.target_entropy == pytest.approx(0.89 * math.log(2))
    other = rlkit.agents.SAC.from_env(gym.make("CartPole-v1"), target_entropy_scale=0.98,
                                      actor_hidden_sizes=(4,),
                                      critic_hidden_sizes=(4,))  # fmt: skip
    assert other.learner.target_entropy == pytest.approx(0.98 * math.log(2))


def test_sampler_draws_each_action_with_its_probability():
    logits = np.log(np.array([[0.2, 0.5, 0.3]] * 200_000))
    uniform = np.random.default_rng(0).random(len(logits))
    counts = np.bincount(sample_categorical(logits, uniform), minlength=3) / len(logits)
    np.testing.assert_allclose(counts, [0.2, 0.5, 0.3], atol=0.005)
    # by hand: the inverse CDF at the edges
    edges = np.array([0.0, 0.19, 0.21, 0.999])
    np.testing.assert_array_equal(sample_categorical(logits[:4], edges), [0, 0, 1, 2])


@pytest.mark.slow
def test_one_update_equals_the_papers_equations_written_out():
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.SAC.from_env(env, seed=2, actor_hidden_sizes=(8,),
                                      critic_hidden_sizes=(8,), jit_compile=False,
                                      learning_rate=1e-2)  # fmt: skip
    learner = agent.learner
    rng = np.random.default_rng(0)
    batch = Batch(obs=rng.normal(size=(5, 4)).astype(np.float32),
                  actions=np.array([0, 1, 1, 0, 1]), rewards=rng.normal(size=5).astype(np.float32),
                  next_obs=rng.normal(size=(5, 4)).astype(np.float32),
                  terminated=np.array([0, 0, 1, 0, 0], bool),
                  truncated=np.zeros(5, bool))  # fmt: skip
    copies = {k: [tf.Variable(v.numpy()) for v in vs] for k, vs in learner.variables().items()}
    actor, critics = learner.actor.model, [c.model for c in learner.critics]

    def run(model, weights, x):
        return model.stateless_call(weights, [], x)[0]

    adam = [keras.optimizers.Adam(1e-2, epsilon=1e-8) for _ in range(3)]
    obs, next_obs = tf.constant(batch.obs), tf.constant(batch.next_obs)
    log_alpha = copies["log_alpha"][0]
    alpha = tf.constant(np.exp(log_alpha.numpy()))
    target = 0.89 * math.log(2)
    with tf.GradientTape(persistent=True) as tape:
        log_pi = tf.nn.log_softmax(run(actor, copies["actor"], obs))
        pi = tf.exp(log_pi)
        gap = tf.stop_gradient(tf.reduce_sum(pi * log_pi, -1) + target)
        alpha_loss = tf.reduce_mean(-tf.exp(log_alpha) * gap)  # eq. 11
    adam[0].apply_gradients([(tape.gradient(alpha_loss, log_alpha), log_alpha)])
    next_log_pi = tf.nn.log_softmax(run(actor, copies["actor"], next_obs))
    next_q = tf.minimum(run(critics[0], copies["critic0_target"], next_obs),
                        run(critics[1], copies["critic1_target"], next_obs))  # fmt: skip
    value = tf.reduce_sum(tf.exp(next_log_pi) * (next_q - alpha * next_log_pi), -1)  # eq. 10
    y = batch.rewards + 0.99 * (1 - batch.terminated) * value
    critic_vars = copies["critic0"] + copies["critic1"]
    with tf.GradientTape() as ctape:
        closs = sum(0.5 * tf.reduce_mean((tf.gather(run(c, copies[f"critic{k}"], obs),
                                                    batch.actions, batch_dims=1) - y) ** 2)
                    for k, c in enumerate(critics))  # fmt: skip
    adam[1].apply_gradients(zip(ctape.gradient(closs, critic_vars), critic_vars, strict=True))
    with tape:
        q_min = tf.minimum(run(critics[0], copies["critic0"], obs),
                           run(critics[1], copies["critic1"], obs))  # fmt: skip
        aloss = tf.reduce_mean(tf.reduce_sum(pi * (alpha * log_pi - q_min), -1))  # eq. 12
    adam[2].apply_gradients(zip(tape.gradient(aloss, copies["actor"]), copies["actor"],
                                strict=True))  # fmt: skip
    for k in (0, 1):
        for t, o in zip(copies[f"critic{k}_target"], copies[f"critic{k}"], strict=True):
            t.assign(0.995 * t + 0.005 * o)
    metrics, _ = learner.learn(batch.as_block(), step=0)
    assert metrics["critic_loss"] == pytest.approx(float(closs), rel=1e-5)
    assert metrics["actor_loss"] == pytest.approx(float(aloss), rel=1e-4, abs=1e-5)
    assert metrics["alpha_loss"] == pytest.approx(float(alpha_loss), rel=1e-5, abs=1e-7)
    for group, variables in learner.variables().items():
        for mine, theirs in zip(variables, copies[group], strict=True):
            np.testing.assert_allclose(np.asarray(mine), theirs.numpy(), rtol=2e-5, atol=2e-6,
                                       err_msg=group)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["CartPole-v1", "rlkit/CartPole-v1"])
def test_discrete_sac_trains_acts_and_reloads(env_id, tmp_path):
    env = rlkit.make_env(env_id) if env_id.startswith("rlkit/") else gym.make(env_id)
    agent = rlkit.agents.SAC.from_env(env, seed=0, actor_hidden_sizes=(8,),
                                      critic_hidden_sizes=(8,), learning_starts=20,
                                      batch_size=8, jit_compile=False)  # fmt: skip
    rlkit.train(agent, env, steps=60)
    assert agent.num_updates > 0 and agent.alpha != 1.0
    obs, _ = env.reset(seed=0)
    action = agent.act(obs, explore=False)
    assert isinstance(action, int) and env.action_space.contains(action)
    agent.save(tmp_path / "d")
    assert rlkit.load(tmp_path / "d").act(obs, explore=False) == action


@pytest.mark.slow
@pytest.mark.atari
def test_discrete_sac_takes_minatar_images():
    env = rlkit.make_env("MinAtar/Breakout-v0")
    agent = rlkit.agents.SAC.from_env(env, seed=0, actor_hidden_sizes=(16,),
                                      critic_hidden_sizes=(16,), learning_starts=20,
                                      batch_size=8, jit_compile=False, buffer_size=500)  # fmt: skip
    rlkit.train(agent, env, steps=40)
    assert agent.num_updates > 0
    assert agent.learner.actor.convs  # MinAtar's torso


def test_images_with_box_actions_are_refused_in_one_line():
    from rlkit.agents.sac.config import check_spaces
    from rlkit.core.errors import UsageError

    images = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    with pytest.raises(UsageError, match="Gaussian policy takes vector observations"):
        check_spaces(images, gym.spaces.Box(-1, 1, (2,)))
