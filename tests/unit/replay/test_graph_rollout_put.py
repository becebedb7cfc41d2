"""GraphRollout.put (a compiled loop's segment of steps written at once) against add (one
row a call): the same variables, rows after the segment untouched, ``filled`` moved on."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rlkit.replay.graph_rollout import GraphRollout

T, N = 4, 2


def steps(rng, count):
    """``count`` vector steps as add's six arguments each."""
    return [
        (rng.normal(size=(N, 3)).astype(np.float32), rng.integers(0, 4, N).astype(np.int32),
         rng.normal(size=N).astype(np.float32), rng.normal(size=(N, 3)).astype(np.float32),
         rng.random(N) < 0.3, rng.random(N) < 0.3)
        for _ in range(count)
    ]  # fmt: skip


def test_put_writes_a_segment_as_add_writes_its_rows():
    rng = np.random.default_rng(0)
    one, many = GraphRollout(T, N, (3,)), GraphRollout(T, N, (3,))
    first, segment = steps(rng, 1), steps(rng, 2)
    for step in first:  # both hold 1 row, and a stale row after them from an earlier rollout
        one.add(*step)
        many.add(*step)
    stale = steps(rng, 1)[0]
    for rollout in (one, many):
        for variable, value in zip(rollout.fields(), stale, strict=True):
            variable.scatter_nd_update([[3]], tf.cast(value, variable.dtype)[None])
    for step in segment:
        one.add(*step)
    # the segment stacked as a TensorArray gives it: [T, N, ...], rows 1..2 the new steps,
    # the others zeros (never read)
    stacked = [np.zeros((T, *np.shape(field)), np.asarray(field).dtype) for field in segment[0]]
    for t, step in enumerate(segment):
        for array, value in zip(stacked, step, strict=True):
            array[1 + t] = value
    many.put(tf.constant(1), tf.constant(2), stacked)
    assert int(many.filled.numpy()) == int(one.filled.numpy()) == 3
    for a, b in zip(many.fields(), one.fields(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.name)
    np.testing.assert_array_equal(many.obs.numpy()[3], stale[0])  # the stale row stays
