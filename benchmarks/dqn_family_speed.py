"""What the DQN family costs: steps/s of DQN (uniform and prioritized), C51, QR-DQN,
Rainbow, IQN and Munchausen DQN at the same MinAtar-scale settings, each a whole ``rlkit
train`` in a fresh process, the variants alternating, measured in one invocation. Printed:
every run, the medians and each one's ratio to uniform DQN.

    python -m benchmarks.dqn_family_speed --env MinAtar/Breakout-v0 --steps 6000 --reps 3
    python -m benchmarks.dqn_family_speed --only dqn iqn mdqn
    python -m benchmarks.dqn_family_speed --only dqn c51 --epsilon 0.01 --before b897cfd

The settings are Revisiting Rainbow's MinAtar ones (Obando-Ceron & Castro 2021; Dopamine's
``labs/environments/minatar/*.gin``): one 16-channel 3x3 convolution then the head, batch
32, an update every 4 steps, target copy every 1,000; learning starts at 1,000 steps, so a
run of N steps times ``(N - 1000) / 4`` updates and N environment steps. ``--epsilon``
fixes epsilon (``eps_start = eps_end``; 0.01 acts as late training does, nearly every step
greedy); ``--before COMMIT`` also times each variant with the rlkit of that commit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMON = ["--preset", "none", "--set", "torso=minatar", "--set", "hidden_sizes=[]",
          "--set", "batch_size=32", "--set", "train_freq=4", "--set", "gradient_steps=1",
          "--set", "target_update=1000", "--set", "learning_starts=1000",
          "--set", "buffer_size=100000", "--set", "jit_compile=false"]  # fmt: skip
VARIANTS = {
    "dqn": ["dqn"],
    "dqn prioritized": ["dqn", "--set", "prioritized=true"],
    "c51": ["c51"],
    "qrdqn": ["qrdqn"],
    "rainbow": ["rainbow"],
    # Revisiting Rainbow's MinAtar IQN: N = N' = K = 32 (Configs/implicit_breakout.gin)
    "iqn": [
        "iqn",
        "--set",
        "num_tau_samples=32",
        "--set",
        "num_tau_prime_samples=32",
        "--set",
        "num_quantile_samples=32",
    ],
    "mdqn": ["mdqn"],
}


def steps_per_second(variant: list[str], env: str, steps: int, source: str = "") -> float:
    """Steps/s of one ``rlkit train`` (summary.json's figure) in a fresh process, with the
    installed rlkit or the one in folder ``source``."""
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "rlkit.cli.main", "train", variant[0], "--env", env,
                   "--steps", str(steps), "--quiet", "--eval-every", "0", "--eval-episodes",
                   "1", "--out", str(Path(out) / "runs"), *COMMON, *variant[1:]]  # fmt: skip
        environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
        if source:
            environment["PYTHONPATH"] = os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])
        # from the temporary folder: never the source tree's rlkit/ shadowing the one wanted
        subprocess.run(command, check=True, capture_output=True, cwd=out, env=environment)
        (run_dir,) = (Path(out) / "runs").iterdir()
        return json.loads((run_dir / "summary.json").read_text())["steps_per_second"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MinAtar/Breakout-v0")
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=list(VARIANTS), help="these variants")
    parser.add_argument("--epsilon", type=float, help="a fixed epsilon (0.01: nearly greedy)")
    parser.add_argument("--before", default="", help="also time each variant at this commit")
    args = parser.parse_args()
    extra = [] if args.epsilon is None else [
        "--set", f"eps_start={args.epsilon}", "--set", f"eps_end={args.epsilon}"]  # fmt: skip
    runs = {name: (VARIANTS[name] + extra, "") for name in args.only or list(VARIANTS)}
    if args.before:
        from benchmarks.dopamine_rainbow_speed import rlkit_source

        source = rlkit_source(args.before)
        for name in list(runs):
            runs[f"{name} @{args.before[:8]}"] = (runs[name][0], source)
    names = list(runs)
    rates: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(args.reps):
        order = names if rep % 2 == 0 else list(reversed(names))
        for name in order:
            rate = steps_per_second(runs[name][0], args.env, args.steps, runs[name][1])
            rates[name].append(rate)
            print(f"rep {rep}: {name:24s} {rate:8.0f} steps/s", flush=True)
    base = statistics.median(rates[names[0]])
    print(f"\n{args.env}, median of {args.reps} runs of {args.steps:,} steps:")
    for name in names:
        median = statistics.median(rates[name])
        print(f"  {name:24s} {median:8.0f} steps/s  ratio to {names[0]}: {median / base:.3f}  "
              f"step time {base / median:.2f}x {names[0]}'s")  # fmt: skip


if __name__ == "__main__":
    main()
