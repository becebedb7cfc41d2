"""When DQN hard-copies its online network into the target network, in Python and in the graph.

DQN3.0 copies every ``target_update`` steps; rlkit copies each time the step count passes a
multiple of ``target_update`` (:func:`rlkit.core.schedules.crossed`: a vector step adding
``N`` misses none), and only when the online network changed since the last copy ("stale":
an update ran since). With Polyak averaging (``target_tau > 0``) there is no hard copy.

=============================================  ================================================
original (:mod:`rlkit.agents.dqn.learner`)       in-graph twin (:mod:`rlkit.run.compiled.dqn`)
=============================================  ================================================
:func:`target_copy_due`                        :func:`graph_target_copy_due`
=============================================  ================================================

Tied bit for bit (booleans) by ``tests/unit/agents/test_target_copy_twins.py``.
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.core.schedules import crossed, graph_crossed


def target_copy_due(stale: bool, before: int, now: int, every: int) -> bool:
    """Whether the hard copy is due after the step count went from ``before`` to ``now``:
    the online network changed since the last copy (``stale``) and the count passed a
    multiple of ``every`` (``target_update``)."""
    return stale and crossed(before, now, every)


def graph_target_copy_due(
    stale: tf.Tensor, before: tf.Tensor, now: tf.Tensor, every: int
) -> tf.Tensor:
    """:func:`target_copy_due` in the graph: bool ``[]`` of bool ``stale`` ``[]`` and the int64
    ``[]`` step counts ``before`` and ``now``."""
    return tf.logical_and(stale, graph_crossed(before, now, every))
