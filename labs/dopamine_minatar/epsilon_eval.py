"""A run's saved model played at several evaluation epsilons, with what its actions were.

Why: a policy that scores well while it trains (epsilon 0.01) can score near zero when it is
evaluated almost greedily (epsilon 0.001), if its greedy action loops (on Freeway: waiting
forever at the kerb). This plays the same model at each epsilon of ``--epsilons`` over the
same episode seeds and prints, per epsilon, the mean and standard deviation of the return,
each action's share of the steps and the longest stretch of steps without a reward (a
stuck policy's stretch is the episode's length).

    python labs/dopamine_minatar/epsilon_eval.py RUN_DIR [--best] [--env MinAtar/Freeway-v0] \\
        [--episodes 10] [--epsilons 0 0.001 0.01 0.05]

``--env`` defaults to the run's own; a run on a TensorFlow twin (``rlkit/MinAtar-<Game>-v0``)
plays fastest on minatar's own id (the same game step for step: docs/tf-envs.md).
"""

from __future__ import annotations

import argparse
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass
class Play:
    """What one epsilon's episodes did: returns, action counts, longest rewardless stretch."""

    epsilon: float
    returns: list[float]
    action_counts: np.ndarray
    longest_without_reward: int

    def row(self) -> str:
        shares = self.action_counts / max(1, self.action_counts.sum())
        actions = " ".join(f"{s:.2f}" for s in shares)
        return (f"| {self.epsilon:g} | {np.mean(self.returns):.2f} ± {np.std(self.returns):.2f} "
                f"| {min(self.returns):g} / {max(self.returns):g} | {actions} "
                f"| {self.longest_without_reward:,} |")  # fmt: skip


def longest_stretch(rewards: list[float]) -> int:
    """The longest run of consecutive zero rewards in ``rewards``."""
    longest = current = 0
    for r in rewards:
        current = 0 if r != 0 else current + 1
        longest = max(longest, current)
    return longest


def play(agent, env, epsilon: float, episodes: int, seed: int, num_actions: int) -> Play:
    """``episodes`` episodes at ``epsilon`` (the agent's own evaluation rule, its
    ``eval_epsilon`` set to it), episode i reset with ``seed + i``."""
    agent.acting.eval_epsilon = epsilon
    agent.acting.eval_rng = np.random.default_rng(seed)
    counts = np.zeros(num_actions, np.int64)
    returns, longest = [], 0
    for i in range(episodes):
        obs, _ = env.reset(seed=seed + i)
        rewards, done = [], False
        while not done:
            action = agent.act(obs, explore=False)
            counts[agent.stored_action(action)] += 1  # the action's index from 0
            obs, reward, terminated, truncated, _ = env.step(action)
            rewards.append(float(reward))
            done = terminated or truncated
        returns.append(sum(rewards))
        longest = max(longest, longest_stretch(rewards))
    return Play(epsilon, returns, counts, longest)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--best", action="store_true", help="the best model, not the final")
    parser.add_argument("--model", type=Path, help="a model folder of RUN (e.g. a checkpoint's)")
    parser.add_argument("--env", help="environment id [default: the run's]")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.0, 0.001, 0.01, 0.05])
    args = parser.parse_args(argv)

    import rlkit
    from rlkit.envs.make import make_env

    env_id = args.env or tomllib.loads((args.run / "config.toml").read_text())["run"]["env"]
    env = make_env(env_id, training=False)
    model = args.model or args.run / ("best" if args.best else "model")
    agent = rlkit.load(model)
    last_seed = args.seed + args.episodes - 1
    print(f"{args.run.name}: {model.relative_to(args.run)} on {env_id}, "
          f"{args.episodes} episodes per epsilon, seeds {args.seed}..{last_seed}")  # fmt: skip
    print("| epsilon | return | min / max | action shares | longest stretch without reward |")
    print("|---|---|---|---|---|")
    for epsilon in args.epsilons:
        print(play(agent, env, epsilon, args.episodes, args.seed, agent.num_actions).row(),
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
