"""Noisy networks (Fortunato et al. 2018): a Dense layer with learned, factorised Gaussian noise.

``y = x (mu_w + sigma_w * eps_w) + mu_b + sigma_b * eps_b`` with factorised noise
(section 3, eq. 10-11): ``eps_in`` ``[p]`` and ``eps_out`` ``[q]`` standard normal,
``f(x) = sgn(x) sqrt(|x|)``, ``eps_w = f(eps_in) f(eps_out)^T`` (an outer product),
``eps_b = f(eps_out)``. Initialisation (section 3.2, factorised case): ``mu`` uniform on
``[-1/sqrt(p), 1/sqrt(p)]``, ``sigma = sigma0 / sqrt(p)`` with ``sigma0 = 0.5``.

**When the noise is drawn.** Every call with ``training=True`` draws one new
``(eps_in, eps_out)`` and uses it for every row of the batch; a call with ``training`` False or
None uses ``mu`` only and draws nothing (the noise sequence does not advance). So an agent that
acts and learns with ``training=True`` resamples on every forward pass, as Dopamine's
``full_rainbow_agent.py`` does (a new key for each action and each training step; its
``eval_mode=True``, used at evaluation, zeroes the noise: the ``training=False`` here).
Keras convention: **acting during training must pass ``training=True``** explicitly.

**Where the noise comes from.** A ``keras.random.SeedGenerator`` owned by the layer: its
state ``[seed, k]`` is a variable of the layer (in ``layer.variables`` and
``non_trainable_variables``, not in ``weights``), so it travels with checkpoints, and two
layers built with the same seed draw the same noise sequence: the k-th draw is
:func:`standard_normal` at the stateless seed ``[s, k]``, ``s`` the third of three seeds the
layer's seed spawns (``numpy.random.SeedSequence(seed).generate_state(3) >> 1``: kernel, bias,
noise). The normals are made from Philox
bits by Box-Muller (:func:`standard_normal`) rather than by ``tf.random.stateless_normal``,
whose values differ between an XLA-compiled and a plain call for the same seed (measured here
with TF 2.21, for ``auto_select`` and ``philox`` alike); the bits agree, so the noise is the
same eagerly, in ``tf.function`` and under ``jit_compile=True`` (to float rounding of log,
cos and sqrt). Gradients belong to ``trainable_variables`` only (the state is an integer
variable); a hard target copy over ``variables`` copies the noise state too.

Dopamine's JAX ``NoisyNetwork`` (``dopamine/jax/networks.py``) differs in two ways: it
initialises ``sigma`` at ``0.1 / sqrt(p)`` (not the paper's ``0.5 / sqrt(p)``), and
``feature_layer`` hands the *same* key to every noisy layer of a network, so layers with the
same input width draw the same ``eps_in``. Here each layer has its own generator, and
``sigma0`` is an argument.
"""

from __future__ import annotations

import math
from typing import Any

import keras
import numpy as np
import tensorflow as tf


def standard_normal(seed: tf.Tensor, n: int, dtype: tf.DType = tf.float32) -> tf.Tensor:
    """``n`` standard normals from a stateless seed ``[2]`` int, the same under XLA or not.

    Philox bits (``tf.random.stateless_uniform`` with ``dtype=uint32``, identical compiled or
    not) ``[2, n]``, their top 24 bits as uniforms ``u1 = (k1 + 1) / 2^24`` in ``(0, 1]`` and
    ``u2 = k2 / 2^24`` in ``[0, 1)``, then Box-Muller: ``sqrt(-2 ln u1) cos(2 pi u2)``.
    """
    seed = tf.cast(tf.math.floormod(tf.cast(seed, tf.int64), 2**31 - 1), tf.int32)
    bits = tf.random.stateless_uniform(
        [2, n], seed=seed, minval=None, maxval=None, dtype=tf.uint32, alg="philox"
    )
    top = tf.cast(tf.bitwise.right_shift(bits, 8), tf.float32)
    u1 = (top[0] + 1.0) * 2.0**-24
    u2 = top[1] * 2.0**-24
    normals = tf.sqrt(-2.0 * tf.math.log(u1)) * tf.cos((2.0 * math.pi) * u2)
    return tf.cast(normals, dtype)


def factorised_noise_transform(x: tf.Tensor) -> tf.Tensor:
    """``f(x) = sgn(x) sqrt(|x|)`` (Fortunato et al. 2018, section 3(b))."""
    return tf.sign(x) * tf.sqrt(tf.abs(x))


class NoisyDense(keras.layers.Layer):
    """A Dense layer with factorised Gaussian parameter noise.

    Args:
        units: output width ``q``.
        sigma0: the noise scale's initial ``sigma0`` (paper: 0.5; Dopamine: 0.1).
        activation: a Keras activation applied to the output (default none).
        seed: seeds the initialisation of ``mu`` and the noise generator; the same seed gives
            the same weights and the same noise sequence.

    Input ``[..., p]`` float; output ``[..., q]``. Weights: ``kernel_mu``, ``kernel_sigma``
    ``[p, q]``; ``bias_mu``, ``bias_sigma`` ``[q]``.
    """

    def __init__(
        self,
        units: int,
        sigma0: float = 0.5,
        activation: Any = None,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if int(units) < 1:
            raise ValueError(f"units must be >= 1, got {units}")
        if not float(sigma0) >= 0.0:
            raise ValueError(f"sigma0 must be >= 0, got {sigma0}")
        self.units = int(units)
        self.sigma0 = float(sigma0)
        self.activation = keras.activations.get(activation)
        self.seed = seed
        # three independent seeds from one: the same seed for the kernel, the bias and the
        # noise would make bias_mu equal kernel_mu's first row (counter-based generators)
        if seed is None:
            self._seeds: list[int | None] = [None, None, None]
        else:
            self._seeds = [int(s) >> 1 for s in np.random.SeedSequence(seed).generate_state(3)]
        self.noise = keras.random.SeedGenerator(self._seeds[2])

    def build(self, input_shape: tuple[int | None, ...]) -> None:
        p = input_shape[-1]
        if p is None:
            raise ValueError(f"NoisyDense needs a known input width, got shape {input_shape}")
        bound = 1.0 / math.sqrt(p)
        kernel_mu = keras.initializers.RandomUniform(-bound, bound, seed=self._seeds[0])
        bias_mu = keras.initializers.RandomUniform(-bound, bound, seed=self._seeds[1])
        sigma = keras.initializers.Constant(self.sigma0 / math.sqrt(p))
        self.kernel_mu = self.add_weight(
            shape=(p, self.units), initializer=kernel_mu, name="kernel_mu"
        )
        self.kernel_sigma = self.add_weight(
            shape=(p, self.units), initializer=sigma, name="kernel_sigma"
        )
        self.bias_mu = self.add_weight(shape=(self.units,), initializer=bias_mu, name="bias_mu")
        self.bias_sigma = self.add_weight(shape=(self.units,), initializer=sigma, name="bias_sigma")

    def sample_noise(self) -> tuple[tf.Tensor, tf.Tensor]:
        """Draw the next factors ``(f(eps_in) [p], f(eps_out) [q])`` and advance the generator.

        One draw of ``p + q`` values (:func:`standard_normal` at the generator's next seed
        ``[seed, k]``), split as ``eps_in, eps_out``. A layer's
        ``call(training=True)`` uses exactly this; calling it by hand skips that noise.
        """
        p = self.kernel_mu.shape[0]
        eps = standard_normal(self.noise.next(), p + self.units, self.compute_dtype)
        eps = factorised_noise_transform(eps)
        return eps[:p], eps[p:]

    def call(self, inputs: tf.Tensor, training: bool | None = None) -> tf.Tensor:
        outputs = tf.matmul(inputs, self.kernel_mu) + self.bias_mu
        if training:
            f_in, f_out = self.sample_noise()
            # x (sigma * f_in f_out^T) = ((x * f_in) sigma) * f_out: no [p, q] noise matrix
            noisy = tf.matmul(inputs * f_in, self.kernel_sigma) + self.bias_sigma
            outputs = outputs + noisy * f_out
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape: tuple[int | None, ...]) -> tuple[int | None, ...]:
        return (*input_shape[:-1], self.units)

    def get_config(self) -> dict[str, Any]:
        return {
            **super().get_config(),
            "units": self.units,
            "sigma0": self.sigma0,
            "activation": keras.activations.serialize(self.activation),
            "seed": self.seed,
        }


def noisy_layers(
    sizes: list[int], sigma0: float, seed: int, name: str, activation: Any = "relu"
) -> list[NoisyDense]:
    """``NoisyDense`` layers of ``sizes`` (Rainbow's fully connected layers), layer ``i``
    seeded ``seed + i``, named ``{name}_noisy{i}``."""
    return [NoisyDense(size, sigma0, activation, seed + i, name=f"{name}_noisy{i}")
            for i, size in enumerate(sizes)]  # fmt: skip


def noise_variables(layers: list) -> list:
    """The noise generators' states of the ``NoisyDense`` among ``layers`` (a checkpoint
    keeps them, so exact resume draws the same noise)."""
    return [layer.noise.state for layer in layers if isinstance(layer, NoisyDense)]
