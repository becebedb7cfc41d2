"""The compiled loop's schedules (:func:`rlkit.core.schedules.graph_linear`,
:func:`~rlkit.core.schedules.graph_blocks_due`, :func:`~rlkit.core.schedules.graph_crossed`)
against their Python originals beside them, on the same step counts: the counts equal
(integers); the linear schedule bit for bit run eagerly (the same float64 arithmetic) and
within 1e-15 relative compiled with XLA, as the loop runs it (XLA may divide by the constant
``anneal_steps`` as a multiplication by its reciprocal: one float64 ulp, measured)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import tensorflow as tf

from rlkit.core.schedules import (
    blocks_due,
    crossed,
    dqn3_linear,
    graph_blocks_due,
    graph_crossed,
    graph_linear,
)

STEPS = [0, 1, 5, 99, 100, 101, 150, 399, 400, 499, 500, 501, 1000, 10**9]
LINEAR = list(itertools.product([(1.0, 0.05), (1e-3, 2.5e-4), (1.0, 0.1), (0.3, 0.7)],
                                [0, 50, 400, 333], [0, 100, 7]))  # fmt: skip
PAIRS = [(before, before + gap) for before in range(0, 70, 3) for gap in (0, 1, 4, 10, 13)]
PERIODS = list(itertools.product([1, 4, 10, 7], [0, 1, 13, 40]))


def in_graph(function, jit: bool):
    """``function`` as the test calls it: eager, or one XLA program (as the loop runs it)."""
    return tf.function(function, jit_compile=True) if jit else function


@pytest.mark.parametrize(
    "jit", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["eager", "xla"]
)
def test_graph_linear_equals_dqn3_linear(jit):
    def every_schedule(steps):
        return [graph_linear(steps, start, end, anneal, learn_start)
                for (start, end), anneal, learn_start in LINEAR]  # fmt: skip

    got = in_graph(every_schedule, jit)(tf.constant(STEPS, tf.int64))
    for value, ((start, end), anneal, learn_start) in zip(got, LINEAR, strict=True):
        assert value.dtype == tf.float64
        want = [dqn3_linear(step, start, end, anneal, learn_start) for step in STEPS]
        got = np.broadcast_to(value.numpy(), len(STEPS))
        message = f"{start, end, anneal, learn_start}"
        if jit:
            np.testing.assert_allclose(got, want, rtol=1e-15, atol=0, err_msg=message)
        else:
            np.testing.assert_array_equal(got, want, err_msg=message)


@pytest.mark.parametrize(
    "jit", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["eager", "xla"]
)
def test_graph_blocks_due_and_crossed_equal_the_python_counts(jit):
    def every_period(before, now):
        return [(graph_blocks_due(before, now, every, start), graph_crossed(before, now, every))
                for every, start in PERIODS]  # fmt: skip

    before = tf.constant([b for b, _ in PAIRS], tf.int64)
    now = tf.constant([n for _, n in PAIRS], tf.int64)
    got = in_graph(every_period, jit)(before, now)
    for (blocks, passed), (every, start) in zip(got, PERIODS, strict=True):
        want = [blocks_due(b, n, every, start) for b, n in PAIRS]
        np.testing.assert_array_equal(blocks.numpy(), want, err_msg=f"{every, start}")
        np.testing.assert_array_equal(passed.numpy(), [crossed(b, n, every) for b, n in PAIRS])
