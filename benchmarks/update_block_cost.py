"""The fixed cost of an update block (issue 39), this tree against a commit, in one go.

Three settings, each a whole ``rlkit train`` in a fresh process (the two trees alternating,
as :mod:`benchmarks.speed_vs_commit` runs them), steps/s from summary.json:

- **cartpole**: DQN at PureJaxRL's CartPole settings (10 envs, batch 128, 120x84, an
  update every vector step after 10,000 steps; the issue's command) with the updates
  regrouped: 1, 10 and 100 updates per block (``train_freq`` 10, 100, 1000 with
  ``gradient_steps`` 1, 10, 100: the same updates in 10x fewer blocks each time) and no
  learning at all. The seconds of a run are ``base + updates * u + blocks * F``; the
  slope over the three block counts is ``F``, the **fixed cost of one block**; what the
  100-per-block run spends above the no-learning one, less its blocks' ``F``, is the
  updates' own time (``u`` per update).
- **minatar**: DQN at the MinAtar paper's settings (``MinAtar/Breakout-v0`` with its
  preset: an update every step from step 5,000), and the same with epsilon annealed over
  1,000 steps (``greedy``: acting greedy 90% of the time, as in the rest of a 1M-step run).
- **pendulum**: DDPG on Pendulum-v1 (its preset) updating after every step.

Printed: each run's steps/s and the CPU seconds its process took, the medians per tree
and their ratio (the speed-up of this tree over the reference), and for cartpole ``F`` and
``u`` per tree, from the steps/s and from the CPU seconds. On a loaded machine the
wall-clock figures swing with the other work (a run mostly waits for a core); the CPU
seconds are the work itself (startup included, which the slope ``F`` cancels).

    python -m benchmarks.update_block_cost --ref 488374f
    python -m benchmarks.update_block_cost --ref 488374f --settings cartpole --reps 3
"""

from __future__ import annotations

import argparse
import statistics

from benchmarks.speed_vs_commit import ROOT, reference_tree, train_run

CARTPOLE = [
    "--preset", "none", "--num-envs", "10", "--set", "hidden_sizes=[120,84]",
    "--set", "batch_size=128", "--set", "buffer_size=10000", "--set", "target_update=500",
    "--set", "learning_rate=2.5e-4", "--set", "learning_rate_end=-1", "--set", "loss=mse",
    "--set", "reduction=mean", "--set", "double_dqn=false", "--set", "eps_end=0.05",
    "--set", "eps_anneal_steps=250000", "--set", "clip_delta=0",
]  # fmt: skip
LEARNING_STARTS = 10_000
#: updates per block -> (train_freq, gradient_steps); 0: no learning at all
GROUPINGS = {1: (10, 1), 10: (100, 10), 100: (1000, 100), 0: (10, 1)}


def cartpole_runs(steps: int) -> dict[str, tuple[str, str, int, list[str]]]:
    runs = {}
    for per_block, (freq, grad) in GROUPINGS.items():
        starts = steps + 1 if per_block == 0 else LEARNING_STARTS
        extra = [*CARTPOLE, "--set", f"train_freq={freq}", "--set", f"gradient_steps={grad}",
                 "--set", f"learning_starts={starts}"]  # fmt: skip
        runs[f"cartpole {per_block}/block" if per_block else "cartpole no learning"] = (
            "dqn", "CartPole-v1", steps, extra)  # fmt: skip
    return runs


def other_runs(setting: str, steps: int) -> dict[str, tuple[str, str, int, list[str]]]:
    if setting == "minatar":
        return {
            "minatar (preset)": ("dqn", "MinAtar/Breakout-v0", steps, []),
            "minatar greedy": ("dqn", "MinAtar/Breakout-v0", steps,
                               ["--set", "eps_anneal_steps=1000"]),
        }  # fmt: skip
    every_step = ["--set", "train_freq=1", "--set", "gradient_steps=1"]
    return {"pendulum every step": ("ddpg", "Pendulum-v1", steps, every_step)}


def fixed_cost(rates: dict[str, float], steps: int) -> tuple[float, float]:
    """``(F, u)`` in ms from the cartpole runs' steps/s: the least-squares slope of the
    seconds against the block count, and the updates' own time per update."""
    updates = (steps - LEARNING_STARTS) // 10  # one per vector step of 10 envs
    points = [(updates / k, steps / rates[f"cartpole {k}/block"]) for k in (1, 10, 100)]
    mean_b = sum(b for b, _ in points) / 3
    mean_t = sum(t for _, t in points) / 3
    slope = sum((b - mean_b) * (t - mean_t) for b, t in points) / sum(
        (b - mean_b) ** 2 for b, _ in points
    )
    base = steps / rates["cartpole no learning"]
    per_update = (points[2][1] - base - points[2][0] * slope) / updates
    return 1e3 * slope, 1e3 * per_update


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", required=True, help="the commit to compare with (before)")
    parser.add_argument("--settings", default="cartpole,minatar,pendulum")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--cartpole-steps", type=int, default=60_000)
    parser.add_argument("--minatar-steps", type=int, default=12_000)
    parser.add_argument("--pendulum-steps", type=int, default=6_000)
    parser.add_argument("--core", type=int, help="pin every run to this CPU core")
    args = parser.parse_args()
    if args.reps <= 0 or min(args.cartpole_steps - LEARNING_STARTS, args.minatar_steps,
                             args.pendulum_steps) <= 0:  # fmt: skip
        parser.error("--reps and the step counts must be positive (cartpole above 10,000)")
    runs: dict[str, tuple[str, str, int, list[str]]] = {}
    for setting in args.settings.split(","):
        if setting == "cartpole":
            runs |= cartpole_runs(args.cartpole_steps)
        elif setting in ("minatar", "pendulum"):
            runs |= other_runs(setting, getattr(args, f"{setting}_steps"))
        else:
            parser.error(f"unknown setting {setting!r}: cartpole, minatar or pendulum")
    rates: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    with reference_tree(args.ref) as before:
        trees = {"before": before, "after": ROOT}
        for rep in range(args.reps):
            for name, (agent, env, steps, extra) in runs.items():
                order = ("before", "after") if rep % 2 == 0 else ("after", "before")
                for tree in order:
                    rate, cpu = train_run(trees[tree], agent, env, steps, extra, args.core)
                    rates.setdefault((name, tree), []).append(rate)
                    cpus.setdefault((name, tree), []).append(cpu)
                    print(f"rep {rep}: {name:<24} {tree:<6} {rate:8.0f} steps/s, "
                          f"{cpu:7.2f} CPU s", flush=True)  # fmt: skip
    print(f"\nmedians of {args.reps} run(s); before = {args.ref}, after = this tree")
    report(runs, rates, args, "steps/s (wall-clock, training only)")
    report(runs, cpus, args, "CPU seconds of the whole process (startup included)")


def report(runs: dict, values: dict[tuple[str, str], list[float]], args, what: str) -> None:
    """Before, after and their ratio per run; for cartpole ``F`` and ``u`` per tree (from
    steps/s, or from CPU seconds: their slope against the block count)."""
    medians = {key: statistics.median(v) for key, v in values.items()}
    cpu = what.startswith("CPU")
    print(f"\n{what}")
    ratio = "before/after" if cpu else "after/before"  # (the speed-up either way)
    print(f"  {'setting':<24} {'before':>9} {'after':>9} {ratio:>13}")
    for name in runs:
        b, a = medians[(name, "before")], medians[(name, "after")]
        print(f"  {name:<24} {b:9.1f} {a:9.1f} {(b / a if cpu else a / b):13.2f}")
    if any(name.startswith("cartpole") for name in runs):
        for tree in ("before", "after"):
            cart = {n: medians[(n, tree)] for n in runs if n.startswith("cartpole")}
            if cpu:  # seconds -> the "rate" fixed_cost takes: steps / seconds
                cart = {n: args.cartpole_steps / seconds for n, seconds in cart.items()}
            f, u = fixed_cost(cart, args.cartpole_steps)
            print(f"  cartpole {tree}: fixed cost per block F = {f:.3f} ms; "
                  f"update u = {u:.3f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
