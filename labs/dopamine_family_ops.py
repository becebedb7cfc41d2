"""Are rlkit's DQN-family building blocks Dopamine's? Each op against a numpy transcription.

JAX is not installed here, so Dopamine's functions are transcribed to numpy, line for line,
from google/dopamine at commit 5873f5494ee0c2d7c016d0ab2ad530354fec59d0 (2026-03-24), each
citing its file and lines: the transcriptions and the comparisons live in
tests/fixtures/dopamine_reference.py (tests/unit/learn/test_distributional.py holds their
numbers); this script runs them on the same random inputs and prints the largest
differences. The finding is in docs/dqn-family.md, "Building blocks".

    python -m labs.dopamine_family_ops
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from tests.fixtures.dopamine_reference import (
    compare_c51,
    compare_quantile,
    compare_sum_tree,
    compare_weights,
)


def main() -> None:
    rng = np.random.default_rng(0)
    tf.random.set_seed(0)
    projection, c51 = compare_c51(rng)
    print(
        f"C51 projection (256 x 51 atoms, 30% terminal): max |ours - dopamine| = {projection:.3g}"
    )
    print(f"C51 cross-entropy loss: max |ours - dopamine| = {c51:.3g}")
    for name, value in {**compare_quantile(rng), **compare_sum_tree(rng)}.items():
        print(f"{name} = {value:.6g}")
    print(f"PER weights at beta 0.5: max |ours - dopamine| = {compare_weights(rng):.3g}")


if __name__ == "__main__":
    main()
