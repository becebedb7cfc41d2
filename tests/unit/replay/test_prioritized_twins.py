"""Prioritized replay in the compiled loop (:class:`rlkit.replay.graph_priorities.
GraphPrioritized`) against the Python loop's (:class:`rlkit.replay.prioritized.
PrioritizedSampler` on its :class:`~rlkit.replay.sum_tree.SumTree`), fed the same inputs,
eagerly and compiled with XLA (as the loop runs it):

- priorities ``(|delta| + epsilon) ** alpha`` of the same TD errors: within 2 float64 ulps
  (1e-15 relative; measured: numpy's ``**`` and TensorFlow's ``pow`` round differently in
  about one value in six, by one ulp, where alpha is not 0, 1 or, under XLA, 0.5);
- the sum tree after the same writes and TD-error updates (repeated slots among them):
  node for node within 1e-14 relative, the largest priority recorded within 1e-15 (the tree's
  own arithmetic is tied bit for bit in ``test_graph_priorities.py``);
- on the same tree, the same uniform numbers (the graph's, drawn from the seed it samples
  with, handed to the numpy sampler in place of its generator): the same stratified slots,
  exactly, and the same importance weights within one float32 ulp (their float64 ``pow``
  may differ by an ulp before the cast)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from rlkit.replay.graph_priorities import GraphPrioritized
from rlkit.replay.prioritized import PrioritizedSampler

CAPACITY = 50
SETTINGS = [(0.5, 1e-10, 0.4), (0.6, 1e-6, 1.0), (1.0, 1e-2, 0.0), (0.0, 1e-6, 0.5)]
IDS = ["eager", "xla"]


def in_graph(function, jit: bool):
    return tf.function(function, jit_compile=True) if jit else function


class Uniforms:
    """A generator whose ``random(shape)`` hands out given numbers."""

    def __init__(self, uniform: np.ndarray) -> None:
        self.uniform = uniform

    def random(self, shape):
        assert self.uniform.shape == tuple(shape)
        return self.uniform


def _history(alpha: float, epsilon: float, seed: int):
    """Both samplers after the same writes and updates: 30 slots written, three updates of
    TD errors (some zero, some large, a repeated slot), the other 20 slots written (at the
    largest priority recorded), three more updates."""
    rng = np.random.default_rng(seed)
    python = PrioritizedSampler(CAPACITY, alpha, 0.5, epsilon)
    graph = GraphPrioritized(CAPACITY, alpha, epsilon)
    for written in (np.arange(30), np.arange(30, CAPACITY)):
        python.written(written)
        graph.written(tf.constant(written, tf.int32))
        for _ in range(3):
            slots = rng.integers(0, written[-1] + 1, size=8)
            slots[1] = slots[0]  # a repeated slot: the last value wins in both
            scale = rng.choice([1e-3, 1.0, 50.0], size=8)
            td_errors = (rng.normal(size=8) * scale).astype(np.float32)
            td_errors[2] = 0.0
            python.update_priorities(slots, td_errors)
            graph.update(tf.constant(slots, tf.int32), tf.constant(td_errors))
    return python, graph


def test_the_same_history_gives_the_same_tree():
    for k, (alpha, epsilon, _) in enumerate(SETTINGS):
        python, graph = _history(alpha, epsilon, k)
        tree = python.tree.state_dict()
        np.testing.assert_allclose(graph.tree.nodes.numpy(), tree["nodes"], rtol=1e-14, atol=0)
        assert graph.tree.max_recorded.numpy() == pytest.approx(tree["max_recorded"], rel=1e-15)
        if alpha in (0.0, 1.0):  # no rounding in pow: bit for bit
            np.testing.assert_array_equal(graph.tree.nodes.numpy(), tree["nodes"])


@pytest.mark.parametrize("jit", [False, True], ids=IDS)
def test_the_same_td_errors_give_the_same_priorities(jit):
    rng = np.random.default_rng(1)
    td_errors = np.concatenate([[0.0, -0.0, 1e-12, -3.5, 1e3, 7e-5],
                                rng.normal(size=500) * 10.0]).astype(np.float32)  # fmt: skip
    pythons = [PrioritizedSampler(4, alpha, 0.5, epsilon) for alpha, epsilon, _ in SETTINGS]
    graphs = [GraphPrioritized(4, alpha, epsilon) for alpha, epsilon, _ in SETTINGS]
    got = in_graph(lambda x: [g.priority(x) for g in graphs], jit)(tf.constant(td_errors))
    for value, python, (alpha, _, _) in zip(got, pythons, SETTINGS, strict=True):
        want = python.priority(td_errors)
        np.testing.assert_array_max_ulp(value.numpy(), want, maxulp=2)
        if alpha in (0.0, 1.0):
            np.testing.assert_array_equal(value.numpy(), want)


DRAWS = [(0.4, 6), (1.0, 8), (0.0, 8), (0.5, 5)]  # (beta, B)


@pytest.mark.slow
@pytest.mark.parametrize(("jit", "draws"), [(False, DRAWS), (True, DRAWS[:1])], ids=IDS)
def test_the_same_uniforms_on_the_same_tree_draw_the_same_slots_and_weights(jit, draws):
    """Eagerly for every beta and batch size; compiled with XLA (as the loop samples) for one
    (a compilation each)."""
    rng = np.random.default_rng(2)
    leaves = rng.uniform(0.05, 1.0, CAPACITY) * rng.choice([0.1, 1.0, 4.0], size=CAPACITY)
    leaves[::7] = 0.0  # never drawn
    cases = []
    for beta, batch in draws:
        python, graph = (
            PrioritizedSampler(CAPACITY, 0.5, beta),
            GraphPrioritized(CAPACITY, 0.5, 1e-6),
        )
        python.tree.set(np.arange(CAPACITY), leaves)
        graph.tree.nodes.assign(python.tree.state_dict()["nodes"])  # the same tree, exactly
        cases.append((python, graph, beta, batch))

    def sample(seed):
        out = []
        for _, graph, beta, batch in cases:
            slots, weights = graph.sample(batch, seed, tf.constant(CAPACITY), beta, 3)
            uniform = tf.random.stateless_uniform([3, batch], seed, dtype=tf.float64)
            out.append((slots, weights, uniform))  # with the numbers it drew its slots with
        return out

    run = in_graph(sample, jit)
    drawn = set()
    for j in range(4):
        for (python, _, beta, batch), got in zip(cases, run(tf.constant([j, 9])), strict=True):
            slots, weights, uniform = (x.numpy() for x in got)
            want_slots, want_weights = python.sample(Uniforms(uniform), CAPACITY, (3, batch))
            np.testing.assert_array_equal(slots, want_slots, err_msg=f"beta {beta}, B {batch}")
            assert weights.dtype == want_weights.dtype == np.float32
            np.testing.assert_array_max_ulp(weights, want_weights, maxulp=1)
            drawn.update(slots.ravel().tolist())
    assert len(drawn) > 10 * len(draws) ** 0.5 and not drawn & set(range(0, CAPACITY, 7))
