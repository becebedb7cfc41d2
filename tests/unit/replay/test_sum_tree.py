"""The sum tree behind prioritized replay: sums, prefix-sum search, duplicates, checkpoints."""

import numpy as np
import pytest

from rlkit.replay.sum_tree import SumTree


def inner_nodes_are_sums(tree: SumTree) -> bool:
    nodes = tree.state_dict()["nodes"]
    first_leaf = (nodes.size + 1) // 2 - 1
    parents = np.arange(first_leaf)
    return bool(np.all(nodes[parents] == nodes[2 * parents + 1] + nodes[2 * parents + 2]))


def test_hand_computed_tree_of_five_leaves():
    # capacity 5 -> 8 leaves, 15 nodes; leaves 1, 2, 3, 4, 0.5 -> root 10.5
    tree = SumTree(5)
    tree.set(np.arange(5), np.array([1.0, 2.0, 3.0, 4.0, 0.5]))
    nodes = tree.state_dict()["nodes"]
    assert nodes.shape == (15,) and nodes.dtype == np.float64
    # level 2: 1+2=3, 3+4=7, 0.5+0=0.5, 0; level 1: 10, 0.5; root 10.5
    np.testing.assert_array_equal(nodes[:7], [10.5, 10.0, 0.5, 3.0, 7.0, 0.5, 0.0])
    assert tree.total == 10.5
    np.testing.assert_array_equal(tree.get(np.array([4, 0])), [0.5, 1.0])
    np.testing.assert_array_equal(tree.values(), [1.0, 2.0, 3.0, 4.0, 0.5])


def test_find_is_the_prefix_sum_search():
    # leaves 1, 2, 3, 4, 0.5: cumulative 1, 3, 6, 10, 10.5
    tree = SumTree(5)
    tree.set(np.arange(5), np.array([1.0, 2.0, 3.0, 4.0, 0.5]))
    targets = np.array([0.0, 0.999, 1.0, 2.5, 3.0, 5.999, 6.0, 9.99, 10.0, 10.49])
    np.testing.assert_array_equal(tree.find(targets), [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    # any shape in, same shape out
    assert tree.find(targets.reshape(2, 5)).shape == (2, 5)
    assert tree.find(np.zeros((2, 5))).dtype == np.int64


def test_find_skips_zero_leaves():
    # leaves 0, 2, 0, 0, 1: cumulative 0, 2, 2, 2, 3 -> targets in [0, 2) give 1, [2, 3) give 4
    tree = SumTree(5)
    tree.set(np.array([1, 4]), np.array([2.0, 1.0]))
    np.testing.assert_array_equal(tree.find(np.array([0.0, 1.99, 2.0, 2.99])), [1, 1, 4, 4])


def test_find_agrees_with_searchsorted_on_random_trees():
    rng = np.random.default_rng(0)
    for capacity in (1, 2, 3, 7, 64, 1000):
        tree = SumTree(capacity)
        values = rng.random(capacity) * (rng.random(capacity) < 0.7)
        values[rng.integers(capacity)] = 0.5  # at least one positive leaf
        tree.set(np.arange(capacity), values)
        targets = rng.random(500) * tree.total
        expected = np.searchsorted(np.cumsum(values), targets, side="right")
        found = tree.find(targets)
        # a target that rounding puts on a boundary may go either way; never onto a zero leaf
        assert np.mean(found == expected) > 0.99
        assert np.all(values[found] > 0)


def test_rounding_never_lands_on_an_empty_leaf():
    # a target just below the total, where left + right rounds: the search must stay on the
    # positive leaves and never walk into the zero padding past the capacity
    # (values found by a random search where a plain descent ends on the padding leaf 3)
    tree = SumTree(3)
    tree.set(
        np.arange(3), np.array([1.3379941534926155e-12, 0.10123807765045613, 0.33083815785421977])
    )
    found = tree.find(np.array([np.nextafter(tree.total, 0.0)]))
    assert found[0] == 2
    tree = SumTree(4)
    tree.set(
        np.arange(3),
        np.array([7.903466506752425e-05, 3.7457996500309367e-10, 0.00013467805488849447]),
    )
    found = tree.find(np.array([np.nextafter(tree.total, 0.0)]))
    assert found[0] == 2


def test_duplicates_in_one_call_end_with_the_last_value():
    tree = SumTree(4)
    tree.set(np.array([2, 0, 2, 2, 1]), np.array([5.0, 1.0, 7.0, 3.0, 2.0]))
    # leaf 2 took 5, 7, 3 in turn: 3 wins; total 1 + 2 + 3 = 6 (each value counted once)
    np.testing.assert_array_equal(tree.values(), [1.0, 2.0, 3.0, 0.0])
    assert tree.total == 6.0
    assert tree.max_recorded == 7.0  # 7 was set, even though 3 replaced it in the same call
    assert inner_nodes_are_sums(tree)


def test_scalar_value_broadcasts_and_max_recorded_never_decreases():
    tree = SumTree(4)
    assert tree.max_recorded == 0.0
    tree.set(np.array([0, 1, 2]), 2.5)
    np.testing.assert_array_equal(tree.values(), [2.5, 2.5, 2.5, 0.0])
    tree.set(np.array([0, 1, 2]), np.array([0.1, 0.2, 0.3]))
    assert tree.max_recorded == 2.5
    assert tree.total == pytest.approx(0.6, abs=1e-15)


def test_many_random_updates_keep_every_node_an_exact_sum():
    rng = np.random.default_rng(1)
    tree = SumTree(100)
    values = np.zeros(100)
    for _ in range(200):
        idx = rng.integers(100, size=rng.integers(1, 40))
        new = rng.random(idx.size) * 10
        tree.set(idx, new)
        for i, v in zip(idx, new, strict=True):  # the reference: one at a time, in order
            values[i] = v
    np.testing.assert_array_equal(tree.values(), values)
    assert inner_nodes_are_sums(tree)
    assert tree.total == pytest.approx(values.sum(), rel=1e-12)


def test_set_is_vectorised_over_indices():
    # 100k leaves in one call: a Python loop over indices would take seconds
    import time

    tree = SumTree(100_000)
    start = time.perf_counter()
    tree.set(np.arange(100_000), np.ones(100_000))
    tree.find(np.random.default_rng(0).random(10_000) * tree.total)
    assert time.perf_counter() - start < 1.0
    assert tree.total == 100_000.0


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="capacity"):
        SumTree(0)
    tree = SumTree(4)
    with pytest.raises(ValueError, match="empty"):
        tree.find(np.array([0.0]))
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        tree.set(np.array([4]), np.array([1.0]))
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        tree.set(np.array([-1]), np.array([1.0]))
    with pytest.raises(ValueError, match=">= 0"):
        tree.set(np.array([0]), np.array([-1.0]))
    with pytest.raises(ValueError, match="finite"):
        tree.set(np.array([0]), np.array([np.nan]))
    with pytest.raises(ValueError, match="integers"):
        tree.get(np.array([0.5]))
    tree.set(np.array([0]), np.array([2.0]))
    with pytest.raises(ValueError, match="targets"):
        tree.find(np.array([2.0]))  # the total itself is outside [0, total)
    with pytest.raises(ValueError, match="targets"):
        tree.find(np.array([-0.1]))


def test_state_dict_round_trip_is_bit_exact():
    rng = np.random.default_rng(2)
    tree = SumTree(37)
    tree.set(rng.integers(37, size=50), rng.random(50) * 3)
    state = tree.state_dict()
    restored = SumTree(37)
    restored.load_state_dict({k: np.array(v) for k, v in state.items()})
    np.testing.assert_array_equal(restored.state_dict()["nodes"], state["nodes"])
    assert restored.max_recorded == tree.max_recorded
    targets = rng.random(1000) * tree.total
    np.testing.assert_array_equal(restored.find(targets), tree.find(targets))
    # the state is a copy: changing the tree afterwards leaves the saved state alone
    tree.set(np.array([0]), np.array([100.0]))
    assert state["nodes"][0] != tree.total
    # 37 and 38 leaves share one node array of 127: the capacity itself is checked
    with pytest.raises(ValueError, match="capacity 38"):
        SumTree(38).load_state_dict(state)
