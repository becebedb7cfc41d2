"""Munchausen DQN's target against hand-computed values."""

import numpy as np
import pytest
import tensorflow as tf

from rlkit.learn.munchausen import munchausen_target, scaled_log_policy

LN3, LN4 = np.log(3.0), np.log(4.0)


def test_scaled_log_policy():
    # tau 1, q = 0, ln 3: pi = 1/4, 3/4 -> log pi = ln 0.25, ln 0.75; tau 0.5 halves the q-scale:
    # q / 0.5 = 0, 2 ln 3 -> pi = 1/10, 9/10 -> 0.5 log pi = 0.5 ln 0.1, 0.5 ln 0.9
    q = tf.constant([[0.0, LN3]])
    np.testing.assert_allclose(
        scaled_log_policy(q, 1.0).numpy(), [[np.log(0.25), np.log(0.75)]], rtol=1e-6
    )
    np.testing.assert_allclose(
        scaled_log_policy(q, 0.5).numpy(), [[0.5 * np.log(0.1), 0.5 * np.log(0.9)]], rtol=1e-6
    )
    # stable for large values at a small temperature (the paper's 0.03)
    assert np.all(np.isfinite(scaled_log_policy(tf.constant([[1000.0, 0.0]]), 0.03).numpy()))


def test_munchausen_target_hand_computed():
    # tau 1, alpha 0.9, l0 -1; q(s) = q(s') = 0, ln 3 -> pi = 1/4, 3/4
    # bonus: action 0: clip(ln 0.25 = -1.386, -1, 0) = -1 -> -0.9;
    #        action 1: ln 0.75 = -0.287682 -> 0.9 * -0.287682 = -0.258914
    # soft value: sum pi (q - log pi) = 0.25 (0 + 1.386294) + 0.75 (1.098612 + 0.287682) = ln 4
    # r 1, pcont 0.5: a=0: 1 - 0.9 + 0.5 ln 4 = 0.793147; a=1: 1 - 0.258914 + 0.693147 = 1.434233
    # terminal (pcont 0), a=1, r 2: 2 - 0.258914 = 1.741086
    q = tf.constant([[0.0, LN3]] * 3)
    y = munchausen_target(
        q,
        tf.constant([0, 1, 1]),
        tf.constant([1.0, 1.0, 2.0]),
        tf.constant([0.5, 0.5, 0.0]),
        q,
        tau=1.0,
        alpha=0.9,
    ).numpy()
    np.testing.assert_allclose(
        y, [0.1 + 0.5 * LN4, 1 + 0.9 * np.log(0.75) + 0.5 * LN4, 2 + 0.9 * np.log(0.75)], 1e-6
    )
    np.testing.assert_allclose(y, [0.793147, 1.434233, 1.741086], atol=1e-6)


def test_limits_soft_dqn_and_dqn():
    q = tf.constant([[0.0, LN3]])
    # alpha 0: no bonus, the soft target r + pcont * tau logsumexp(q' / tau) = 1 + ln 4
    y = munchausen_target(q, [0], [1.0], [1.0], q, tau=1.0, alpha=0.0).numpy()
    np.testing.assert_allclose(y, [1 + LN4], rtol=1e-6)
    # tau -> 0, alpha 0: DQN's r + pcont max q'
    y = munchausen_target(q, [0], [1.0], [0.5], tf.constant([[1.0, 2.0]]), tau=1e-4, alpha=0.0)
    np.testing.assert_allclose(y.numpy(), [1 + 0.5 * 2.0], atol=1e-4)


def test_no_gradient_and_bad_arguments():
    q = tf.Variable([[0.0, 1.0]])
    with tf.GradientTape() as tape:
        y = munchausen_target(q, [0], [1.0], [0.9], q)
    assert tape.gradient(y, q) is None
    with pytest.raises(ValueError, match="tau"):
        munchausen_target(q, [0], [1.0], [0.9], q, tau=0.0)
    with pytest.raises(ValueError, match="alpha"):
        munchausen_target(q, [0], [1.0], [0.9], q, alpha=1.5)


def test_temperature_enters_both_terms():
    # tau 0.5, q(s) = q(s') = 0, ln 3: q / tau = 0, 2 ln 3 -> pi = 1/10, 9/10
    # bonus at a=1: 0.9 * 0.5 ln 0.9 = -0.047412; soft value 0.5 ln(1 + 9) = 1.151293
    # r 0, pcont 1: y = 1.103881
    q = tf.constant([[0.0, LN3]])
    y = munchausen_target(q, [1], [0.0], [1.0], q, tau=0.5, alpha=0.9).numpy()
    np.testing.assert_allclose(y, [0.9 * 0.5 * np.log(0.9) + 0.5 * np.log(10.0)], rtol=1e-6)
    np.testing.assert_allclose(y, [1.103881], atol=1e-6)
