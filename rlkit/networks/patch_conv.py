"""A Conv2D that convolves as one matrix product of image patches inside the compiled loop.

Inside a ``tf.while_loop`` compiled by XLA (the compiled training loop) this CPU ran a
small convolution's gradient slowly: at MinAtar's scale (a 3x3 convolution of a ``[32,
10, 10, C]`` batch) 300 forward and backward passes in a loop took 4.3 ms each under XLA
against 0.87 ms on TensorFlow's own kernels (docs/performance.md). Written as patches
times a matrix, the same convolution is slices, a concatenation and a matmul, which XLA
compiles well.

:class:`PatchConv2D` is ``keras.layers.Conv2D`` with the same weights (kernel ``[kh, kw,
C, F]``, bias ``[F]``), names and initialisers, so a checkpoint fits either. It *is*
Keras' Conv2D, op for op and bit for bit, except while a program is traced inside
:func:`convolutions_as_patches` (the compiled training loop, :mod:`rlkit.run.
compiled_program`, which is one XLA program), where a stride-1, undilated convolution is::

    patches[b, y, x, (i * kw + j) * C + c] = padded[b, y + i, x + j, c]
    out[b, y, x, f] = sum_k patches[b, y, x, k] * kernel.reshape(kh * kw * C, F)[k, f]

equal to the convolution up to the order of the float32 additions. (Runs of the Python
loop, XLA-compiled updates included, keep Keras' convolution: their numbers do not move.)
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import keras
import tensorflow as tf

_AS_PATCHES = contextvars.ContextVar("rlkit_convolutions_as_patches", default=False)


@contextlib.contextmanager
def convolutions_as_patches() -> Iterator[None]:
    """While inside, :class:`PatchConv2D` layers traced into a graph convolve by
    :func:`patch_matmul_conv` (where they can: stride 1, no dilation, one group)."""
    token = _AS_PATCHES.set(True)
    try:
        yield
    finally:
        _AS_PATCHES.reset(token)


def patch_matmul_conv(inputs: tf.Tensor, kernel: tf.Tensor, padding: str) -> tf.Tensor:
    """A stride-1 convolution of ``inputs`` float ``[B, H, W, C]`` with ``kernel`` ``[kh,
    kw, C, F]`` as patches times a matrix: ``[B, H', W', F]`` (``"same"``: ``H' = H``,
    padded as TensorFlow pads, ``(k - 1) // 2`` before; ``"valid"``: ``H' = H - kh + 1``)."""
    kh, kw, channels, filters = kernel.shape
    if padding == "same":
        pad_h, pad_w = kh - 1, kw - 1
        inputs = tf.pad(
            inputs,
            [[0, 0], [pad_h // 2, pad_h - pad_h // 2], [pad_w // 2, pad_w - pad_w // 2], [0, 0]],
        )
    height = inputs.shape[1] - kh + 1
    width = inputs.shape[2] - kw + 1
    patches = tf.concat(
        [inputs[:, i : i + height, j : j + width, :] for i in range(kh) for j in range(kw)],
        axis=-1,
    )  # [B, H', W', kh * kw * C], ordered as the kernel's rows
    rows = tf.reshape(patches, [-1, kh * kw * channels])
    out = tf.matmul(rows, tf.reshape(kernel, [kh * kw * channels, filters]))
    return tf.reshape(out, [-1, height, width, filters])


@keras.saving.register_keras_serializable(package="rlkit")
class PatchConv2D(keras.layers.Conv2D):
    """``keras.layers.Conv2D`` (same arguments and weights) that convolves by
    :func:`patch_matmul_conv` inside :func:`convolutions_as_patches`, for stride 1, no
    dilation, one group and channels last; otherwise exactly Keras' Conv2D."""

    def convolution_op(self, inputs, kernel):
        simple = (
            tuple(self.strides) == (1, 1)
            and tuple(self.dilation_rate) == (1, 1)
            and self.groups == 1
            and self.data_format == "channels_last"
        )
        if simple and _AS_PATCHES.get() and None not in inputs.shape[1:]:
            return patch_matmul_conv(inputs, kernel, self.padding)
        return super().convolution_op(inputs, kernel)
