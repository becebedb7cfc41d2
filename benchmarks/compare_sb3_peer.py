"""Stable-Baselines3's side of :mod:`benchmarks.compare_sb3`: the same rl-zoo settings built in
SB3, trained under the same :class:`~benchmarks.phase_timer.PhaseTimer`. Runs in SB3's own
virtual environment (torch, stable-baselines3, gymnasium): it imports neither rlkit nor
TensorFlow.
"""

from __future__ import annotations

from benchmarks.compare_sb3 import HALFCHEETAH, _peak_rss_mb, _quiet_env, _timed_learn
from benchmarks.compare_sb3_onpolicy import STEPS as ONPOLICY_STEPS


def run_sb3(algo: str, seed: int, steps: int, torch_threads: int,
            learning_starts: int | None = None) -> dict:  # fmt: skip
    _quiet_env()
    import gymnasium as gym
    import numpy as np
    import torch

    torch.set_num_threads(torch_threads)
    if algo in ONPOLICY_STEPS:
        from benchmarks.compare_sb3_onpolicy import run_sb3_onpolicy

        return run_sb3_onpolicy(algo, seed, steps)
    from stable_baselines3 import DDPG, DQN, SAC, TD3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.noise import NormalActionNoise

    from benchmarks.phase_timer import PhaseTimer, marks

    episodes = 10
    if algo == "dqn":
        env_id = "CartPole-v1"
        env = gym.make(env_id)
        model = DQN(
            "MlpPolicy", env, learning_rate=2.3e-3, batch_size=64,
            buffer_size=100_000, learning_starts=1000, gamma=0.99, target_update_interval=10,
            train_freq=256, gradient_steps=128, exploration_fraction=0.16,
            exploration_final_eps=0.04, policy_kwargs=dict(net_arch=[256, 256]), seed=seed,
            device="cpu",
        )  # fmt: skip
    elif algo == "td3-halfcheetah":
        env_id, episodes = "HalfCheetah-v5", 1
        env = gym.make(env_id)
        dim = int(np.prod(env.action_space.shape or (1,)))
        # rl-zoo td3.yml HalfCheetah-v4; SB3's TD3 defaults for the rest
        model = TD3(
            "MlpPolicy", env, learning_starts=learning_starts or HALFCHEETAH[algo],
            action_noise=NormalActionNoise(np.zeros(dim), 0.1 * np.ones(dim)),
            learning_rate=1e-3, batch_size=256, train_freq=1, gradient_steps=1,
            policy_kwargs=dict(net_arch=[400, 300]), seed=seed, device="cpu",
        )  # fmt: skip
    elif algo == "sac-halfcheetah":
        env_id, episodes = "HalfCheetah-v5", 1
        env = gym.make(env_id)
        # rl-zoo sac.yml HalfCheetah-v4: learning_starts, every other key SB3's default
        model = SAC("MlpPolicy", env, learning_starts=learning_starts or HALFCHEETAH[algo],
                    seed=seed, device="cpu")  # fmt: skip
    elif algo in ("sac", "sac-compiled"):  # the same SB3 run for both
        env_id = "Pendulum-v1"
        env = gym.make(env_id)
        # rl-zoo: learning_rate 1e-3, every other key SB3's default
        model = SAC("MlpPolicy", env, learning_rate=1e-3, seed=seed, device="cpu")
    elif algo == "sac-lunar":
        env_id = "LunarLanderContinuous-v3"
        env = gym.make(env_id)

        def lin(progress_remaining: float) -> float:  # rl-zoo's linear_schedule(7.3e-4)
            return progress_remaining * 7.3e-4

        model = SAC(
            "MlpPolicy", env, learning_rate=lin, batch_size=256,
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
    random_steps = model.learning_starts  # SB3 trains once num_timesteps > learning_starts
    timer = PhaseTimer(marks(random_steps, steps))
    timer.wrap(env, "step", "env")  # the gymnasium env inside SB3's Monitor and DummyVecEnv
    timer.wrap(model, "_sample_action", "act")
    timer.wrap(model, "train", "update")

    class Marks(BaseCallback):
        def _on_step(self) -> bool:
            timer.at_step(self.num_timesteps)
            return True

    result = _timed_learn(lambda: model.learn(steps, callback=Marks()), timer, random_steps, steps)
    mean, std = evaluate_policy(model, gym.make(env_id), n_eval_episodes=episodes,
                                deterministic=True)  # fmt: skip
    return {**result, "eval": float(mean), "eval_std": float(std), "rss_mb": _peak_rss_mb(),
            "updates": int(model._n_updates),
            "threads": f"torch {torch.get_num_threads()}"}  # fmt: skip
