"""Dopamine Runner logs -> an rlkit ``metrics.csv`` that benchmarks/atari_curve.py reads.

Dopamine's Runner pickles, after each iteration, its whole log (``logs/log_N``: a dict
``iteration_K -> {'train_episode_returns': [...], 'train_episode_lengths': [...], ...}``).
Each training episode there is one whole game (Dopamine's ``terminal_on_life_loss`` is off;
a game ends at game over or after 27000 agent steps). This writes one ``game`` row per game:

    kind,step,episode,return,length,return_std,iteration,total_steps

* ``return``: the game's unclipped score (Dopamine's ``train_episode_returns``);
* ``step``: ``K * training_steps + min(steps into iteration K at the game's end,
  training_steps)``. Dopamine's iteration K runs whole games until it has at least
  ``training_steps`` (250k) agent steps, so its last game ends a little past the boundary;
  capping puts that game in iteration K as Dopamine counts it, so atari_curve's per-iteration
  mean is exactly Dopamine's ``train_average_return`` of that iteration;
* ``total_steps``: the true cumulative agent step at the game's end (all iterations' games'
  lengths summed);
* ``iteration``: Dopamine's iteration K.

Stdlib only, so any python runs it, also on a run in progress: completed iterations come
from the newest ``logs/log_N``; rows of the iteration in progress, which run_breakout.py
appends live as each game ends, are kept. A lock file serialises it with the live writer.

    python labs/dopamine_dqn/to_metrics.py RUN_DIR
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import fcntl
import json
import os
import pickle
import re
from pathlib import Path

COLUMNS = ["kind", "step", "episode", "return", "length", "return_std", "iteration", "total_steps"]
TRAINING_STEPS = 250_000


@contextlib.contextmanager
def locked(run_dir: Path):
    with open(Path(run_dir) / "metrics.csv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def training_steps(run_dir: Path) -> int:
    """The run's Runner.training_steps (from reference.json; 250k by default)."""
    path = Path(run_dir) / "reference.json"
    if path.is_file():
        return int(json.loads(path.read_text()).get("training_steps", TRAINING_STEPS))
    return TRAINING_STEPS


def latest_log(run_dir: Path) -> dict:
    """The newest Dopamine log pickle's data ({} when no iteration has completed)."""
    logs = Path(run_dir) / "logs"
    numbered = [
        (int(m.group(1)), p)
        for p in logs.glob("log_*")
        if (m := re.fullmatch(r"log_(\d+)", p.name))
    ]
    if not numbered:
        return {}
    with open(max(numbered)[1], "rb") as f:
        return pickle.load(f)


def rows_from_log(data: dict, steps_per_iteration: int) -> list[dict]:
    """One ``game`` row per training episode of the completed iterations in ``data``."""
    rows, total, games = [], 0, 0
    iterations = sorted(int(k.split("_")[1]) for k in data if k.startswith("iteration_"))
    for k in iterations:
        stats = data[f"iteration_{k}"]
        inside = 0
        returns = stats.get("train_episode_returns", [])
        lengths = stats.get("train_episode_lengths", [])
        for score, length in zip(returns, lengths, strict=True):
            inside += int(length)
            total += int(length)
            games += 1
            rows.append(game_row(k, steps_per_iteration, inside, total, games, score, length))
    return rows


def game_row(
    iteration: int,
    steps_per_iteration: int,
    inside: int,
    total: int,
    games: int,
    score: float,
    length: int,
) -> dict:
    return {
        "kind": "game",
        "step": iteration * steps_per_iteration + min(inside, steps_per_iteration),
        "episode": games,
        "return": float(score),
        "length": int(length),
        "return_std": "",
        "iteration": iteration,
        "total_steps": total,
    }


def write_rows(path: Path, rows: list[dict]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def convert(run_dir: Path, data: dict | None = None, keep_partial: bool = True) -> tuple[int, int]:
    """Rewrite RUN_DIR/metrics.csv from the log (``data``, or the newest logs/log_N): the
    completed iterations' games, then (``keep_partial``) the live rows already written for
    later iterations. Returns (completed iterations, rows)."""
    run_dir = Path(run_dir)
    data = latest_log(run_dir) if data is None else data
    rows = rows_from_log(data, training_steps(run_dir))
    done = 1 + max((r["iteration"] for r in rows), default=-1)
    done = max(done, sum(1 for k in data if k.startswith("iteration_")))
    path = run_dir / "metrics.csv"
    with locked(run_dir):
        if keep_partial and path.is_file():
            with open(path, newline="") as f:
                live = [
                    r
                    for r in csv.DictReader(f)
                    if r.get("iteration", "") != "" and int(r["iteration"]) >= done
                ]
            rows += live
        write_rows(path, rows)
    return done, len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    parser.add_argument(
        "--drop-partial",
        action="store_true",
        help="drop the live rows of the iteration in progress",
    )
    args = parser.parse_args()
    done, n = convert(args.run_dir, keep_partial=not args.drop_partial)
    print(
        f"{args.run_dir / 'metrics.csv'}: {n} game rows ({done} completed iterations"
        f"{' + the one in progress' if not args.drop_partial else ''})"
    )


if __name__ == "__main__":
    main()
