"""PPO's minibatches: each epoch's permutation of the rollout's rows cut into minibatches, in
numpy (the Python learner) and its in-graph twin (the compiled program's update), tied by
``tests/unit/agents/test_ppo_twins.py``."""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def cut_minibatches(permutations: np.ndarray, batch_size: int) -> np.ndarray:
    """Epochs' permutations ``[E, M]`` of the rollout's rows cut into minibatches: int32
    ``[E * (M // batch_size), batch_size]``, epoch by epoch, the ``M mod batch_size`` rows
    left at each epoch's end unused."""
    epochs, size = permutations.shape
    per_epoch = size // batch_size
    kept = np.asarray(permutations)[:, : per_epoch * batch_size]
    return kept.reshape(-1, batch_size).astype(np.int32)


def graph_cut_minibatches(permutations: tf.Tensor, batch_size: int) -> tf.Tensor:
    """The in-graph twin of :func:`cut_minibatches` (``permutations`` int32 ``[E, M]`` of
    a static shape)."""
    size = int(permutations.shape[1])
    per_epoch = size // batch_size
    return tf.reshape(permutations[:, : per_epoch * batch_size], [-1, batch_size])
