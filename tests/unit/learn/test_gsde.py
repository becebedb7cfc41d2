"""gSDE's formulas (rlkit.learn.gsde) by hand: the std of the exploration matrix, the
per-state variance ``(z^2) @ (sigma^2)`` against a Monte-Carlo estimate of the noise
``z . E``, the log-probability and entropy of that Gaussian, the held matrices' cadence,
and where the gradient goes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

from rlkit.learn import gsde

LN2, HALF_LOG_2PI = math.log(2.0), 0.5 * math.log(2.0 * math.pi)
#: sigma = [[1, 2], [0.5, 1]] (L = 2 latent units, A = 2 actions)
LOG_STD = np.array([[0.0, LN2], [-LN2, 0.0]], np.float32)
LATENT = np.array([[1.0, 2.0]], np.float32)


def test_the_std_is_exp_or_expln_full_or_shared_over_the_actions():
    np.testing.assert_allclose(gsde.gsde_std(tf.constant(LOG_STD), 2).numpy(),
                               [[1.0, 2.0], [0.5, 1.0]], rtol=1e-6)  # fmt: skip
    shared = gsde.gsde_std(tf.constant([[0.0], [-LN2]], tf.float32), 3).numpy()
    np.testing.assert_allclose(shared, [[1.0] * 3, [0.5] * 3], rtol=1e-6)
    # expln: exp(x) for x <= 0, log1p(x) + 1 above: e^-1, 1, log(2.5) + 1
    log_std = np.array([[-1.0], [0.0], [1.5]], np.float32)
    expected = [[math.exp(-1.0)], [1.0], [math.log(2.5) + 1.0]]
    np.testing.assert_allclose(gsde.gsde_std(tf.constant(log_std), 1, True).numpy(), expected,
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(gsde.numpy_gsde_std(log_std, 1, True), expected, rtol=1e-6)


def test_variance_log_prob_and_entropy_by_hand():
    # Var(u_0) = 1^2 1^2 + 2^2 0.5^2 = 2; Var(u_1) = 1^2 2^2 + 2^2 1^2 = 8
    std = gsde.gsde_std(tf.constant(LOG_STD), 2)
    variance = gsde.gsde_variance(tf.constant(LATENT), std)
    np.testing.assert_allclose(variance.numpy(), [[2.0, 8.0]], rtol=1e-6)
    # u - mean = [1, -2]: log N = -1/(2 2) - ln(2)/2 - ln(2 pi)/2 + -4/(2 8) - ln(8)/2 - ln(2 pi)/2
    mean = tf.constant([[0.5, 0.0]])
    u = mean + tf.constant([[1.0, -2.0]])
    by_hand = -0.25 - 0.5 * LN2 - 0.25 - 1.5 * LN2 - 2 * HALF_LOG_2PI  # -3.724171
    assert gsde.gsde_log_prob(u, mean, variance).numpy()[0] == pytest.approx(by_hand, abs=1e-5)
    # entropy: sum_j 0.5 + ln(2 pi)/2 + ln(var_j)/2 = 1 + ln(2 pi) + (ln 2 + ln 8)/2 = 4.224171
    by_hand = 1.0 + 2 * HALF_LOG_2PI + 2 * LN2
    assert gsde.gsde_entropy(variance).numpy()[0] == pytest.approx(by_hand, abs=1e-5)


def test_the_variance_is_that_of_the_noise_monte_carlo():
    """The noise ``z . E`` over 200,000 draws of ``E`` (entries N(0, sigma^2)): its variance
    per action is ``(z^2) @ (sigma^2)``, and its actions are uncorrelated."""
    rng = np.random.default_rng(0)
    log_std = rng.normal(-0.5, 0.5, (3, 2))
    latent = np.array([[0.3, -1.2, 0.8]])
    std = gsde.numpy_gsde_std(log_std, 2)
    matrices = std * rng.standard_normal((200_000, 3, 2))
    noise = gsde.numpy_gsde_noise(np.repeat(latent, len(matrices), 0), matrices)
    expected = gsde.gsde_variance(tf.constant(latent), tf.constant(std)).numpy()[0]
    np.testing.assert_allclose(noise.var(axis=0), expected, rtol=0.02)
    assert abs(np.corrcoef(noise.T)[0, 1]) < 0.01


def test_matrices_are_held_between_draws_and_redrawn_every_sample_freq_acts():
    held = gsde.ExplorationMatrices(2, 1, sample_freq=3)
    rng, std, z = np.random.default_rng(0), np.ones((2, 1)), np.array([[1.0, -1.0], [2.0, 0.5]])
    noises = [held.noise(z, std, rng) for _ in range(7)]
    for k in (1, 2, 4, 5):
        np.testing.assert_array_equal(noises[k], noises[k - 1])  # held
    for k in (3, 6):
        assert not np.allclose(noises[k], noises[k - 1])  # redrawn at acts 3 and 6
    assert not np.allclose(noises[0][0], noises[0][1])  # one matrix per stream
    again = held.noise(z, std, rng)
    held.restart()
    assert not np.allclose(held.noise(z, std, rng), again)  # a restart redraws at once
    once = gsde.ExplorationMatrices(2, 1, sample_freq=-1)
    first = once.noise(z, std, rng)
    for _ in range(50):
        np.testing.assert_array_equal(once.noise(z, std, rng), first)  # -1: until a restart
    once.restart_at(1)
    assert not np.allclose(once.noise(z, std, rng), first)
    state = once.state_dict()
    copy = gsde.ExplorationMatrices(2, 1, sample_freq=-1)
    copy.load_state_dict(state)
    np.testing.assert_array_equal(copy.noise(z, std, rng), once.noise(z, std, rng))


@pytest.mark.parametrize("learn_features", [False, True])
def test_the_gradient_reaches_log_std_and_the_latent_only_when_learned(learn_features):
    log_std = tf.Variable(LOG_STD)
    latent = tf.Variable(LATENT)
    mean = tf.constant([[0.5, 0.0]])
    with tf.GradientTape(persistent=True) as tape:
        z = gsde.latent_input(latent, learn_features)
        std = gsde.gsde_std(log_std, 2)
        u = mean + tf.matmul(z, std * tf.constant([[0.3, -0.7], [1.1, 0.2]]))
        log_prob = gsde.gsde_log_prob(u, mean, gsde.gsde_variance(z, std))
    grad_std, grad_latent = tape.gradient(log_prob, [log_std, latent])
    assert np.all(np.abs(grad_std.numpy()) > 1e-4)
    if learn_features:
        assert np.any(np.abs(grad_latent.numpy()) > 1e-4)
    else:
        assert grad_latent is None


def test_numpy_latent_mlp_gives_the_last_hidden_layer_and_the_clipped_head():
    k0, b0 = np.array([[1.0, -1.0]]), np.array([0.0, 0.5])
    k1, b1 = np.array([[3.0], [1.0]]), np.array([0.0])
    latent, out = gsde.NumpyLatentMLP([k0, b0, k1, b1], "relu", clip=2.0)(np.array([[2.0]]))
    np.testing.assert_allclose(latent, [[2.0, 0.0]])  # relu(2, -1.5)
    np.testing.assert_allclose(out, [[2.0]])  # 6 clipped to 2
    latent, out = gsde.NumpyLatentMLP([k0, b0, k1, b1], "tanh")(np.array([[2.0]]))
    np.testing.assert_allclose(latent, [[np.tanh(2.0), np.tanh(-1.5)]])
    np.testing.assert_allclose(out, [[3 * np.tanh(2.0) + np.tanh(-1.5)]])
