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


class GraphDraws:
    """A generator standing in for acting's: each call returns the numbers the graph drew
    at the step under test (``uniform`` and ``normal`` set before each act)."""

    def __init__(self) -> None:
        self.uniforms = self.normal = None
        self.normal_calls = 0

    def uniform(self, low, high, size):  # (numpy's Generator.uniform: the graph's, rescaled)
        return self.uniforms

    def standard_normal(self, shape):
        self.normal_calls += 1
        assert tuple(shape) == self.normal.shape
        return self.normal.astype(np.float64)


@pytest.mark.parametrize("at_warmup", [False, True])
def test_the_graphs_gsde_acting_holds_and_redraws_as_the_python_loops(at_warmup):
    """gSDE's held matrices across steps, in both loops fed the same draws: uniform warm-up
    actions (or gSDE's, ``use_sde_at_warmup``), a redraw when a collection block of
    ``train_freq`` steps begins and every ``sde_sample_freq`` acts within it."""
    from rlkit.agents.sac.acting import graph_sac_sde_action
    from rlkit.learn.gsde import HeldNoise, graph_matrix_normals, gsde_std

    agent = rlkit.agents.SAC.from_env(gym.make("Pendulum-v1"), actor_hidden_sizes=(8,),
                                      critic_hidden_sizes=(8,), use_sde=True, train_freq=8,
                                      sde_sample_freq=3, learning_starts=4, log_std_init=-1.0,
                                      use_sde_at_warmup=at_warmup)  # fmt: skip
    draws, n, cfg, actor = GraphDraws(), 2, agent.config, agent.learner.actor
    agent.acting.rng = draws
    held = HeldNoise(tf.zeros([n, actor.latent_dim, 1]), tf.constant(-1, tf.int64),
                     tf.constant(-1, tf.int64))  # fmt: skip
    std = gsde_std(actor.log_std, 1, cfg.use_expln)
    obs_rng = np.random.default_rng(3)
    redraws = []
    for t in range(12):  # steps 0, 2, ..., 22: blocks of 8 begin at 0, 8, 16
        step, seed = t * n, tf.constant([t, 5], tf.int32)
        obs = obs_rng.normal(size=(n, 3)).astype(np.float32)
        uniform_seed, matrix_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
        draws.uniforms = (tf.random.stateless_uniform([n, 1], uniform_seed).numpy()
                         * (agent.bounds.high - agent.bounds.low) + agent.bounds.low)  # fmt: skip
        draws.normal = graph_matrix_normals(matrix_seed, [n, actor.latent_dim, 1]).numpy()
        before = draws.normal_calls
        python = agent.acting.act(obs, explore=True, step=step)
        redraws.append(draws.normal_calls - before)
        latent, mean = actor.latent_and_mean(tf.constant(obs))
        graph, held = graph_sac_sde_action(latent, mean, std, held, tf.constant(step, tf.int64),
                                           seed, agent.bounds, cfg)  # fmt: skip
        np.testing.assert_allclose(graph.numpy(), python, rtol=1e-5, atol=1e-5)
        gsde = agent.acting.gsde
        assert (int(held.clock), int(held.mark)) == (gsde.clock, gsde.mark)
        if gsde.clock >= 0:
            np.testing.assert_allclose(held.matrices.numpy(), gsde.matrices, rtol=1e-6)
    # acts at steps 0..22: warm-up to step 3 (2 acts) unless gSDE acts from the start; a draw
    # at each block's first act (0, 8, 16) and 3 acts after each draw within a block
    warm = [1, 0, 0, 1] if at_warmup else [0, 0, 1, 0]
    assert redraws == [*warm, 1, 0, 0, 1, 1, 0, 0, 1]
