"""Schedules: DQN3.0's linear annealing (epsilon, learning rate) and periodic events.

Each schedule the compiled loop (:mod:`rlkit.run.compiled.program`) reads in its XLA program
has its graph twin here, beside it, tied by ``tests/unit/core/test_schedule_twins.py``:

=====================  ========================  ==============================================
original (Python)      in-graph twin             tie
=====================  ========================  ==============================================
:func:`dqn3_linear`    :func:`graph_linear`      bit for bit eagerly; 1e-15 relative under XLA
:func:`blocks_due`     :func:`graph_blocks_due`  equal (integers)
:func:`crossed`        :func:`graph_crossed`     equal (integers)
=====================  ========================  ==============================================

``core`` loads no TensorFlow when imported: the graph twins import it when called (while a
program is traced, long after the run imported it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tensorflow as tf


def dqn3_linear(step: int, start: float, end: float, anneal_steps: int, learn_start: int) -> float:
    """Linear from ``start`` to ``end`` over ``anneal_steps`` steps after ``learn_start``.

    ``end + max(0, (start - end) * (anneal_steps - max(0, step - learn_start)) / anneal_steps)``,
    DQN3.0's formula for both epsilon (ep_start, ep_end, ep_endt) and the learning
    rate (lr_start, lr_end, lr_endt).
    """
    if anneal_steps <= 0:
        return end
    remaining = anneal_steps - max(0, step - learn_start)
    return end + max(0.0, (start - end) * remaining / anneal_steps)


dqn3_epsilon = dqn3_linear


def graph_linear(step: tf.Tensor, start: float, end: float, anneal_steps: int,
                 learn_start: int) -> tf.Tensor:  # fmt: skip
    """:func:`dqn3_linear` in the graph: float64 ``[]`` at the int64 ``[]`` step count ``step``
    (the compiled loop's epsilon and learning-rate schedules)."""
    import tensorflow as tf

    if anneal_steps <= 0:
        return tf.constant(end, tf.float64)
    past = tf.maximum(tf.constant(0, tf.int64), step - learn_start)
    remaining = tf.cast(anneal_steps - past, tf.float64)
    return end + tf.maximum(tf.constant(0.0, tf.float64), (start - end) * remaining / anneal_steps)


def blocks_due(before: int, now: int, every: int, start: int) -> int:
    """How many multiples ``m`` of ``every`` satisfy ``before < m <= now`` and ``m >= start``.

    An off-policy agent runs one block of updates per multiple of ``train_freq`` the
    step count passed since its last ``update()`` call, counting only steps from which
    learning was possible (``start``: learning_starts, and a full minibatch stored).
    With one environment and ``update()`` after every step this is DQN3.0's
    ``step % train_freq == 0``.
    """
    if now < start:
        return 0
    return max(0, now // every - max(before, start - 1) // every)


def graph_blocks_due(before: tf.Tensor, now: tf.Tensor, every: int, start: int) -> tf.Tensor:
    """:func:`blocks_due` in the graph: int64 ``[]`` of the int64 ``[]`` step counts ``before``
    and ``now`` (the compiled loop's blocks of updates due in a vector step)."""
    import tensorflow as tf

    floor = tf.maximum(before, start - 1)
    count = tf.maximum(tf.constant(0, tf.int64), now // every - floor // every)
    return tf.where(now < start, tf.zeros_like(count), count)


def crossed(before: int, now: int, every: int) -> bool:
    """Did the step count pass a multiple of ``every`` going from ``before`` to ``now``?

    Periodic events (target copies, evaluations, checkpoints) use this rather than
    ``now % every == 0``, so that steps advancing by N (vector envs) miss none.
    """
    return now // every > before // every


def graph_crossed(before: tf.Tensor, now: tf.Tensor, every: int) -> tf.Tensor:
    """:func:`crossed` in the graph: bool ``[]`` of the int64 ``[]`` step counts ``before`` and
    ``now`` (the compiled loop's target copies)."""
    return now // every > before // every
