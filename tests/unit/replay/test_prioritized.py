"""Proportional prioritized sampling: priorities, stratified draws, importance weights."""

import numpy as np
import pytest

from rlkit.replay.prioritized import PrioritizedSampler


class FixedUniforms:
    """A stand-in generator whose ``random(shape)`` returns chosen uniforms."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)

    def random(self, shape):
        return np.broadcast_to(self.values, shape).copy()


def four_slots(alpha=0.5, beta=1.0) -> PrioritizedSampler:
    # epsilon 1 so that the priorities are round: p = sqrt(|delta| + 1)
    # delta 3, 0, 8, -15 -> p = 2, 1, 3, 4; total 10; P = 0.2, 0.1, 0.3, 0.4
    sampler = PrioritizedSampler(4, priority_exponent=alpha, importance_exponent=beta, epsilon=1)
    sampler.written(np.arange(4))
    sampler.update_priorities(np.arange(4), np.array([3.0, 0.0, 8.0, -15.0]))
    return sampler


def test_priorities_are_hand_computed():
    sampler = four_slots()
    np.testing.assert_array_equal(sampler.tree.values(), [2.0, 1.0, 3.0, 4.0])
    assert sampler.tree.total == 10.0


def test_stratified_draws_and_weights_hand_computed():
    sampler = four_slots(beta=1.0)
    # B = 4 strata of the total 10: [0, 2.5), [2.5, 5), [5, 7.5), [7.5, 10); uniforms 0.5 put
    # the targets at 1.25, 3.75, 6.25, 8.75; cumulative priorities 2, 3, 6, 10 -> slots 0, 2, 3, 3
    indices, weights = sampler.sample(FixedUniforms(0.5), size=4, shape=(4,))
    np.testing.assert_array_equal(indices, [0, 2, 3, 3])
    assert indices.dtype == np.int64 and weights.dtype == np.float32
    # beta 1: w = 1 / (N P) = 1 / (4 * 0.2), 1 / (4 * 0.3), 1 / (4 * 0.4) = 1.25, 0.8333, 0.625;
    # divided by the batch max 1.25 -> 1, 2/3, 0.5, 0.5
    np.testing.assert_allclose(weights, [1.0, 2.0 / 3.0, 0.5, 0.5], rtol=1e-6)
    # beta 0.5: w = (N P)^-0.5 / max = sqrt(0.8 / 0.8), sqrt(0.8 / 1.2), sqrt(0.8 / 1.6)
    sampler.importance_exponent = 0.5
    _, weights = sampler.sample(FixedUniforms(0.5), size=4, shape=(4,))
    np.testing.assert_allclose(weights, [1.0, np.sqrt(2 / 3), np.sqrt(0.5), np.sqrt(0.5)], 1e-6)
    # beta 0: no correction
    sampler.importance_exponent = 0.0
    _, weights = sampler.sample(FixedUniforms(0.5), size=4, shape=(4,))
    np.testing.assert_array_equal(weights, np.ones(4))


def test_weights_use_n_the_written_slots():
    # the batch max cancels N: the same draws with N = 4 or N = 100 give the same weights;
    # but P is over the tree's total, so only the written slots count
    sampler = four_slots(beta=0.5)
    _, small = sampler.sample(FixedUniforms(0.5), size=4, shape=(4,))
    _, large = sampler.sample(FixedUniforms(0.5), size=100, shape=(4,))
    np.testing.assert_allclose(small, large, rtol=1e-6)


def test_each_stratum_draws_only_inside_its_segment():
    sampler = four_slots()
    rng = np.random.default_rng(0)
    indices, _ = sampler.sample(rng, size=4, shape=(2000, 4))
    # cumulative 0-2 slot 0, 2-3 slot 1, 3-6 slot 2, 6-10 slot 3; strata of 2.5
    assert set(indices[:, 0]) == {0, 1}
    assert set(indices[:, 1]) == {1, 2}  # [2.5, 5)
    assert set(indices[:, 2]) == {2, 3}  # [5, 7.5)
    assert set(indices[:, 3]) == {3}  # [7.5, 10)


def test_sampling_frequencies_match_p_over_the_total():
    rng = np.random.default_rng(42)
    sampler = PrioritizedSampler(10, priority_exponent=0.7, importance_exponent=0.4, epsilon=0.01)
    sampler.written(np.arange(10))
    deltas = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 0.1, 5.0, 0.2, 8.0, 1.5])
    sampler.update_priorities(np.arange(10), deltas)
    p = (np.abs(deltas) + 0.01) ** 0.7
    expected = p / p.sum()
    draws = 20_000
    indices, weights = sampler.sample(rng, size=10, shape=(draws, 8))
    n = indices.size
    frequencies = np.bincount(indices.ravel(), minlength=10) / n
    # within 4.5 binomial standard deviations (stratification only shrinks the spread)
    sd = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(frequencies - expected) < 4.5 * sd), (frequencies, expected)
    # and every weight is (N P)^-beta over its minibatch's max
    raw = (10 * expected[indices]) ** -0.4
    np.testing.assert_allclose(weights, raw / raw.max(axis=1, keepdims=True), rtol=1e-5)


def test_k_minibatches_are_each_stratified_and_normalised():
    sampler = four_slots(beta=1.0)
    uniforms = np.array([[0.5, 0.5, 0.5, 0.5], [0.0, 0.0, 0.0, 0.0]])
    indices, weights = sampler.sample(FixedUniforms(uniforms), size=4, shape=(2, 4))
    assert indices.shape == weights.shape == (2, 4)
    np.testing.assert_array_equal(indices[0], [0, 2, 3, 3])
    # targets 0, 2.5, 5, 7.5 -> slots 0, 1 (2 <= 2.5 < 3), 2 (3 <= 5 < 6), 3
    np.testing.assert_array_equal(indices[1], [0, 1, 2, 3])
    # second minibatch: 1 / (N P) = 1.25, 2.5, 0.8333, 0.625; its own max 2.5
    np.testing.assert_allclose(weights[1], [0.5, 1.0, 1 / 3, 0.25], rtol=1e-6)
    np.testing.assert_allclose(weights[0], [1.0, 2 / 3, 0.5, 0.5], rtol=1e-6)


def test_new_slots_take_the_largest_priority_recorded():
    sampler = PrioritizedSampler(8, priority_exponent=1.0, epsilon=1e-6)
    sampler.written(np.array([0, 1]))
    np.testing.assert_array_equal(sampler.tree.get(np.array([0, 1])), [1.0, 1.0])  # 1 at first
    sampler.update_priorities(np.array([0, 1]), np.array([0.25, 4.0]))
    sampler.written(np.array([2]))
    assert sampler.tree.get(np.array([2]))[0] == pytest.approx(4.0 + 1e-6)
    sampler.update_priorities(np.array([1, 2]), np.array([0.1, 0.1]))
    sampler.written(np.array([3]))  # the max ever recorded, though no slot holds it now
    assert sampler.tree.get(np.array([3]))[0] == pytest.approx(4.0 + 1e-6)


def test_alpha_zero_is_uniform_over_written_slots():
    sampler = PrioritizedSampler(16, priority_exponent=0.0, importance_exponent=1.0)
    sampler.written(np.arange(5))
    sampler.update_priorities(np.arange(5), np.array([0.0, 1.0, 10.0, 100.0, 7.0]))
    np.testing.assert_array_equal(sampler.tree.values()[:5], np.ones(5))
    indices, weights = sampler.sample(np.random.default_rng(0), size=5, shape=(5,))
    np.testing.assert_array_equal(indices, np.arange(5))  # one per stratum of 1
    np.testing.assert_array_equal(weights, np.ones(5))


def test_duplicate_slots_keep_the_last_error():
    sampler = PrioritizedSampler(4, priority_exponent=1.0, epsilon=0.5)
    sampler.written(np.arange(4))
    sampler.update_priorities(np.array([1, 1, 2]), np.array([3.0, 1.5, 0.5]))
    np.testing.assert_array_equal(sampler.tree.values(), [1.0, 2.0, 1.0, 1.0])


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(ValueError, match="priority_exponent"):
        PrioritizedSampler(4, priority_exponent=-0.1)
    with pytest.raises(ValueError, match="importance_exponent"):
        PrioritizedSampler(4, importance_exponent=1.5)
    with pytest.raises(ValueError, match="importance_exponent"):
        PrioritizedSampler(4, importance_exponent=-0.5)
    with pytest.raises(ValueError, match="epsilon"):
        PrioritizedSampler(4, epsilon=0.0)
    with pytest.raises(ValueError, match="priority_exponent"):
        PrioritizedSampler(4, priority_exponent=float("nan"))
    sampler = PrioritizedSampler(4)
    with pytest.raises(ValueError, match="importance_exponent"):
        sampler.importance_exponent = 2.0
    with pytest.raises(ValueError, match="no transitions"):
        sampler.sample(np.random.default_rng(0), size=0, shape=(2,))
    sampler.written(np.arange(4))
    with pytest.raises(ValueError, match="finite"):
        sampler.update_priorities(np.array([0]), np.array([np.nan]))
    with pytest.raises(ValueError, match="only 2 slots"):
        sampler.sample(FixedUniforms(0.99), size=2, shape=(1,))


def test_state_round_trip_gives_the_same_draws():
    sampler = four_slots(beta=0.5)
    restored = PrioritizedSampler(4, importance_exponent=0.5)
    restored.load_state_dict({k: np.array(v) for k, v in sampler.state_dict().items()})
    a = sampler.sample(np.random.default_rng(7), size=4, shape=(3, 4))
    b = restored.sample(np.random.default_rng(7), size=4, shape=(3, 4))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    restored.written(np.array([0]))  # max recorded travelled with the state: 4
    assert restored.tree.get(np.array([0]))[0] == 4.0


def test_a_k_by_b_draw_feeds_back_in_its_own_shape():
    # K = 2 minibatches of 3: the learner hands back a [2, 3] block of errors
    sampler = PrioritizedSampler(6, priority_exponent=1.0, epsilon=0.5)
    sampler.written(np.arange(6))
    indices, _ = sampler.sample(FixedUniforms(0.5), size=6, shape=(2, 3))
    # strata of 2, targets 1, 3, 5; cumulative priorities 1, 2, ..., 6 -> slots 1, 3, 5
    np.testing.assert_array_equal(indices, [[1, 3, 5], [1, 3, 5]])
    # slots 1, 3, 5 twice each: the last (second minibatch) errors win: 1.5, 2.5, 3.5 + 0.5
    sampler.update_priorities(indices, np.array([[9.0, 9.0, 9.0], [1.5, 2.5, 3.5]]))
    np.testing.assert_array_equal(sampler.tree.values(), [1.0, 2.0, 1.0, 3.0, 1.0, 4.0])
