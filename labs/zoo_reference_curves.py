"""Is a zoo table row a draw? Read the evaluations rl-zoo's own training run logged.

rl-zoo's benchmark rows are one run each, and rl-trained-agents keeps each run's folder:
``<algo>/<env>_1/evaluations.npz`` (SB3's EvalCallback: the greedy mean of a few
episodes every 10k steps) and ``0.monitor.csv``. Where a preset misses a row on several
seeds, this asks how often *the zoo's run itself* was at the row's level late in its
training: if it swung, the row's final model is one draw, and so is each of ours. For
each run (the zoo's, and rlkit run folders given with --runs: their metrics.csv ``eval``
rows) it prints, over the evaluations from --after on: how many, the share at or above
the zoo's mean and at the table's "zoo level" (mean - std), the last and the best; and
the chance that at least 2 of 3 final models are at zoo level if each were drawn like
those evaluations (the issue's target).

    git clone --depth 1 https://github.com/DLR-RM/rl-trained-agents  # (or read its files)
    python -m labs.zoo_reference_curves --preset ddpg/BipedalWalker-v3 \\
        --zoo rl-trained-agents/ddpg/BipedalWalker-v3_1/evaluations.npz
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

from benchmarks.zoo_table import ZOO


def zoo_evaluations(path: Path) -> list[tuple[int, float]]:
    """``[(step, mean greedy return)]`` from an EvalCallback ``evaluations.npz``."""
    import numpy as np

    with np.load(path) as data:
        steps, means = data["timesteps"], data["results"].mean(axis=1)
        return [(int(t), float(r)) for t, r in zip(steps, means, strict=True)]


def rlkit_evaluations(run_dir: Path) -> list[tuple[int, float]]:
    """``[(step, mean greedy return)]`` from a run folder's metrics.csv ``eval`` rows."""
    with open(run_dir / "metrics.csv", newline="") as f:
        return [(int(row["step"]), float(row["return"])) for row in csv.DictReader(f)
                if row["kind"] == "eval"]  # fmt: skip


def at_least(k: int, n: int, p: float) -> float:
    """P(at least ``k`` successes in ``n`` independent trials of probability ``p``)."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def summary(evaluations: list[tuple[int, float]], after: int, mean: float, std: float) -> dict:
    """What the evaluations from step ``after`` on say about a final model's chances."""
    late = [r for step, r in evaluations if step >= after]
    if not late:
        raise ValueError(f"no evaluation at or after step {after}")
    level = sum(r >= mean - std for r in late) / len(late)
    best_step, best = max(evaluations, key=lambda e: e[1])
    return {
        "count": len(late),
        "above_mean": sum(r >= mean for r in late) / len(late),
        "at_level": level,
        "last": evaluations[-1],
        "best": (best_step, best),
        "two_of_three": at_least(2, 3, level),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", choices=sorted(ZOO), required=True)
    parser.add_argument("--zoo", type=Path, required=True, help="the zoo run's evaluations.npz")
    parser.add_argument("--runs", type=Path, nargs="*", default=[], help="rlkit run folders")
    parser.add_argument("--after", type=int, help="default: half the zoo's step budget")
    args = parser.parse_args(argv)
    _, mean, std, budget = ZOO[args.preset]
    after = budget // 2 if args.after is None else args.after
    try:
        sources = [("rl-zoo's run", zoo_evaluations(args.zoo))]
        sources += [(run.name, rlkit_evaluations(run)) for run in args.runs]
        rows = [(name, summary(evals, after, mean, std)) for name, evals in sources]
    except (OSError, KeyError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.preset}: zoo row {mean:.1f} ± {std:.1f} (zoo level: ≥ {mean - std:.1f}); "
          f"evaluations from step {after:,} on")  # fmt: skip
    for name, s in rows:
        print(f"{name}: {s['count']} evaluations, {s['above_mean']:.0%} ≥ the zoo's mean, "
              f"{s['at_level']:.0%} at zoo level; last {s['last'][1]:.1f} ({s['last'][0]:,}), "
              f"best {s['best'][1]:.1f} ({s['best'][0]:,}); P(≥ 2 of 3 final models at zoo "
              f"level) = {s['two_of_three']:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
