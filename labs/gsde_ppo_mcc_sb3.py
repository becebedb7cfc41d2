"""SB3's own PPO with gSDE on rl-zoo's MountainCarContinuous-v0 entry, seed by seed: is the
zoo's one run (88.3 ± 2.6) typical, or do some seeds fail as rlkit's do? (issue 53)

The zoo's ``hyperparams/ppo.yml`` entry (commit 22e3ff2): ``normalize: true`` (VecNormalize
with gamma 0.9999), 1 env, 20,000 steps, ``batch_size`` 256, ``n_steps`` 8, gamma 0.9999,
learning rate 7.77e-5, ``ent_coef`` 0.00429, clip range 0.1, 10 epochs, ``gae_lambda`` 0.9,
``max_grad_norm`` 5, ``vf_coef`` 0.19, ``use_sde`` True, ``log_std_init`` -3.29,
``ortho_init`` False. Each seed's final model is evaluated on ``--episodes`` deterministic
episodes (observations normalised with the run's statistics, frozen), as rl-zoo evaluates.
Needs stable-baselines3 and torch (the ``bench`` extra):

    python -m labs.gsde_ppo_mcc_sb3 --seeds 0,1,2
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecNormalize


def run(seed: int, episodes: int) -> tuple[float, float, float]:
    env = VecNormalize(make_vec_env("MountainCarContinuous-v0", n_envs=1, seed=seed),
                       gamma=0.9999)  # fmt: skip
    model = PPO("MlpPolicy", env, batch_size=256, n_steps=8, gamma=0.9999,
                learning_rate=7.77e-5, ent_coef=0.00429, clip_range=0.1, n_epochs=10,
                gae_lambda=0.9, max_grad_norm=5, vf_coef=0.19, use_sde=True,
                policy_kwargs=dict(log_std_init=-3.29, ortho_init=False), seed=seed,
                verbose=0)  # fmt: skip
    start = time.perf_counter()
    model.learn(20_000)
    seconds = time.perf_counter() - start
    env.training = False
    test = gym.make("MountainCarContinuous-v0")
    returns = []
    for k in range(episodes):
        obs, _ = test.reset(seed=2_000_000 + seed * 1000 + k)
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(env.normalize_obs(obs[None]), deterministic=True)
            obs, reward, terminated, truncated, _ = test.step(action[0])
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return float(np.mean(returns)), float(np.std(returns)), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--episodes", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for seed in (int(s) for s in args.seeds.split(",")):
        mean, std, seconds = run(seed, args.episodes)
        print(f"seed {seed}: final model {mean:.1f} ± {std:.1f} over {args.episodes} "
              f"deterministic episodes ({seconds:.0f} s)", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
