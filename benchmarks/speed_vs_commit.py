"""Did a change cost speed? ``rlkit train`` steps/s of this working tree against a commit.

The commit is checked out into a temporary git worktree and run from there (its own
``cli`` and ``rlkit`` on ``PYTHONPATH``); each run is a whole ``rlkit train`` in a fresh
process, the two trees alternating, pinned to one core when ``--core`` is given. Printed:
every run's steps/s (summary.json's figure), the medians and their ratio (after/before).

    python -m benchmarks.speed_vs_commit --ref 82bf536 --steps 20000 --reps 3
    python -m benchmarks.speed_vs_commit --ref 82bf536 --agent ddpg --env Pendulum-v1
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(tree: Path, args: argparse.Namespace) -> float:
    """Steps/s of one ``rlkit train`` from ``tree`` in a fresh process."""
    return steps_per_second(tree, args.agent, args.env, args.steps, args.extra, args.core)


def steps_per_second(tree: Path, agent: str, env_id: str, steps: int, extra: list[str],
                     core: int | None = None) -> float:  # fmt: skip
    """summary.json's steps/s of ``rlkit train AGENT --env ENV_ID --steps STEPS EXTRA...``
    run from ``tree`` in a fresh process (pinned to CPU ``core`` when given)."""
    return train_run(tree, agent, env_id, steps, extra, core)[0]


def train_run(tree: Path, agent: str, env_id: str, steps: int, extra: list[str],
              core: int | None = None) -> tuple[float, float]:  # fmt: skip
    """:func:`steps_per_second`, and the CPU seconds (user + system) the whole process took,
    startup included: on a loaded machine the work done, where wall-clock time is mostly
    waiting for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rate = _train(tree, agent, env_id, steps, extra, core)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return rate, cpu


def _train(tree: Path, agent: str, env_id: str, steps: int, extra: list[str],
           core: int | None) -> float:  # fmt: skip
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "cli.main", "train", agent, "--env", env_id,
                   "--steps", str(steps), "--quiet", "--eval-every", "0", "--out", out,
                   *extra]  # fmt: skip
        if core is not None:
            command = ["taskset", "-c", str(core), *command]
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run(command, check=True, capture_output=True, cwd=tree, env=env)
        (run_dir,) = Path(out).iterdir()
        return json.loads((run_dir / "summary.json").read_text())["steps_per_second"]


@contextlib.contextmanager
def reference_tree(ref: str) -> Iterator[Path]:
    """Commit ``ref`` checked out into a temporary git worktree (removed afterwards)."""
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(before),
                        ref], check=True, capture_output=True)  # fmt: skip
        try:
            yield before
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(before)], check=False, capture_output=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", required=True, help="the commit to compare with (before)")
    parser.add_argument("--agent", default="dqn")
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--core", type=int, help="pin every run to this CPU core")
    parser.add_argument("extra", nargs="*", help="more rlkit train options (after --)")
    args = parser.parse_args()
    if args.steps <= 0 or args.reps <= 0:
        parser.error("--steps and --reps must be positive")
    with reference_tree(args.ref) as before:
        rates: dict[str, list[float]] = {"before": [], "after": []}
        cpus: dict[str, list[float]] = {"before": [], "after": []}
        trees = {"before": before, "after": ROOT}
        for rep in range(args.reps):
            for name in ("before", "after") if rep % 2 == 0 else ("after", "before"):
                rate, cpu = train_run(trees[name], args.agent, args.env, args.steps, args.extra,
                                      args.core)  # fmt: skip
                rates[name].append(rate)
                cpus[name].append(cpu)
                print(f"rep {rep}: {name:<6} {rate:8.0f} steps/s, {cpu:7.2f} CPU s", flush=True)
    medians = {name: statistics.median(values) for name, values in rates.items()}
    cpu_s = {name: statistics.median(values) for name, values in cpus.items()}
    print(f"\n{args.agent} {args.env}, median of {args.reps} runs of {args.steps:,} steps:")
    print(f"  before ({args.ref}): {medians['before']:8.0f} steps/s, {cpu_s['before']:7.2f} CPU s")
    print(f"  after (this tree): {medians['after']:8.0f} steps/s, {cpu_s['after']:7.2f} CPU s")
    print(
        f"  ratio after/before: {medians['after'] / medians['before']:.3f} (steps/s); "
        f"before/after {cpu_s['before'] / cpu_s['after']:.3f} (CPU seconds of the process, "
        "startup included: the work, where a loaded machine makes wall-clock swing)"
    )


if __name__ == "__main__":
    main()
