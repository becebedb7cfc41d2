"""PatchConv2D: Keras' Conv2D bit for bit outside the compiled loop, a patch matmul inside it
equal to the convolution (and its gradient) up to float32 rounding."""

import numpy as np
import pytest
import tensorflow as tf

from rlkit.networks.builders import conv2d
from rlkit.networks.patch_conv import PatchConv2D, convolutions_as_patches, patch_matmul_conv

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_patch_matmul_equals_the_convolution_and_its_kernel_gradient(padding, size):
    x = tf.constant(RNG.normal(size=(5, 10, 9, 4)), tf.float32)
    kernel = tf.Variable(RNG.normal(size=(size, size, 4, 6)), dtype=tf.float32)
    upstream = None
    results = []
    for conv in (lambda: tf.nn.conv2d(x, kernel, 1, padding.upper()),
                 lambda: patch_matmul_conv(x, kernel, padding)):  # fmt: skip
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            out = conv()
            if upstream is None:
                upstream = tf.constant(RNG.normal(size=out.shape), tf.float32)
            loss = tf.reduce_sum(out * upstream)
        results.append((out, *tape.gradient(loss, [kernel, x])))
    (conv_out, conv_dk, conv_dx), (mm_out, mm_dk, mm_dx) = results
    expected_side = (10, 9) if padding == "same" else (11 - size, 10 - size)
    assert mm_out.shape == (5, *expected_side, 6)
    np.testing.assert_allclose(mm_out, conv_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mm_dk, conv_dk, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mm_dx, conv_dx, rtol=1e-4, atol=1e-4)


def test_a_hand_computed_same_padded_patch():
    x = np.zeros((1, 3, 3, 1), np.float32)
    x[0, :, :, 0] = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    kernel = np.arange(9, dtype=np.float32).reshape(3, 3, 1, 1)  # k[i, j] = 3 i + j
    out = patch_matmul_conv(tf.constant(x), tf.constant(kernel), "same").numpy()[0, :, :, 0]
    # top-left: the window [[0, 0, 0], [0, 1, 2], [0, 4, 5]] against k: 1*4 + 2*5 + 4*7 + 5*8
    assert out[0, 0] == 4 + 10 + 28 + 40
    assert out[1, 1] == sum(v * k for v, k in zip(range(1, 10), range(9), strict=True))


def _layer_and_input():
    layer = conv2d(16, 3, 1, seed=3, name="q_conv0", init="torch", fan_in=36, padding="same")
    x = tf.constant(RNG.random((8, 10, 10, 4)) < 0.2, tf.float32)
    layer(x)  # builds
    return layer, x


def test_outside_the_compiled_loop_it_is_keras_conv2d_bit_for_bit():
    layer, x = _layer_and_input()
    assert isinstance(layer, PatchConv2D)
    reference = tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu")
    reference(x)
    reference.set_weights(layer.get_weights())
    np.testing.assert_array_equal(layer(x), reference(x))
    graph = tf.function(layer, jit_compile=True)
    np.testing.assert_array_equal(graph(x), tf.function(reference, jit_compile=True)(x))


def test_inside_the_compiled_loop_it_traces_a_matmul_of_equal_values():
    layer, x = _layer_and_input()

    def ops_of(fn):
        graph = tf.function(fn).get_concrete_function(x).graph
        return {op.type for op in graph.get_operations()}

    assert "Conv2D" in ops_of(layer)

    def patched(inputs):
        with convolutions_as_patches():
            return layer(inputs)

    traced = ops_of(patched)
    assert "Conv2D" not in traced and "MatMul" in traced
    np.testing.assert_allclose(tf.function(patched, jit_compile=True)(x), layer(x), atol=1e-5)


def test_strided_convolutions_keep_kerass_kernel_even_inside():
    layer = conv2d(8, 4, 2, seed=1, name="c", init="glorot", fan_in=16)
    x = tf.constant(RNG.normal(size=(2, 12, 12, 1)), tf.float32)
    layer(x)

    def patched(inputs):
        with convolutions_as_patches():
            return layer(inputs)

    ops = {op.type for op in tf.function(patched).get_concrete_function(x).graph.get_operations()}
    assert "Conv2D" in ops
