"""The numpy mirror of a small convolutional Q network (MinAtar's torso), for acting.

A compiled TensorFlow call costs about a millisecond on this CPU whatever it computes
(docs/performance.md); MinAtar's network — one 3x3 convolution of 16 channels over a 10x10
board, then a Dense head — is a few hundred thousand multiply-adds, far less than that in
numpy. So, as an MLP acts through :class:`~rlkit.networks.builders.NumpyMLP`, a network on
MinAtar's torso acts through :class:`NumpyConvNet`, refreshed from the weights each block of
updates returns (:meth:`rlkit.networks.q_network.QNetwork.mirror`).

The convolution is ``im2col``: the zero-padded input's ``k x k x C`` windows viewed with
``numpy.lib.stride_tricks.as_strided`` (no copy), gathered into one ``[B * H' * W', k * k * C]``
array and multiplied by the kernel reshaped ``[k * k * C, F]`` (Keras' ``[kh, kw, C, F]``
order), then bias and ReLU; the output is flattened row-major as Keras' ``Flatten`` does for
channels-last maps. Everything is float32, as the network computes; the sums run in another
order than TensorFlow's kernels, so values may differ in the last bits (docs/dqn-family.md,
"Acting without TensorFlow", measures what that does to greedy actions).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from rlkit.networks.builders import NumpyMLP

#: OpenBLAS runs a float32 product of ``M x K`` by ``K x N`` on one thread while ``M * N * K``
#: is at most this (``SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD``, interface/gemm.c); above
#: it, its threads spin-wait for cores a loaded machine does not give them: MinAtar's C51 head
#: (1 x 1,600 by 1,600 x 306) took 1 to 12 ms there against 0.08 ms on one thread
ONE_THREAD_MNK = 65536 * 4


#: the narrowest column block worth a call of its own; a product that would need narrower
#: ones (a large batch, not an act) is left whole, to OpenBLAS's threads
MIN_BLOCK_COLUMNS = 32


def one_thread_matmul(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``x @ w`` (``x [..., K]``, ``w [K, N]``), computed in column blocks small enough for
    OpenBLAS to keep each on one thread (:data:`ONE_THREAD_MNK`), for the few rows of an act;
    each output column is the same dot product either way (OpenBLAS splits threads over rows
    and columns, never ``K``). A product too large for blocks of :data:`MIN_BLOCK_COLUMNS`
    columns is computed whole."""
    rows = max(int(np.prod(x.shape[:-1])), 1)
    columns = ONE_THREAD_MNK // (rows * w.shape[0])
    if columns >= w.shape[1] or columns < MIN_BLOCK_COLUMNS:
        return x @ w
    return np.concatenate(
        [x @ w[:, i : i + columns] for i in range(0, w.shape[1], columns)], axis=-1
    )


def same_padding(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """TensorFlow's "same" padding of one axis of ``size`` pixels: ``(before, after)``, the
    total ``max((ceil(size / stride) - 1) * stride + kernel - size, 0)``, the odd pixel after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def conv2d_relu(
    x: np.ndarray, kernel: np.ndarray, bias: np.ndarray, stride: int = 1, padding: str = "valid"
) -> np.ndarray:
    """``ReLU(conv(x, kernel) + bias)``, channels last: ``x [B, H, W, C]``, ``kernel [k, k, C,
    F]`` -> ``[B, H', W', F]`` (``padding`` "valid": ``H' = (H - k) // stride + 1``; "same":
    ``H' = ceil(H / stride)``), float32."""
    size = kernel.shape[0]
    if padding == "same":  # (np.pad costs ~60 us here, the slices ~3)
        (top, bottom), (left, right) = (same_padding(n, size, stride) for n in x.shape[1:3])
        batch, height, width, channels = x.shape
        padded = np.zeros((batch, top + height + bottom, left + width + right, channels),
                          np.float32)  # fmt: skip
        padded[:, top : top + height, left : left + width] = x
        x = padded
    batch, height, width, channels = x.shape
    out_h, out_w = (height - size) // stride + 1, (width - size) // stride + 1
    sb, sh, sw, sc = x.strides
    windows = as_strided(
        x,
        shape=(batch, out_h, out_w, size, size, channels),
        strides=(sb, sh * stride, sw * stride, sh, sw, sc),
        writeable=False,
    )
    columns = windows.reshape(batch * out_h * out_w, size * size * channels)  # (a copy)
    y = one_thread_matmul(columns, kernel.reshape(-1, kernel.shape[-1])) + bias
    return np.maximum(y, 0.0, out=y).reshape(batch, out_h, out_w, -1)


class NumpyConvNet:
    """The numpy forward pass of a Q network on images: convolutions, flatten, then a
    :class:`~rlkit.networks.builders.NumpyMLP` (hidden layers and the head, dueling or not):
    ``[B, H, W, C]`` (any dtype; cast to float32 and divided by ``scale``) -> ``[B, out]``,
    or ``[H, W, C]`` -> ``[out]``.

    Args:
        convs: ``(kernel [k, k, C, F], bias [F])`` of each ReLU convolution, in order.
        strides: each convolution's stride.
        padding: "valid" or "same", every convolution's.
        scale: what inputs are divided by (255 for uint8 frames, 1 otherwise).
        head: the mirror of the layers above the flattened features.
    """

    def __init__(
        self,
        convs: Sequence[tuple[np.ndarray, np.ndarray]],
        strides: Sequence[int],
        padding: str,
        scale: float,
        head: NumpyMLP,
    ) -> None:
        if padding not in ("valid", "same"):
            raise ValueError(f"the numpy mirror takes 'valid' or 'same' padding, got {padding!r}")
        self.convs = [(np.asarray(k, np.float32), np.asarray(b, np.float32)) for k, b in convs]
        self.strides = list(strides)
        self.padding = padding
        self.scale = np.float32(scale)
        self.head = head
        head.matmul = one_thread_matmul

    @property
    def per_action(self) -> int:
        """Values per action of the head (1, or a distributional head's atoms or quantiles)."""
        return self.head.per_action

    @per_action.setter
    def per_action(self, value: int) -> None:
        self.head.per_action = value

    def features(self, obs: np.ndarray) -> np.ndarray:
        """The flattened convolution features ``[B, H' * W' * F]`` of ``obs [B, H, W, C]``."""
        x = np.asarray(obs, dtype=np.float32)
        if self.scale != 1.0:
            x = x / self.scale
        for (kernel, bias), stride in zip(self.convs, self.strides, strict=True):
            x = conv2d_relu(x, kernel, bias, stride, self.padding)
        return x.reshape(x.shape[0], -1)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        single = np.ndim(obs) == self.convs[0][0].ndim - 1  # [H, W, C]
        out = self.head(self.features(np.asarray(obs)[None] if single else obs))
        return out[0] if single else out
