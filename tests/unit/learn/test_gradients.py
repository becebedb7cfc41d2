import numpy as np
import pytest
import tensorflow as tf

from rlkit.learn import gradients
from rlkit.learn.gradients import UpdatePipeline, scale_gradient

G = [tf.constant([3.0, 4.0]), None, tf.constant([[0.0, -12.0]])]  # norms 5 and 12, global 13


def values(grads):
    return [None if g is None else g.numpy() for g in grads]


def test_clip_by_global_norm_formula():
    out = values(gradients.clip_by_global_norm(6.5)(G))
    np.testing.assert_allclose(out[0], [1.5, 2.0])
    assert out[1] is None
    np.testing.assert_allclose(out[2], [[0.0, -6.0]])
    unchanged = values(gradients.clip_by_global_norm(100.0)(G))
    np.testing.assert_allclose(unchanged[2], [[0.0, -12.0]])


def test_clip_by_norm_is_per_tensor():
    out = values(gradients.clip_by_norm(6.0)(G))
    np.testing.assert_allclose(out[0], [3.0, 4.0])  # norm 5 <= 6: untouched
    np.testing.assert_allclose(out[2], [[0.0, -6.0]])


def test_clip_by_value_and_scale():
    np.testing.assert_allclose(values(gradients.clip_by_value(3.5)(G))[0], [3.0, 3.5])
    np.testing.assert_allclose(values(gradients.clip_by_value(-1.0, 3.2)(G))[2], [[0.0, -1.0]])
    np.testing.assert_allclose(values(gradients.scale(0.5)(G))[0], [1.5, 2.0])


def test_chain_applies_in_order_and_accepts_callables():
    clip_then_scale = gradients.chain(gradients.clip_by_value(3.0), gradients.scale(2.0))
    scale_then_clip = gradients.chain(gradients.scale(2.0), gradients.clip_by_value(3.0))
    np.testing.assert_allclose(values(clip_then_scale(G))[0], [6.0, 6.0])
    np.testing.assert_allclose(values(scale_then_clip(G))[0], [3.0, 3.0])
    seen = []
    custom = gradients.chain(lambda gs: seen.append(len(gs)) or gs, gradients.scale(3.0))
    np.testing.assert_allclose(values(custom(G))[0], [9.0, 12.0])
    assert seen == [3]


def test_scale_gradient_forward_identity_backward_scaled():
    x = tf.Variable([1.0, -2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        y = scale_gradient(x**2, 0.25)
        plain = x**2
    np.testing.assert_allclose(y.numpy(), plain.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 0.25 * 2 * x.numpy())
    np.testing.assert_allclose(tape.gradient(plain, x).numpy(), 2 * x.numpy())


def test_scale_gradient_scales_only_its_path_unlike_clipping():
    # MuZero's use: loss = a(x) + scale_gradient(b(x), s): only b's contribution is scaled
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        loss = 3.0 * x + scale_gradient(x**2, 0.5)
    assert tape.gradient(loss, x).numpy() == pytest.approx(3.0 + 0.5 * 4.0)


def test_pipeline_computes_processes_and_applies():
    w = tf.Variable([1.0, 1.0])
    import keras

    pipeline = UpdatePipeline([w], keras.optimizers.SGD(0.1), gradients.clip_by_value(1.0))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.constant([10.0, 0.5]) * w)
    grads = pipeline(tape, loss)
    np.testing.assert_allclose(grads[0].numpy(), [1.0, 0.5])
    np.testing.assert_allclose(w.numpy(), [0.9, 0.95])


def test_output_gradients_start_the_backward_pass_at_the_output():
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    x = tf.constant([[1.0, -1.0]])
    with tf.GradientTape() as tape:
        y = x @ w  # [1, 2]
    injected = tf.constant([[0.5, -2.0]])
    grads = gradients.compute_gradients(tape, y, [w], output_gradients=injected)
    np.testing.assert_allclose(grads[0].numpy(), x.numpy().T @ injected.numpy())


def test_torch_centred_rmsprop_puts_epsilon_outside_the_square_root():
    from rlkit.learn.optimizers import make_optimizer

    optimizer = make_optimizer("rmsprop_centered_torch", 0.1)
    w = tf.Variable([1.0, -2.0])
    optimizer.build([w])
    expected, square_avg, grad_avg = np.array([1.0, -2.0]), np.zeros(2), np.zeros(2)
    for g in (np.array([0.5, -0.2], np.float32), np.array([0.1, 0.3], np.float32)):
        optimizer.apply_gradients([(tf.constant(g), w)])
        square_avg = 0.95 * square_avg + 0.05 * g * g
        grad_avg = 0.95 * grad_avg + 0.05 * g
        expected -= 0.1 * g / (np.sqrt(square_avg - grad_avg**2) + 0.01)  # PyTorch's rule
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)


def test_tf1_centred_rmsprop_starts_its_mean_square_at_one():
    """Dopamine's optimizer (tf.compat.v1 RMSPropOptimizer, centred, momentum 0): ms starts
    at 1, mg at 0, epsilon 1e-5 inside the root."""
    from rlkit.learn.optimizers import make_optimizer

    optimizer = make_optimizer("rmsprop_centered_tf1", 2.5e-4)
    w = tf.Variable([1.0, -2.0])
    optimizer.build([w])
    expected, ms, mg = np.array([1.0, -2.0]), np.ones(2), np.zeros(2)
    for g in (np.array([1e-3, -4e-4], np.float32), np.array([2e-4, 6e-4], np.float32)):
        optimizer.apply_gradients([(tf.constant(g), w)])
        ms = 0.95 * ms + 0.05 * g * g
        mg = 0.95 * mg + 0.05 * g
        expected -= 2.5e-4 * g / np.sqrt(ms - mg**2 + 1e-5)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)
