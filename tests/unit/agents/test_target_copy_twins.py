"""DQN's hard target-copy cadence in the compiled loop against the Python loop's, on the same
step counts: :func:`rlkit.agents.dqn.target_copy.graph_target_copy_due` equals
:func:`~rlkit.agents.dqn.target_copy.target_copy_due` bit for bit (booleans), and, driven
through the same vector steps, the compiled program's :meth:`~rlkit.run.compiled.dqn.
DQNProgram.learn` copies at exactly the steps where the Python loop's
:meth:`~rlkit.agents.off_policy.OffPolicyAgent._blocks_due`, :meth:`~rlkit.agents.dqn.learner.
DQNLearner.learn` and :meth:`~rlkit.agents.dqn.learner.DQNLearner.after_blocks` copy (both
run on stand-ins for the networks and the replay: the cadence, no learning)."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents.dqn.learner import DQNLearner
from rlkit.agents.dqn.target_copy import graph_target_copy_due, target_copy_due
from rlkit.agents.off_policy import OffPolicyAgent
from rlkit.run.compiled.dqn import DQNProgram


def test_the_graph_rule_equals_the_python_rule():
    cases = list(itertools.product([False, True], range(0, 40, 3), [0, 1, 2, 5, 11], [1, 3, 10]))
    stale, before, gap, every = (np.array(column) for column in zip(*cases, strict=True))
    now = before + gap
    for period in (1, 3, 10):
        rows = every == period
        got = graph_target_copy_due(tf.constant(stale[rows]), tf.constant(before[rows], tf.int64),
                                    tf.constant(now[rows], tf.int64), period).numpy()  # fmt: skip
        want = [target_copy_due(bool(s), int(b), int(n), period)
                for s, b, n in zip(stale[rows], before[rows], now[rows], strict=True)]  # fmt: skip
        np.testing.assert_array_equal(got, want)


def _config(rng: np.random.Generator) -> SimpleNamespace:
    return SimpleNamespace(
        learning_starts=int(rng.choice([0, 17, 50])), batch_size=int(rng.choice([8, 32])),
        train_freq=int(rng.choice([1, 4, 5])), gradient_steps=int(rng.choice([1, 2, -1])),
        target_update=int(rng.choice([1, 3, 10, 60])), target_tau=0.0, learning_rate_end=-1.0,
        train_freq_unit="step", r_max_running=False,
    )  # fmt: skip


def _python_copies(cfg, num_envs: int, vector_steps: int) -> list[int]:
    """The step counts at which the Python loop's agent copies (its real methods, on a
    learner whose update block is a stand-in)."""
    copies: list[int] = []
    learner = SimpleNamespace(config=cfg, num_updates=0, _target_stale=False)
    learner.train_block = lambda: (tf.zeros([3]), None, None)
    learner.tensors = lambda batch: ()
    learner._sync_target_graph = lambda: copies.append(now)
    learner.sync_target = lambda: DQNLearner.sync_target(learner)
    for t in range(vector_steps):
        before, now = t * num_envs, (t + 1) * num_envs
        agent = SimpleNamespace(config=cfg, replay=range(now))  # len(): transitions stored
        for size in OffPolicyAgent._blocks_due(agent, before, now):
            batch = SimpleNamespace(rewards=np.zeros((size, cfg.batch_size)))
            DQNLearner.learn(learner, batch, now)
        DQNLearner.after_blocks(learner, before, now)
    return copies


def _compiled_copies(cfg, num_envs: int, vector_steps: int) -> list[int]:
    """The step counts at which the compiled program's :meth:`DQNProgram.learn` copies (its
    real code run eagerly, on a learner and replay that are stand-ins)."""
    copies: list[int] = []
    program = DQNProgram.__new__(DQNProgram)
    program.config, program.priorities = cfg, None
    program.target_stale = tf.Variable(False)
    program.minibatch = lambda seed: ()
    program.learner = SimpleNamespace(
        update_step=lambda: ([tf.constant(0.0)] * 3, None),
        hard_copy=SimpleNamespace(update=lambda: copies.append(now)),
    )
    for t in range(vector_steps):
        before, now = t * num_envs, (t + 1) * num_envs
        program.replay = SimpleNamespace(size=tf.constant(now, tf.int32))
        program.learn(tf.constant(before, tf.int64), tf.constant(now, tf.int64),
                      tf.constant([1, 2], tf.int32))  # fmt: skip
    return copies


@pytest.mark.slow
def test_both_loops_copy_at_the_same_steps():
    """Ten configurations of about 120 steps each (blocks more and less often than copies,
    so that a copy is due with and without an update since the last)."""
    skipped = 0
    for trial in range(10):
        rng = np.random.default_rng(trial)
        cfg, num_envs = _config(rng), int(rng.choice([1, 2, 4, 7]))
        vector_steps = 120 // num_envs
        python = _python_copies(cfg, num_envs, vector_steps)
        assert python, (vars(cfg), num_envs)  # each configuration copies
        assert python == _compiled_copies(cfg, num_envs, vector_steps), (vars(cfg), num_envs)
        crossings = sum(s // cfg.target_update > (s - num_envs) // cfg.target_update
                        for s in range(python[0], python[-1] + 1, num_envs))  # fmt: skip
        skipped += crossings - len(python)
    assert skipped > 0  # some crossings found the target fresh: the stale rule was exercised
