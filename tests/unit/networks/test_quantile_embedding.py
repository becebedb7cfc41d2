"""IQN's fraction embedding layer: psi(x) * ReLU(Dense(cos(pi i tau)))."""

import numpy as np
import pytest
import tensorflow as tf

from rlkit.networks.quantile import QuantileEmbedding


def test_quantile_embedding_hand_computed():
    # D = 2, two cosines (i = 0, 1); W = [[1, -1], [2, 3]], b = [0, 0.5]
    # tau 0.5: cos(0), cos(pi/2) = 1, 0 -> phi = relu(1, -1 + 0.5) = 1, 0 -> features 3, 4 -> 3, 0
    # tau 1/3: 1, 0.5 -> relu(1 + 1, -1 + 1.5 + 0.5) = 2, 1 -> 6, 4
    layer = QuantileEmbedding(embedding_dim=2)
    features, taus = tf.constant([[3.0, 4.0]]), tf.constant([[0.5, 1 / 3]])
    layer(features, taus)
    layer.kernel.assign([[1.0, -1.0], [2.0, 3.0]])
    layer.bias.assign([0.0, 0.5])
    out = layer(features, taus).numpy()
    assert out.shape == (1, 2, 2)
    np.testing.assert_allclose(out[0], [[3.0, 0.0], [6.0, 4.0]], atol=1e-5)


def test_quantile_embedding_shapes_init_and_misfit():
    layer = QuantileEmbedding(seed=0)
    out = layer(tf.ones([4, 512]), tf.random.uniform([4, 8]))
    assert out.shape == (4, 8, 512)
    # Dopamine's init: uniform with variance (1 / sqrt 3) / fan_in -> limit sqrt(3 * that)
    limit = np.sqrt(3 * (1 / np.sqrt(3)) / 64)
    kernel = layer.kernel.numpy()
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.95 * limit
    with pytest.raises(ValueError, match=r"\[batch, D\].*\(4, 7, 7\)"):
        QuantileEmbedding()(tf.ones([4, 7, 7]), tf.ones([4, 8]))
