"""Does `rlkit train reinforce --env CartPole-v1` solve CartPole within 1,000 episodes?

Runs what the CLI runs (rlkit.run.experiment), on each seed: REINFORCE with the built-in
defaults (plus any --set overrides) for 1,000 training episodes, then evaluates the final
model on 10 fresh greedy episodes seeded as the CLI's final evaluation is (seed +
2,000,000, never used in training); mean >= 475 counts as solved. The target: at least 4
of 5 seeds. ``--curve-every N`` also prints the CLI's greedy evaluations (10 episodes
every N steps, as ``--eval-every N``; they do not change training) and the first step
where they reached 475.

    python -m benchmarks.reinforce_cartpole_seeds                  # seeds 0-4, 1 process
    python -m benchmarks.reinforce_cartpole_seeds --seeds 0-9 --set baseline=false
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

from benchmarks.common import parse_seeds, run_as_cli

SOLVED = 475.0


def run_seed(
    seed: int, episodes: int, steps: int, overrides: dict[str, str], curve_every: int
) -> dict:
    result = run_as_cli(
        "reinforce", "CartPole-v1", seed, overrides, steps=steps, episodes=episodes,
        eval_every=curve_every, eval_episodes=10,
    )  # fmt: skip
    result["curve"] = [(step, mean) for step, mean, _ in result["evaluations"]]
    result["first"] = next((step for step, r in result["curve"] if r >= SOLVED), None)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-4", help="e.g. 0-4 or 0,3,7")
    parser.add_argument("--episodes", type=int, default=1_000)
    parser.add_argument("--steps", type=int, default=1_000_000, help="cap on environment steps")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--curve-every", type=int, default=10_000, help="steps per curve point")
    args = parser.parse_args()
    overrides = dict(pair.split("=", 1) for pair in args.set)
    seeds = parse_seeds(args.seeds)
    print(
        f"REINFORCE CartPole-v1, {args.episodes} episodes (at most {args.steps} steps), "
        f"overrides {overrides or 'none'}, seeds {seeds}"
    )
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [
            pool.submit(run_seed, s, args.episodes, args.steps, overrides, args.curve_every)
            for s in seeds
        ]
        results = [f.result() for f in futures]
    print(f"{'seed':>4} {'final model':>12} {'episodes':>8} {'steps':>8} {'steps/s':>8} "
          f"{'seconds':>8} {'475 at':>9}  greedy curve")  # fmt: skip
    for r in results:
        curve = " ".join(f"{c:.0f}" for _, c in r["curve"])
        final = f"{r['final'][0]:.1f}±{r['final'][1]:.1f}"
        first = "-" if r["first"] is None else str(r["first"])
        print(f"{r['seed']:>4} {final:>12} {r['episodes']:>8} {r['steps']:>8} {r['sps']:>8.0f} "
              f"{r['seconds']:>8.1f} {first:>9}  {curve}")  # fmt: skip
    solved = sum(r["final"][0] >= SOLVED for r in results)
    print(
        f"final model solved (10 fresh greedy episodes, mean >= {SOLVED:.0f}): "
        f"{solved}/{len(results)} seeds"
    )


if __name__ == "__main__":
    main()
