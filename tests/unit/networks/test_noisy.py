"""NoisyDense: factorised noise, initialisation, seeding, resampling, gradients, XLA."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from rlkit.networks.noisy import NoisyDense, factorised_noise_transform, standard_normal


def built(p=5, q=3, seed=11, **kwargs) -> NoisyDense:
    layer = NoisyDense(q, seed=seed, **kwargs)
    layer.build((None, p))
    return layer


def test_f_is_signed_square_root():
    x = tf.constant([4.0, -9.0, 0.0, 0.25])
    np.testing.assert_allclose(factorised_noise_transform(x).numpy(), [2.0, -3.0, 0.0, 0.5])


@pytest.mark.slow
def test_standard_normal_is_normal_and_the_same_under_xla():
    seed = tf.constant([7, 3])
    z = standard_normal(seed, 200_000).numpy()
    # mean 0 and sd 1 within 5 standard errors; quantiles of N(0, 1): 0.8416 at 0.8, 1.96 at 0.975
    assert abs(z.mean()) < 5 / np.sqrt(z.size) and abs(z.std() - 1) < 5 / np.sqrt(2 * z.size)
    np.testing.assert_allclose(
        np.quantile(z, [0.025, 0.2, 0.8, 0.975]), [-1.96, -0.8416, 0.8416, 1.96], atol=0.02
    )
    compiled = tf.function(lambda s: standard_normal(s, 1000), jit_compile=True)(seed).numpy()
    np.testing.assert_allclose(compiled, standard_normal(seed, 1000).numpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(standard_normal(tf.constant([7, 4]), 1000).numpy(), compiled)


def test_shapes_and_weights():
    layer = built(5, 3)
    assert layer(tf.zeros([7, 5]), training=True).shape == (7, 3)
    assert layer(tf.zeros([2, 4, 5])).shape == (2, 4, 3)
    assert [w.shape for w in layer.trainable_variables] == [(5, 3), (5, 3), (3,), (3,)]
    # the generator state is a variable (checkpointed) but not trainable and not a weight
    assert len(layer.variables) == 5 and len(layer.weights) == 4


def test_initial_ranges():
    # p = 400: mu uniform on [-1/20, 1/20]; sigma = 0.5 / 20 = 0.025 everywhere
    layer = built(400, 300, seed=0)
    mu = layer.kernel_mu.numpy()
    assert mu.min() >= -0.05 and mu.max() <= 0.05
    assert mu.min() < -0.049 and mu.max() > 0.049  # it fills the range
    assert abs(mu.std() - 0.1 / np.sqrt(12)) < 1e-3  # uniform on a width of 0.1
    np.testing.assert_allclose(layer.kernel_sigma.numpy(), 0.025)
    np.testing.assert_allclose(layer.bias_sigma.numpy(), 0.025)
    bias = layer.bias_mu.numpy()
    assert bias.min() >= -0.05 and bias.max() <= 0.05 and bias.std() > 0.02
    # the bias is drawn apart from the kernel (one seed for both would repeat its first row)
    assert np.abs(bias - mu[0]).max() > 0.01
    # sigma0 is an argument: Dopamine's 0.1 gives 0.1 / 20
    np.testing.assert_allclose(built(400, 3, sigma0=0.1).kernel_sigma.numpy(), 0.005)


def test_output_is_the_factorised_formula():
    # a twin built with the same seed draws, by hand, the noise the layer uses on its next call
    layer, twin = built(5, 3, seed=4), built(5, 3, seed=4)
    f_in, f_out = (t.numpy() for t in twin.sample_noise())
    # the factors are f of one normal draw of p + q values at the stateless seed [s, 0], s the
    # noise seed spawned from 4
    s = int(np.random.SeedSequence(4).generate_state(3)[2]) >> 1
    z = standard_normal(tf.constant([s, 0]), 8).numpy()
    np.testing.assert_allclose(f_in, np.sign(z[:5]) * np.sqrt(np.abs(z[:5])), rtol=1e-6)
    np.testing.assert_allclose(f_out, np.sign(z[5:]) * np.sqrt(np.abs(z[5:])), rtol=1e-6)
    eps_w = np.outer(f_in, f_out)  # eps_w = f(eps_in) f(eps_out)^T: rank one
    assert np.linalg.matrix_rank(eps_w) == 1
    x = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    w = layer.kernel_mu.numpy() + layer.kernel_sigma.numpy() * eps_w
    b = layer.bias_mu.numpy() + layer.bias_sigma.numpy() * f_out
    np.testing.assert_allclose(layer(x, training=True).numpy(), x @ w + b, rtol=1e-5, atol=1e-6)


def test_mean_only_without_training():
    layer = built(5, 3)
    x = np.random.default_rng(1).normal(size=(4, 5)).astype(np.float32)
    expected = x @ layer.kernel_mu.numpy() + layer.bias_mu.numpy()
    for training in (False, None):
        np.testing.assert_allclose(layer(x, training=training).numpy(), expected, rtol=1e-5)
    # and it draws nothing: the generator did not move, so the next noisy call is the first
    # noise of the seed
    twin = built(5, 3)
    np.testing.assert_allclose(layer(x, training=True).numpy(), twin(x, training=True).numpy())


def test_same_seed_same_outputs_and_resampling_changes_them():
    x = tf.constant(np.random.default_rng(2).normal(size=(4, 5)), tf.float32)
    a, b = built(seed=9), built(seed=9)
    first_a, first_b = a(x, training=True), b(x, training=True)
    second_a, second_b = a(x, training=True), b(x, training=True)
    np.testing.assert_array_equal(first_a.numpy(), first_b.numpy())
    np.testing.assert_array_equal(second_a.numpy(), second_b.numpy())
    assert np.abs(first_a.numpy() - second_a.numpy()).min() > 0  # new noise on every call
    c = built(seed=10)
    assert not np.allclose(c(x, training=True).numpy(), first_a.numpy())
    # one noise sample for the whole batch: identical rows give identical outputs
    same_rows = a(tf.ones([3, 5]), training=True).numpy()
    np.testing.assert_array_equal(same_rows[0], same_rows[2])


def test_noise_state_round_trips_through_the_variables():
    a, b = built(seed=1), built(seed=2)
    x = tf.ones([2, 5])
    a(x, training=True)
    for target, source in zip(b.variables, a.variables, strict=True):
        target.assign(source)
    np.testing.assert_array_equal(a(x, training=True).numpy(), b(x, training=True).numpy())


def test_gradients_reach_mu_and_sigma():
    layer = built(5, 3)
    x = tf.constant(np.random.default_rng(3).normal(size=(4, 5)), tf.float32)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x, training=True))
    grads = tape.gradient(loss, layer.trainable_variables)
    names = [v.name for v in layer.trainable_variables]
    assert names == ["kernel_mu", "kernel_sigma", "bias_mu", "bias_sigma"]
    for name, grad in zip(names, grads, strict=True):
        assert grad is not None and np.abs(grad.numpy()).sum() > 0, name
    # d sum / d bias_sigma_j = batch size * f(eps_out)_j; d / d bias_mu_j = batch size
    np.testing.assert_allclose(grads[2].numpy(), [4.0, 4.0, 4.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x, training=False))
    assert tape.gradient(loss, layer.kernel_sigma) is None  # mean-only: sigma unused


@pytest.mark.slow
def test_works_inside_xla_and_resamples_there():
    layer = built(5, 3, seed=6)
    twin = built(5, 3, seed=6)

    @tf.function(jit_compile=True)
    def noisy(x):
        return layer(x, training=True)

    x = tf.ones([2, 5])
    first, second = noisy(x), noisy(x)
    assert not np.allclose(first.numpy(), second.numpy())
    np.testing.assert_allclose(first.numpy(), twin(x, training=True).numpy(), rtol=1e-5)
    np.testing.assert_allclose(second.numpy(), twin(x, training=True).numpy(), rtol=1e-5)


def test_in_a_model_and_config():
    inputs = keras.Input((5,))
    outputs = NoisyDense(2, seed=0)(NoisyDense(8, activation="relu", seed=1)(inputs))
    model = keras.Model(inputs, outputs)
    x = tf.ones([3, 5])
    assert not np.allclose(model(x, training=True).numpy(), model(x, training=True).numpy())
    np.testing.assert_array_equal(model(x).numpy(), model(x, training=False).numpy())
    config = NoisyDense(4, sigma0=0.1, seed=3).get_config()
    assert (config["units"], config["sigma0"], config["seed"]) == (4, 0.1, 3)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="units"):
        NoisyDense(0)
    with pytest.raises(ValueError, match="sigma0"):
        NoisyDense(3, sigma0=-1.0)
