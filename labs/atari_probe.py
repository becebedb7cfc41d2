"""What a saved Atari DQN's greedy policy does: which actions it picks, at the start of a
life and overall, its Q-values and the gap between its best and worst action.

Plays ``--steps`` agent steps at epsilon ``--epsilon`` in the training environment (a lost
life ends the episode) and prints the shares, the mean Q per action and the points a life.

    python -m labs.atari_probe RUN_DIR/model --steps 3000
"""

from __future__ import annotations

import argparse

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved agent folder (RUN_DIR/model or RUN_DIR/best)")
    parser.add_argument("--env", default="ALE/Breakout-v5")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--epsilon", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()

    import rlkit

    agent = rlkit.load(args.model)
    env = rlkit.make_env(args.env, training=True)
    q_values = agent.q.policy()
    rng = np.random.default_rng(args.seed)
    obs, _ = env.reset(seed=args.seed)
    greedy, at_start, qs, points, lives, life_start = [], [], [], 0.0, 0, True
    for _ in range(args.steps):
        q = q_values(obs)
        best = int(np.argmax(q))
        greedy.append(best)
        qs.append(q)
        if life_start:
            at_start.append(best)
        action = best if rng.random() >= args.epsilon else int(rng.integers(len(q)))
        obs, reward, terminated, truncated, _ = env.step(action)
        points += float(reward)
        life_start = terminated or truncated
        if life_start:
            lives += 1
            obs, _ = env.reset()
    names = env.unwrapped.get_action_meanings()
    qs, greedy, at_start = np.array(qs), np.array(greedy), np.array(at_start)
    print("greedy action share:", {n: f"{np.mean(greedy == i):.1%}" for i, n in enumerate(names)})
    print(
        "greedy action at a life's start:",
        {n: int(np.sum(at_start == i)) for i, n in enumerate(names)},
    )
    print("mean Q:", {n: round(float(v), 3) for n, v in zip(names, qs.mean(axis=0), strict=True)},
          f"mean best-worst gap {float((qs.max(axis=1) - qs.min(axis=1)).mean()):.3f}")  # fmt: skip
    print(f"{lives} lives ended, {points / max(lives, 1):.2f} points a life")


if __name__ == "__main__":
    main()
