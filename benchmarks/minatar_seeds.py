"""MinAtar with rlkit's minatar preset: the learning target of issue 11 and a five-game table.

Each run is `rlkit train dqn --env MinAtar/<Game>-v0 --seed S --steps N` (the minatar
preset: the MinAtar paper's DQN; v0 ids: all 6 actions, sticky actions 0.1, the paper's
setting). Reported per run: the mean return of the last 100 training episodes (the
paper's measure), the final model's evaluation (epsilon 0.05, 20 episodes) and the best
evaluated model's. A result file per run lands in --out, so the table can be printed from
whatever finished (--report).

    nohup python -m benchmarks.minatar_seeds --games Breakout --seeds 0-2 --steps 500000 &
    python -m benchmarks.minatar_seeds --games all --seeds 0 --steps 1000000
    python -m benchmarks.minatar_seeds --report
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.common import parse_seeds

ROOT = Path(__file__).resolve().parent.parent
GAMES = ["Asterix", "Breakout", "Freeway", "Seaquest", "SpaceInvaders"]


def run_one(game: str, seed: int, steps: int, out: Path) -> dict:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np

    from rlkit.run import experiment

    plan = experiment.plan("dqn", f"MinAtar/{game}-v0", seed=seed, steps=steps)
    start = time.perf_counter()
    result = experiment.run(plan, out / "runs", handle_signals=False)
    returns = result.history.episode_returns
    ends = np.asarray(result.history.episode_end_steps)
    last100_at = {}  # the paper's measure at every 100k steps
    for at in range(100_000, result.history.steps + 1, 100_000):
        done = int(np.searchsorted(ends, at, side="right"))
        last100_at[str(at)] = float(np.mean(returns[max(0, done - 100) : done]))
    return {
        "game": game, "seed": seed, "steps": result.history.steps,
        "preset": plan.preset.name if plan.preset else "none",
        "learning_rate": plan.agent_config.learning_rate,
        "last100": float(np.mean(returns[-100:])), "last100_at": last100_at,
        "episodes": len(returns),
        "final_eval": result.final_return, "best_eval": result.best_return,
        "seconds": time.perf_counter() - start,
        "steps_per_second": result.summary["steps_per_second"], "run_dir": str(result.run_dir),
    }  # fmt: skip


MARKS = (100_000, 250_000, 500_000, 1_000_000)


def measure(run_dir: Path) -> dict:
    """The paper's measure (mean return of the last 100 training episodes) at each of
    :data:`MARKS` the run reached and at its end, and its last evaluation, from the run's
    metrics.csv: finished or not (a run stopped early reports what it reached)."""
    import csv
    import tomllib

    import numpy as np

    with open(run_dir / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    episodes = [r for r in rows if r["kind"] == "episode"]
    ends = np.array([int(r["step"]) for r in episodes])
    returns = np.array([float(r["return"]) for r in episodes])
    evals = [(int(r["step"]), float(r["return"])) for r in rows if r["kind"] == "eval"]
    config = tomllib.loads((run_dir / "config.toml").read_text())
    reached = max([int(ends[-1]) if len(ends) else 0] + [step for step, _ in evals])
    summary = run_dir / "summary.json"
    if summary.is_file():  # a finished run's last steps may be in an unfinished episode
        reached = max(reached, json.loads(summary.read_text())["steps"])

    def last100(at: int) -> float:
        done = int(np.searchsorted(ends, at, side="right"))
        return float(np.mean(returns[max(0, done - 100) : done]))

    return {
        "game": config["run"]["env"].split("/")[1].removesuffix("-v0"),
        "seed": config["run"]["seed"], "learning_rate": config["agent"]["learning_rate"],
        "reached": reached, "planned": config["run"]["steps"],
        "last100_at": {at: last100(at) for at in MARKS if at <= reached},
        "last100": last100(reached), "last_eval": evals[-1] if evals else None,
    }  # fmt: skip


def report(out: Path) -> str:
    """A table of every run under ``out/runs`` (newest per game and seed), finished or not;
    finished runs add their final and best models' evaluations."""
    finished = {}
    for path in out.rglob("*.json"):
        if path.parent.name != "runs" and "runs" in path.parts:
            continue  # the runs' own json files
        row = json.loads(path.read_text())
        finished[Path(row["run_dir"]).name] = row
    newest = {}
    for run_dir in sorted((out / "runs").glob("dqn-MinAtar_*")):
        if (run_dir / "metrics.csv").is_file() and (run_dir / "config.toml").is_file():
            m = measure(run_dir)
            newest[(m["game"], m["seed"], m["learning_rate"])] = (run_dir, m)
    marks = " | ".join(f"last 100 at {at // 1000}k" for at in MARKS)
    lines = [
        f"| game | seed | step size | steps | {marks} | final model (eps 0.05) | "
        "best model | steps/s |",
        "|---|---:|---:|---:|" + "---:|" * len(MARKS) + "---:|---:|---:|",
    ]
    for (game, seed, lr), (run_dir, m) in sorted(newest.items()):
        done = finished.get(run_dir.name)
        at = " | ".join(f"{m['last100_at'][a]:.2f}" if a in m["last100_at"] else "-"
                        for a in MARKS)  # fmt: skip
        if done:
            final = f"{done['final_eval']:.2f}"
            best = "-" if done["best_eval"] is None else f"{done['best_eval']:.2f}"
            speed = f"{done['steps_per_second']:.0f}"
        else:
            step, value = m["last_eval"] or (0, float("nan"))
            final, best, speed = f"(stopped; eval at {step // 1000}k: {value:.2f})", "-", "-"
        lines.append(f"| {game} | {seed} | {lr:g} | {m['reached']:,} of {m['planned']:,} | "
                     f"{at} | {final} | {best} | {speed} |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="Breakout", help="comma-separated, or all")
    parser.add_argument("--seeds", default="0-2")
    parser.add_argument("--steps", type=int, default=500_000)
    parser.add_argument("--out", type=Path, default=ROOT / "minatar-runs")
    parser.add_argument("--report", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    games = GAMES if args.games == "all" else args.games.split(",")
    if not args.report:
        for game in games:
            for seed in parse_seeds(args.seeds):
                path = args.out / f"{game}-{args.steps}-seed{seed}.json"
                if not path.exists():
                    row = run_one(game, seed, args.steps, args.out)
                    path.write_text(json.dumps(row, indent=2))
                    minutes = row["seconds"] / 60
                    print(f"{game} seed {seed}: last 100 {row['last100']:.2f}, final "
                          f"{row['final_eval']:.2f}, {minutes:.1f} min", flush=True)  # fmt: skip
    print(report(args.out))


if __name__ == "__main__":
    main()
