"""What a value learner's network outputs per action, and how acting reads it.

DQN's network gives one value per action (``[B, A]``); a distributional learner's gives
``N`` per action (``[B, A * N]``, action-major): C51 the logits of a categorical
distribution over fixed atoms, QR-DQN the values at fixed quantile fractions. A head says
how wide the network's output is, which loss (:mod:`rlkit.learn.value_losses`) learns it,
and how to turn a row of outputs into ``Q(s, .)`` for acting (in numpy, on what the
learner's policy snapshot returns), so the DQN learner and epsilon-greedy acting serve all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import tensorflow as tf

from rlkit.core.errors import UsageError
from rlkit.learn.value_losses import CategoricalLoss, QuantileLoss, ValueLoss, loss_from_config
from rlkit.networks.custom import GIVEN_IN_PYTHON

Policy = Callable[[Any], np.ndarray]


class ValueHead(Protocol):
    """What DQN's learner and acting need of a head (each family member brings one: the
    three below, IQN's :class:`~rlkit.agents.dqn.iqn_learner.IQNHead`): ``per_action``
    outputs per action, ``Q(s, .)`` from them in a graph, the loss that learns them, and
    how acting reads a row of them."""

    per_action: int

    def q_values_graph(self, outputs: tf.Tensor) -> tf.Tensor: ...

    def value_loss(self, name: str, clip_delta: float, given: ValueLoss | None) -> ValueLoss: ...

    def acting(self, policy: Policy) -> Policy: ...


class ScalarHead:
    """One value per action (DQN): the outputs are ``Q(s, .)`` themselves, learnt by the loss
    the config names (``dqn3``, ``huber``, ``mse``) or one given in Python."""

    per_action = 1

    def q_values_graph(self, outputs: tf.Tensor) -> tf.Tensor:
        """``Q(s, .)`` from the network's outputs inside a graph (an export): themselves."""
        return outputs

    def value_loss(self, name: str, clip_delta: float, given: ValueLoss | None) -> ValueLoss:
        return given_loss(name, given) or loss_from_config(name, clip_delta)

    def acting(self, policy: Policy) -> Policy:
        return policy


class CategoricalHead:
    """C51: ``num_atoms`` logits per action over atoms evenly spaced on ``[v_min, v_max]``;
    ``Q(s, a) = sum_i softmax(logits[a])_i z_i``."""

    def __init__(self, num_atoms: int, v_min: float, v_max: float) -> None:
        self.per_action = int(num_atoms)
        self.atoms = np.linspace(v_min, v_max, num_atoms, dtype=np.float32)
        self.loss: ValueLoss = CategoricalLoss(tuple(float(z) for z in self.atoms))

    def q_values_graph(self, outputs: tf.Tensor) -> tf.Tensor:
        """:meth:`q_values` inside a graph: ``[B, A * N] -> [B, A]``."""
        logits = tf.reshape(outputs, [tf.shape(outputs)[0], -1, self.per_action])
        return tf.reduce_sum(tf.nn.softmax(logits, axis=-1) * self.atoms, axis=-1)

    def q_values(self, outputs: np.ndarray) -> np.ndarray:
        """``[..., A * N] -> [..., A]``: each action's expected value."""
        logits = outputs.reshape(*outputs.shape[:-1], -1, self.per_action)
        logits = logits - logits.max(axis=-1, keepdims=True)
        probs = np.exp(logits)
        return (probs @ self.atoms) / probs.sum(axis=-1)

    def value_loss(self, name: str, clip_delta: float, given: ValueLoss | None) -> ValueLoss:
        """Its own loss (the config's ``loss`` names it; a config check refuses others)."""
        return self.loss

    def acting(self, policy: Policy) -> Policy:
        return lambda x: self.q_values(policy(x))


class QuantileHead:
    """QR-DQN: ``num_quantiles`` values per action; ``Q(s, a)`` is their mean."""

    def __init__(self, num_quantiles: int, kappa: float) -> None:
        self.per_action = int(num_quantiles)
        self.loss: ValueLoss = QuantileLoss(self.per_action, float(kappa))

    def q_values_graph(self, outputs: tf.Tensor) -> tf.Tensor:
        """:meth:`q_values` inside a graph: ``[B, A * N] -> [B, A]``."""
        values = tf.reshape(outputs, [tf.shape(outputs)[0], -1, self.per_action])
        return tf.reduce_mean(values, axis=-1)

    def q_values(self, outputs: np.ndarray) -> np.ndarray:
        """``[..., A * N] -> [..., A]``: each action's mean over its quantiles."""
        return outputs.reshape(*outputs.shape[:-1], -1, self.per_action).mean(axis=-1)

    def value_loss(self, name: str, clip_delta: float, given: ValueLoss | None) -> ValueLoss:
        """Its own loss (the config's ``loss`` names it; a config check refuses others)."""
        return self.loss

    def acting(self, policy: Policy) -> Policy:
        return lambda x: self.q_values(policy(x))


def given_loss(named: str, given: ValueLoss | None) -> ValueLoss | None:
    """The loss given in Python, where ``config.loss`` says one was (UsageError when it
    was not given again, e.g. to ``rlkit.load``)."""
    if given is None and named == GIVEN_IN_PYTHON:
        raise UsageError(
            "this agent's loss was given in Python: pass it again (e.g. rlkit.load(path, "
            "loss=my_loss))"
        )
    return given
