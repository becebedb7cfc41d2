"""One-step pcont (TRFL's ``gamma * (1 - terminated)``) in the compiled loop against the Python
loop's, on the same transitions, bit for bit: :func:`rlkit.replay.nstep.graph_pcont` against
:func:`~rlkit.replay.nstep.pcont` as :func:`~rlkit.replay.nstep.n_step` (``n = 1``) and
:meth:`~rlkit.replay.batch.Batch.discount_or` give it, eagerly and compiled with XLA; and the
compiled program's one-step minibatch (:meth:`~rlkit.run.compiled.program.CompiledProgram.
gather` on a :class:`~rlkit.replay.in_graph.GraphReplay`) against the Python replay's
(:class:`~rlkit.replay.memory.ReplayMemory`) on the same vector steps: rewards, pcont and next
observations equal. (The n-step walk's is tied in ``test_graph_priorities.py``.)"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from rlkit.replay.batch import Batch
from rlkit.replay.in_graph import GraphReplay
from rlkit.replay.memory import ReplayMemory
from rlkit.replay.nstep import graph_pcont, n_step, pcont
from rlkit.run.compiled.program import CompiledProgram

GAMMAS = [0.99, 0.9, 1.0, 0.0, 0.997, 0.5, 1 / 3]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "xla"])
def test_graph_pcont_equals_the_python_replays_one_step_discount(jit):
    rng = np.random.default_rng(0)
    terminated = rng.random(300) < 0.3
    idx = rng.integers(0, 300, size=64)

    def every_gamma(done):
        return [graph_pcont(done, gamma) for gamma in GAMMAS]

    run = tf.function(every_gamma, jit_compile=True) if jit else every_gamma
    got = run(tf.constant(terminated[idx], tf.float32))
    as_bool = every_gamma(tf.constant(terminated[idx]))  # a bool tensor: the same
    for value, boolean, gamma in zip(got, as_bool, GAMMAS, strict=True):
        walk = n_step(idx, 1, gamma, np.zeros(300, np.float32), terminated, np.ones(300), idx)
        assert value.dtype == tf.float32 and walk.discount.dtype == np.float32
        np.testing.assert_array_equal(value.numpy(), walk.discount, err_msg=f"gamma {gamma}")
        np.testing.assert_array_equal(boolean.numpy(), walk.discount)
        np.testing.assert_array_equal(pcont(terminated[idx], np.float32(gamma)), walk.discount)
        batch = Batch(None, None, None, None, terminated[idx], None)
        np.testing.assert_array_equal(batch.discount_or(gamma), walk.discount)


def test_the_compiled_one_step_minibatch_equals_the_python_replays():
    """The same vector steps (3 streams, episodes terminated or truncated at random) in both
    replays; every stored slot's minibatch row equal bit for bit."""
    rng = np.random.default_rng(1)
    streams, capacity, gamma = 3, 60, 0.97
    python = ReplayMemory(capacity, (2,), np.float32, (), np.int64, 0, n_step=1, gamma=gamma)
    graph = GraphReplay(capacity, 2, n_step=1, streams=streams)
    program = SimpleNamespace(config=SimpleNamespace(gamma=gamma), replay=graph)
    obs = rng.random((streams, 2)).astype(np.float32)
    python.start_batch(obs, list(range(streams)))
    for _ in range(15):
        rewards = rng.normal(size=streams).astype(np.float32)
        terminated = rng.random(streams) < 0.2
        truncated = (rng.random(streams) < 0.2) & ~terminated
        next_obs = rng.random((streams, 2)).astype(np.float32)
        actions = rng.integers(0, 2, size=streams)
        python.append_batch(actions, rewards, next_obs, terminated, truncated)
        graph.add(obs, actions, rewards, next_obs, terminated, truncated)
        obs = next_obs.copy()
        for j in np.nonzero(terminated | truncated)[0]:
            obs[j] = rng.random(2)
            python.start(int(j), obs[j])
    slots = np.arange(len(python))
    assert len(python) == 45
    expected = python._gather(slots)
    weights = tf.ones([slots.size])
    got = CompiledProgram.gather(program, tf.constant(slots, tf.int32), weights)
    obs_, actions_, rewards_, next_obs_, pcont_, _ = (x.numpy() for x in got)
    np.testing.assert_array_equal(obs_, expected.obs)
    np.testing.assert_array_equal(actions_, expected.actions)
    np.testing.assert_array_equal(rewards_, expected.rewards)
    np.testing.assert_array_equal(next_obs_, expected.next_obs)
    np.testing.assert_array_equal(pcont_, expected.discount)
    assert 0 < np.sum(pcont_ == 0) < slots.size  # some terminated, some not
