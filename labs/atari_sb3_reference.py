"""Stable-Baselines3's DQN under Dopamine's Atari protocol: an independent reference run.

rlkit's DQN under Dopamine's protocol (labs/atari_dopamine.py) trains below
Dopamine's published Breakout curve (docs/atari.md). This trains SB3's ``CnnPolicy`` DQN
(PyTorch, written by others) on the very same environment (rlkit.envs.atari with Dopamine's
settings: whole games, no no-op starts, sticky actions 0.25, rewards clipped to [-1, 1])
with Dopamine's ``dqn.gin`` schedule and update: epsilon 1 -> 0.01 over 250k agent steps
after 20k, an update every 4 steps from 20k, target copy every 8k, batch 32, gamma 0.99,
Huber loss averaged over the batch (SB3's own), no gradient clipping, and centred RMSProp
2.5e-4 (rho 0.95) with epsilon 1e-5 *inside* the square root as TensorFlow's (PyTorch's
adds it outside; :class:`CentredRMSProp` below). If SB3 lands where rlkit does, the gap
lies in the environment, not in rlkit's agent; if it lands on Dopamine's curve, in rlkit.
Result (2026-11-23, seed 0, docs/atari.md): 1.6 in iteration 0 and 2.4 in iteration 1
(rlkit 1.7 and 2.2, Dopamine 1.6 and 3.1): with rlkit. ``labs/ale_versions.py`` then
found the emulator to be the one Dopamine's baseline ran on: the gap lies in neither rlkit's
agent nor the emulator.

SB3 stores whole frame stacks (``optimize_memory_usage`` keeps one copy): the replay holds
``--buffer`` transitions at 28 KB each (500k: 14.1 GB), so a run to 500k steps with
``--buffer 500000`` never drops a transition, as Dopamine's 1M replay does not by then.

Each whole game's (unclipped) score is written to ``OUT/metrics.csv`` as a ``game`` row
as it ends, so ``benchmarks/atari_curve.py OUT --lives 1`` prints the run per Dopamine
iteration next to rlkit's runs and Dopamine's. Ctrl-C stops it; the rows written stay.

    python -m labs.atari_sb3_reference --steps 500000 --out runs/atari-sb3-reference
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

from labs.atari_dopamine import DOPAMINE_ENV, DOPAMINE_SCHEDULE


class GameLog(gym.Wrapper):
    """Appends ``game,STEP,N,SCORE,LENGTH,`` to a metrics.csv (rlkit's columns) at the end
    of each episode (a whole game under Dopamine's protocol); scores are unclipped."""

    def __init__(self, env: gym.Env, path: Path) -> None:
        super().__init__(env)
        self._file = open(path, "w", newline="")  # noqa: SIM115 (open for the env's life)
        self._csv = csv.writer(self._file)
        self._csv.writerow(["kind", "step", "episode", "return", "length", "return_std"])
        self.steps = self.games = self._score = self._length = 0

    def reset(self, **kwargs):
        self._score = self._length = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        self._score += float(reward)
        self._length += 1
        if terminated or truncated:
            self.games += 1
            self._csv.writerow(["game", self.steps, self.games, self._score, self._length, ""])
            self._file.flush()
        return obs, reward, terminated, truncated, info


def dopamine_epsilon(step: int) -> float:
    """Dopamine's ``linearly_decaying_epsilon(250k, step, 20k, 0.01)``: 1 until 20k, then
    linear to 0.01 at 270k."""
    period = DOPAMINE_SCHEDULE["eps_anneal_steps"]
    warmup = DOPAMINE_SCHEDULE["learning_starts"]
    final = DOPAMINE_SCHEDULE["eps_end"]
    bonus = (1.0 - final) * (period - (step - warmup)) / period
    return final + float(np.clip(bonus, 0.0, 1.0 - final))


def centred_rmsprop_class():
    """TensorFlow's centred RMSProp (epsilon inside the root, mean square from 0) as a
    torch optimizer: ``w -= lr g / sqrt(E[g^2] - E[g]^2 + eps)``."""
    import torch

    class CentredRMSProp(torch.optim.Optimizer):
        def __init__(self, params, lr: float, rho: float = 0.95, eps: float = 1e-5) -> None:
            super().__init__(params, {"lr": lr, "rho": rho, "eps": eps})

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["ms"] = torch.zeros_like(p)
                        state["mg"] = torch.zeros_like(p)
                    ms, mg, rho = state["ms"], state["mg"], group["rho"]
                    ms.mul_(rho).addcmul_(p.grad, p.grad, value=1 - rho)
                    mg.mul_(rho).add_(p.grad, alpha=1 - rho)
                    denominator = (ms - mg * mg + group["eps"]).sqrt_()
                    p.addcdiv_(p.grad, denominator, value=-group["lr"])

    return CentredRMSProp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="ALE/Breakout-v5")
    parser.add_argument("--steps", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--buffer", type=int, default=500_000)
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--out", type=Path, default=Path("runs/atari-sb3-reference"))
    args = parser.parse_args()

    import torch
    from gymnasium.wrappers import ClipReward
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback

    from rlkit.envs.atari import make_atari

    torch.set_num_threads(args.threads)
    run_dir = args.out / f"sb3-dqn-{args.env.replace('/', '_')}-{args.seed}-" \
        f"{time.strftime('%Y%m%d-%H%M%S')}"  # fmt: skip
    run_dir.mkdir(parents=True)
    log = GameLog(make_atari(args.env, training=True, **DOPAMINE_ENV), run_dir / "metrics.csv")
    env = ClipReward(log, -1.0, 1.0)
    model = DQN(
        "CnnPolicy", env, buffer_size=args.buffer, optimize_memory_usage=True,
        replay_buffer_kwargs={"handle_timeout_termination": False},
        learning_starts=DOPAMINE_SCHEDULE["learning_starts"], batch_size=32, train_freq=4,
        gradient_steps=1, target_update_interval=DOPAMINE_SCHEDULE["target_update"],
        learning_rate=2.5e-4, gamma=0.99, max_grad_norm=math.inf, seed=args.seed,
        device="cpu", policy_kwargs={"optimizer_class": centred_rmsprop_class(),
                                     "optimizer_kwargs": {"rho": 0.95, "eps": 1e-5}},
    )  # fmt: skip
    model.exploration_schedule = lambda remaining: dopamine_epsilon(
        round((1.0 - remaining) * args.steps)
    )
    (run_dir / "reference.json").write_text(json.dumps({
        "library": "stable-baselines3", "env": args.env, "steps": args.steps,
        "seed": args.seed, "buffer": args.buffer, "protocol": DOPAMINE_ENV,
        "schedule": DOPAMINE_SCHEDULE, "optimizer": "centred RMSProp 2.5e-4, 0.95, 1e-5 inside",
    }, indent=2))  # fmt: skip

    class Progress(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps % 25_000 == 0:
                print(f"{self.num_timesteps} steps, {log.games} games, "
                      f"epsilon {model.exploration_rate:.3f}", flush=True)  # fmt: skip
            return True

    print(f"training SB3 DQN (Dopamine's protocol and schedule) -> {run_dir}", flush=True)
    start = time.perf_counter()
    try:
        model.learn(args.steps, callback=Progress())
    except KeyboardInterrupt:
        print("stopped", flush=True)
    seconds = time.perf_counter() - start
    print(f"{log.steps} steps in {seconds:.0f} s ({log.steps / seconds:.0f}/s), {log.games} games")


if __name__ == "__main__":
    main()
