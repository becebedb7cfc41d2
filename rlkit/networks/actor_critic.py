"""Deterministic actor mu(s) and critic Q(s, a) networks for bounded Box actions.

The actor ends in ``tanh`` rescaled to the action bounds,
``low + (tanh(z) + 1) / 2 * (high - low)``, so its output is always a valid action
in the environment's own units, for any (even asymmetric) bounds. The critic
takes ``concat(s, a_n)`` where ``a_n = 2 (a - low) / (high - low) - 1`` is the
action mapped back to ``[-1, 1]``, so that wide bounds do not distort its input scale.

Acting reads a :class:`~rlkit.networks.builders.NumpyMLP`, a numpy copy of the actor's weights
refreshed after each block of updates: no TensorFlow call per environment step.
"""

from __future__ import annotations

from collections.abc import Sequence

import keras
import numpy as np

from rlkit.core.seeding import network_seed
from rlkit.networks.builders import NumpyMLP, apply_layers, dense, layer_weights, mlp_layers


class ActionBounds:
    """The box ``[low, high]`` of a flattened action, float32 ``[act_dim]`` each."""

    def __init__(self, low: np.ndarray, high: np.ndarray) -> None:
        self.low = np.asarray(low, np.float32).reshape(-1)
        self.high = np.asarray(high, np.float32).reshape(-1)
        if self.low.shape != self.high.shape or not np.all(self.high > self.low):
            raise ValueError(f"action bounds need low < high elementwise, got {low}, {high}")
        self.half_range = (self.high - self.low) / 2
        self.middle = (self.high + self.low) / 2

    @property
    def dim(self) -> int:
        return int(self.low.shape[0])

    def from_unit(self, u):
        """``[-1, 1] -> [low, high]``: ``low + (u + 1) / 2 * (high - low)``."""
        return (u + 1.0) * self.half_range + self.low

    def to_unit(self, a):
        """``[low, high] -> [-1, 1]``, the inverse of :meth:`from_unit`."""
        return (a - self.low) / self.half_range - 1.0

    def clip(self, a: np.ndarray) -> np.ndarray:
        return np.clip(a, self.low, self.high)


class Actor:
    """``mu(s)``: ``[B, obs_dim] -> [B, act_dim]`` in the action bounds' units.

    ReLU hidden layers initialised by ``init`` (:func:`rlkit.networks.builders.dense`), a final
    layer initialised to ``U(-output_scale, output_scale)`` (the DDPG paper's 3e-3: the
    initial policy is near the middle of the bounds; 0: by ``init`` too), ``tanh``, then
    the affine map to ``[low, high]``.
    """

    def __init__(
        self,
        obs_dim: int,
        bounds: ActionBounds,
        hidden_sizes: Sequence[int],
        seed: int = 0,
        name: str = "actor",
        init: str = "glorot",
        output_scale: float = 3e-3,
    ) -> None:
        self.bounds = bounds
        base = network_seed(seed, "actor")
        self.hidden = mlp_layers(hidden_sizes, base, name, init, obs_dim, seed_stride=2)
        fan_in = hidden_sizes[-1] if hidden_sizes else obs_dim
        self.head = dense(bounds.dim, "tanh", base + 998, f"{name}_out", output_scale, init,
                          fan_in)  # fmt: skip
        inputs = keras.Input((obs_dim,), name=f"{name}_obs")
        outputs = bounds.from_unit(self.head(apply_layers(inputs, self.hidden)))
        self.model = keras.Model(inputs, outputs, name=name)

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    def layer_weights(self) -> list:
        """``[kernel_0, bias_0, ..., kernel_out, bias_out]``, the order :meth:`to_numpy` takes."""
        return layer_weights([*self.hidden, self.head])

    def to_numpy(self, arrays: Sequence[np.ndarray]) -> NumpyMLP:
        """The numpy actor from arrays in the order of :meth:`layer_weights`."""
        return NumpyMLP.from_arrays(arrays, output=self._output)

    def _output(self, head: np.ndarray) -> np.ndarray:
        return self.bounds.from_unit(np.tanh(head)).astype(np.float32)

    def numpy_snapshot(self) -> NumpyMLP:
        """A numpy copy of the current weights that computes the same ``mu(s)``."""
        return NumpyMLP.from_layers(self.hidden, [self.head], output=self._output)


class Critic:
    """``Q(s, a)``: ``([B, obs_dim], [B, act_dim]) -> [B]``, an MLP on ``concat(s, a_n)``.

    ``a`` is in the bounds' units; the model maps it to ``a_n`` in ``[-1, 1]`` first.
    ``index`` picks distinct initial weights (TD3's twin critics). ``init`` and
    ``output_scale`` as :class:`Actor`'s.
    """

    def __init__(
        self,
        obs_dim: int,
        bounds: ActionBounds,
        hidden_sizes: Sequence[int],
        seed: int = 0,
        name: str = "critic",
        index: int = 0,
        init: str = "glorot",
        output_scale: float = 3e-3,
    ) -> None:
        obs = keras.Input((obs_dim,), name=f"{name}_obs")
        action = keras.Input((bounds.dim,), name=f"{name}_action")
        x = keras.ops.concatenate([obs, bounds.to_unit(action)], axis=-1)
        base = network_seed(seed, "critic", index)  # twin critics start apart
        input_dim = obs_dim + bounds.dim
        self.hidden = mlp_layers(hidden_sizes, base, name, init, input_dim, seed_stride=2)
        x = apply_layers(x, self.hidden)
        fan_in = hidden_sizes[-1] if hidden_sizes else input_dim
        self.head = dense(1, None, base + 99, f"{name}_out", output_scale, init, fan_in)
        outputs = keras.ops.squeeze(self.head(x), axis=-1)
        self.model = keras.Model([obs, action], outputs, name=name)

    @property
    def variables(self) -> list:
        return self.model.trainable_variables
