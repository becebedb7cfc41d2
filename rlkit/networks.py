"""Network builders and their numpy mirrors for acting.

Acting one observation at a time through TensorFlow costs ~0.4 ms per call even
inside ``tf.function``; the same MLP in numpy costs ~0.014 ms (docs/performance.md). So every
network here is a stack of Dense layers whose weights can be snapshotted into a
:class:`NumpyMLP` after each update, and acting reads the snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence

import keras
import numpy as np

INITS = ("glorot", "torch")


def dense(
    units: int,
    activation,
    seed: int,
    name: str,
    final_scale: float = 0.0,
    init: str = "glorot",
    fan_in: int = 0,
) -> keras.layers.Dense:
    """A seeded Dense layer.

    Kernel and bias are drawn from ``U(-final_scale, final_scale)`` when ``final_scale``
    is given (DDPG's output layers); otherwise ``init="glorot"`` (Keras' default) gives a
    Glorot-uniform kernel and a zero bias, and ``init="torch"`` PyTorch's ``nn.Linear``
    default, kernel and bias both ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` (``fan_in``: the
    layer's input width).

    Seeding: the kernel uses ``seed``; a drawn bias uses ``seed + 1`` for ``final_scale``
    (callers space those seeds by 2) and ``seed + 500`` for ``init="torch"`` (callers
    number consecutive layers ``seed, seed + 1, ...``). Two tensors must never share a
    seed: Keras' seeded draws would then be the same numbers, rescaled.
    """
    if init not in INITS:
        raise ValueError(f"init must be one of {', '.join(INITS)}, got {init!r}")
    bias_seed = seed + 1
    if init == "torch" and final_scale <= 0:
        if fan_in <= 0:
            raise ValueError("init='torch' needs the layer's fan_in")
        final_scale, bias_seed = fan_in**-0.5, seed + 500
    if final_scale > 0:
        kernel = keras.initializers.RandomUniform(-final_scale, final_scale, seed=seed)
        bias = keras.initializers.RandomUniform(-final_scale, final_scale, seed=bias_seed)
    else:
        kernel, bias = keras.initializers.GlorotUniform(seed=seed), "zeros"
    return keras.layers.Dense(
        units, activation=activation, kernel_initializer=kernel, bias_initializer=bias, name=name
    )


class QNetwork:
    """An MLP ``Q(s, .)``: ``[B, obs_dim] -> [B, num_actions]``, optionally dueling.

    Dueling head (Wang et al. 2016): ``Q = V(s) + A(s, a) - mean_a A(s, a)``.

    Attributes:
        model: the Keras model.
        hidden: the hidden Dense layers (ReLU), in order.
        heads: ``[output]`` or ``[value, advantage]`` when dueling.
    """

    def __init__(
        self,
        obs_dim: int,
        num_actions: int,
        hidden_sizes: Sequence[int],
        dueling: bool = False,
        seed: int = 0,
        name: str = "q",
        init: str = "glorot",
    ) -> None:
        self.dueling = dueling
        fan_ins = [obs_dim, *hidden_sizes]
        self.hidden = [
            dense(units, "relu", seed * 1000 + i, f"{name}_hidden{i}", init=init, fan_in=fan_ins[i])
            for i, units in enumerate(hidden_sizes)
        ]
        last = fan_ins[-1]
        inputs = keras.Input((obs_dim,), name=f"{name}_obs")
        x = inputs
        for layer in self.hidden:
            x = layer(x)
        if dueling:
            self.heads = [
                dense(1, None, seed * 1000 + 998, f"{name}_value", init=init, fan_in=last),
                dense(
                    num_actions,
                    None,
                    seed * 1000 + 999,
                    f"{name}_advantage",
                    init=init,
                    fan_in=last,
                ),
            ]
            value, advantage = self.heads[0](x), self.heads[1](x)
            outputs = value + advantage - keras.ops.mean(advantage, axis=1, keepdims=True)
        else:
            self.heads = [
                dense(num_actions, None, seed * 1000 + 999, f"{name}_out", init=init, fan_in=last)
            ]
            outputs = self.heads[0](x)
        self.model = keras.Model(inputs, outputs, name=name)

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    def numpy_snapshot(self) -> NumpyMLP:
        """A numpy copy of the current weights that computes the same ``Q(s, .)``."""
        return NumpyMLP(
            [(layer.kernel.numpy(), layer.bias.numpy()) for layer in self.hidden],
            [(layer.kernel.numpy(), layer.bias.numpy()) for layer in self.heads],
        )


class NumpyMLP:
    """ReLU MLP forward pass in numpy: ``[B, obs_dim]`` or ``[obs_dim]`` -> outputs.

    ``heads`` holds one output layer, or two (value, advantage) for a dueling head.
    """

    def __init__(self, hidden: list[tuple[np.ndarray, np.ndarray]], heads) -> None:
        self.hidden = hidden
        self.heads = heads

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        x = obs
        for kernel, bias in self.hidden:
            x = np.maximum(x @ kernel + bias, 0.0)
        if len(self.heads) == 1:
            kernel, bias = self.heads[0]
            return x @ kernel + bias
        (vk, vb), (ak, ab) = self.heads
        advantage = x @ ak + ab
        return x @ vk + vb + advantage - advantage.mean(axis=-1, keepdims=True)
