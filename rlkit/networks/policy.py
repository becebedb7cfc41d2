"""REINFORCE's networks: a policy (logits, or a Gaussian's mean) and a value baseline."""

from __future__ import annotations

from collections.abc import Sequence

import keras
import numpy as np

from rlkit.networks.torso import NumpyMLP, apply_layers, dense, layer_weights, mlp_layers


class PolicyMLP:
    """A ReLU MLP ``[B, in_dim] -> [B, out_dim]`` whose output layer starts at exactly zero.

    Hidden layers use He-normal kernels (the source's ``he_normal``; layer ``i`` seeded
    ``seed + i``) and zero biases. The zero output kernel and bias make every softmax
    output equal at the start (each action equally likely), a Gaussian mean start at the
    centre of the action box, a value start at 0.
    """

    def __init__(
        self, in_dim: int, out_dim: int, hidden_sizes: Sequence[int], seed: int, name: str
    ) -> None:
        self.hidden = mlp_layers(hidden_sizes, seed, name, init="he_normal")
        self.head = dense(out_dim, None, seed, f"{name}_out", init="zeros")
        inputs = keras.Input((in_dim,), name=f"{name}_obs")
        self.model = keras.Model(inputs, self.head(apply_layers(inputs, self.hidden)), name=name)

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    def layer_weights(self) -> list:
        """``[kernel_0, bias_0, ..., kernel_out, bias_out]``, the order :meth:`to_numpy` takes."""
        return layer_weights([*self.hidden, self.head])

    @staticmethod
    def to_numpy(arrays: Sequence[np.ndarray]) -> NumpyMLP:
        """A :class:`NumpyMLP` from the arrays of :meth:`layer_weights`, in that order."""
        return NumpyMLP.from_arrays(arrays)

    def numpy_snapshot(self) -> NumpyMLP:
        """A numpy copy of the current weights computing the same outputs."""
        return NumpyMLP.from_layers(self.hidden, [self.head])
