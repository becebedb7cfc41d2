"""The MultiDiscrete policy's formulas (rlkit/learn/losses.py): the log-probability and the
entropy of independent per-dimension softmaxes, and their gradients, against hand-computed
values; the numpy sampler acting uses (rlkit/agents/ppo/acting.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents.ppo.acting import multi_discrete_sample
from rlkit.learn.losses import multi_categorical_entropy, multi_categorical_log_prob

NVEC = (2, 3)
# dimension 0: logits [0, ln 3] -> probabilities [1/4, 3/4];
# dimension 1: logits [0, ln 2, ln 5] -> probabilities [1/8, 2/8, 5/8]
LOGITS = np.array([[0.0, math.log(3), 0.0, math.log(2), math.log(5)]], np.float32)
P0, P1 = np.array([1 / 4, 3 / 4]), np.array([1 / 8, 2 / 8, 5 / 8])


def test_the_log_probability_is_the_sum_of_each_dimensions():
    actions = tf.constant([[1, 2]], tf.int32)
    got = multi_categorical_log_prob(tf.constant(LOGITS), actions, NVEC).numpy()
    assert got.shape == (1,)
    assert got[0] == pytest.approx(math.log(3 / 4) + math.log(5 / 8), rel=1e-6)
    # one softmax over all five logits (the bug this catches) would give ln(3/11) + ln(5/11)
    assert got[0] != pytest.approx(math.log(3 / 11) + math.log(5 / 11), rel=1e-3)
    other = multi_categorical_log_prob(tf.constant(LOGITS), tf.constant([[0, 0]]), NVEC)
    assert other.numpy()[0] == pytest.approx(math.log(1 / 4) + math.log(1 / 8), rel=1e-6)


def test_the_entropy_is_the_sum_of_each_dimensions():
    h0 = -(1 / 4 * math.log(1 / 4) + 3 / 4 * math.log(3 / 4))  # 0.5623 nats
    h1 = -(1 / 8 * math.log(1 / 8) + 2 / 8 * math.log(2 / 8) + 5 / 8 * math.log(5 / 8))
    got = multi_categorical_entropy(tf.constant(LOGITS), NVEC).numpy()
    assert got.shape == (1,)
    assert got[0] == pytest.approx(h0 + h1, rel=1e-6)
    assert got[0] == pytest.approx(0.562335 + 0.900256, abs=1e-5)
    uniform = multi_categorical_entropy(tf.zeros([3, 5]), NVEC).numpy()
    np.testing.assert_allclose(uniform, math.log(2) + math.log(3), rtol=1e-6)


def test_each_dimensions_logits_get_their_own_gradient():
    """d log pi / d logits_d = onehot(a_d) - p_d within dimension d's slice, nothing from the
    other's; d H / d logits_d = -p_d (log p_d + H_d)."""
    logits = tf.Variable(LOGITS)
    with tf.GradientTape(persistent=True) as tape:
        log_prob = multi_categorical_log_prob(logits, tf.constant([[1, 2]]), NVEC)
        entropy = multi_categorical_entropy(logits, NVEC)
    grad = tape.gradient(log_prob, logits).numpy()[0]
    np.testing.assert_allclose(grad[:2], [0 - 1 / 4, 1 - 3 / 4], atol=1e-6)
    np.testing.assert_allclose(grad[2:], [0 - 1 / 8, 0 - 2 / 8, 1 - 5 / 8], atol=1e-6)
    # each slice sums to 0 (a softmax's gradient), which one softmax over all five would not
    assert grad[:2].sum() == pytest.approx(0, abs=1e-6)
    assert grad[2:].sum() == pytest.approx(0, abs=1e-6)
    h0, h1 = -(P0 * np.log(P0)).sum(), -(P1 * np.log(P1)).sum()
    grad_h = tape.gradient(entropy, logits).numpy()[0]
    np.testing.assert_allclose(grad_h[:2], -P0 * (np.log(P0) + h0), atol=1e-6)
    np.testing.assert_allclose(grad_h[2:], -P1 * (np.log(P1) + h1), atol=1e-6)


def test_a_batch_and_a_dimension_of_size_one():
    nvec = (1, 3)
    logits = tf.constant([[5.0, 0.0, 0.0, 0.0], [-2.0, 0.0, math.log(2), math.log(5)]])
    got = multi_categorical_log_prob(logits, tf.constant([[0, 1], [0, 2]]), nvec).numpy()
    np.testing.assert_allclose(got, [math.log(1 / 3), math.log(5 / 8)], rtol=1e-6)


def test_sampling_per_dimension():
    logits = np.log(np.concatenate([P0, P1]))[None].repeat(20_000, axis=0)
    greedy = multi_discrete_sample(logits, np.zeros_like(logits), NVEC)
    assert greedy.shape == (20_000, 2) and (greedy == [1, 2]).all()
    gumbel = np.random.default_rng(0).gumbel(size=logits.shape)
    drawn = multi_discrete_sample(logits, gumbel, NVEC)
    for d, probs in enumerate((P0, P1)):
        freq = np.bincount(drawn[:, d], minlength=len(probs)) / len(drawn)
        np.testing.assert_allclose(freq, probs, atol=0.012)  # ~4 standard errors
    one = multi_discrete_sample(logits[0], np.zeros(5), NVEC)  # one observation: [D]
    assert one.tolist() == [1, 2]
