"""PPO's formulas (rlkit/learn/advantages.py) against cases worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

from rlkit.learn.advantages import (
    approx_kl,
    clipped,
    clipped_surrogate,
    gae,
    normalize_advantages,
    value_error,
)

GAMMA, LAMBDA = 0.9, 0.5  # gamma * lambda = 0.45
X = 99.0  # next values GAE must not read (neither truncated nor the rollout's last step)


def test_gae_two_streams_truncation_inside_termination_and_both_by_hand():
    """Stream 0: a truncation at t=1 inside the rollout. Stream 1: a truncation at t=0 and a
    termination at t=2 in one rollout. T=4, N=2; columns are streams."""
    rewards = np.array([[1, 1], [2, 1], [3, 1], [4, 1]], np.float32)
    values = np.array([[0.5, 1], [1.0, 1], [1.5, 1], [2.0, 1]], np.float32)
    next_values = np.array([[X, 5.0], [10.0, X], [X, X], [3.0, 2.0]], np.float32)
    terminated = np.array([[0, 0], [0, 0], [0, 1], [0, 0]], bool)
    truncated = np.array([[0, 1], [1, 0], [0, 0], [0, 0]], bool)
    adv, ret = gae(rewards, values, next_values, terminated, truncated, GAMMA, LAMBDA)
    # stream 0, backwards:
    # t=3 (last): 4 + 0.9 * 3.0 - 2.0 = 4.7
    # t=2: delta 3 + 0.9 * V(obs_3)=2.0 - 1.5 = 3.3; A = 3.3 + 0.45 * 4.7 = 5.415
    # t=1 (truncated: bootstraps from V(final obs) = 10, the chain is cut): 2 + 9 - 1 = 10
    # t=0: 1 + 0.9 * V(obs_1)=1.0 - 0.5 = 1.4; A = 1.4 + 0.45 * 10 = 5.9
    # stream 1:
    # t=3 (last): 1 + 0.9 * 2.0 - 1 = 1.8
    # t=2 (terminated: no bootstrap, cut): 1 + 0 - 1 = 0
    # t=1: 1 + 0.9 * 1 - 1 = 0.9; A = 0.9 + 0.45 * 0 = 0.9
    # t=0 (truncated: from V(final obs) = 5): 1 + 4.5 - 1 = 4.5
    expected = np.array([[5.9, 4.5], [10.0, 0.9], [5.415, 0.0], [4.7, 1.8]], np.float32)
    np.testing.assert_allclose(adv, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ret, expected + values, rtol=1e-6)


def test_gae_a_termination_on_the_last_step_bootstraps_nothing():
    flags = np.array([[False], [True]]), np.array([[False], [False]])  # terminated, truncated
    adv, _ = gae([[1.0], [2.0]], [[0.0], [0.0]], [[X], [100.0]], *flags, GAMMA, LAMBDA)
    # t=1: 2; t=0: 1 + 0.9 * 0 + 0.45 * 2 = 1.9
    np.testing.assert_allclose(adv[:, 0], [1.9, 2.0], rtol=1e-6)


def test_gae_a_truncation_reads_the_final_observation_not_the_reset_one():
    """Stream 0 truncated at t=0: its next step (t=1) starts from the reset observation,
    whose value V(obs_1) = 7 must not enter A_0; the final observation's (3) does."""
    rewards, values = np.zeros((2, 1)), np.array([[0.0], [7.0]])
    truncated = np.array([[True], [False]])
    adv, _ = gae(rewards, values, np.array([[3.0], [0.0]]), np.zeros((2, 1), bool), truncated,
                 1.0, 1.0)  # fmt: skip
    assert adv[0, 0] == pytest.approx(3.0)  # not 7 (the reset's), not 0 (a terminal)


def test_gae_with_lambda_one_and_no_ends_is_the_discounted_return_less_v():
    rng = np.random.default_rng(0)
    r, v, nv = rng.normal(size=(5, 2)), rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    flags = np.zeros((5, 2), bool)
    adv, _ = gae(r, v, nv, flags, flags, 0.9, 1.0)
    for n in range(2):
        g = nv[-1, n]
        for t in range(4, -1, -1):
            g = r[t, n] + 0.9 * g
            assert adv[t, n] == pytest.approx(g - v[t, n], rel=1e-5, abs=1e-5)


def surrogate_and_gradient(ratio: float, advantage: float, clip: float = 0.2):
    log_prob = tf.Variable([math.log(ratio)])
    with tf.GradientTape() as tape:
        loss = clipped_surrogate(log_prob, tf.constant([0.0]), tf.constant([advantage]), clip)
    return float(loss[0]), float(tape.gradient(loss, log_prob)[0])


@pytest.mark.parametrize(
    "ratio, advantage, loss, gradient",
    [
        (1.1, 2.0, -2.2, -2.2),  # inside the clip: -ratio A, gradient -ratio A
        (1.5, 2.0, -2.4, 0.0),  # A > 0 above 1 + eps: clipped, flat
        (0.5, 2.0, -1.0, -1.0),  # A > 0 below 1 - eps: the unclipped term is smaller
        (1.5, -2.0, 3.0, 3.0),  # A < 0 above 1 + eps: the unclipped term is smaller
        (0.5, -2.0, 1.6, 0.0),  # A < 0 below 1 - eps: clipped, flat
    ],
)
def test_the_clipped_surrogate_on_both_sides_of_the_clip(ratio, advantage, loss, gradient):
    value, grad = surrogate_and_gradient(ratio, advantage)
    assert value == pytest.approx(loss, rel=1e-6)
    assert grad == pytest.approx(gradient, rel=1e-5, abs=1e-7)


def test_value_error_with_and_without_clipping():
    values = tf.Variable([2.0, 1.2])
    old, returns = tf.constant([1.0, 1.0]), tf.constant([3.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        plain = value_error(values, old, returns)
        clipped_loss = value_error(values, old, returns, 0.5)
    np.testing.assert_allclose(plain.numpy(), [1.0, 3.24], rtol=1e-6)
    # V' = 1 + clip(V - 1, -0.5, 0.5): 1.5 (clipped: no gradient), 1.2 (inside)
    np.testing.assert_allclose(clipped_loss.numpy(), [2.25, 3.24], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(plain, values).numpy(), [-2.0, -3.6], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(clipped_loss, values).numpy(), [0.0, -3.6],
                               rtol=1e-6)  # fmt: skip


def test_advantages_are_normalised_with_the_sample_std():
    a = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    out = normalize_advantages(tf.constant(a)).numpy()
    np.testing.assert_allclose(out, (a - 2.5) / (np.std(a, ddof=1) + 1e-8), rtol=1e-6)
    assert normalize_advantages(tf.constant([3.0])).numpy().tolist() == [3.0]


def test_approx_kl_and_the_clip_fraction():
    log_ratio = tf.constant([0.1, -0.1, 0.0])
    expected = [math.exp(0.1) - 1.1, math.exp(-0.1) - 0.9, 0.0]
    np.testing.assert_allclose(approx_kl(log_ratio).numpy(), expected, rtol=1e-5)
    ratios = tf.constant([0.7, 0.9, 1.0, 1.25])
    assert clipped(ratios, 0.2).numpy().tolist() == [1.0, 0.0, 0.0, 1.0]
