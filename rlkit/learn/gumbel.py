"""Gumbel noise from uniforms: the inverse CDF ``-log(-log u)``, in numpy and its graph twin.

``argmax(logits + gumbel)`` is an exact draw of ``softmax(logits)`` (the Gumbel-max trick):
PPO's acting draws that way, and its export's ``sample`` signature takes the uniforms as an
input (the caller owns the randomness; no random op, so TFLite converts it). The two
functions here compute the same float32 noise, tied by ``tests/unit/agents/test_ppo_sample.py``.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

#: the uniform noise of a sample drawn from given noise (the export's ``sample`` signature)
#: is clipped into ``[UNIFORM_LOW, UNIFORM_HIGH]`` (float32), so that ``-log(-log u)`` is
#: finite: the smallest normal float32 and the largest float32 below 1
UNIFORM_LOW = float(np.finfo(np.float32).tiny)
UNIFORM_HIGH = float(np.float32(1.0) - np.float32(2.0**-24))


def gumbel_from_uniform(uniform: np.ndarray) -> np.ndarray:
    """Standard Gumbel noise ``-log(-log u)`` (float32, ``[...]`` as ``uniform``) from
    uniforms in (0, 1), clipped into ``[UNIFORM_LOW, UNIFORM_HIGH]`` first: the inverse CDF of
    the Gumbel distribution, as the export's ``sample`` computes it
    (:func:`graph_gumbel_from_uniform`)."""
    u = np.clip(np.asarray(uniform, np.float32), np.float32(UNIFORM_LOW),
                np.float32(UNIFORM_HIGH))  # fmt: skip
    return -np.log(-np.log(u))


def graph_gumbel_from_uniform(uniform: tf.Tensor) -> tf.Tensor:
    """The twin of :func:`gumbel_from_uniform` (float32)."""
    u = tf.clip_by_value(tf.cast(uniform, tf.float32), UNIFORM_LOW, UNIFORM_HIGH)
    return -tf.math.log(-tf.math.log(u))
