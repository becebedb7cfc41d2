"""rlkit.learn.optimizers.torch_adam: PyTorch's Adam (epsilon on the bias-corrected root),
against its formula by hand and against Keras' Adam, which places epsilon elsewhere."""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from rlkit.learn.optimizers import torch_adam


def torch_steps(grads, lr, eps, beta_1=0.9, beta_2=0.999, w=0.0):
    """``torch.optim.Adam`` on one scalar weight, written out (``_single_tensor_adam``)."""
    m = v = 0.0
    for t, g in enumerate(grads, start=1):
        m += (1 - beta_1) * (g - m)
        v = beta_2 * v + (1 - beta_2) * g * g
        denominator = math.sqrt(v) / math.sqrt(1 - beta_2**t) + eps
        w -= lr / (1 - beta_1**t) * m / denominator
    return w


def run(optimizer, grads, w=0.0):
    variable = tf.Variable([w], dtype=tf.float32)
    optimizer.build([variable])
    for g in grads:
        optimizer.apply_gradients([(tf.constant([g], tf.float32), variable)])
    return float(variable.numpy()[0])


@pytest.mark.parametrize("grads", [[1e-6, 3e-6, -2e-6], [0.5, -0.25, 1.0, 0.1]])
def test_torch_adam_is_pytorchs_formula(grads):
    want = torch_steps(grads, lr=1e-2, eps=1e-5)
    assert run(torch_adam(1e-2, epsilon=1e-5), grads) == pytest.approx(want, rel=1e-5)


def test_the_first_step_of_a_gradient_near_epsilon_is_longer_than_keras_adams():
    # one step of g = 1e-6: torch lr g/(|g| + 1e-5) = lr/11; Keras lr g/(|g| + 1e-5/sqrt(1e-3))
    # = lr/317.2: Keras' own Adam moves 28.8x less
    ours = run(torch_adam(1e-2, epsilon=1e-5), [1e-6])
    keras_own = run(keras.optimizers.Adam(1e-2, epsilon=1e-5), [1e-6])
    assert ours == pytest.approx(-1e-2 / 11, rel=1e-5)
    assert keras_own == pytest.approx(-1e-2 * 1e-6 / (1e-6 + 1e-5 / math.sqrt(1e-3)), rel=1e-4)
    assert ours / keras_own == pytest.approx(28.8, rel=1e-2)


def test_it_trains_a_model_with_a_learning_rate_that_changes():
    optimizer = torch_adam(0.1, epsilon=1e-8)
    variable = tf.Variable(np.array([3.0, -2.0], np.float32))
    optimizer.build([variable])

    @tf.function
    def step(rate):
        optimizer.learning_rate.assign(rate)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(variable**2)
        optimizer.apply_gradients([(tape.gradient(loss, variable), variable)])

    for _ in range(200):
        step(0.1)
    assert np.all(np.abs(variable.numpy()) < 0.05)
    assert int(optimizer.iterations.numpy()) == 200
