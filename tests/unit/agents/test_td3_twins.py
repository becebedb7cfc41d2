"""TD3's target-policy smoothing and policy delay in the compiled loop against the Python
loop's, on the same inputs:

- the smoothing noise: :meth:`~rlkit.agents.ddpg.td3.LearnerTerms.graph_smoothing_noise`
  against :meth:`~rlkit.agents.ddpg.td3.LearnerTerms.smoothing_noise` fed the graph's
  normals in place of its generator's: equal to float32's rounding (``atol = 1e-6 *
  half_range``: the graph scales in float32, numpy in float64 then rounds), zeros without
  smoothing; eagerly and compiled with XLA;
- the policy delay: both loops' update code run on the same blocks (the Python learner's
  :meth:`~rlkit.agents.ddpg.learner.DDPGLearner.learn` and its update block, and the compiled
  program's :meth:`~rlkit.run.compiled.ddpg.DDPGProgram.learn` and ``after_chunk``, on
  stand-ins for the networks and the replay: the cadence, no learning) take an actor step
  after exactly the same critic updates, every ``policy_delay``-th over the run, and count
  the same actor updates (integers: exact)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents.ddpg.learner import DDPGLearner
from rlkit.agents.ddpg.td3 import LearnerTerms
from rlkit.agents.off_policy import OffPolicyAgent
from rlkit.run.compiled.ddpg import DDPGProgram

HALF_RANGE = np.float32([2.0, 0.5, 7.0])


class Normals:
    """A generator whose ``standard_normal(shape)`` hands out given numbers."""

    def __init__(self, normal: np.ndarray) -> None:
        self.normal = normal

    def standard_normal(self, shape):
        assert self.normal.shape == tuple(shape)
        return self.normal.astype(np.float64)


@pytest.mark.parametrize(
    "jit", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["eager", "xla"]
)
def test_the_smoothing_noise_of_the_same_normals_is_the_same(jit):
    terms = [
        LearnerTerms(2, 2, 0.2, 0.5), LearnerTerms(2, 3, 1.0, 0.3), LearnerTerms(2, 2, 0.0, 0.5),
        LearnerTerms(),
    ]  # fmt: skip
    shape = [64, 3]

    def every_term(seed):
        normal = tf.random.stateless_normal(shape, seed)  # what the twin draws from the seed
        return normal, [
            t.graph_smoothing_noise(seed, shape, tf.constant(HALF_RANGE)) for t in terms
        ]

    run = tf.function(every_term, jit_compile=True) if jit else every_term
    clipped = 0
    for k in range(3):
        normal, noises = run(tf.constant([k, 5], tf.int32))
        for term, noise in zip(terms, noises, strict=True):
            want = term.smoothing_noise(Normals(normal.numpy()), tuple(shape), HALF_RANGE)
            got = noise.numpy()
            assert got.dtype == want.dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * HALF_RANGE.max(),
                                       err_msg=str(term))  # fmt: skip
            assert np.all(np.abs(got) <= term.target_noise_clip * HALF_RANGE * (1 + 1e-6))
            if term.target_noise == 0:
                assert not got.any()
            else:
                edge = np.float32(term.target_noise_clip * HALF_RANGE)
                clipped += int(np.sum(np.isclose(np.abs(got), edge, rtol=1e-6)))
    assert clipped > 0  # the clip was exercised


# -- the policy delay, through both loops' update code ------------------------------------------
B, OBS, ACT = 4, 2, 3


def _stand_in_learner(cfg, terms: LearnerTerms, log: dict):
    """A learner whose critic and actor steps only record when they run: the real update code
    of either loop around them decides which run."""
    learner = SimpleNamespace(config=cfg, terms=terms, num_updates=0, num_actor_updates=0,
                              rng=np.random.default_rng(0), _zeros={},
                              bounds=SimpleNamespace(dim=ACT, half_range=HALF_RANGE))  # fmt: skip

    def critic_step(*batch):
        log["critic"] += 1
        return tf.constant(0.0), tf.constant(0.0), tf.zeros([B])

    def actor_step(obs):
        log["actor_after"].append(log["critic"])
        return tf.constant(1.0)

    learner.critic_step, learner.actor_step = critic_step, actor_step
    learner.actor = SimpleNamespace(layer_weights=lambda: [])
    learner.weights_changed = lambda: None
    learner._unpack = lambda *block: block
    return learner


def _batch(lead):
    return (tf.zeros([*lead, OBS]), tf.zeros([*lead, ACT]), tf.zeros(lead), tf.zeros([*lead, OBS]),
            tf.ones(lead), tf.ones(lead))  # fmt: skip


def _python_loop(cfg, terms, num_envs, vector_steps):
    log = {"critic": 0, "actor_after": []}
    learner = _stand_in_learner(cfg, terms, log)
    learner._block_tensors = lambda batch: _batch(batch.rewards.shape)
    learner._train_block = lambda *inputs: DDPGLearner._train_block_graph(learner, *inputs)
    for t in range(vector_steps):
        before, now = t * num_envs, (t + 1) * num_envs
        agent = SimpleNamespace(config=cfg, replay=range(now))
        for size in OffPolicyAgent._blocks_due(agent, before, now):
            batch = SimpleNamespace(rewards=np.zeros((size, B), np.float32))
            DDPGLearner.learn(learner, batch, now)
    return log["actor_after"], learner.num_updates, learner.num_actor_updates


def _compiled_loop(cfg, terms, num_envs, vector_steps, chunk=5):
    log = {"critic": 0, "actor_after": []}
    program = DDPGProgram.__new__(DDPGProgram)
    program.config, program.priorities = cfg, None
    program.learner = _stand_in_learner(cfg, terms, log)
    program.bounds = program.learner.bounds
    program.updates_done = tf.Variable(tf.constant(0, tf.int64))
    program.minibatch = lambda seed: _batch([B])
    updates = 0
    for t in range(vector_steps):
        before, now = t * num_envs, (t + 1) * num_envs
        program.replay = SimpleNamespace(size=tf.constant(now, tf.int32))
        _, done = program.learn(tf.constant(before, tf.int64), tf.constant(now, tf.int64),
                                tf.constant([4, t], tf.int32))  # fmt: skip
        updates += int(done)
        if t % chunk == chunk - 1 or t == vector_steps - 1:  # the loop's counters, per chunk
            program.after_chunk(updates)
            updates = 0
    return log["actor_after"], program.learner.num_updates, program.learner.num_actor_updates


DELAYS = [(2, 2, 3, 2), (3, 1, 1, 1), (3, 4, -1, 3), (1, 2, 2, 2), (4, 5, 3, 4)]


@pytest.mark.slow
@pytest.mark.parametrize(("delay", "train_freq", "gradient_steps", "num_envs"), DELAYS)
def test_both_loops_take_the_actor_steps_after_the_same_critic_updates(
    delay, train_freq, gradient_steps, num_envs
):
    cfg = SimpleNamespace(learning_starts=10, batch_size=B, train_freq=train_freq,
                          gradient_steps=gradient_steps, lr_end_fraction=-1.0,
                          train_freq_unit="step")  # fmt: skip
    terms = LearnerTerms(2, delay, 0.2, 0.5)
    steps = 60 // num_envs
    python = _python_loop(cfg, terms, num_envs, steps)
    compiled = _compiled_loop(cfg, terms, num_envs, steps)
    assert python == compiled
    actor_after, critic_updates, actor_updates = python
    assert critic_updates > 2 * delay
    assert actor_after == list(range(delay, critic_updates + 1, delay))
    assert actor_updates == len(actor_after)
