"""Running statistics (rlkit/learn/normalization.py) against numpy, and PPO's reward scaler
(rlkit/agents/ppo/normalization.py) worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlkit.agents.ppo.normalization import RewardScaler
from rlkit.learn.normalization import RunningMeanStd, normalize


def test_batches_give_numpys_mean_and_variance_of_all_rows():
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, size=(n, 2)) for n in (1, 5, 17, 3)]
    rms = RunningMeanStd((2,), epsilon=0.0)
    for batch in batches:
        rms.update(batch)
    rows = np.concatenate(batches)
    np.testing.assert_allclose(rms.mean, rows.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(rms.var, rows.var(axis=0), rtol=1e-12)
    assert rms.count == len(rows)


def test_the_prior_counts_as_epsilon_rows_of_mean_0_and_variance_1():
    rms = RunningMeanStd(epsilon=1.0)  # one pseudo-row: mean 0, variance 1
    rms.update(np.array([2.0]))
    # pooled: mean (0 + 2) / 2 = 1; M2 = 1 * 1 + 0 + (2 - 0)^2 * 1 * 1 / 2 = 3; var 3 / 2
    assert rms.mean == pytest.approx(1.0) and rms.var == pytest.approx(1.5) and rms.count == 2


def test_normalize_clips():
    out = normalize(np.array([0.0, 5.0, -100.0]), np.array(1.0), np.array(4.0), 10.0)
    np.testing.assert_allclose(out, [-1 / math.sqrt(4 + 1e-8), 4 / math.sqrt(4 + 1e-8), -10.0],
                               rtol=1e-6)  # fmt: skip


def test_rewards_are_divided_by_the_running_std_of_each_streams_return():
    scaler = RewardScaler(gamma=0.5, clip=10.0)
    rms = RunningMeanStd(())
    returns = np.zeros(2)
    for rewards, ended in [([1.0, 2.0], [False, True]), ([1.0, 4.0], [False, False])]:
        returns = returns * 0.5 + np.array(rewards)
        rms.update(returns)
        expected = np.array(rewards) / np.sqrt(rms.var + 1e-8)
        np.testing.assert_allclose(scaler(np.array(rewards), np.array(ended)), expected, rtol=1e-6)
        returns[np.array(ended)] = 0.0  # stream 1's return starts again after its end
    np.testing.assert_array_equal(scaler.returns, [1.5, 4.0])
    restored = RewardScaler(0.5, 10.0)
    restored.load_state_dict(scaler.state_dict())
    np.testing.assert_array_equal(restored(np.ones(2), np.zeros(2, bool)),
                                  scaler(np.ones(2), np.zeros(2, bool)))  # fmt: skip
