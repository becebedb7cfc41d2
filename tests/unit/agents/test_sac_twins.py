"""SAC's acting in both loops: the compiled loop's in-graph twins (``graph_sac_action``,
``graph_categorical_action``) fed the same random numbers as the Python loop's acting rules
take the same actions (to float32's rounding for the squashed Gaussian; exactly for the
categorical draw), before and after ``learning_starts``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

import rlkit
from rlkit.agents.sac.acting import graph_sac_action, graph_sac_draws, squashed_action
from rlkit.agents.sac.discrete import graph_categorical_action, sample_categorical

SEED = tf.constant([7, 11], tf.int32)


@pytest.mark.parametrize("bounding", ["clip", "tanh"])
def test_the_graphs_squashed_sample_is_the_python_loops(bounding):
    agent = rlkit.agents.SAC.from_env(gym.make("Pendulum-v1"), actor_hidden_sizes=(8,),
                                      critic_hidden_sizes=(8,), learning_starts=100,
                                      log_std_bounding=bounding, log_std_min=-5.0)  # fmt: skip
    obs = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32)
    out = agent.learner.policy()(obs)
    uniform, normal = (t.numpy() for t in graph_sac_draws(SEED, [32, 1]))
    for step, expected in [
        (500, squashed_action(out, normal, agent.bounds, agent.config)),
        (99, uniform * (agent.bounds.high - agent.bounds.low) + agent.bounds.low),
    ]:
        graph = graph_sac_action(tf.constant(out), tf.constant(step, tf.int64), SEED,
                                 agent.bounds, agent.config).numpy()  # fmt: skip
        np.testing.assert_allclose(graph, expected, rtol=1e-5, atol=1e-6)


def test_the_python_acting_rule_draws_through_squashed_action():
    """The Python loop's SACActing is squashed_action of its generator's normals: the same
    generator state gives the same action by hand."""
    agent = rlkit.agents.SAC.from_env(gym.make("Pendulum-v1"), actor_hidden_sizes=(8,),
                                      critic_hidden_sizes=(8,), learning_starts=0)  # fmt: skip
    obs = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    state = agent.rng.bit_generator.state
    acted = agent.act(obs, explore=True)
    agent.rng.bit_generator.state = state
    noise = agent.rng.standard_normal((4, 1)).astype(np.float32)
    expected = squashed_action(agent.learner.policy()(obs), noise, agent.bounds, agent.config)
    np.testing.assert_array_equal(acted, expected)


def test_the_graphs_categorical_draw_is_the_python_loops():
    logits = np.random.default_rng(2).normal(size=(4096, 6)).astype(np.float32)
    warm_seed, draw_seed = tf.unstack(tf.random.experimental.stateless_split(SEED, 2))
    uniform = tf.random.stateless_uniform([4096], draw_seed, dtype=tf.float64).numpy()
    graph = graph_categorical_action(tf.constant(logits), tf.constant(10, tf.int64), SEED, 5)
    np.testing.assert_array_equal(graph.numpy(), sample_categorical(logits, uniform))
    before = graph_categorical_action(tf.constant(logits), tf.constant(4, tf.int64), SEED, 5)
    warm = tf.random.stateless_uniform([4096], warm_seed, 0, 6, tf.int32).numpy()
    np.testing.assert_array_equal(before.numpy(), warm)
    assert set(np.unique(warm)) == set(range(6))
