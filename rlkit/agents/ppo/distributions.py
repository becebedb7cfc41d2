"""What the policy's outputs parameterise, by action space (PPO and A2C).

- ``Discrete(n)``: ``n`` logits of one softmax; actions int ``[B]`` counted from 0.
- ``MultiDiscrete(nvec)``: ``sum(nvec)`` logits, dimension ``d``'s ``nvec[d]`` in the slice
  after the first ``d`` dimensions' (``nvec`` flattened, C order), one independent softmax
  per dimension (SB3's ``MultiCategoricalDistribution``, CleanRL's ``ppo_multidiscrete.py``):
  ``log pi(a|s) = sum_d log pi_d(a_d|s)``, entropy ``sum_d H(pi_d)``
  (:func:`~rlkit.learn.losses.multi_categorical_log_prob`,
  :func:`~rlkit.learn.losses.multi_categorical_entropy`); actions int ``[B, D]``, each
  counted from its dimension's ``start``.
- ``Box``: the diagonal Gaussian's mean ``[B, A]`` (the action flattened), its
  state-independent log std the learner's variable; actions float32 ``[B, A]`` (unclipped).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from gymnasium import spaces

from rlkit.core.errors import UsageError
from rlkit.learn.losses import (
    gaussian_entropy,
    gaussian_log_prob,
    multi_categorical_entropy,
    multi_categorical_log_prob,
    softmax_entropy,
)

DISCRETE, MULTI_DISCRETE, BOX = "discrete", "multi_discrete", "box"
#: an invalid action's logit under a mask (sb3-contrib's MaskableCategorical: -1e8): its
#: probability is 0 in float32, and finite, so that ``p log p`` is 0, not NaN
MASKED_LOGIT = -1e8


def masked_logits(out: tf.Tensor, masks: tf.Tensor | None) -> tf.Tensor:
    """``out`` with the logits of invalid actions (``masks`` False, bool ``[B, width]``)
    replaced by :data:`MASKED_LOGIT`; ``out`` itself without masks."""
    if masks is None:
        return out
    return tf.where(masks, out, tf.constant(MASKED_LOGIT, out.dtype))


class ActionHead:
    """The policy's output for ``action_space`` and the log-probability and entropy it gives.

    Attributes:
        kind: :data:`DISCRETE`, :data:`MULTI_DISCRETE` or :data:`BOX`.
        out_dim: the policy's outputs: ``n``, ``sum(nvec)`` or ``A``.
        action_shape: one action as the rollout stores it: ``()``, ``(D,)`` or ``(A,)``.
        nvec: the ``D`` dimensions' sizes (MultiDiscrete; else None).
    """

    def __init__(self, action_space) -> None:
        self.nvec: tuple[int, ...] | None = None
        self.action_shape: tuple[int, ...]
        if isinstance(action_space, spaces.Discrete):
            self.kind, self.out_dim, self.action_shape = DISCRETE, int(action_space.n), ()
        elif isinstance(action_space, spaces.MultiDiscrete):
            self.nvec = tuple(int(n) for n in np.asarray(action_space.nvec).reshape(-1))
            self.kind, self.out_dim = MULTI_DISCRETE, sum(self.nvec)
            self.action_shape = (len(self.nvec),)
        elif isinstance(action_space, spaces.Box):
            self.kind, self.out_dim = BOX, int(np.prod(action_space.shape))
            self.action_shape = (self.out_dim,)
        else:
            raise UsageError(f"PPO's policy cannot parameterise {action_space}")

    def spec(self) -> tf.TensorSpec:
        """A batch of actions as the learner takes them: int32 ``[B]`` / ``[B, D]``, or
        float32 ``[B, A]``."""
        if self.kind == BOX:
            return tf.TensorSpec([None, self.out_dim], tf.float32)
        return tf.TensorSpec([None, *self.action_shape], tf.int32)

    def flat(self, actions: np.ndarray, m: int) -> tf.Tensor:
        """A rollout's actions ``[T, N, ...]`` as ``m = T N`` rows of :meth:`spec`."""
        if self.kind == BOX:
            return tf.constant(actions.reshape(m, -1), tf.float32)
        return tf.constant(actions.reshape(m, *self.action_shape), tf.int32)

    def log_prob_entropy(self, out, actions, log_std, masks=None) -> tuple[tf.Tensor, tf.Tensor]:
        """``log pi(a|s)`` and the entropy of ``pi(.|s)``, both ``[B]``, from the policy's
        outputs ``out [B, out_dim]`` (``log_std [A]``: Box actions' variable); with
        ``masks`` (bool ``[B, out_dim]``, Discrete and MultiDiscrete) of the policy
        renormalised over the valid actions (:func:`masked_logits`)."""
        out = masked_logits(out, masks)
        if self.kind == DISCRETE:
            log_probs = tf.nn.log_softmax(out, axis=-1)
            taken = tf.gather(log_probs, actions, axis=-1, batch_dims=1)
            return taken, softmax_entropy(out)
        if self.kind == MULTI_DISCRETE:
            assert self.nvec is not None
            return (multi_categorical_log_prob(out, actions, self.nvec),
                    multi_categorical_entropy(out, self.nvec))  # fmt: skip
        return (gaussian_log_prob(out, log_std, actions),
                gaussian_entropy(log_std, tf.shape(out)[0]))  # fmt: skip

    def graph_greedy(self, out: tf.Tensor) -> tf.Tensor:
        """MultiDiscrete's greedy action in a graph (the export's): each dimension's
        ``argmax`` over its slice, ``[B, sum(nvec)] -> [B, D]`` int64, counted from 0."""
        assert self.nvec is not None
        parts = tf.split(out, list(self.nvec), axis=-1)
        return tf.stack([tf.argmax(p, axis=-1, output_type=tf.int64) for p in parts], axis=-1)

    def describe_output(self, action_space) -> str:
        """What the policy's outputs are, for a refusal's line."""
        if self.kind == DISCRETE:
            return f"{self.out_dim} logits, one per action of {action_space}"
        if self.kind == MULTI_DISCRETE:
            sizes = " + ".join(map(str, self.nvec or ()))
            return f"{self.out_dim} logits ({sizes}), one slice per dimension of {action_space}"
        return f"the Gaussian's mean, {self.out_dim} numbers for {action_space}"
