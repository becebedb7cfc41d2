"""Does `rlkit train dqn --env CartPole-v1` solve CartPole for most seeds?

Runs what the CLI runs by default (rlkit.run.experiment), on each seed: DQN with the defaults
(plus any --set overrides) for 50,000 steps, a 10-episode greedy evaluation every
2,500 steps that keeps the best model (ties go to the later one). Then both the
final model and the best model are evaluated on 10 fresh greedy episodes (seeds
never used during training); mean >= 475 counts as solved. The target: at least
4 of 5 seeds.

    python -m benchmarks.dqn_cartpole_seeds                  # seeds 0-4, 2 processes
    python -m benchmarks.dqn_cartpole_seeds --seeds 0-9 --set learning_rate=1e-3
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

from benchmarks.common import parse_seeds, run_as_cli

SOLVED = 475.0


def run_seed(seed: int, steps: int, overrides: dict[str, str], eval_every: int) -> dict:
    result = run_as_cli(
        "dqn", "CartPole-v1", seed, overrides, steps=steps, eval_every=eval_every,
        eval_episodes=10,
    )  # fmt: skip
    result["best"] = result["best"] or result["final"]
    result["curve"] = [mean for _, mean, _ in result["evaluations"]]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-4", help="e.g. 0-4 or 0,3,7")
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--eval-every", type=int, default=2_500)
    args = parser.parse_args()
    overrides = dict(pair.split("=", 1) for pair in args.set)
    seeds = parse_seeds(args.seeds)
    print(f"DQN CartPole-v1, {args.steps} steps, overrides {overrides or 'none'}, seeds {seeds}")
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [pool.submit(run_seed, s, args.steps, overrides, args.eval_every) for s in seeds]
        results = [f.result() for f in futures]
    print(f"{'seed':>4} {'final model':>14} {'best model':>14} {'best@':>6} {'steps/s':>8} "
          f"{'seconds':>8}  evaluations during training")  # fmt: skip
    for r in results:
        curve = " ".join(f"{c:.0f}" for c in r["curve"])
        final = f"{r['final'][0]:.1f}±{r['final'][1]:.1f}"
        best = f"{r['best'][0]:.1f}±{r['best'][1]:.1f}"
        print(f"{r['seed']:>4} {final:>14} {best:>14} {r['best_step'] or '-':>6} "
              f"{r['sps']:>8.0f} {r['seconds']:>8.1f}  {curve}")  # fmt: skip
    for kind in ("final", "best"):
        solved = sum(r[kind][0] >= SOLVED for r in results)
        print(f"{kind} model solved (10 fresh greedy episodes, mean >= {SOLVED:.0f}): "
              f"{solved}/{len(results)} seeds")  # fmt: skip


if __name__ == "__main__":
    main()
