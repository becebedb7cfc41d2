"""An Atari run's learning curve in Dopamine's terms, next to Dopamine's DQN baseline.

Dopamine reports, per *iteration* (250,000 agent steps = 1M frames), the mean score of the
whole games that its training played in that iteration (mean of 5 seeds). This reads a
run folder of ``rlkit train dqn --env ALE/<Game>-v5`` (the dqn3 preset) and prints, per
iteration: the games that ended in it, their mean training score, and the greedy
evaluation (epsilon 0.05, whole games) at the iteration's end, with Dopamine's figure
where ``../shared/DESIGN.md`` gives one; and draws the curve.

Whole games are the run's ``game`` rows (metrics.csv); a run logged before rlkit wrote
them is grouped from its per-life ``episode`` rows, ``--lives`` consecutive lives to a
game (Breakout: 5 lives; a game that hits the 108k-frame limit would break the grouping).

The training scores are not quite Dopamine's: rlkit's dqn3 preset anneals epsilon as
DQN3.0 does (1 -> 0.1 over 1M steps) where Dopamine's DQN goes 1 -> 0.01 over 250k, so
from iteration 1 on rlkit plays with more random actions while it trains.

    python benchmarks/atari_curve.py runs/atari/dqn-ALE_Breakout-v5-0-... \
        --plot docs/atari/breakout-curve.png
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

ITERATION = 250_000  # agent steps (1M frames)
# Dopamine's DQN baseline, training return by iteration (mean of 5 seeds)
DOPAMINE = {"Breakout": {0: 1.6, 4: 9.3, 9: 21.5}, "Pong": {0: -20.3, 4: -15.4, 9: -4.9}}


def read_rows(run_dir: Path) -> list[dict]:
    with open(run_dir / "metrics.csv", newline="") as f:
        return list(csv.DictReader(f))


def whole_games(rows: list[dict], lives: int) -> tuple[np.ndarray, np.ndarray, str]:
    """``(end_steps, scores, how)`` of every whole game the training played."""
    games = [r for r in rows if r["kind"] == "game"]
    if games:
        steps = [int(r["step"]) for r in games]
        return np.asarray(steps), np.asarray([float(r["return"]) for r in games]), "game rows"
    episodes = [r for r in rows if r["kind"] == "episode"]
    whole = len(episodes) // lives * lives
    scores = [float(r["return"]) for r in episodes[:whole]]
    ends = [int(r["step"]) for r in episodes[lives - 1 : whole : lives]]
    summed = np.asarray(scores).reshape(-1, lives).sum(axis=1) if scores else np.zeros(0)
    return np.asarray(ends), summed, f"{lives} lives to a game"


def game_name(run_dir: Path) -> str:
    from rlkit.runs import read_run_config

    env = read_run_config(run_dir)[0].env  # ALE/Breakout-v5
    return env.split("/")[-1].split("-")[0]


def table(run_dir: Path, lives: int) -> tuple[list[dict], str]:
    rows = read_rows(run_dir)
    ends, scores, how = whole_games(rows, lives)
    evals = {int(r["step"]): (float(r["return"]), float(r["return_std"] or 0), int(r["length"]))
             for r in rows if r["kind"] == "eval"}  # fmt: skip
    reference = DOPAMINE.get(game_name(run_dir), {})
    last = max([int(r["step"]) for r in rows] or [0])
    lines = []
    for it in range(0, -(-last // ITERATION)):
        low, high = it * ITERATION, (it + 1) * ITERATION
        inside = scores[(ends > low) & (ends <= high)]
        lines.append({
            "iteration": it, "steps": f"{low // 1000}k-{min(high, last) // 1000}k",
            "complete": last >= high, "games": len(inside),
            "train_score": float(inside.mean()) if len(inside) else float("nan"),
            "eval": evals.get(high), "dopamine": reference.get(it),
        })  # fmt: skip
    return lines, how


def print_table(run_dir: Path, lines: list[dict], how: str) -> None:
    print(f"{run_dir} ({how})")
    print("| iteration | agent steps | games | training score (mean) | Dopamine DQN | "
          "greedy eval at the end (ε 0.05) |")  # fmt: skip
    print("|---:|---|---:|---:|---:|---|")
    for line in lines:
        ev = line["eval"]
        ev_text = f"{ev[0]:.1f} ± {ev[1]:.1f} ({ev[2]} games)" if ev else "-"
        ref = f"{line['dopamine']}" if line["dopamine"] is not None else "-"
        part = "" if line["complete"] else " (in progress)"
        print(f"| {line['iteration']} | {line['steps']}{part} | {line['games']} | "
              f"{line['train_score']:.1f} | {ref} | {ev_text} |")  # fmt: skip


def plot(run_dir: Path, lives: int, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlkit.plotting import smooth

    rows = read_rows(run_dir)
    ends, scores, how = whole_games(rows, lives)
    game = game_name(run_dir)
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    ax.plot(ends, scores, ".", color="C0", alpha=0.15, ms=3)
    ax.plot(ends, smooth(scores, 100), color="C0", lw=2,
            label="rlkit dqn3: training games (moving average of 100)")  # fmt: skip
    evals = [(int(r["step"]), float(r["return"])) for r in rows if r["kind"] == "eval"]
    if evals:
        ax.plot(*zip(*evals, strict=True), "o", color="C1", ms=7,
                label="rlkit: greedy evaluation (ε 0.05)")  # fmt: skip
    reference = DOPAMINE.get(game, {})
    if reference and rows:
        last = max(int(r["step"]) for r in rows)
        its = [i for i in sorted(reference) if i * ITERATION < last]  # those reached
        ax.plot(
            [(i + 0.5) * ITERATION for i in its],
            [reference[i] for i in its],
            "s",
            color="C3",
            ms=8,
            label="Dopamine DQN: training score of the iteration",
        )
    ax.set_xlim(0, max(ends.max() if len(ends) else 0, ITERATION) * 1.02)
    ax.set_xlabel("agent steps (4 frames each)")
    ax.set_ylabel("game score (all lives)")
    ax.set_title(f"DQN3.0 settings on {game} (seed 0)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(output)
    plt.close(fig)
    print(f"wrote {output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument(
        "--lives",
        type=int,
        default=5,
        help="lives per game, for runs without game rows (Breakout: 5)",
    )
    parser.add_argument("--plot", type=Path, help="write the curve to this PNG")
    args = parser.parse_args()
    lines, how = table(args.run_dir, args.lives)
    print_table(args.run_dir, lines, how)
    if args.plot:
        plot(args.run_dir, args.lives, args.plot)


if __name__ == "__main__":
    main()
