"""Does `rlkit train ddpg --env Pendulum-v1` (or sac: --agent sac) learn the swing-up for most
seeds?

Runs what the CLI runs (rlkit.run.experiment): DDPG with the built-in defaults (plus any
--set overrides) for 20,000 steps on each seed, evaluates the greedy policy for 10
episodes (mean >= -200 counts as solved; the CLI's final evaluation, reset seed +
2,000,000) and prints a table and the number of seeds solved. The target: at least 4 of
5 seeds. "50-ep mean" is the same policy on 50 other random starts: Pendulum's returns depend
strongly on the start, so it tells policy quality apart from the luck of 10 starts.

    python -m benchmarks.ddpg_pendulum_seeds                       # seeds 0-4, 1 process
    python -m benchmarks.ddpg_pendulum_seeds --set td3=true --eval-every 2000
    python -m benchmarks.ddpg_pendulum_seeds --env MountainCarContinuous-v0 --steps 50000
    python -m benchmarks.ddpg_pendulum_seeds --agent sac --seeds 0-2   # rl-zoo's SAC preset
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

from benchmarks.common import parse_seeds, run_as_cli

SOLVED = -200.0


def run_seed(
    seed: int, env_id: str, steps: int, overrides: dict[str, str], eval_every: int,
    agent: str = "ddpg",
) -> dict:  # fmt: skip
    result = run_as_cli(
        agent, env_id, seed, overrides, steps=steps, eval_every=eval_every, eval_episodes=10,
        wide_episodes=50,
    )  # fmt: skip
    result["mean"], result["std"] = result["final"]
    result["wide"] = result["wide"][0]
    result["curve"] = [mean for _, mean, _ in result["evaluations"]]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="ddpg", help="ddpg (td3: --set td3=true) or sac")
    parser.add_argument("--env", default="Pendulum-v1")
    parser.add_argument("--seeds", default="0-4", help="e.g. 0-4 or 0,3,7")
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--workers", type=int, default=1, help="processes (each uses the cores TF finds)"
    )
    parser.add_argument(
        "--eval-every", type=int, default=0, help="the CLI's --eval-every: a learning curve too"
    )
    parser.add_argument("--solved", type=float, default=SOLVED, help="greedy mean that counts")
    args = parser.parse_args()
    overrides = dict(pair.split("=", 1) for pair in args.set)
    seeds = parse_seeds(args.seeds)
    print(
        f"{args.agent.upper()} {args.env}, {args.steps} steps, "
        f"overrides {overrides or 'none'}, seeds {seeds}"
    )
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [
            pool.submit(run_seed, s, args.env, args.steps, overrides, args.eval_every, args.agent)
            for s in seeds
        ]
        results = [f.result() for f in futures]
    print(
        f"{'seed':>4} {'eval mean':>10} {'std':>7} {'50-ep mean':>10} {'steps/s':>8} "
        f"{'seconds':>8}  curve"
    )
    for r in results:
        curve = " ".join(f"{c:.0f}" for c in r["curve"])
        print(
            f"{r['seed']:>4} {r['mean']:>10.1f} {r['std']:>7.1f} {r['wide']:>10.1f} "
            f"{r['sps']:>8.0f} {r['seconds']:>8.1f}  {curve}"
        )
    solved = sum(r["mean"] >= args.solved for r in results)
    print(
        f"solved (greedy mean >= {args.solved:.0f} over 10 episodes): {solved}/{len(results)} seeds"
    )


if __name__ == "__main__":
    main()
