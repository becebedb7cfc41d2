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
acting reads the snapshot (MinAtar's small torso too: :mod:`rlkit.networks.numpy_conv`); a
larger convolutional network acts through one compiled call per (batched) step instead
(:meth:`rlkit.networks.q_network.QNetwork.policy`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import keras
import numpy as np

from rlkit.core.spaces import IMAGE, ObservationFormat
from rlkit.networks.patch_conv import PatchConv2D

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
) -> PatchConv2D:
    """A seeded ReLU convolution (channels last); init as :func:`dense`. Keras' Conv2D,
    except inside the compiled loop (:class:`~rlkit.networks.patch_conv.PatchConv2D`).

    ``padding`` "valid" (SB3: an 84-pixel side becomes 20, 9, 7) or "same" (Dopamine's
    networks, TF-slim's and Flax's default: 21, 11, 11).
    """
    kernel, bias = _initializers(seed, 0.0, init, fan_in)
    return PatchConv2D(
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
        #: the product of every layer (``np.matmul``; a mirror may give one that keeps
        #: OpenBLAS on one thread: :func:`rlkit.networks.numpy_conv.one_thread_matmul`)
        self.matmul: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.matmul

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
        x, mm = obs, self.matmul
        for kernel, bias in self.hidden:
            x = np.maximum(mm(x, kernel) + bias, 0.0)
        if len(self.heads) == 1:
            kernel, bias = self.heads[0]
            y = mm(x, kernel) + bias
            return y if self.output is None else self.output(y)
        (vk, vb), (ak, ab) = self.heads
        advantage = mm(x, ak) + ab
        if self.per_action == 1:
            return mm(x, vk) + vb + advantage - advantage.mean(axis=-1, keepdims=True)
        n = self.per_action
        advantage = advantage.reshape(*advantage.shape[:-1], -1, n)
        value = (mm(x, vk) + vb)[..., None, :]
        combined = value + advantage - advantage.mean(axis=-2, keepdims=True)
        return combined.reshape(*combined.shape[:-2], -1)


def layer_weights(layers: Sequence[keras.layers.Dense]) -> list:
    """``[kernel_0, bias_0, ...]`` of Dense layers: the order :meth:`NumpyMLP.from_arrays` takes."""
    return [w for layer in layers for w in (layer.kernel, layer.bias)]
