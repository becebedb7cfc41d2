"""The Q-network of DQN and its family: ``[B, *obs_shape] -> [B, num_actions * per_action]``,
built from :mod:`rlkit.networks.builders` (the torso, seeded Dense layers, the numpy mirror),
optionally dueling and noisy (Rainbow). Acting reads a numpy mirror of it where one exists (an
MLP, or MinAtar's torso: :mod:`rlkit.networks.numpy_conv`), else one compiled call per act."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import keras
import numpy as np

from rlkit.core.spaces import ObservationFormat
from rlkit.networks.builders import (
    MINATAR_CNN,
    NumpyMLP,
    apply_layers,
    dense,
    layer_weights,
    mlp_layers,
    torso,
    torso_for,
)
from rlkit.networks.noisy import noise_variables, noisy_layers
from rlkit.networks.numpy_conv import NumpyConvNet

#: the convolutional torsos acting mirrors in numpy: where numpy's forward pass costs less
#: than one compiled call (MinAtar's: ~0.2 ms against ~1 ms; the Nature CNN's 84x84 is not)
MIRRORED_TORSOS = (MINATAR_CNN,)


class QNetwork:
    """``Q(s, .)``: ``[B, *obs_shape] -> [B, num_actions]``, optionally dueling.

    A torso (:func:`torso`: nothing for vectors, the Nature CNN for images; or
    ``user_torso``, a Keras model ``[B, *obs_shape] -> [B, D]`` of one's own), ReLU hidden
    layers, and a linear head; dueling (Wang et al. 2016): ``Q = V(s) + A(s, a) - mean_a
    A(s, a)``. With ``obs_format`` an integer the input is a float32 vector of that width.
    Acting through a torso of one's own is one compiled call per (batched) step.

    Attributes:
        model: the Keras model.
        convs: the convolution layers (empty for vector observations).
        mirrored: whether acting reads a numpy mirror (an MLP, or a torso of
            :data:`MIRRORED_TORSOS` with "valid" or "same" padding).
        hidden: the hidden Dense layers (ReLU), in order.
        heads: ``[output]`` or ``[value, advantage]`` when dueling.
    """

    def __init__(
        self,
        obs_format: ObservationFormat | int,
        num_actions: int,
        hidden_sizes: Sequence[int],
        dueling: bool = False,
        seed: int = 0,
        name: str = "q",
        init: str = "glorot",
        torso_kind: str = "auto",
        conv_padding: str = "valid",
        per_action: int = 1,
        noisy: bool = False,
        sigma0: float = 0.5,
        user_torso: keras.Model | None = None,
    ) -> None:
        if isinstance(obs_format, int):
            from rlkit.core.spaces import vector_format

            obs_format = vector_format(obs_format)
        self.dueling, self.per_action, self.noisy = dueling, per_action, noisy
        base = seed * 1000
        self.user_torso = user_torso
        if user_torso is None:
            inputs, x, width, self.convs = torso(obs_format, base, name, init, torso_kind,
                                                 conv_padding)  # fmt: skip
        else:  # (checked to give [B, D]: rlkit.networks.user_torso)
            inputs = keras.Input(obs_format.shape, dtype=obs_format.dtype, name=f"{name}_obs")
            x = user_torso(inputs)
            width, self.convs = int(x.shape[-1]), []
        self.conv_padding, self.scale = conv_padding, obs_format.scale
        self.mirrored = user_torso is None and (
            not self.convs
            or (
                torso_for(obs_format, torso_kind) in MIRRORED_TORSOS
                and conv_padding in ("valid", "same")
            )
        )
        if noisy:  # Rainbow: every fully connected layer noisy, the convolutions not
            self.hidden = noisy_layers(list(hidden_sizes), sigma0, base + 500, name)
        else:
            self.hidden = mlp_layers(hidden_sizes, base, name, init, fan_in=width)
        x = apply_layers(x, self.hidden)
        last = hidden_sizes[-1] if hidden_sizes else width
        if noisy:
            sizes = [per_action, num_actions] if dueling else [num_actions]
            self.heads = noisy_layers(sizes, sigma0, base + 990, f"{name}_out", activation=None)
        elif dueling:
            self.heads = [
                dense(per_action, None, base + 998, f"{name}_value", init=init, fan_in=last),
                dense(num_actions, None, base + 999, f"{name}_advantage", init=init,
                      fan_in=last),
            ]  # fmt: skip
        else:
            self.heads = [dense(num_actions, None, base + 999, f"{name}_out", init=init,
                                fan_in=last)]  # fmt: skip
        if dueling:
            value, advantage = self.heads[0](x), self.heads[1](x)
            outputs = dueling_outputs(value, advantage, per_action)
        else:
            outputs = self.heads[0](x)
        self.model = keras.Model(inputs, outputs, name=name)
        self._compiled_policies: dict[bool, Callable] = {}

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    def numpy_snapshot(self) -> NumpyMLP | NumpyConvNet:
        """A numpy copy of the current weights computing ``Q(s, .)`` (an MLP, or MinAtar's
        torso and the layers above it; noisy layers: their ``mu``)."""
        if not self.mirrored:
            raise TypeError("this convolutional Q network has no numpy mirror; use policy()")
        return self.mirror([w.numpy() for w in self.mirror_weights()])

    def mirror_weights(self) -> list:
        """The variables of the numpy mirror, in order: each convolution's kernel and bias,
        then :meth:`NumpyMLP.from_arrays`' (a noisy layer's ``mu``); empty for a network
        without a mirror."""
        if not self.mirrored:
            return []
        layers = (*self.hidden, *self.heads)
        if self.noisy:
            dense_weights = [w for layer in layers for w in (layer.kernel_mu, layer.bias_mu)]
        else:
            dense_weights = layer_weights(layers)
        return [*layer_weights(self.convs), *dense_weights]

    def mirror(self, arrays: Sequence[np.ndarray]) -> NumpyMLP | NumpyConvNet:
        """The numpy mirror from arrays of :meth:`mirror_weights` (as a block returned them)."""
        arrays = list(arrays)
        cut = 2 * len(self.convs)
        mlp = NumpyMLP.from_arrays(arrays[cut:], num_heads=len(self.heads))
        mlp.per_action = self.per_action
        if not self.convs:
            return mlp
        convs = [(arrays[i], arrays[i + 1]) for i in range(0, cut, 2)]
        strides = [int(conv.strides[0]) for conv in self.convs]
        return NumpyConvNet(convs, strides, self.conv_padding, self.scale, mlp)

    @property
    def noise_variables(self) -> list:
        """The noisy layers' generator states (empty without noise)."""
        return noise_variables([*self.hidden, *self.heads])

    def exploring_policy(self) -> Callable[[np.ndarray], np.ndarray]:
        """``obs -> Q(s, .)`` while exploring: with fresh noise on every call (one compiled
        call, ``training=True``) for a noisy network; else :meth:`policy`."""
        if not self.noisy:
            return self.policy()
        return self._compiled(training=True)

    def policy(self) -> Callable[[np.ndarray], np.ndarray]:
        """``obs -> Q(s, .)`` for acting: the numpy mirror (an MLP or MinAtar's torso; re-take
        it after each update), or one compiled TensorFlow call per batch for another
        convolutional network (it reads the live weights)."""
        if self.mirrored:
            return self.numpy_snapshot()
        return self._compiled(training=False)

    def _compiled(self, training: bool) -> Callable[[np.ndarray], np.ndarray]:
        """One compiled call per batch (or single observation), reading the live weights."""
        if training not in self._compiled_policies:
            from rlkit.learn.compiled import CompiledFunction

            if training:
                compiled = CompiledFunction(lambda obs: self.model(obs, training=True))
            else:
                compiled = CompiledFunction(lambda obs: self.model(obs))
            obs_rank = len(self.model.inputs[0].shape) - 1

            def q_values(obs: np.ndarray) -> np.ndarray:
                single = obs.ndim == obs_rank
                out = compiled(obs[None] if single else obs).numpy()
                return out[0] if single else out

            self._compiled_policies[training] = q_values
        return self._compiled_policies[training]


def dueling_outputs(value, advantage, per_action: int = 1):
    """Wang et al.'s ``Q = V + A - mean_a A``: value ``[B, n]``, advantage ``[B, A * n]``
    (``n = per_action`` values per action, combined per atom or quantile) -> ``[B, A * n]``."""
    if per_action == 1:
        return value + advantage - keras.ops.mean(advantage, axis=1, keepdims=True)
    width = advantage.shape[-1]
    advantage = keras.ops.reshape(advantage, (-1, width // per_action, per_action))
    mean = keras.ops.mean(advantage, axis=1, keepdims=True)
    return keras.ops.reshape(keras.ops.expand_dims(value, 1) + advantage - mean, (-1, width))
