"""Target networks: variables that follow the online ones, one helper for every agent.

Three rules, one protocol (``update()`` moves the targets, ``variables`` are them), so that
a learner says which rule it follows and never writes the assignments itself (TRFL's
``update_target_variables(tau)`` serves both of the first two the same way):

- :class:`HardCopy`: ``target <- online`` (DQN3.0's ``target_q`` copy every C steps);
- :class:`Polyak`: ``target <- target + tau (online - target)`` after each update;
- :class:`EMAShadows`: the targets *are* ``tf.train.ExponentialMovingAverage(decay=1 - tau)``
  shadows of the online variables (``shadow <- decay shadow + (1 - decay) online``), as the
  TF1 DDPG this follows builds its target networks (``ema.average(var)``).

``update()`` runs inside a compiled update or wrapped in its own ``tf.function``.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf


class HardCopy:
    """``target <- online`` for each pair of variables (same order, same shapes)."""

    def __init__(self, online: Sequence[tf.Variable], target: Sequence[tf.Variable]) -> None:
        self.online, self.variables = list(online), list(target)
        if len(self.online) != len(self.variables):
            raise ValueError(f"{len(self.online)} online variables, {len(self.variables)} targets")

    def update(self) -> None:
        for target, online in zip(self.variables, self.online, strict=True):
            target.assign(online)


class Polyak(HardCopy):
    """``target <- target + tau (online - target)`` (``tau`` in (0, 1])."""

    def __init__(
        self, online: Sequence[tf.Variable], target: Sequence[tf.Variable], tau: float
    ) -> None:
        super().__init__(online, target)
        self.tau = tau

    def update(self) -> None:
        for target, online in zip(self.variables, self.online, strict=True):
            target.assign(target + self.tau * (online - target))


class EMAShadows:
    """Targets that are EMA shadows of ``online`` (``tf.Variable``\\ s; for Keras 3 variables
    pass ``v.value``): the first ``apply`` creates them equal to the online values.

    Attributes:
        ema: the ``tf.train.ExponentialMovingAverage(decay=1 - tau)``.
        variables: the shadows, in the order of ``online``.
    """

    def __init__(self, online: Sequence[tf.Variable], tau: float) -> None:
        self.online = list(online)
        self.ema = tf.train.ExponentialMovingAverage(decay=1.0 - tau)
        self.ema.apply(self.online)
        self.variables = [self.ema.average(v) for v in self.online]

    def shadows(self, online: Sequence[tf.Variable]) -> list[tf.Variable]:
        """The shadows of some of the online variables (e.g. one network's), in order."""
        return [self.ema.average(v) for v in online]

    def update(self) -> None:
        """One EMA step: ``shadow <- decay * shadow + (1 - decay) * online``."""
        self.ema.apply(self.online)
