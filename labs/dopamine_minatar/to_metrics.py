"""Dopamine Runner logs of a MinAtar run -> an rlkit ``metrics.csv`` (+ ``config.toml``).

Dopamine's Runner pickles, after each iteration, its whole log (``logs/log_N``: a dict
``iteration_K -> {'train_episode_returns': [...], 'train_episode_lengths': [...], ...}``).
This writes one ``episode`` row per training episode, in rlkit's columns (as ``rlkit train``
writes them) plus Dopamine's iteration:

    kind,step,episode,return,length,return_std,iteration

* ``step``: the cumulative agent (= environment) step at the episode's end, counted over all
  iterations' episodes (Dopamine's iteration runs whole episodes until it has at least
  ``Runner.training_steps`` steps, so iterations are a little longer than that);
* ``episode``: the episode's number, from 1; ``return``: its unclipped return (Dopamine's
  ``train_episode_returns``); ``length``: its steps; ``iteration``: Dopamine's iteration K.

A ``config.toml`` naming the agent ``dopamine_rainbow`` and the environment
``MinAtar/<Game>-v0`` is written beside it (once), so that ``rlkit plot RUN_DIR RLKIT_RUN``
draws the run in the same panel as rlkit's runs on that game.

Needs only the standard library and NumPy (the log holds NumPy scalars), so rlkit's venv
runs it, also on a run in progress: the completed iterations come from the newest
``logs/log_N``; rows of the iteration in progress, which run_rainbow.py appends live as
each episode ends, are kept (``--drop-partial`` drops them). A lock file serialises it with
the live writer.

    python labs/dopamine_minatar/to_metrics.py RUN_DIR [--game breakout]
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

COLUMNS = ["kind", "step", "episode", "return", "length", "return_std", "iteration"]
#: Dopamine's MinAtar game names -> the gymnasium ids rlkit uses (the v0 ids: all 6 actions,
#: as Dopamine's MinAtarEnv, which acts with ``num_actions()`` of them)
ENV_IDS = {
    "asterix": "MinAtar/Asterix-v0",
    "breakout": "MinAtar/Breakout-v0",
    "freeway": "MinAtar/Freeway-v0",
    "seaquest": "MinAtar/Seaquest-v0",
    "space_invaders": "MinAtar/SpaceInvaders-v0",
}


@contextlib.contextmanager
def locked(run_dir: Path) -> Iterator[None]:
    """An exclusive lock on RUN_DIR/metrics.csv.lock for the time of the block."""
    with open(Path(run_dir) / "metrics.csv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def latest_log(run_dir: Path) -> dict[str, Any]:
    """The newest Dopamine log pickle's data ({} when no iteration has completed)."""
    numbered = [
        (int(m.group(1)), p)
        for p in (Path(run_dir) / "logs").glob("log_*")
        if (m := re.fullmatch(r"log_(\d+)", p.name))
    ]
    if not numbered:
        return {}
    with open(max(numbered)[1], "rb") as f:
        return pickle.load(f)


def episode_row(iteration: int, step: int, episode: int, score: float, length: int) -> dict:
    """One ``metrics.csv`` row: an episode of ``length`` steps ending at cumulative ``step``."""
    return {
        "kind": "episode",
        "step": int(step),
        "episode": int(episode),
        "return": float(score),
        "length": int(length),
        "return_std": "",
        "iteration": int(iteration),
    }


def rows_from_log(data: dict[str, Any]) -> list[dict]:
    """One ``episode`` row per training episode of the iterations in ``data``, in order
    (iteration 0 first), ``step`` the cumulative step count at each episode's end."""
    rows: list[dict] = []
    total = 0
    iterations = sorted(int(k.split("_")[1]) for k in data if k.startswith("iteration_"))
    for k in iterations:
        stats = data[f"iteration_{k}"]
        returns = stats.get("train_episode_returns", [])
        lengths = stats.get("train_episode_lengths", [])
        for score, length in zip(returns, lengths, strict=True):
            total += int(length)
            rows.append(episode_row(k, total, len(rows) + 1, score, length))
    return rows


def completed_iterations(data: dict[str, Any]) -> int:
    """How many iterations the log holds (they run from 0 without gaps)."""
    return sum(1 for k in data if k.startswith("iteration_"))


def merge_live(logged: list[dict], live: list[dict], done: int) -> list[dict]:
    """The logged rows, then the live rows of iterations ``>= done`` (the one in progress),
    renumbered to continue the logged rows' episodes and steps. Live rows of completed
    iterations are dropped: the log has them."""
    rows = list(logged)
    step = logged[-1]["step"] if logged else 0
    for row in live:
        if row.get("iteration", "") == "" or int(row["iteration"]) < done:
            continue
        step += int(row["length"])
        rows.append(
            episode_row(int(row["iteration"]), step, len(rows) + 1, row["return"], row["length"])
        )
    return rows


def write_rows(path: Path, rows: list[dict]) -> None:
    """``metrics.csv`` with a header and ``rows``, replaced atomically."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def write_config(run_dir: Path, game: str, seed: int | None, steps: int | None) -> None:
    """A minimal rlkit ``config.toml`` (agent ``dopamine_rainbow``, the game's id), once."""
    path = Path(run_dir) / "config.toml"
    if path.exists():
        return
    lines = ["[run]", 'agent = "dopamine_rainbow"', f'env = "{ENV_IDS[game]}"']
    if seed is not None:
        lines.append(f"seed = {seed}")
    if steps is not None:
        lines.append(f"steps = {steps}")
    path.write_text("\n".join(lines) + "\n\n[agent]\n")


def convert(
    run_dir: Path, data: dict[str, Any] | None = None, keep_partial: bool = True
) -> tuple[int, int]:
    """Rewrite RUN_DIR/metrics.csv from the log (``data``, or the newest ``logs/log_N``):
    the completed iterations' episodes, then (``keep_partial``) the live rows already
    written for the iteration in progress. Returns (completed iterations, rows)."""
    run_dir = Path(run_dir)
    data = latest_log(run_dir) if data is None else data
    done = completed_iterations(data)
    rows = rows_from_log(data)
    path = run_dir / "metrics.csv"
    with locked(run_dir):
        live: list[dict] = []
        if keep_partial and path.is_file():
            with open(path, newline="") as f:
                live = list(csv.DictReader(f))
        write_rows(path, merge_live(rows, live, done))
    return done, len(merge_live(rows, live, done))


def run_info(run_dir: Path) -> dict[str, Any]:
    """run_rainbow.py's ``reference.json`` ({} when absent)."""
    path = Path(run_dir) / "reference.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    parser.add_argument("--game", choices=sorted(ENV_IDS), help="default: reference.json's")
    parser.add_argument(
        "--drop-partial", action="store_true", help="drop the rows of the iteration in progress"
    )
    args = parser.parse_args()
    info = run_info(args.run_dir)
    game = args.game or info.get("game")
    if game not in ENV_IDS:
        parser.error(f"no game given and none in {args.run_dir / 'reference.json'}")
    done, n = convert(args.run_dir, keep_partial=not args.drop_partial)
    write_config(args.run_dir, game, info.get("seed"), info.get("total_steps"))
    print(
        f"{args.run_dir / 'metrics.csv'}: {n} episode rows ({done} completed iterations"
        f"{'' if args.drop_partial else ' + the one in progress'})"
    )


if __name__ == "__main__":
    main()
