"""The compiled loop's twins in :mod:`rlkit.agents.off_policy` against their originals beside
them, on the same inputs, eagerly and compiled with XLA as the loop runs them:

- the rewards' clip, bit for bit (:func:`~rlkit.agents.off_policy.graph_clip_rewards` of a
  vector step's float32 rewards, as :func:`~rlkit.agents.off_policy.clip_rewards` clips
  them in ``stored_steps``, and as ``stored_step`` stores one reward);
- prioritized replay's beta (:func:`~rlkit.agents.off_policy.graph_importance_exponent`, as
  :meth:`~rlkit.agents.off_policy.OffPolicyAgent.importance_exponent`): bit for bit eagerly
  (the same float64 arithmetic), within 1e-15 relative under XLA (which may divide by the
  constant ``importance_anneal_steps`` as a multiplication by its reciprocal: one ulp)."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents.off_policy import (
    clip_rewards,
    graph_clip_rewards,
    graph_importance_exponent,
    importance_exponent,
)

CLIPS = [0.0, 1.0, 0.5, 0.1, 5.0, 1e-3]
BETAS = list(itertools.product([0.4, 0.5, 0.0, 1.0, 0.123], [0, 1000, 333, 7], [0, 100, 17]))


def in_graph(function, jit: bool):
    return tf.function(function, jit_compile=True) if jit else function


def _rewards() -> np.ndarray:
    rng = np.random.default_rng(0)
    edges = [c * s for c in CLIPS for s in (1, -1)] + [np.nextafter(np.float32(0.1), 1.0)]
    spread = rng.normal(scale=3.0, size=200)
    return np.concatenate([edges, spread, [0.0, -0.0, 1e-30, 1e6]]).astype(np.float32)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "xla"])
def test_the_graph_clips_the_rewards_as_the_python_loop_stores_them(jit):
    rewards = _rewards()

    def every_clip(r):
        return [graph_clip_rewards(r, clip) for clip in CLIPS]

    for got, clip in zip(in_graph(every_clip, jit)(tf.constant(rewards)), CLIPS, strict=True):
        got = got.numpy()
        want = clip_rewards(rewards, clip)  # stored_steps: a vector step's float32 rewards
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_array_equal(got, want, err_msg=f"clip {clip}")
        # stored_step: one Python float, clipped in float64, stored as float32
        one = [np.float32(float(clip_rewards(float(r), clip))) for r in rewards]
        np.testing.assert_array_equal(got, one, err_msg=f"clip {clip}, one at a time")
        assert clip == 0 or np.abs(got).max() <= np.float32(clip)


@pytest.mark.parametrize(
    "jit", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["eager", "xla"]
)
def test_the_graph_beta_equals_the_python_beta(jit):
    steps = [0, 1, 16, 17, 99, 100, 101, 349, 350, 1099, 1100, 1101, 5000]
    configs = [SimpleNamespace(importance_exponent=beta, importance_anneal_steps=anneal,
                               learning_starts=start) for beta, anneal, start in BETAS]  # fmt: skip

    def every_beta(step):
        return [graph_importance_exponent(step, cfg) for cfg in configs]

    got = in_graph(every_beta, jit)(tf.constant(steps, tf.int64))
    for value, cfg in zip(got, configs, strict=True):
        want = [importance_exponent(step, cfg) for step in steps]
        assert value.dtype == tf.float64
        got = np.broadcast_to(value.numpy(), len(steps))
        if jit:
            np.testing.assert_allclose(got, want, rtol=1e-15, atol=0, err_msg=str(vars(cfg)))
        else:
            np.testing.assert_array_equal(got, want, err_msg=str(vars(cfg)))
