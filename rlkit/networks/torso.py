"""Network builders: seeded Dense layers, MLP stacks, the observation torso, numpy mirrors.

Every network of every agent is built from the same pieces:

- :func:`dense`: one seeded Dense layer (Glorot, Torch ``nn.Linear``, He-normal or zero
  initialisation);
- :func:`mlp_layers`: a stack of them with one seed per layer;
- :func:`torso`: the seam between an observation and the layers above it: the input layer
  built from the :class:`~rlkit.core.spaces.ObservationFormat` (a vector as it is, an uint8
  image cast to float32 and divided by 255 inside the network) followed, for images, by
  the Nature CNN's convolutions (channels last: TensorFlow's CPU kernels want NHWC);
- :class:`NumpyMLP`: the one numpy mirror of an MLP, for acting.

Acting one observation at a time through TensorFlow costs far more per call, even inside
``tf.function``, than the same small MLP in numpy (docs/performance.md). So
an MLP network is snapshotted into a :class:`NumpyMLP` after each block of updates and
acting reads the snapshot; a convolutional network acts through one compiled call per
(batched) step instead (:meth:`QNetwork.policy`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import keras
import numpy as np

from rlkit.core.spaces import IMAGE, ObservationFormat
from rlkit.networks.noisy import noise_variables, noisy_layers

INITS = ("glorot", "torch", "he_normal", "zeros")

#: the Nature DQN's convolutions (Mnih et al. 2015): (filters, kernel, stride), ReLU each
NATURE_CNN = ((32, 8, 4), (64, 4, 2), (64, 3, 1))
#: MinAtar's DQN (Young & Tian 2019): one convolution, 16 filters 3x3, stride 1
MINATAR_CNN = ((16, 3, 1),)
TORSOS = {"nature": NATURE_CNN, "minatar": MINATAR_CNN}


def torso_for(obs_format: ObservationFormat, kind: str = "auto") -> tuple:
    """The convolutions for images of ``obs_format``: ``kind`` "nature" or "minatar", or
    "auto": the Nature CNN for images of 36 pixels a side or more (its three convolutions
    need that much), MinAtar's for smaller ones (10x10)."""
    if obs_format.kind != IMAGE:
        return ()
    if kind == "auto":
        kind = "nature" if min(obs_format.shape[:2]) >= 36 else "minatar"
    return TORSOS[kind]


#: seed offset of the convolution layers inside a network's block of seeds
CONV_SEED_OFFSET = 100


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
    Glorot-uniform kernel and a zero bias, ``init="torch"`` PyTorch's ``nn.Linear``
    default, kernel and bias both ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` (``fan_in``: the
    layer's input width), ``init="he_normal"`` a He-normal kernel and zero bias and
    ``init="zeros"`` zeros for both.

    Seeding: the kernel uses ``seed``; a drawn bias uses ``seed + 1`` for ``final_scale``
    (callers space those seeds by 2) and ``seed + 500`` for ``init="torch"`` (callers
    number consecutive layers ``seed, seed + 1, ...``). Two tensors must never share a
    seed: Keras' seeded draws would then be the same numbers, rescaled.
    """
    kernel, bias = _initializers(seed, final_scale, init, fan_in)
    return keras.layers.Dense(
        units, activation=activation, kernel_initializer=kernel, bias_initializer=bias, name=name
    )


def _initializers(seed: int, final_scale: float, init: str, fan_in: int):
    """(kernel, bias) initialisers of :func:`dense` and :func:`conv2d`."""
    if init not in INITS:
        raise ValueError(f"init must be one of {', '.join(INITS)}, got {init!r}")
    if init == "zeros":
        return "zeros", "zeros"
    if init == "he_normal":
        return keras.initializers.HeNormal(seed=seed), "zeros"
    bias_seed = seed + 1
    if init == "torch" and final_scale <= 0:
        if fan_in <= 0:
            raise ValueError("init='torch' needs the layer's fan_in")
        final_scale, bias_seed = fan_in**-0.5, seed + 500
    if final_scale > 0:
        kernel = keras.initializers.RandomUniform(-final_scale, final_scale, seed=seed)
        bias = keras.initializers.RandomUniform(-final_scale, final_scale, seed=bias_seed)
        return kernel, bias
    return keras.initializers.GlorotUniform(seed=seed), "zeros"


def conv2d(
    filters: int,
    kernel_size: int,
    stride: int,
    seed: int,
    name: str,
    init: str,
    fan_in: int,
    padding: str = "valid",
) -> keras.layers.Conv2D:
    """A seeded ReLU convolution (channels last); init as :func:`dense`.

    ``padding`` "valid" (SB3: an 84-pixel side becomes 20, 9, 7) or "same" (Dopamine's
    networks, TF-slim's and Flax's default: 21, 11, 11).
    """
    kernel, bias = _initializers(seed, 0.0, init, fan_in)
    return keras.layers.Conv2D(
        filters,
        kernel_size,
        strides=stride,
        padding=padding,
        activation="relu",
        kernel_initializer=kernel,
        bias_initializer=bias,
        name=name,
    )


def mlp_layers(
    sizes: Sequence[int],
    seed: int,
    name: str,
    init: str = "glorot",
    fan_in: int = 0,
    seed_stride: int = 1,
) -> list[keras.layers.Dense]:
    """ReLU Dense layers of ``sizes``; layer ``i`` is seeded ``seed + seed_stride * i``.

    ``fan_in`` is the width of the first layer's input (needed by ``init="torch"``).
    """
    fan_ins = [fan_in, *sizes]
    return [
        dense(units, "relu", seed + seed_stride * i, f"{name}_hidden{i}", init=init,
              fan_in=fan_ins[i])
        for i, units in enumerate(sizes)
    ]  # fmt: skip


def apply_layers(x, layers: Sequence[keras.layers.Layer]):
    """``layers[-1](...layers[0](x))``."""
    for layer in layers:
        x = layer(x)
    return x


def torso(
    obs_format: ObservationFormat,
    seed: int,
    name: str,
    init: str = "torch",
    kind: str = "auto",
    padding: str = "valid",
):
    """The input layer and features of a network on observations of ``obs_format``.

    Returns ``(inputs, features, width, conv_layers)``: the ``keras.Input`` (the stored
    shape and dtype: ``[B, D]`` float32 or ``[B, H, W, C]`` e.g. uint8 or bool), the features
    above it (the input itself for vectors; for images the input as float32, ``/ 255`` for
    uint8, through the convolutions of :func:`torso_for` and flattened: ``[B, 3136]`` for
    84x84 and the Nature CNN, ``[B, 7744]`` with "same" padding), their width, and the
    convolution layers (empty for vectors). ``padding`` is "valid" or "same" for every
    convolution (:func:`conv2d`), or "dqn3": DQN3.0's ``convnet.lua``, one pixel of zeros
    around the first convolution's input (``SpatialConvolution(..., 8, 8, 4, 4, 1)``) and
    none after: 86 -> 20 (the last row and column of the 84 unread), 9, 7.
    Convolutions are seeded from ``seed + CONV_SEED_OFFSET``.
    """
    inputs = keras.Input(obs_format.shape, dtype=obs_format.dtype, name=f"{name}_obs")
    if obs_format.kind != IMAGE:
        return inputs, inputs, obs_format.size, []
    x = keras.ops.cast(inputs, "float32")
    if obs_format.scale != 1.0:
        x = x / obs_format.scale
    channels = obs_format.shape[-1]
    if padding == "dqn3":
        x = keras.layers.ZeroPadding2D(1, name=f"{name}_pad")(x)
        padding = "valid"
    convs = []
    for i, (filters, size, stride) in enumerate(torso_for(obs_format, kind)):
        convs.append(
            conv2d(filters, size, stride, seed + CONV_SEED_OFFSET + i, f"{name}_conv{i}", init,
                   fan_in=size * size * channels, padding=padding)
        )  # fmt: skip
        channels = filters
    x = keras.layers.Flatten(name=f"{name}_flatten")(apply_layers(x, convs))
    return inputs, x, int(x.shape[-1]), convs


class QNetwork:
    """``Q(s, .)``: ``[B, *obs_shape] -> [B, num_actions]``, optionally dueling.

    A torso (:func:`torso`: nothing for vectors, the Nature CNN for images), ReLU hidden
    layers, and a linear head; dueling (Wang et al. 2016): ``Q = V(s) + A(s, a) - mean_a
    A(s, a)``. With ``obs_format`` an integer the input is a float32 vector of that width.

    Attributes:
        model: the Keras model.
        convs: the convolution layers (empty for vector observations).
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
    ) -> None:
        if isinstance(obs_format, int):
            from rlkit.core.spaces import vector_format

            obs_format = vector_format(obs_format)
        self.dueling, self.per_action, self.noisy = dueling, per_action, noisy
        base = seed * 1000
        inputs, x, width, self.convs = torso(obs_format, base, name, init, torso_kind, conv_padding)
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

    def numpy_snapshot(self) -> NumpyMLP:
        """A numpy copy of the current weights computing ``Q(s, .)`` (MLP only; noisy: ``mu``)."""
        if self.convs:
            raise TypeError("a convolutional Q network has no numpy mirror; use policy()")
        return self.mirror([w.numpy() for w in self.mirror_weights()])

    def mirror_weights(self) -> list:
        """The variables of the numpy mirror, in :meth:`NumpyMLP.from_arrays`' order (a noisy
        network's ``mu``); empty for a convolutional network (no mirror)."""
        layers = (*self.hidden, *self.heads)
        if self.noisy and not self.convs:
            return [w for layer in layers for w in (layer.kernel_mu, layer.bias_mu)]
        return [] if self.convs else layer_weights(layers)

    def mirror(self, arrays: Sequence[np.ndarray]) -> NumpyMLP:
        """The numpy mirror from arrays of :meth:`mirror_weights` (as a block returned them)."""
        mirror = NumpyMLP.from_arrays(arrays, num_heads=len(self.heads))
        mirror.per_action = self.per_action
        return mirror

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
        """``obs -> Q(s, .)`` for acting: the numpy mirror of an MLP (re-take it after each
        update), or one compiled TensorFlow call per batch for a convolutional network
        (it reads the live weights)."""
        if not self.convs:
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


class NumpyMLP:
    """The numpy forward pass of a ReLU MLP: ``[B, D]`` or ``[D]`` -> outputs.

    ``hidden``: ``(kernel, bias)`` of each ReLU layer; ``heads``: one output layer, or two
    (value, advantage) for a dueling head (``per_action`` values per action: the value head
    gives ``per_action``, combined per atom or quantile); ``output``: applied to a single
    head's linear output (e.g. DDPG's tanh rescaled to the action bounds).
    """

    def __init__(
        self,
        hidden: list[tuple[np.ndarray, np.ndarray]],
        heads,
        output: Callable[[np.ndarray], np.ndarray] | None = None,
        per_action: int = 1,
    ) -> None:
        self.hidden = hidden
        self.heads = heads
        self.output = output
        self.per_action = per_action

    @classmethod
    def from_layers(cls, hidden, heads, output=None, per_action: int = 1) -> NumpyMLP:
        """A mirror of Keras Dense layers with their current weights."""
        mirror = cls.from_arrays(
            [w.numpy() for layer in (*hidden, *heads) for w in (layer.kernel, layer.bias)],
            num_heads=len(heads),
            output=output,
        )
        mirror.per_action = per_action
        return mirror

    @classmethod
    def from_arrays(cls, arrays: Sequence[np.ndarray], num_heads: int = 1, output=None):
        """A mirror from ``[kernel_0, bias_0, ..., kernel_out, bias_out]`` (see
        :func:`layer_weights`)."""
        arrays = [np.asarray(a) for a in arrays]
        pairs = [(arrays[i], arrays[i + 1]) for i in range(0, len(arrays), 2)]
        return cls(pairs[:-num_heads], pairs[-num_heads:], output)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        x = obs
        for kernel, bias in self.hidden:
            x = np.maximum(x @ kernel + bias, 0.0)
        if len(self.heads) == 1:
            kernel, bias = self.heads[0]
            y = x @ kernel + bias
            return y if self.output is None else self.output(y)
        (vk, vb), (ak, ab) = self.heads
        advantage = x @ ak + ab
        if self.per_action == 1:
            return x @ vk + vb + advantage - advantage.mean(axis=-1, keepdims=True)
        n = self.per_action
        advantage = advantage.reshape(*advantage.shape[:-1], -1, n)
        value = (x @ vk + vb)[..., None, :]
        combined = value + advantage - advantage.mean(axis=-2, keepdims=True)
        return combined.reshape(*combined.shape[:-2], -1)


def layer_weights(layers: Sequence[keras.layers.Dense]) -> list:
    """``[kernel_0, bias_0, ...]`` of Dense layers: the order :meth:`NumpyMLP.from_arrays` takes."""
    return [w for layer in layers for w in (layer.kernel, layer.bias)]
