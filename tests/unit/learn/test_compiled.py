"""CompiledFunction: the same results as tf.function, one trace per input signature."""

import numpy as np
import tensorflow as tf

from rlkit.learn.compiled import CompiledFunction


def test_same_result_as_tf_function_and_updates_captured_variables():
    weights = tf.Variable([[1.0, 2.0], [3.0, 4.0]])

    def step(x, scale):
        weights.assign_add(scale * tf.ones_like(weights))
        return tf.reduce_sum(tf.matmul(x, weights), axis=1)

    fn = CompiledFunction(step, jit_compile=True)
    x = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    np.testing.assert_allclose(fn(x, np.float32(1.0)).numpy(), [5.0, 9.0])
    np.testing.assert_allclose(fn(x, np.float32(0.5)).numpy(), [6.0, 10.0])
    np.testing.assert_allclose(weights.numpy(), [[2.5, 3.5], [4.5, 5.5]])
    assert fn.tracing_count == 1


def test_a_new_shape_or_dtype_traces_once_more():
    fn = CompiledFunction(lambda x: x * 2)
    fn(np.zeros((2, 3), np.float32))
    fn(tf.zeros((2, 3)))
    assert fn.tracing_count == 1
    fn(np.zeros((4, 3), np.float32))
    fn(np.zeros((4, 3), np.float64))
    assert fn.tracing_count == 3
    np.testing.assert_array_equal(fn(np.ones((4, 3), np.float32)).numpy(), 2 * np.ones((4, 3)))
    assert fn.tracing_count == 3


def test_structured_outputs_come_back_as_the_function_returns_them():
    fn = CompiledFunction(lambda x: (x + 1, [x * 2, x * 3]))
    first, (second, third) = fn(tf.constant([1.0, 2.0]))
    np.testing.assert_allclose(first.numpy(), [2.0, 3.0])
    np.testing.assert_allclose(third.numpy(), [3.0, 6.0])
    assert second.shape == (2,)
