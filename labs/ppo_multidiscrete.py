"""PPO and A2C with MultiDiscrete actions (issue 53), two checks.

1. **The formulas against SB3's.** rlkit's per-dimension log-probability and entropy
   (:func:`rlkit.learn.losses.multi_categorical_log_prob`, ``multi_categorical_entropy``) and
   their gradients at the logits, against SB3's ``MultiCategoricalDistribution`` (torch's
   ``Categorical`` per dimension over ``torch.split(logits, nvec)``, log-probabilities and
   entropies summed: what CleanRL's ``ppo_multidiscrete.py`` does too, masks aside), on the
   same seeded logits and actions, SB3 in a child process under a Python that has it
   (``--sb3-python``, default :data:`SB3_PYTHON`), float64 on both sides.
2. **Learning** a small MultiDiscrete task in the Python loop: :class:`Match` (each step
   shows one target per dimension; the reward is the share of dimensions matched; 8 steps an
   episode), PPO and A2C, a few seeds, the greedy return of the final policy.

```bash
python -m labs.ppo_multidiscrete formulas
python -m labs.ppo_multidiscrete learning --seeds 0 1 2 --steps 8000
```
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium import spaces

#: a Python with stable-baselines3 and torch (the peers' own venv: never rlkit's dependency)
SB3_PYTHON = "/work/venv-sb3/bin/python"

SB3_SIDE = """
import sys
import numpy as np
import torch
from stable_baselines3.common.distributions import MultiCategoricalDistribution

data = np.load(sys.argv[1])
logits = torch.tensor(data["logits"], dtype=torch.float64, requires_grad=True)
actions = torch.tensor(data["actions"])
dist = MultiCategoricalDistribution([int(n) for n in data["nvec"]]).proba_distribution(logits)
log_prob, entropy = dist.log_prob(actions), dist.entropy()
grad_log_prob, = torch.autograd.grad(log_prob.sum(), logits, retain_graph=True)
grad_entropy, = torch.autograd.grad(entropy.sum(), logits)
np.savez(sys.argv[2], log_prob=log_prob.detach().numpy(), entropy=entropy.detach().numpy(),
         grad_log_prob=grad_log_prob.numpy(), grad_entropy=grad_entropy.numpy())
"""


def rlkit_side(logits: np.ndarray, actions: np.ndarray, nvec: tuple[int, ...]) -> dict:
    """rlkit's log-probability, entropy and their gradients (summed over the batch)."""
    import tensorflow as tf

    from rlkit.learn.losses import multi_categorical_entropy, multi_categorical_log_prob

    x = tf.Variable(logits)
    with tf.GradientTape(persistent=True) as tape:
        log_prob = multi_categorical_log_prob(x, tf.constant(actions), nvec)
        entropy = multi_categorical_entropy(x, nvec)
        totals = tf.reduce_sum(log_prob), tf.reduce_sum(entropy)
    return {"log_prob": log_prob.numpy(), "entropy": entropy.numpy(),
            "grad_log_prob": tape.gradient(totals[0], x).numpy(),
            "grad_entropy": tape.gradient(totals[1], x).numpy()}  # fmt: skip


def formulas(nvec=(3, 4, 2, 5), rows: int = 256, seed: int = 0, python: str = SB3_PYTHON,
             scale: float = 3.0) -> dict[str, float]:  # fmt: skip
    """The largest absolute difference of each quantity, rlkit's against SB3's, on ``rows``
    seeded rows of logits ``N(0, scale^2)`` and uniform actions."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, scale, size=(rows, sum(nvec)))
    actions = np.stack([rng.integers(0, n, rows) for n in nvec], axis=-1)
    with tempfile.TemporaryDirectory() as folder:
        given, got = Path(folder) / "in.npz", Path(folder) / "out.npz"
        np.savez(given, logits=logits, actions=actions, nvec=np.array(nvec))
        subprocess.run([python, "-c", SB3_SIDE, str(given), str(got)], check=True)
        theirs = dict(np.load(got))
    mine = rlkit_side(logits, actions.astype(np.int32), tuple(nvec))
    out = {k: float(np.abs(mine[k] - theirs[k]).max()) for k in mine}
    out["largest |log_prob|"] = float(np.abs(theirs["log_prob"]).max())
    return out


class Match(gym.Env):
    """Each step shows one target per dimension (one-hot, a block per dimension); the reward
    is the share of the dimensions the action matched; 8 steps an episode (truncated).
    Random play returns ``8 mean(1 / nvec)``, a perfect policy 8."""

    def __init__(self, nvec=(3, 4), start=(1, -2)):
        self.nvec, self.start = np.array(nvec), np.array(start)
        self.action_space = spaces.MultiDiscrete(self.nvec, start=self.start)
        self.observation_space = spaces.Box(0.0, 1.0, (int(self.nvec.sum()),), np.float32)
        self._offsets = np.concatenate([[0], np.cumsum(self.nvec)[:-1]])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self._draw()
        return self._obs(), {}

    def _draw(self):
        self.target = np.array([self.np_random.integers(n) for n in self.nvec])

    def _obs(self):
        obs = np.zeros(int(self.nvec.sum()), np.float32)
        obs[self._offsets + self.target] = 1.0
        return obs

    def step(self, action):
        reward = float(np.mean(np.asarray(action) - self.start == self.target))
        self.t += 1
        self._draw()
        return self._obs(), reward, False, self.t >= 8, {}


ENV_ID = "labs/Match-v0"
if ENV_ID not in gym.registry:
    gym.register(ENV_ID, entry_point=Match)

#: the settings each agent learns Match with (8 envs)
SETTINGS = {
    "ppo": {"n_steps": 16, "batch_size": 64, "n_epochs": 4, "learning_rate": 3e-3},
    "a2c": {"n_steps": 8, "learning_rate": 3e-3},
}


def learning(agent_name: str, seed: int, steps: int, episodes: int = 20) -> dict[str, float]:
    """Train ``agent_name`` on Match (8 envs) for ``steps``; the final greedy return."""
    import rlkit

    env = gym.vector.SyncVectorEnv([Match for _ in range(8)],
                                   autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)  # fmt: skip
    agent = getattr(rlkit.agents, agent_name.upper()).from_env(env, seed=seed,
                                                               **SETTINGS[agent_name])  # fmt: skip
    start = time.perf_counter()
    rlkit.train(agent, env, steps=steps)
    seconds = time.perf_counter() - start
    mean, std = rlkit.evaluate(agent, ENV_ID, episodes=episodes, seed=100)
    return {"greedy mean": mean, "greedy std": std, "seconds": seconds,
            "steps/s": steps / seconds}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["formulas", "learning"])
    parser.add_argument("--sb3-python", default=SB3_PYTHON)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=8000)
    args = parser.parse_args(argv)
    if args.part == "formulas":
        print(json.dumps(formulas(python=args.sb3_python), indent=2))
        return
    import os

    print(f"load average {os.getloadavg()[0]:.1f}; random play returns "
          f"{8 * np.mean(1 / np.array([3, 4])):.2f}, a perfect policy 8.0")  # fmt: skip
    for name in ("ppo", "a2c"):
        for seed in args.seeds:
            row = learning(name, seed, args.steps)
            print(name, seed, json.dumps({k: round(v, 3) for k, v in row.items()}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
