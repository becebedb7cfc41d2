"""PPO's networks: separate tanh MLPs for the policy and the value (SB3's and CleanRL's
``MlpPolicy`` for vector observations), and their numpy mirrors for acting.

Initialisation (Huang et al. 2022, details 2 and 3; CleanRL's ``layer_init``, SB3's
``ortho_init``): orthogonal kernels with gain ``sqrt(2)`` for hidden layers, ``0.01`` for
the policy's head (logits or the Gaussian's mean start near 0: near-uniform actions) and
``1`` for the value's head; zero biases. ``ortho_init=False`` gives Keras' Glorot uniform.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import keras
import numpy as np

from rlkit.core.seeding import network_seed


def _dense(units: int, activation: str | None, gain: float, seed: int, name: str, ortho: bool):
    kernel = (keras.initializers.Orthogonal(gain=gain, seed=seed) if ortho
              else keras.initializers.GlorotUniform(seed=seed))  # fmt: skip
    return keras.layers.Dense(units, activation=activation, kernel_initializer=kernel,
                              bias_initializer="zeros", name=name)  # fmt: skip


class TanhMLP:
    """``[B, in_dim] -> [B, out_dim]``: tanh hidden layers, a linear head.

    Args:
        in_dim, out_dim: input and output widths.
        hidden_sizes: the hidden layers' widths.
        head_gain: the head's orthogonal gain (0.01 policy, 1 value).
        seed: the run's seed (each layer's is derived from it and ``name``).
        name: ``"policy"`` or ``"value"``.
        ortho: orthogonal initialisation (else Glorot uniform).
    """

    def __init__(
        self, in_dim: int, out_dim: int, hidden_sizes: Sequence[int], head_gain: float,
        seed: int, name: str, ortho: bool = True,
    ) -> None:  # fmt: skip
        base = network_seed(seed, name)
        self.hidden = [
            _dense(units, "tanh", math.sqrt(2.0), base + i, f"{name}_hidden{i}", ortho)
            for i, units in enumerate(hidden_sizes)
        ]
        self.head = _dense(out_dim, None, head_gain, base + 99, f"{name}_out", ortho)
        inputs = keras.Input((in_dim,), name=f"{name}_obs")
        x = inputs
        for layer in self.hidden:
            x = layer(x)
        self.model = keras.Model(inputs, self.head(x), name=name)

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    def layer_weights(self) -> list:
        """``[kernel_0, bias_0, ..., kernel_out, bias_out]``, the order :class:`NumpyTanhMLP`
        takes."""
        return [w for layer in (*self.hidden, self.head) for w in (layer.kernel, layer.bias)]


class NumpyTanhMLP:
    """The numpy forward pass of a :class:`TanhMLP`: ``[B, D]`` or ``[D]`` -> outputs
    (float64 inside, as the weights' float32 arrays broadcast)."""

    def __init__(self, arrays: Sequence[np.ndarray]) -> None:
        arrays = [np.asarray(a) for a in arrays]
        self.layers = [(arrays[i], arrays[i + 1]) for i in range(0, len(arrays), 2)]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        *hidden, (kernel, bias) = self.layers
        for k, b in hidden:
            x = np.tanh(x @ k + b)
        return x @ kernel + bias
