"""MinAtar with rlkit's minatar preset: the learning target of issue 11 and a five-game table.

Each run is `rlkit train dqn --env MinAtar/<Game>-v0 --seed S --steps N` (the minatar
preset: the MinAtar paper's DQN; v0 ids: all 6 actions, sticky actions 0.1, the paper's
setting). Reported per run: the mean return of the last 100 training episodes (the
paper's measure), the final model's evaluation (epsilon 0.05, 20 episodes) and the best
evaluated model's. A result file per run lands in --out, so the table can be printed from
whatever finished (--report).

    nohup python benchmarks/minatar_seeds.py --games Breakout --seeds 0-2 --steps 500000 &
    python benchmarks/minatar_seeds.py --games all --seeds 0 --steps 1000000
    python benchmarks/minatar_seeds.py --report
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import parse_seeds

ROOT = Path(__file__).resolve().parent.parent
GAMES = ["Asterix", "Breakout", "Freeway", "Seaquest", "SpaceInvaders"]


def run_one(game: str, seed: int, steps: int, out: Path) -> dict:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np

    from rlkit import experiment

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


def report(out: Path) -> str:
    rows = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    lines = [
        "| game | steps | seed | last 100 training episodes | final model (eps 0.05) | "
        "best model | wall-clock | steps/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        best = "-" if r["best_eval"] is None else f"{r['best_eval']:.1f}"
        lines.append(f"| {r['game']} | {r['steps']:,} | {r['seed']} | {r['last100']:.2f} | "
                     f"{r['final_eval']:.2f} | {best} | {r['seconds'] / 60:.1f} min | "
                     f"{r['steps_per_second']:.0f} |")  # fmt: skip
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
