"""labs/atari_sb3_reference.py: the reference run's schedule and optimizer are
Dopamine's (its epsilon by hand, its centred RMSProp against Keras')."""

import importlib

import numpy as np
import pytest


@pytest.fixture(scope="module")
def reference():
    return importlib.import_module("labs.atari_sb3_reference")  # it imports labs.atari_dopamine


def test_epsilon_is_dopamines_linearly_decaying_epsilon(reference):
    """linearly_decaying_epsilon(250k, step, 20k, 0.01), by hand."""
    epsilon = reference.dopamine_epsilon
    assert epsilon(0) == epsilon(20_000) == 1.0
    assert epsilon(145_000) == pytest.approx(0.01 + 0.99 * 0.5)
    assert epsilon(270_000) == pytest.approx(0.01) and epsilon(10**6) == pytest.approx(0.01)


def test_torch_centred_rmsprop_is_tensorflows(reference):
    """Epsilon inside the root, mean square from 0: Keras' RMSprop(centered=True) step for
    step (PyTorch's own adds epsilon outside the root)."""
    torch = pytest.importorskip("torch")  # the bench extra; not installed by the test extra
    import keras
    import tensorflow as tf

    rng = np.random.default_rng(0)
    start = rng.normal(size=(5,)).astype(np.float32)
    weights = torch.nn.Parameter(torch.tensor(start))
    optimizer = reference.centred_rmsprop_class()([weights], lr=2.5e-4, rho=0.95, eps=1e-5)
    variable = tf.Variable(start)
    keras_optimizer = keras.optimizers.RMSprop(2.5e-4, rho=0.95, epsilon=1e-5, centered=True)
    for grad in rng.normal(size=(20, 5)).astype(np.float32) * 1e-3:  # small: epsilon matters
        weights.grad = torch.tensor(grad)
        optimizer.step()
        keras_optimizer.apply_gradients([(tf.constant(grad), variable)])
    np.testing.assert_allclose(weights.detach().numpy(), variable.numpy(), rtol=0, atol=1e-7)
    assert np.abs(variable.numpy() - start).max() > 1e-4  # it moved
