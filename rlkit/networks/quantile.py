"""IQN's fraction embedding as a Keras layer (Dabney et al. 2018b, section 3.1, eq. 4).

A torso's features ``psi(x)`` ``[B, D]`` and sampled fractions ``tau`` ``[B, N]`` become
``psi(x) * phi(tau)`` ``[B, N, D]`` (the Hadamard product the paper chose), with
``phi_j(tau) = ReLU(sum_i cos(pi i tau) w_ij + b_j)`` a Dense layer of width ``D`` over
:func:`rlkit.learn.distributional.iqn_cosine_embedding`. The head that follows (Dense layers to
``[B, N, A]``) is the network's; the values it gives at ``tau`` are ``Z_tau(x, a)``.
"""

from __future__ import annotations

import math
from typing import Any

import keras
import tensorflow as tf

from rlkit.learn.distributional import iqn_cosine_embedding


class QuantileEmbedding(keras.layers.Layer):
    """``features [B, D]``, ``taus [B, N]`` -> ``features[:, None, :] * phi(taus)`` ``[B, N, D]``.

    Args:
        embedding_dim: the number of cosines ``n`` (paper and Dopamine: 64).
        first_index: 0 for the paper's ``i = 0 .. n - 1``, 1 for Dopamine's ``i = 1 .. n``
            (see :func:`~rlkit.learn.distributional.iqn_cosine_embedding`).
        kernel_initializer: the Dense layer's; by default Dopamine's ``variance_scaling(1 /
            sqrt(3), fan_in, uniform)`` (``dopamine/jax/networks.py``,
            ``ImplicitQuantileNetwork``); the bias starts at 0.
        seed: seeds the kernel initialiser.
    """

    def __init__(
        self,
        embedding_dim: int = 64,
        first_index: int = 0,
        kernel_initializer: Any = None,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if int(embedding_dim) < 1:
            raise ValueError(f"embedding_dim must be >= 1, got {embedding_dim}")
        self.embedding_dim = int(embedding_dim)
        self.first_index = int(first_index)
        self.seed = seed
        self.kernel_initializer = kernel_initializer or keras.initializers.VarianceScaling(
            scale=1.0 / math.sqrt(3.0), mode="fan_in", distribution="uniform", seed=seed
        )

    def build(self, features_shape: tuple, taus_shape: tuple | None = None) -> None:
        if len(features_shape) != 2 or features_shape[-1] is None:
            raise ValueError(
                f"QuantileEmbedding needs torso features [batch, D] with D known, got shape "
                f"{tuple(features_shape)}: flatten the torso's output first"
            )
        width = features_shape[-1]
        self.kernel = self.add_weight(
            shape=(self.embedding_dim, width), initializer=self.kernel_initializer, name="kernel"
        )
        self.bias = self.add_weight(shape=(width,), initializer="zeros", name="bias")

    def call(self, features: tf.Tensor, taus: tf.Tensor) -> tf.Tensor:
        cosines = iqn_cosine_embedding(
            tf.cast(taus, self.compute_dtype), self.embedding_dim, self.first_index
        )  # [B, N, n]
        phi = tf.nn.relu(tf.einsum("bni,id->bnd", cosines, self.kernel) + self.bias)
        return features[:, None, :] * phi

    def compute_output_shape(self, features_shape: tuple, taus_shape: tuple) -> tuple:
        return (features_shape[0], taus_shape[1], features_shape[1])

    def get_config(self) -> dict[str, Any]:
        return {
            **super().get_config(),
            "embedding_dim": self.embedding_dim,
            "first_index": self.first_index,
            "seed": self.seed,
        }
