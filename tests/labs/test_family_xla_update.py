"""labs/family_xla_update.py: the configs it times and its im2col convolution.

The im2col form must be Keras' ``Conv2D`` (same weights) to float32 rounding, forward and
gradient, or the lab would time another network; C51's settings are Rainbow's MinAtar
preset with 1-step returns and uniform replay.
"""

from __future__ import annotations

import types

import keras
import numpy as np
import pytest
import tensorflow as tf

from labs import family_xla_update as lab

pytestmark = pytest.mark.labs


def test_c51_is_rainbows_preset_with_one_step_uniform_replay():
    rainbow, c51 = lab.preset_config("rainbow"), lab.preset_config("c51")
    assert c51 == {**rainbow, "n_step": 1, "prioritized": False}
    assert rainbow["n_step"] == 3 and rainbow["prioritized"] is True
    assert lab.preset_config("qrdqn")["num_quantiles"] == 200


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_im2col_is_keras_conv2d_forward_and_gradient(padding):
    rng = np.random.default_rng(3)
    layer = keras.layers.Conv2D(16, 3, padding=padding, activation="relu", name="c")
    x = tf.constant(rng.random((5, 10, 10, 4)).astype(np.float32))
    layer.build(x.shape)
    layer.bias.assign(rng.normal(size=16).astype(np.float32) * 0.1)

    def value_and_grads(call):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = call(x)
            loss = tf.reduce_sum(y * y)
        return (y, *tape.gradient(loss, [x, layer.kernel, layer.bias]))

    native = value_and_grads(layer)
    patched = types.MethodType(lab.im2col, layer)
    matmul = value_and_grads(lambda inputs: patched(inputs))
    assert native[0].shape == ((5, 10, 10, 16) if padding == "same" else (5, 8, 8, 16))
    assert float(tf.reduce_max(native[0])) > 0  # some units active: the check means something
    for a, b in zip(native, matmul, strict=True):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-5)
