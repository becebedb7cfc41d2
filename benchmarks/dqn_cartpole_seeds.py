"""Does `rlkit train dqn --env CartPole-v1` solve CartPole for most seeds?

Trains DQN with the built-in defaults (plus any --set overrides) for 50,000 steps
on each seed, evaluates the greedy policy for 10 episodes (mean >= 475 counts as
solved) and prints a table and the number of seeds solved. The target: at least
4 of 5 seeds.

    python benchmarks/dqn_cartpole_seeds.py                  # seeds 0-4, 2 processes
    python benchmarks/dqn_cartpole_seeds.py --seeds 0-9 --set learning_rate=1e-3
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

SOLVED = 475.0


def run_seed(seed: int, steps: int, overrides: dict[str, str], eval_every: int) -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import gymnasium as gym

    import rlkit

    env = gym.make("CartPole-v1")
    eval_env = gym.make("CartPole-v1")
    agent = rlkit.agents.DQN.from_env(env, seed=seed, **overrides)
    curve = []

    def callback(step, info, history):
        if eval_every and step % eval_every == 0:
            curve.append(rlkit.evaluate(agent, eval_env, episodes=5, seed=10_000 + step)[0])

    start = time.perf_counter()
    history = rlkit.train(agent, env, steps=steps, callback=callback)
    mean, std = rlkit.evaluate(agent, eval_env, episodes=10, seed=seed + 1_000_000)
    return {
        "seed": seed,
        "mean": mean,
        "std": std,
        "sps": history.steps_per_second,
        "seconds": time.perf_counter() - start,
        "curve": curve,
    }


def parse_seeds(text: str) -> list[int]:
    if "-" in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(s) for s in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-4", help="e.g. 0-4 or 0,3,7")
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--eval-every", type=int, default=0, help="print a learning curve too")
    args = parser.parse_args()
    overrides = dict(pair.split("=", 1) for pair in args.set)
    seeds = parse_seeds(args.seeds)
    print(f"DQN CartPole-v1, {args.steps} steps, overrides {overrides or 'none'}, seeds {seeds}")
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [pool.submit(run_seed, s, args.steps, overrides, args.eval_every) for s in seeds]
        results = [f.result() for f in futures]
    print(f"{'seed':>4} {'eval mean':>10} {'std':>7} {'steps/s':>8} {'seconds':>8}  curve")
    for r in results:
        curve = " ".join(f"{c:.0f}" for c in r["curve"])
        print(
            f"{r['seed']:>4} {r['mean']:>10.1f} {r['std']:>7.1f} {r['sps']:>8.0f} "
            f"{r['seconds']:>8.1f}  {curve}"
        )
    solved = sum(r["mean"] >= SOLVED for r in results)
    print(f"solved (greedy mean >= {SOLVED:.0f} over 10 episodes): {solved}/{len(results)} seeds")


if __name__ == "__main__":
    main()
