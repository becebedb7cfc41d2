"""Atari runs' learning curves in Dopamine's terms, next to Dopamine's DQN baseline.

Dopamine reports, per *iteration* (250,000 agent steps = 1M frames), the mean score of the
whole games that its training played in that iteration (5 seeds). This reads run folders
of ``rlkit train dqn --env ALE/<Game>-v5`` and prints, for each run and iteration: the
games that ended in it, their mean training score, and the greedy evaluation (epsilon
0.05, whole games) at the iteration's end, next to Dopamine's mean (and the range of its
5 seeds); and draws the curves on one figure.

Whole games are the run's ``game`` rows (metrics.csv); a run logged before rlkit wrote
them is grouped from its per-life ``episode`` rows, ``--lives`` consecutive lives to a
game (Breakout: 5 lives; a game that hits the 108k-frame limit would break the grouping).

Training scores depend on the exploration epsilon the training plays with: the dqn3
preset anneals it as DQN3.0 does (1 -> 0.1 over 1M steps from step 50k), Dopamine's DQN
1 -> 0.01 over 250k from step 20k. Each run is labelled with its schedule.

    python -m benchmarks.atari_curve RUN_DIR [RUN_DIR ...] --plot docs/atari/breakout-curve.png
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

from rlkit.core.errors import UsageError

ITERATION = 250_000  # agent steps (1M frames)
# Dopamine's DQN baseline (google/dopamine baselines/atari/data/<game>.json, agent "DQN"):
# the training score of each iteration, mean of its 5 seeds, and the lowest and highest seed
DOPAMINE = {
    "Breakout": {0: (1.6, 1.6, 1.7), 1: (3.1, 2.8, 3.3), 2: (3.9, 3.3, 4.5),
                 3: (6.7, 5.9, 7.5), 4: (9.3, 6.7, 11.1), 5: (12.1, 8.9, 13.7),
                 6: (14.2, 11.4, 15.9), 7: (16.3, 14.1, 19.0), 8: (18.6, 16.4, 22.8),
                 9: (21.5, 19.3, 28.5)},
    "Pong": {0: (-20.3, -20.6, -20.2), 1: (-19.1, -20.7, -18.0), 2: (-17.6, -20.3, -15.1),
             3: (-16.6, -20.1, -14.5), 4: (-15.4, -20.3, -11.4), 5: (-13.6, -20.5, -9.1),
             6: (-11.0, -20.3, -3.3), 7: (-8.5, -20.2, 4.9), 8: (-7.4, -19.0, 4.5),
             9: (-4.9, -19.1, 6.9)},
}  # fmt: skip


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


def reference_run(run_dir: Path) -> dict | None:
    """What ``labs/atari_sb3_reference.py`` wrote about a run of another library
    (``reference.json``: library, env, schedule), or None for an rlkit run folder."""
    path = run_dir / "reference.json"
    return json.loads(path.read_text()) if path.is_file() else None


def library(run_dir: Path) -> str:
    reference = reference_run(run_dir)
    return reference["library"] if reference else "rlkit"


def game_name(run_dir: Path) -> str:
    from rlkit.run.folder import RunFolder

    reference = reference_run(run_dir)
    env = (
        reference["env"] if reference else RunFolder(run_dir).read_config()[0].env
    )  # ALE/Breakout-v5
    return env.split("/")[-1].split("-")[0]


def schedule(run_dir: Path) -> str:
    """The settings that set a run's training score apart: its exploration schedule, when
    it starts learning and how often it copies its target."""
    from rlkit.run.folder import RunFolder

    reference = reference_run(run_dir)
    agent = reference["schedule"] if reference else RunFolder(run_dir).read_config()[1]
    return (
        f"ε 1 → {agent['eps_end']:g} over {_steps(agent['eps_anneal_steps'])}, "
        f"learning from {_steps(agent['learning_starts'])}, "
        f"target every {_steps(agent['target_update'])}"
    )


def _steps(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n / 1000:g}k"


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
    print(f"{run_dir} ({library(run_dir)}: {schedule(run_dir)}; {how})")
    print("| iteration | agent steps | games | training score (mean) | Dopamine DQN (5 seeds) | "
          "greedy eval at the end (ε 0.05) |")  # fmt: skip
    print("|---:|---|---:|---:|---:|---|")
    for line in lines:
        ev = line["eval"]
        ev_text = f"{ev[0]:.1f} ± {ev[1]:.1f} ({ev[2]} games)" if ev else "-"
        ref = line["dopamine"]
        ref_text = f"{ref[0]} ({ref[1]} to {ref[2]})" if ref else "-"
        part = "" if line["complete"] else " (in progress)"
        print(f"| {line['iteration']} | {line['steps']}{part} | {line['games']} | "
              f"{line['train_score']:.1f} | {ref_text} | {ev_text} |")  # fmt: skip


def plot(run_dirs: list[Path], lives: list[int], labels: list[str], output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlkit.run.plotting import smooth

    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=100)
    last, right = 0, ITERATION
    for k, (run_dir, run_lives, name) in enumerate(zip(run_dirs, lives, labels, strict=True)):
        rows = read_rows(run_dir)
        ends, scores, _ = whole_games(rows, run_lives)
        color = f"C{k}"
        ax.plot(ends, scores, ".", color=color, alpha=0.1, ms=3)
        ax.plot(ends, smooth(scores, 100), color=color, lw=2,
                label=f"{name}: training games (mean of 100)")  # fmt: skip
        evals = [(int(r["step"]), float(r["return"])) for r in rows if r["kind"] == "eval"]
        if evals:
            ax.plot(*zip(*evals, strict=True), "o", color=color, mec="k", ms=7,
                    label="  its greedy evaluations (ε 0.05, 10 games)")  # fmt: skip
        last = max(last, max((int(r["step"]) for r in rows), default=0))
        right = max(right, ends.max() if len(ends) else 0)
    game = game_name(run_dirs[0])
    reference = DOPAMINE.get(game, {})
    its = [i for i in sorted(reference) if i * ITERATION < last]  # the iterations reached
    if its:
        mean, low, high = (np.array([reference[i][j] for i in its]) for j in range(3))
        ax.errorbar(
            [(i + 0.5) * ITERATION for i in its], mean, yerr=[mean - low, high - mean],
            fmt="s", color="k", ms=8, capsize=4,
            label="Dopamine DQN: training score of the iteration (5 seeds, range)",
        )  # fmt: skip
    ax.set_xlim(0, right * 1.02)
    ax.set_xlabel("agent steps (4 frames each)")
    ax.set_ylabel("game score (all lives)")
    ax.set_title(f"DQN on {game}: the runs and Dopamine's baseline")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(output)
    plt.close(fig)
    print(f"wrote {output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN_DIR")
    parser.add_argument(
        "--lives",
        default="5",
        help="lives per game, for runs without game rows (Breakout: 5; 1 for runs whose "
        "episodes are whole games); one value, or one per run separated by commas",
    )
    parser.add_argument(
        "--labels", help="the runs' names in the figure, separated by ';' (default: schedules)"
    )
    parser.add_argument("--plot", type=Path, help="write the curves to this PNG")
    args = parser.parse_args()
    try:
        report(parser, args)
    except UsageError as error:  # a folder that is no run: one line, exit 2
        parser.error(str(error))


def report(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Print each run's table (and write the figure) for :func:`main`'s arguments."""
    lives = [int(n) for n in args.lives.split(",")]
    lives = lives * len(args.run_dirs) if len(lives) == 1 else lives
    labels = (
        args.labels.split(";")
        if args.labels
        else [f"{library(r)}, {schedule(r)}" for r in args.run_dirs]
    )
    if len(lives) != len(args.run_dirs) or len(labels) != len(args.run_dirs):
        parser.error("give --lives and --labels once, or once per run")
    for run_dir, run_lives in zip(args.run_dirs, lives, strict=True):
        lines, how = table(run_dir, run_lives)
        print_table(run_dir, lines, how)
        print()
    if args.plot:
        plot(args.run_dirs, lives, labels, args.plot)


if __name__ == "__main__":
    main()
