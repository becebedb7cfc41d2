"""The discrete policy-gradient source's bandit experiment, from Python, with a plot.

A four-armed Gaussian bandit (shared std 1), a policy of two hidden layers of 5
ReLUs and a softmax over the arms that starts uniform, Adam at 0.001, one REINFORCE
update per pull with the raw reward as the weight of ``-log pi(a)``: what
``rlkit train reinforce --env rlkit/MultiArmedBandit-v0`` runs. The source pulls
10,000 times and shows the arm probabilities as a bar chart every 100 pulls; this
script records them every ``--every`` pulls and draws them over training (lines)
next to the final bar chart, into a PNG.

    python examples/bandit.py                                   # -> bandit_probabilities.png
    python examples/bandit.py --means 1.0,0.9,0.9,1.0 --seed 3  # the source's own arms
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import rlkit  # noqa: E402
from rlkit.envs.bandit import DEFAULT_ARM_MEANS, ENV_ID, register_envs  # noqa: E402


def run(
    means: list[float], std: float, pulls: int, seed: int, every: int
) -> tuple[object, np.ndarray, np.ndarray]:
    """Train on the bandit; returns the agent, the pull counts and ``[K, arms]`` probabilities."""
    register_envs()
    env = gym.make(ENV_ID, arm_means=means, std=std)
    agent = rlkit.agents.Reinforce.from_env(env, seed=seed)  # the bandit preset, automatically
    obs = np.ones(1, np.float32)
    steps, probs = [0], [agent.action_probabilities(obs)]

    def record(step, info, history):
        if step % every == 0:
            steps.append(step)
            probs.append(agent.action_probabilities(obs))

    rlkit.train(agent, env, steps=pulls, seed=seed, callback=record)
    print(agent.report(env))
    return agent, np.array(steps), np.array(probs)


def plot(means: list[float], steps: np.ndarray, probs: np.ndarray, output: str) -> None:
    """Arm probabilities over training (lines) and at the end (bars, as the source draws)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arms = [str(i) for i in range(len(means))]  # arm = action index, as in the CLI's report
    fig, (curve, bars) = plt.subplots(1, 2, figsize=(11, 4), width_ratios=[2, 1])
    for i, label in enumerate(arms):
        curve.plot(steps, probs[:, i], label=f"arm {label} (mean {means[i]:g})")
    curve.set_xlabel("Episode (pull)")
    curve.set_ylabel("Probability action")
    curve.set_ylim(0, 1)
    curve.legend(loc="best")
    curve.set_title("arm probabilities during training")
    bars.bar(arms, probs[-1], color=[f"C{i}" for i in range(len(arms))])
    bars.set_xlabel("Arm")
    bars.set_ylabel("Probability action")
    bars.set_ylim(0, 1)
    bars.set_title(f"after {steps[-1]} pulls")
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    print(f"saved {output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--means", default=",".join(str(m) for m in DEFAULT_ARM_MEANS),
                        help="arm means, comma-separated [default: the env's]")  # fmt: skip
    parser.add_argument("--std", type=float, default=1.0, help="shared reward std")
    parser.add_argument("--pulls", type=int, default=10_000, help="pulls (= episodes)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--every", type=int, default=100, help="pulls between recordings")
    parser.add_argument("-o", "--output", default="bandit_probabilities.png")
    args = parser.parse_args()
    means = [float(m) for m in args.means.split(",")]
    _, steps, probs = run(means, args.std, args.pulls, args.seed, args.every)
    plot(means, steps, probs, args.output)


if __name__ == "__main__":
    main()
