"""PPO's networks and their numpy mirrors for acting.

- Vector observations: separate tanh MLPs for the policy and the value (SB3's and CleanRL's
  ``MlpPolicy``), :class:`TanhMLP`, joined by :class:`SeparateMLPs`.
- Image observations: one convolutional torso shared by a policy head and a value head
  (Huang et al. 2022's Atari details, "shared Nature CNN": CleanRL's ``ppo_atari.py``
  ``Agent.network``, SB3's ``CnnPolicy``), :class:`ConvActorCritic`: the Nature CNN (32 8x8/4,
  64 4x4/2, 64 3x3/1, Dense 512) or MinAtar's (16 3x3/1, Dense 128), the convolutions those
  rlkit's DQN builds (:data:`rlkit.networks.builders.TORSOS`, picked by
  :func:`~rlkit.networks.builders.torso_for`), ReLU throughout; uint8 pixels are divided by
  255 inside the network.

Initialisation (Huang et al. 2022, details 2 and 3; CleanRL's ``layer_init``, SB3's
``ortho_init``): orthogonal kernels with gain ``sqrt(2)`` for hidden layers (convolutions
included: the kernel ``[k, k, C, F]`` as a ``[k k C, F]`` matrix), ``0.01`` for the policy's
head (logits or the Gaussian's mean start near 0: near-uniform actions) and ``1`` for the
value's head; zero biases. ``ortho_init=False`` gives Keras' Glorot uniform.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import keras
import numpy as np

from rlkit.core.errors import UsageError
from rlkit.core.seeding import network_seed
from rlkit.core.spaces import IMAGE, ObservationFormat
from rlkit.networks.builders import (
    CONV_SEED_OFFSET,
    NATURE_CNN,
    NumpyMLP,
    apply_layers,
    torso_for,
)
from rlkit.networks.numpy_conv import NumpyConvNet
from rlkit.networks.patch_conv import PatchConv2D
from rlkit.networks.q_network import MIRRORED_TORSOS

#: the shared torso's Dense layer after its convolutions: the Nature CNN's 512 (CleanRL's
#: ppo_atari.py, SB3's NatureCNN features_dim), MinAtar's 128 (Young & Tian 2019)
TORSO_WIDTHS = {"nature": 512, "minatar": 128}
#: the smallest side the Nature CNN's three convolutions take (torso_for's "auto" rule)
NATURE_SIDE = 36
#: the shared torso's Dense layer's seed, within the policy's block of seeds
TORSO_DENSE_SEED = CONV_SEED_OFFSET + 10


#: a torch-initialised bias's seed, past its kernel's (layers take ``base + i``, heads ``+ 99``)
TORCH_BIAS_SEED_OFFSET = 500


def init_kind(ortho: bool | str) -> str:
    """``"orthogonal"`` for ``ortho_init`` true, ``"glorot"`` for false; a kind passes."""
    if isinstance(ortho, str):
        return ortho
    return "orthogonal" if ortho else "glorot"


def config_init(config) -> str:
    """The initialisation ``config`` asks for: ``"orthogonal"`` (``ortho_init``), else its
    ``plain_init`` (``"glorot"`` or ``"torch"``)."""
    return "orthogonal" if config.ortho_init else config.plain_init


def _kernel_init(gain: float, seed: int, ortho: bool | str):
    """Orthogonal with ``gain``, or Glorot uniform (convolutions: no ``"torch"``)."""
    return (keras.initializers.Orthogonal(gain=gain, seed=seed)
            if init_kind(ortho) == "orthogonal"
            else keras.initializers.GlorotUniform(seed=seed))  # fmt: skip


def _dense(units: int, activation: str | None, gain: float, seed: int, name: str,
           ortho: bool | str, fan_in: int = 0):  # fmt: skip
    """A Dense layer initialised as ``ortho`` says (:func:`init_kind`): orthogonal kernels
    with ``gain`` or Glorot-uniform ones, zero biases; ``"torch"``: PyTorch's ``nn.Linear``
    default, kernel and bias uniform within ``1/sqrt(fan_in)`` (SB3's ``ortho_init=False``)."""
    if init_kind(ortho) == "torch":
        limit = fan_in**-0.5
        kernel = keras.initializers.RandomUniform(-limit, limit, seed=seed)
        bias = keras.initializers.RandomUniform(-limit, limit, seed=seed + TORCH_BIAS_SEED_OFFSET)
        return keras.layers.Dense(units, activation=activation, kernel_initializer=kernel,
                                  bias_initializer=bias, name=name)  # fmt: skip
    return keras.layers.Dense(units, activation=activation,
                              kernel_initializer=_kernel_init(gain, seed, ortho),
                              bias_initializer="zeros", name=name)  # fmt: skip


class TanhMLP:
    """``[B, in_dim] -> [B, out_dim]``: tanh hidden layers (or ReLU: ``activation``), a
    linear head.

    Args:
        in_dim, out_dim: input and output widths.
        hidden_sizes: the hidden layers' widths.
        head_gain: the head's orthogonal gain (0.01 policy, 1 value).
        seed: the run's seed (each layer's is derived from it and ``name``).
        name: ``"policy"`` or ``"value"``.
        ortho: orthogonal initialisation (else Glorot uniform), or a kind of
            :func:`init_kind` (``"torch"``: PyTorch's ``nn.Linear`` default).
        activation: the hidden layers' ``"tanh"`` (SB3's ``MlpPolicy``) or ``"relu"``.
    """

    def __init__(
        self, in_dim: int, out_dim: int, hidden_sizes: Sequence[int], head_gain: float,
        seed: int, name: str, ortho: bool | str = True, activation: str = "tanh",
    ) -> None:  # fmt: skip
        self.activation = activation
        base = network_seed(seed, name)
        fan_ins = [in_dim, *hidden_sizes]
        self.hidden = [
            _dense(
                units,
                activation,
                math.sqrt(2.0),
                base + i,
                f"{name}_hidden{i}",
                ortho,
                fan_ins[i],
            )  # fmt: skip
            for i, units in enumerate(hidden_sizes)
        ]
        self.head = _dense(out_dim, None, head_gain, base + 99, f"{name}_out", ortho,
                           fan_ins[-1])  # fmt: skip
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
    (float64 inside, as the weights' float32 arrays broadcast); ``activation`` its
    hidden layers' (``"tanh"`` or ``"relu"``)."""

    def __init__(self, arrays: Sequence[np.ndarray], activation: str = "tanh") -> None:
        arrays = [np.asarray(a) for a in arrays]
        self.layers = [(arrays[i], arrays[i + 1]) for i in range(0, len(arrays), 2)]
        self.relu = activation == "relu"

    def __call__(self, x: np.ndarray) -> np.ndarray:
        *hidden, (kernel, bias) = self.layers
        for k, b in hidden:
            y = x @ k + b
            x = np.maximum(y, 0.0) if self.relu else np.tanh(y)
        return x @ kernel + bias


class SeparateMLPs:
    """The policy and the value as two :class:`TanhMLP` (vector observations): what the
    learner asks of its networks (:class:`ConvActorCritic` answers the same).

    Args:
        obs_dim, out_dim: the encoded observation's width; the policy's outputs (logits or
            the Gaussian's mean).
        hidden_sizes, value_hidden_sizes: the two networks' tanh layers.
        seed: the run's seed.
        ortho: orthogonal initialisation (else Glorot uniform).
        activation: the hidden layers' (``"tanh"`` or ``"relu"``).
    """

    shared = False

    def __init__(
        self, obs_dim: int, out_dim: int, hidden_sizes: Sequence[int],
        value_hidden_sizes: Sequence[int], seed: int, ortho: bool | str = True,
        activation: str = "tanh",
    ) -> None:  # fmt: skip
        self.activation = activation
        self.policy_network = TanhMLP(obs_dim, out_dim, hidden_sizes, 0.01, seed, "policy",
                                      ortho, activation)  # fmt: skip
        self.value_network = TanhMLP(obs_dim, 1, value_hidden_sizes, 1.0, seed, "value", ortho,
                                     activation)  # fmt: skip

    def groups(self) -> dict[str, list]:
        """The trainable variables by checkpoint group, in the update pipeline's order
        (the learner appends the Gaussian's log std to ``"policy"``)."""
        return {"policy": list(self.policy_network.variables),
                "value": list(self.value_network.variables)}  # fmt: skip

    def forward(self, obs):
        """``(policy outputs [B, out_dim], values [B])`` of ``obs [B, obs_dim]``."""
        return (self.policy_network.model(obs, training=True),
                self.value_network.model(obs, training=True)[:, 0])  # fmt: skip

    def value(self, obs):
        """``V(obs)`` ``[B]``."""
        return self.value_network.model(obs, training=True)[:, 0]

    def snapshot_tensors(self) -> list:
        """The variables acting's numpy copy is made of (:meth:`acting_forward`)."""
        return self.policy_network.layer_weights()

    def acting_forward(self, arrays: Sequence[np.ndarray]) -> NumpyTanhMLP:
        """The policy's forward pass in numpy from :meth:`snapshot_tensors`' arrays."""
        return NumpyTanhMLP(arrays, self.activation)


class NetworkView:
    """One output of :class:`ConvActorCritic` as a network of its own: ``model`` (a Keras
    model over the shared torso) and ``variables`` (the torso's and its head's)."""

    def __init__(self, model: keras.Model) -> None:
        self.model = model

    @property
    def variables(self) -> list:
        return self.model.trainable_variables


class ConvActorCritic:
    """A policy head and a value head over one convolutional torso (image observations).

    ``[B, H, W, C]`` (uint8 divided by 255, bool or float as they are) -> the torso's
    convolutions (:func:`~rlkit.networks.builders.torso_for`: the Nature CNN or MinAtar's,
    "valid" padding, ReLU), flattened (3,136 features for 84x84x4 and the Nature CNN, 1,024
    for MinAtar's 10x10), a ReLU Dense layer (:data:`TORSO_WIDTHS`: 512 or 128) -> the
    policy's logits (or the Gaussian's mean) ``[B, out_dim]`` and the value ``[B, 1]``.
    Convolutions are :class:`~rlkit.networks.patch_conv.PatchConv2D` (Keras' Conv2D, as one
    matrix product inside the compiled loop).

    Args:
        obs_format: the image format (its shape and dtype are the network's input).
        out_dim: the policy's outputs.
        seed: the run's seed: the torso and the policy's head seeded from the policy's
            block (:func:`~rlkit.core.seeding.network_seed`), the value's head from the
            value's.
        kind: "nature", "minatar" or "auto" (:func:`~rlkit.networks.builders.torso_for`).
        ortho: orthogonal initialisation (else Glorot uniform).

    Attributes:
        kind: the torso built ("nature" or "minatar").
        convs, hidden: the torso's convolutions and Dense layer.
        policy_head, value_head: the heads (gains 0.01 and 1).
        model: ``obs -> [policy outputs, value]``, one pass through the torso (training).
        policy_network, value_network: :class:`NetworkView` of each output (acting, export).
        mirrored: acting reads a numpy copy (MinAtar's torso:
            :data:`~rlkit.networks.q_network.MIRRORED_TORSOS`), else one compiled call per
            (batched) act reading the live weights.
    """

    shared = True

    def __init__(self, obs_format: ObservationFormat, out_dim: int, seed: int,
                 kind: str = "auto", ortho: bool = True) -> None:  # fmt: skip
        if obs_format.kind != IMAGE:
            raise ValueError(f"ConvActorCritic takes image observations, got {obs_format.kind}")
        specs = torso_for(obs_format, kind)
        self.kind = "nature" if specs == NATURE_CNN else "minatar"
        self.scale = obs_format.scale
        base = network_seed(seed, "policy")
        inputs = keras.Input(obs_format.shape, dtype=obs_format.dtype, name="obs")
        x = keras.ops.cast(inputs, "float32")
        if self.scale != 1.0:
            x = x / self.scale
        gain = math.sqrt(2.0)
        self.convs = [
            PatchConv2D(filters, size, strides=stride, padding="valid", activation="relu",
                        kernel_initializer=_kernel_init(gain, base + CONV_SEED_OFFSET + i, ortho),
                        bias_initializer="zeros", name=f"torso_conv{i}")
            for i, (filters, size, stride) in enumerate(specs)
        ]  # fmt: skip
        x = keras.layers.Flatten(name="torso_flatten")(apply_layers(x, self.convs))
        self.hidden = _dense(TORSO_WIDTHS[self.kind], "relu", gain, base + TORSO_DENSE_SEED,
                             "torso_hidden", ortho)  # fmt: skip
        features = self.hidden(x)
        self.policy_head = _dense(out_dim, None, 0.01, base + 99, "policy_out", ortho)
        self.value_head = _dense(1, None, 1.0, network_seed(seed, "value") + 99, "value_out",
                                 ortho)  # fmt: skip
        out, value = self.policy_head(features), self.value_head(features)
        self.model = keras.Model(inputs, [out, value], name="actor_critic")
        self.policy_network = NetworkView(keras.Model(inputs, out, name="policy"))
        self.value_network = NetworkView(keras.Model(inputs, value, name="value"))
        self.mirrored = specs in MIRRORED_TORSOS
        self._compiled: Callable[[np.ndarray], np.ndarray] | None = None

    def torso_layers(self) -> list:
        """The torso's layers in order: the convolutions, then the Dense layer."""
        return [*self.convs, self.hidden]

    def groups(self) -> dict[str, list]:
        """The trainable variables by checkpoint group, in the update pipeline's order:
        ``torso`` (shared), ``policy`` (its head; the learner appends the log std),
        ``value`` (its head)."""
        return {
            "torso": [w for layer in self.torso_layers() for w in (layer.kernel, layer.bias)],
            "policy": [self.policy_head.kernel, self.policy_head.bias],
            "value": [self.value_head.kernel, self.value_head.bias],
        }

    def forward(self, obs):
        """``(policy outputs [B, out_dim], values [B])``: one pass through the torso."""
        out, value = self.model(obs, training=True)
        return out, value[:, 0]

    def value(self, obs):
        """``V(obs)`` ``[B]``."""
        return self.forward(obs)[1]

    def snapshot_tensors(self) -> list:
        """The variables of acting's numpy copy (MinAtar's torso: the convolutions, the
        Dense layer, the policy's head); none where acting calls the network."""
        if not self.mirrored:
            return []
        layers = [*self.torso_layers(), self.policy_head]
        return [w for layer in layers for w in (layer.kernel, layer.bias)]

    def acting_forward(self, arrays: Sequence[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        """The policy's outputs for ``[H, W, C]`` or ``[N, H, W, C]`` observations: a numpy
        copy made of :meth:`snapshot_tensors`' arrays (MinAtar's torso), else one compiled
        call of the policy reading the live weights."""
        if self.mirrored:
            arrays = list(arrays)
            cut = 2 * len(self.convs)
            convs = [(arrays[i], arrays[i + 1]) for i in range(0, cut, 2)]
            strides = [int(conv.strides[0]) for conv in self.convs]
            return NumpyConvNet(convs, strides, "valid", self.scale,
                                NumpyMLP.from_arrays(arrays[cut:]))  # fmt: skip
        if self._compiled is None:
            self._compiled = _compiled_call(self.policy_network.model)
        return self._compiled


def _compiled_call(model: keras.Model) -> Callable[[np.ndarray], np.ndarray]:
    """``obs -> model(obs)`` as numpy, one compiled call per (batched) observation."""
    from rlkit.learn.compiled import CompiledFunction

    compiled = CompiledFunction(lambda obs: model(obs))
    rank = len(model.inputs[0].shape) - 1

    def call(obs: np.ndarray) -> np.ndarray:
        single = np.ndim(obs) == rank
        out = compiled(obs[None] if single else obs).numpy()
        return out[0] if single else out

    return call


def make_networks(obs_format: ObservationFormat, out_dim: int, config, seed: int
                  ) -> SeparateMLPs | ConvActorCritic:  # fmt: skip
    """PPO's networks for ``obs_format``: :class:`ConvActorCritic` for images (``config.torso``),
    else :class:`SeparateMLPs` (``config.hidden_sizes``, ``config.value_hidden_sizes``)."""
    if obs_format.kind == IMAGE:
        side = min(obs_format.shape[:2])
        if config.torso == "nature" and side < NATURE_SIDE:
            raise UsageError(
                f"torso nature needs images of {NATURE_SIDE} pixels a side or more (its three "
                f"convolutions), got {obs_format.shape}; use torso minatar or auto"
            )
        if config_init(config) == "torch" or config.activation != "tanh":
            key = "activation" if config.activation != "tanh" else "plain_init"
            raise UsageError(f"{key}: it is built for the MLPs of vector observations (the "
                             "convolutional torso is ReLU, its init orthogonal or Glorot); "
                             f"leave {key} out for images")  # fmt: skip
        return ConvActorCritic(obs_format, out_dim, seed, config.torso, config.ortho_init)
    return SeparateMLPs(obs_format.size, out_dim, config.hidden_sizes,
                        config.value_hidden_sizes, seed, config_init(config),
                        config.activation)  # fmt: skip
