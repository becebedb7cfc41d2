"""rlkit against Stable-Baselines3 on identical settings, in one invocation.

Each repetition trains rlkit and SB3 one after the other (alternating which goes
first), each in a fresh subprocess, and prints wall-clock time, environment
steps per second and the final greedy evaluation return (10 episodes), then the
medians and the speed ratio. Settings are rl-zoo's:

- DQN, CartPole-v1: lr 2.3e-3, batch 64, buffer 100k, learning_starts 1000,
  gamma 0.99, target_update_interval 10, train_freq 256, gradient_steps 128,
  exploration_fraction 0.16, final eps 0.04, net 256x256, 50k steps; rlkit starts
  from PyTorch's initialisation (init="torch") as SB3 does;
- DDPG, Pendulum-v1: gamma 0.98, buffer 200k, learning_starts 10k, normal noise
  0.1, lr 1e-3, net 400x300, batch 256, tau 0.005, 20k steps, with one of two update
  schedules: ``ddpg`` updates once after every step (train_freq 1, gradient_steps 1);
  ``ddpg-episode`` is the schedule of rl-zoo's ddpg.yml (train_freq [1, "episode"],
  gradient_steps -1: after each 200-step episode, 200 updates). rlkit runs the latter
  as train_freq 200, gradient_steps 200 and learning_starts 10,001 (rlkit starts
  learning *at* that step, SB3 *after* it), so both run 50 blocks, 10,000 updates;
- SAC, Pendulum-v1 (``sac``): rl-zoo's sac.yml entry, n_timesteps 20k, learning_rate 1e-3,
  every other key SB3's SAC default (buffer 1M, batch 256, learning_starts 100, tau 0.005,
  gamma 0.99, train_freq 1, gradient_steps 1, ent_coef auto, net_arch [256, 256]); rlkit
  runs its preset ``sac/Pendulum-v1``, which is that entry key by key;
- SAC, LunarLanderContinuous-v3 (``sac-lunar``): rl-zoo's entry (preset
  ``sac/LunarLanderContinuous-v3``: lin_7.3e-4, tau 0.01, net_arch [400, 300],
  learning_starts 10k, batch 256, buffer 1M) but 20k steps instead of 500k (10k uniform
  random steps, then 10k updates): a speed check, not a learning one. The learning rate
  falls linearly to 0, over the whole run in SB3 (the zoo's ``linear_schedule``), over the
  steps after learning_starts in rlkit (its preset's reading of ``lin_``).

Needs the bench extra: pip install -e ".[bench]" (stable-baselines3, torch 2.13.0).

    python -m benchmarks.compare_sb3 --algo dqn --reps 3 --torch-threads 1,2
    python -m benchmarks.compare_sb3 --algo ddpg --reps 1 --torch-threads 2
    python -m benchmarks.compare_sb3 --algo ddpg-episode --reps 1 --torch-threads 1,2
    python -m benchmarks.compare_sb3 --algo sac --reps 1 --torch-threads 1,2
    python -m benchmarks.compare_sb3 --algo sac-lunar --reps 1 --torch-threads 1

Each run's line ends with the 1-minute load average at its end: on a machine shared with
other jobs the figures are the machine's as much as the agents' (docs/sac.md: two torch
threads on two busy cores ran SAC's update over 10x slower than one).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import time

#: each algorithm's default step count (--steps overrides it)
STEPS = {"dqn": 50_000, "ddpg": 20_000, "ddpg-episode": 20_000, "sac": 20_000,
         "sac-lunar": 20_000}  # fmt: skip
#: the SAC benchmarks' environments
SAC_ENVS = {"sac": "Pendulum-v1", "sac-lunar": "LunarLanderContinuous-v3"}


def _quiet_env() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_rlkit(algo: str, seed: int, steps: int) -> dict:
    _quiet_env()
    import gymnasium as gym

    import rlkit

    if algo == "dqn":
        env_id = "CartPole-v1"
        env = gym.make(env_id)
        agent = rlkit.agents.DQN.from_env(
            env, seed=seed, learning_rate=2.3e-3, batch_size=64, buffer_size=100_000,
            learning_starts=1000, gamma=0.99, target_update=10, train_freq=256,
            gradient_steps=128, eps_start=1.0, eps_end=0.04, eps_anneal_steps=8000,
            hidden_sizes=(256, 256), loss="huber", reduction="mean", max_grad_norm=10.0,
            double_dqn=False, learning_rate_end=-1.0, init="torch",
        )  # fmt: skip
    elif algo in SAC_ENVS:
        env_id = SAC_ENVS[algo]
        env = gym.make(env_id)
        agent = rlkit.agents.SAC.from_env(env, seed=seed, **sac_preset(env_id, steps))
    else:
        env_id = "Pendulum-v1"
        env = gym.make(env_id)
        schedule = DDPG_EPISODE_RLKIT if algo == "ddpg-episode" else {}
        agent = rlkit.agents.DDPG.from_env(env, seed=seed, **{**DDPG_RLKIT, **schedule})
    start = time.perf_counter()
    rlkit.train(agent, env, steps=steps, seed=seed)
    seconds = time.perf_counter() - start
    mean, std = rlkit.evaluate(agent, gym.make(env_id), episodes=10, seed=seed + 10_000)
    return {"seconds": seconds, "sps": steps / seconds, "eval": mean, "eval_std": std,
            "rss_mb": _peak_rss_mb(), "threads": "tf default"}  # fmt: skip


def sac_preset(env_id: str, steps: int) -> dict:
    """rlkit's shipped SAC preset for ``env_id`` as keyword arguments, its ``lin_`` schedule
    (``lr_anneal_fraction``, a share of the run the run's plan resolves) given as
    ``lr_anneal_steps``: the ``steps`` after learning_starts."""
    from rlkit.config import presets

    settings = dict(presets.lookup("sac", env_id).agent_config)
    if settings.pop("lr_anneal_fraction", 0) > 0:
        settings["lr_anneal_steps"] = max(steps - settings.get("learning_starts", 100), 1)
    return settings


# rlkit's names for rl-zoo's DDPG settings (see docs/ddpg.md)
DDPG_RLKIT = dict(
    gamma=0.98, buffer_size=200_000, learning_starts=10_000, noise="gaussian", noise_scale=0.1,
    actor_learning_rate=1e-3, critic_learning_rate=1e-3, actor_hidden_sizes=(400, 300),
    critic_hidden_sizes=(400, 300), batch_size=256, tau=0.005, train_freq=1, gradient_steps=1,
)  # fmt: skip
# rl-zoo's per-episode schedule on Pendulum's fixed 200-step episodes
DDPG_EPISODE_RLKIT = dict(train_freq=200, gradient_steps=200, learning_starts=10_001)


def run_sb3(algo: str, seed: int, steps: int, torch_threads: int) -> dict:
    _quiet_env()
    import gymnasium as gym
    import numpy as np
    import torch

    torch.set_num_threads(torch_threads)
    from stable_baselines3 import DDPG, DQN, SAC
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.noise import NormalActionNoise

    if algo == "dqn":
        env_id = "CartPole-v1"
        model = DQN(
            "MlpPolicy", gym.make(env_id), learning_rate=2.3e-3, batch_size=64,
            buffer_size=100_000, learning_starts=1000, gamma=0.99, target_update_interval=10,
            train_freq=256, gradient_steps=128, exploration_fraction=0.16,
            exploration_final_eps=0.04, policy_kwargs=dict(net_arch=[256, 256]), seed=seed,
            device="cpu",
        )  # fmt: skip
    elif algo == "sac":
        env_id = "Pendulum-v1"
        # rl-zoo: learning_rate 1e-3, every other key SB3's default
        model = SAC("MlpPolicy", gym.make(env_id), learning_rate=1e-3, seed=seed, device="cpu")
    elif algo == "sac-lunar":
        env_id = "LunarLanderContinuous-v3"

        def lin(progress_remaining: float) -> float:  # rl-zoo's linear_schedule(7.3e-4)
            return progress_remaining * 7.3e-4

        model = SAC(
            "MlpPolicy", gym.make(env_id), learning_rate=lin, batch_size=256,
            buffer_size=1_000_000, ent_coef="auto", gamma=0.99, tau=0.01, train_freq=1,
            gradient_steps=1, learning_starts=10_000,
            policy_kwargs=dict(net_arch=[400, 300]), seed=seed, device="cpu",
        )  # fmt: skip
    else:
        env_id = "Pendulum-v1"
        env = gym.make(env_id)
        noise = NormalActionNoise(np.zeros(1), 0.1 * np.ones(1))
        schedule = (
            dict(train_freq=(1, "episode"), gradient_steps=-1)
            if algo == "ddpg-episode"
            else dict(train_freq=1, gradient_steps=1)
        )
        model = DDPG(
            "MlpPolicy", env, gamma=0.98, buffer_size=200_000, learning_starts=10_000,
            action_noise=noise, learning_rate=1e-3, batch_size=256, tau=0.005,
            policy_kwargs=dict(net_arch=[400, 300]), seed=seed, device="cpu", **schedule,
        )  # fmt: skip
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    seconds = time.perf_counter() - start
    mean, std = evaluate_policy(model, gym.make(env_id), n_eval_episodes=10, deterministic=True)
    return {"seconds": seconds, "sps": steps / seconds, "eval": float(mean),
            "eval_std": float(std), "rss_mb": _peak_rss_mb(),
            "threads": f"torch {torch_threads}"}  # fmt: skip


def in_subprocess(fn, *args) -> dict:
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        return pool.apply(fn, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algo", choices=[*STEPS, "all"], default="dqn")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--torch-threads", default="1,2", help="SB3 thread settings to run")
    parser.add_argument("--steps", type=int, help="override the step count (quick checks)")
    args = parser.parse_args()
    threads = [int(t) for t in args.torch_threads.split(",")]
    algos = list(STEPS) if args.algo == "all" else [args.algo]
    import tensorflow as tf  # only to print its thread settings

    intra = tf.config.threading.get_intra_op_parallelism_threads()
    inter = tf.config.threading.get_inter_op_parallelism_threads()
    print(f"rlkit: TF intra-op threads {intra}, inter-op {inter} (0 = TF default: all "
          f"{os.cpu_count()} cores); SB3: torch threads {threads}")  # fmt: skip
    summary = {}
    for algo in algos:
        steps = args.steps or STEPS[algo]
        rows: dict[str, list[dict]] = {"rlkit": []} | {f"sb3-torch{t}": [] for t in threads}
        for rep in range(args.reps):
            order = list(rows) if rep % 2 == 0 else list(reversed(rows))
            for name in order:
                if name == "rlkit":
                    result = in_subprocess(run_rlkit, algo, rep, steps)
                else:
                    result = in_subprocess(run_sb3, algo, rep, steps, int(name[len("sb3-torch") :]))
                result["load"] = os.getloadavg()[0]  # other jobs on the machine show here
                rows[name].append(result)
                print(f"{algo} rep {rep} {name:<12} {result['seconds']:8.1f} s "
                      f"{result['sps']:8.0f} steps/s  eval {result['eval']:8.1f} ± "
                      f"{result['eval_std']:.1f}  peak RSS {result['rss_mb']:.0f} MB "
                      f"({result['threads']}; load {result['load']:.2f} at its end)",
                      flush=True)  # fmt: skip
        print(f"\n{algo}: medians over {args.reps} repetitions, {steps} steps")
        base = statistics.median(r["sps"] for r in rows["rlkit"])
        for name, results in rows.items():
            sps = statistics.median(r["sps"] for r in results)
            ev = statistics.median(r["eval"] for r in results)
            wall = statistics.median(r["seconds"] for r in results)
            ratio = "" if name == "rlkit" else f"  rlkit is {base / sps:.2f}x faster"
            print(f"  {name:<12} {wall:8.1f} s {sps:8.0f} steps/s  eval {ev:8.1f}{ratio}")
        summary[algo] = rows
    print(json.dumps({a: {n: [r["sps"] for r in rs] for n, rs in v.items()}
                      for a, v in summary.items()}))  # fmt: skip


if __name__ == "__main__":
    main()
