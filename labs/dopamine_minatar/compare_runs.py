"""Runs side by side at the same steps: the mean training return of each run's last
episodes and, where a run has them, its greedy evaluations.

Any run folder with an rlkit ``metrics.csv`` works: rlkit's own runs and Dopamine's
(``to_metrics.py`` writes one). For each step S of the table (every ``--every`` steps up to
the step all runs have reached, or ``--at``) a run's figure is the mean return of its last
``--window`` training episodes that ended at or before S (Dopamine's "last 100" and rlkit's
progress line read the same way), and its evaluation at S where it logged one.

    python labs/dopamine_minatar/compare_runs.py /work/bench/dopamine/rainbow-breakout-seed0 \\
        /work/bench/runs/rainbow-MinAtar_Breakout-v0-0-20261125-220303 --every 100000
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path


@dataclass
class Run:
    """One run's episodes (end step, return) and evaluations (step -> mean, std)."""

    name: str
    episodes: list[tuple[int, float]] = field(default_factory=list)
    evals: dict[int, tuple[float, float]] = field(default_factory=dict)

    @property
    def last_step(self) -> int:
        return max([self.episodes[-1][0] if self.episodes else 0, *self.evals])

    def reached(self, step: int) -> bool:
        """Whether the run got to ``step``: its last row is at most one episode (its longest
        so far) short of it. A table row past a run's end shows "-" for it, not its last
        figures carried on."""
        ends = [0] + [end for end, _ in self.episodes]
        longest = max(b - a for a, b in pairwise(ends)) if self.episodes else 0
        return step <= self.last_step + longest

    def training_mean(self, step: int, window: int) -> tuple[float, int] | None:
        """Mean return of the last ``window`` episodes ended at or before ``step`` and how
        many were averaged (fewer at the start); None before the first episode."""
        ended = [ret for end, ret in self.episodes if end <= step][-window:]
        return (sum(ended) / len(ended), len(ended)) if ended else None


def read_run(folder: Path) -> Run:
    """A run folder's ``metrics.csv`` (rows in step order, as rlkit writes them)."""
    run = Run(folder.name)
    with open(folder / "metrics.csv", newline="") as f:
        for row in csv.DictReader(f):
            step, ret = int(row["step"]), float(row["return"])
            if row["kind"] == "episode":
                run.episodes.append((step, ret))
            elif row["kind"] == "eval":
                run.evals[step] = (ret, float(row["return_std"] or 0.0))
    return run


def table(runs: list[Run], steps: list[int], window: int) -> list[str]:
    """Markdown rows: a step per row, each run's training mean (and evaluation, if any)."""
    head = ["step"] + [f"{r.name} (last {window})" for r in runs]
    with_evals = [r for r in runs if r.evals]
    head += [f"{r.name} (greedy eval)" for r in with_evals]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for step in steps:
        cells = [f"{step:,}"]
        for run in runs:
            got = run.training_mean(step, window) if run.reached(step) else None
            cells.append("-" if got is None else f"{got[0]:.2f}")
        for run in with_evals:
            e = run.evals.get(step)
            cells.append("-" if e is None else f"{e[0]:.2f} ± {e[1]:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders with a metrics.csv")
    parser.add_argument("--every", type=int, default=100_000, help="a row every N steps")
    parser.add_argument("--at", type=int, nargs="*", help="these steps instead of --every")
    parser.add_argument("--window", type=int, default=100, help="training episodes averaged")
    args = parser.parse_args(argv)
    runs = [read_run(folder) for folder in args.runs]
    reached = min(run.last_step for run in runs)
    steps = args.at or list(range(args.every, reached + 1, args.every))
    for run in runs:
        print(f"{run.name}: {len(run.episodes):,} episodes to step {run.last_step:,}")
    print("\n".join(table(runs, steps, args.window)))


if __name__ == "__main__":
    main()
