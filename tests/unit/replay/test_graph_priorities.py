"""The compiled loop's prioritized sampling (:mod:`rlkit.replay.graph_priorities`) against the
numpy sum tree and sampler it mirrors, and against the formulas: the tree's nodes bit for bit,
the prefix-sum search, the last value winning for a repeated slot, new slots at the largest
priority recorded, importance weights, stratification and sampling frequencies."""

import numpy as np
import pytest
import tensorflow as tf

from rlkit.replay.graph_priorities import GraphPrioritized, GraphSumTree
from rlkit.replay.sum_tree import SumTree


def _nodes(tree: GraphSumTree) -> np.ndarray:
    return tree.nodes.numpy()


def test_the_tree_holds_the_numpy_trees_nodes_bit_for_bit_with_repeated_slots():
    rng = np.random.default_rng(0)
    ours, theirs = GraphSumTree(37), SumTree(37)  # 37 leaves: padded to 64
    for _ in range(30):
        slots = rng.integers(0, 37, size=rng.integers(1, 12))
        values = rng.random(slots.size) * 10.0
        ours.set(tf.constant(slots, tf.int32), tf.constant(values, tf.float64))
        theirs.set(slots, values)
    expected = theirs.state_dict()
    np.testing.assert_array_equal(_nodes(ours), expected["nodes"])
    assert float(ours.max_recorded.numpy()) == float(expected["max_recorded"])


def test_a_repeated_slot_keeps_its_last_value():
    tree = GraphSumTree(4)
    tree.set(tf.constant([2, 1, 2, 2], tf.int32), tf.constant([5.0, 1.0, 7.0, 3.0], tf.float64))
    np.testing.assert_array_equal(tree.get(tf.constant([0, 1, 2, 3])).numpy(), [0, 1, 3, 0])
    assert float(tree.total.numpy()) == 4.0
    assert float(tree.max_recorded.numpy()) == 7.0  # the largest ever set, as numpy's tree


def test_find_equals_the_numpy_search_and_never_ends_on_an_empty_leaf():
    values = np.array([0.0, 2.0, 0.0, 0.0, 1.5, 0.5, 0.0, 3.0, 0.0])
    ours, theirs = GraphSumTree(values.size), SumTree(values.size)
    ours.set(tf.range(values.size), tf.constant(values, tf.float64))
    theirs.set(np.arange(values.size), values)
    total = values.sum()
    targets = np.concatenate([np.linspace(0.0, total, 200, endpoint=False),
                              [np.nextafter(total, 0.0), 2.0, 3.5, 4.0]])  # fmt: skip
    found = ours.find(tf.constant(targets, tf.float64)).numpy()
    np.testing.assert_array_equal(found, theirs.find(targets))
    assert np.all(values[found] > 0)
    # by hand: the prefix sums are 0 | 2 | 3.5 | 4 | 7
    np.testing.assert_array_equal(found[-3:], [4, 5, 7])


def test_priorities_from_td_errors_and_new_slots_at_the_largest_recorded():
    sampler = GraphPrioritized(8, priority_exponent=0.5, epsilon=1e-2)
    sampler.written(tf.constant([0, 1, 2], tf.int32))  # nothing recorded yet: 1.0
    np.testing.assert_array_equal(sampler.tree.get(tf.constant([0, 1, 2])).numpy(), [1, 1, 1])
    sampler.update(tf.constant([0, 1], tf.int32), tf.constant([3.99, -0.0], tf.float32))
    got = sampler.tree.get(tf.constant([0, 1])).numpy()
    by_hand = [np.sqrt(np.float64(np.float32(3.99)) + 0.01), np.sqrt(0.01)]
    np.testing.assert_allclose(got, by_hand, rtol=1e-12)
    sampler.written(tf.constant([3], tf.int32))  # the largest recorded: 2.0
    assert sampler.tree.get(tf.constant([3])).numpy()[0] == pytest.approx(2.0, rel=1e-7)


def test_a_td_error_that_is_not_finite_keeps_the_old_priority_and_is_counted():
    sampler = GraphPrioritized(4, priority_exponent=1.0, epsilon=1e-6)
    sampler.written(tf.constant([0, 1], tf.int32))
    sampler.update(tf.constant([0, 1], tf.int32), tf.constant([np.nan, 2.0], tf.float32))
    np.testing.assert_allclose(sampler.tree.get(tf.constant([0, 1])).numpy(), [1.0, 2.000001])
    assert int(sampler.nonfinite.numpy()) == 1


def test_weights_are_n_p_to_the_minus_beta_over_the_minibatch_max_and_draws_are_stratified():
    priorities = np.array([1.0, 2.0, 3.0, 4.0])
    sampler = GraphPrioritized(4, priority_exponent=1.0, epsilon=1e-12)
    sampler.tree.set(tf.range(4), tf.constant(priorities, tf.float64))
    slots, weights = sampler.sample(4, tf.constant([1, 2], tf.int32), tf.constant(4), 0.5)
    assert slots.shape == weights.shape == (1, 4)  # one minibatch
    slots, weights = slots.numpy()[0], weights[0]
    # row b's target lies in [b, b + 1) * 10 / 4: prefix sums 0 | 1 | 3 | 6 | 10
    cumulative = np.concatenate([[0.0], np.cumsum(priorities)])
    for row, slot in enumerate(slots):
        low, high = row * 2.5, (row + 1) * 2.5
        assert cumulative[slot] < high and cumulative[slot + 1] > low
    raw = (4 * priorities[slots] / 10.0) ** -0.5
    np.testing.assert_allclose(weights.numpy(), raw / raw.max(), rtol=1e-6)
    assert weights.numpy().max() == 1.0


@pytest.mark.slow
def test_sampling_frequencies_match_the_priorities():
    priorities = np.array([0.5, 1.0, 0.0, 2.5, 4.0])  # slot 2 never drawn
    sampler = GraphPrioritized(5, priority_exponent=1.0, epsilon=1e-12)
    sampler.tree.set(tf.range(5), tf.constant(priorities, tf.float64))
    draw = tf.function(lambda seed: tf.reshape(sampler.sample(16, seed, 5, 1.0, 2)[0], [-1]))
    slots = np.concatenate([draw(tf.constant([7, k], tf.int32)).numpy() for k in range(500)])
    counts = np.bincount(slots, minlength=5)
    expected = priorities / priorities.sum() * slots.size
    assert counts[2] == 0
    # stratified draws vary less than independent ones: a binomial's 4 s.d. is generous
    sd = np.sqrt(slots.size * (priorities / priorities.sum()) * (1 - priorities / priorities.sum()))
    assert np.all(np.abs(counts - expected) <= 4 * sd + 1), (counts, expected)


def test_a_block_of_minibatches_is_drawn_at_once_each_stratified_and_weighted_on_its_own():
    priorities = np.array([1.0, 2.0, 3.0, 4.0, 0.5])
    sampler = GraphPrioritized(5, priority_exponent=1.0, epsilon=1e-12)
    sampler.tree.set(tf.range(5), tf.constant(priorities, tf.float64))
    seed = tf.constant([3, 4], tf.int32)
    slots, weights = (x.numpy() for x in sampler.sample(2, seed, tf.constant(5), 0.4, 3))
    assert slots.shape == weights.shape == (3, 2)
    np.testing.assert_array_equal(weights.max(axis=1), [1.0, 1.0, 1.0])
    cumulative = np.concatenate([[0.0], np.cumsum(priorities)])  # total 10.5: strata of 5.25
    assert np.all(cumulative[slots[:, 0]] < 5.25) and np.all(cumulative[slots[:, 1] + 1] > 5.25)
    # one minibatch of the block is the same draw as the first row of a larger block
    one = sampler.sample(2, seed, tf.constant(5), 0.4)[0].numpy()
    np.testing.assert_array_equal(one[0], slots[0])


def test_bad_exponents_are_refused():
    with pytest.raises(ValueError, match="alpha"):
        GraphPrioritized(4, priority_exponent=-0.1, epsilon=1e-6)
    with pytest.raises(ValueError, match="epsilon"):
        GraphPrioritized(4, priority_exponent=0.5, epsilon=0.0)


# -- n-step returns in the graph replay --------------------------------------------------------
GAMMA = 0.9


def _two_streams():
    """A ring of 10 slots written by two streams: stream 0's episode terminates at its second
    step, stream 1's is truncated at its third; the sixth vector step wraps onto slots 0, 1."""
    from rlkit.replay.in_graph import GraphReplay

    replay = GraphReplay(10, 1, n_step=3, streams=2)
    rewards = [(1, 10), (2, 20), (3, 30), (4, 40), (5, 50), (6, 60)]
    for t, pair in enumerate(rewards):
        obs = tf.constant([[t], [t + 100]], tf.float32)
        replay.add(obs, [0, 1], pair, obs + 1, [t == 1, False], [False, t == 2])
    return replay


def test_n_step_walks_each_stream_stopping_at_episode_ends_and_the_newest():
    replay = _two_streams()
    slots = tf.constant([1, 4, 5, 6, 8, 9, 0, 3], tf.int32)
    last, returns, discount = (x.numpy() for x in replay.n_step(slots, GAMMA))
    g = np.float32(GAMMA)
    # slot 1: stream 1's sixth step (the wrap overwrote its first), its newest: itself
    # slot 4 (stream 0, step 2): 3 steps, its last (slot 8) linked on to the wrapped slot 0
    # slot 5 (stream 1, truncated): itself; slot 6: 2 steps to slot 8 then slot 0 (newest)
    # slot 8: on to slot 0, the newest; slot 9 (stream 1, step 4): on to slot 1, the newest
    # slot 0 (newest of stream 0): itself; slot 3 (stream 1, step 1): on to slot 5, where
    # the episode was truncated: it bootstraps from there with g^2
    np.testing.assert_array_equal(last, [1, 8, 5, 0, 0, 1, 0, 5])
    expected_returns = [60, 3 + g * 4 + g * g * 5, 30, 4 + g * 5 + g * g * 6, 5 + g * 6,
                        50 + g * 60, 6, 20 + g * 30]  # fmt: skip
    np.testing.assert_allclose(returns, expected_returns, rtol=1e-6)
    np.testing.assert_allclose(discount, [g, g**3, g, g**3, g**2, g**2, g, g**2], rtol=1e-6)


def test_n_step_does_not_bootstrap_past_a_termination():
    replay = _two_streams()
    # slot 2 (stream 0, step 1) terminated: its return is its reward, discount 0
    last, returns, discount = (x.numpy() for x in replay.n_step(tf.constant([2]), GAMMA))
    np.testing.assert_array_equal(last, [2])
    np.testing.assert_allclose(returns, [2.0])
    np.testing.assert_array_equal(discount, [0.0])
    # the step before it (stream 0, step 0) was overwritten by the wrap: a larger ring
    from rlkit.replay.in_graph import GraphReplay

    ring = GraphReplay(20, 1, n_step=3, streams=2)
    for t, pair in enumerate([(1, 10), (2, 20), (3, 30)]):
        obs = tf.constant([[t], [t]], tf.float32)
        ring.add(obs, [0, 0], pair, obs, [t == 1, False])
    last, returns, discount = (x.numpy() for x in ring.n_step(tf.constant([0]), GAMMA))
    np.testing.assert_array_equal(last, [2])
    np.testing.assert_allclose(returns, [1 + np.float32(GAMMA) * 2], rtol=1e-6)
    np.testing.assert_array_equal(discount, [0.0])


def test_the_n_step_ring_keeps_its_ends_in_a_checkpoint():
    from rlkit.replay.in_graph import GraphReplay

    replay = _two_streams()
    assert "ended" in replay.variables() and "ended" not in GraphReplay(4, 1).variables()
    copy = GraphReplay(10, 1, n_step=3, streams=2)
    copy.load_state_dict(replay.state_dict())
    slots = tf.range(10)
    for a, b in zip(replay.n_step(slots, GAMMA), copy.n_step(slots, GAMMA), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.slow
def test_the_n_step_walk_equals_the_python_replays_on_random_streams():
    """Differential: the same transitions (1-4 streams, episodes terminated or truncated at
    random and restarted, rings that wrap and are not a multiple of the streams) in the
    Python replay and the graph ring; every filled slot's n-step view equal bit for bit."""
    from rlkit.replay.in_graph import GraphReplay
    from rlkit.replay.memory import ReplayMemory

    for trial in range(20):
        rng = np.random.default_rng(trial)
        streams, horizon = int(rng.integers(1, 5)), int(rng.integers(2, 5))
        capacity = int(rng.integers(streams, 4 * streams + 7))
        python = ReplayMemory(capacity, (1,), np.float32, (), np.int64, 0, n_step=horizon,
                              gamma=GAMMA)  # fmt: skip
        graph = GraphReplay(capacity, 1, n_step=horizon, streams=streams)
        obs = rng.random((streams, 1)).astype(np.float32)
        python.start_batch(obs, list(range(streams)))
        for _ in range(int(rng.integers(1, 30))):
            rewards = rng.random(streams).astype(np.float32)
            terminated = rng.random(streams) < 0.15
            truncated = (rng.random(streams) < 0.15) & ~terminated
            next_obs = rng.random((streams, 1)).astype(np.float32)
            actions = np.zeros(streams, np.int64)
            python.append_batch(actions, rewards, next_obs, terminated, truncated)
            graph.add(obs, actions, rewards, next_obs, terminated, truncated)
            obs = next_obs.copy()
            for j in np.nonzero(terminated | truncated)[0]:
                obs[j] = rng.random(1)
                python.start(int(j), obs[j])
        slots = np.arange(len(python))
        expected = python._gather(slots)
        walk = graph.n_step(tf.constant(slots, tf.int32), GAMMA)
        last, returns, discount = (x.numpy() for x in walk)
        np.testing.assert_array_equal(returns, expected.rewards, err_msg=f"trial {trial}")
        np.testing.assert_array_equal(discount, expected.discount, err_msg=f"trial {trial}")
        np.testing.assert_array_equal(graph.next_obs.numpy()[last], expected.next_obs)
