"""Atari throughput: rlkit's DQN (dqn3 settings) against SB3's CnnPolicy DQN, same settings.

Both train on the same environment (rlkit.envs.atari's DQN3.0 pipeline: ALE/Breakout-v5, 84x84x4
uint8; SB3 transposes it to channels-first itself), batch 32, an update every 4 steps,
Nature CNN, target copy every 10,000 steps, centred RMSProp 2.5e-4, the same buffer size,
learning from step --learning-starts, for --steps agent steps; alternating which goes
first, each in a fresh subprocess. Printed: steps/s over the whole run and over the
learning phase, updates/s, and for rlkit where a learning step's time goes (env with
preprocessing, acting, replay sampling and stack rebuilding, the update).

    python -m benchmarks.atari_throughput --steps 6000 --learning-starts 2000 --reps 1
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import time

ENV = "ALE/Breakout-v5"


def _env():
    from rlkit.envs.make import make_env

    return make_env(ENV)


def run_rlkit(steps: int, learning_starts: int, buffer: int, seed: int) -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from rlkit.run import experiment
    from rlkit.run.loop import Trainer

    plan = experiment.plan("dqn", ENV, preset="dqn3", seed=seed, overrides={
        "buffer_size": buffer, "learning_starts": learning_starts})  # fmt: skip
    env = _env()
    agent = plan.spec.load_class().from_env(env, seed=seed, config=plan.agent_config)
    marks = {}

    def mark(step, info, history):
        if step == learning_starts:
            marks["learning"] = time.perf_counter()

    start = time.perf_counter()
    Trainer(agent, env, seed=seed, callbacks=[mark]).run(steps)
    end = time.perf_counter()
    # where a learning step's time goes, measured on the filled replay
    timings = {}
    obs, _ = env.reset(seed=seed)
    t = time.perf_counter()
    for _ in range(200):
        obs, *_ = env.step(env.action_space.sample())
    timings["env_ms"] = (time.perf_counter() - t) / 200 * 1e3
    t = time.perf_counter()
    for _ in range(200):
        agent.act(obs, explore=False)
    timings["act_ms"] = (time.perf_counter() - t) / 200 * 1e3
    t = time.perf_counter()
    for _ in range(50):
        batch = agent.replay.sample(32, 1)
    timings["sample_ms"] = (time.perf_counter() - t) / 50 * 1e3
    tensors = agent.learner.tensors(batch)
    t = time.perf_counter()
    for _ in range(10):
        agent.learner.train_block(*tensors)
    timings["update_ms"] = (time.perf_counter() - t) / 10 * 1e3
    learning = end - marks["learning"]
    return {"sps": steps / (end - start), "learning_sps": (steps - learning_starts) / learning,
            "updates_per_s": (steps - learning_starts) / 4 / learning, **timings,
            "replay_gb": agent.replay.nbytes / 1e9, "rss_mb": _rss()}  # fmt: skip


def run_sb3(steps: int, learning_starts: int, buffer: int, seed: int, threads: int) -> dict:
    import torch
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(threads)
    marks = {}

    class Mark(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps == learning_starts:
                marks["learning"] = time.perf_counter()
            return True

    model = DQN(
        "CnnPolicy", _env(), buffer_size=buffer, learning_starts=learning_starts,
        batch_size=32, train_freq=4, gradient_steps=1, target_update_interval=10_000,
        learning_rate=2.5e-4, gamma=0.99, exploration_fraction=1_000_000 / steps,
        exploration_final_eps=0.1, seed=seed, device="cpu",
        policy_kwargs=dict(optimizer_class=torch.optim.RMSprop,
                           optimizer_kwargs=dict(alpha=0.95, eps=0.01, centered=True)),
        replay_buffer_kwargs=dict(handle_timeout_termination=False),
    )  # fmt: skip
    start = time.perf_counter()
    model.learn(steps, callback=Mark())
    end = time.perf_counter()
    learning = end - marks["learning"]
    return {"sps": steps / (end - start), "learning_sps": (steps - learning_starts) / learning,
            "updates_per_s": (steps - learning_starts) / 4 / learning,
            "replay_gb": model.replay_buffer.observations.nbytes * 2 / 1e9,
            "rss_mb": _rss()}  # fmt: skip


def _rss() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _in_subprocess(fn, *args) -> dict:
    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--learning-starts", type=int, default=2000)
    parser.add_argument("--buffer", type=int, default=50_000)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--torch-threads", default="2")
    args = parser.parse_args()
    threads = [int(t) for t in args.torch_threads.split(",")]
    results: dict[str, list[dict]] = {}
    for rep in range(args.reps):
        jobs = [("rlkit", run_rlkit, ())] + [(f"sb3-torch{t}", run_sb3, (t,)) for t in threads]
        if rep % 2:
            jobs.reverse()
        for name, fn, extra in jobs:
            r = _in_subprocess(fn, args.steps, args.learning_starts, args.buffer, rep, *extra)
            results.setdefault(name, []).append(r)
            print(f"rep {rep} {name:<12} {r['sps']:7.1f} steps/s, learning phase "
                  f"{r['learning_sps']:6.1f} steps/s, {r['updates_per_s']:5.1f} updates/s",
                  flush=True)  # fmt: skip
    print(f"\nmedians over {args.reps} repetitions, {args.steps} steps "
          f"({args.learning_starts} before learning), buffer {args.buffer}:")  # fmt: skip
    base = statistics.median(r["learning_sps"] for r in results["rlkit"])
    for name, rs in results.items():
        learning = statistics.median(r["learning_sps"] for r in rs)
        ratio = "" if name == "rlkit" else f"  rlkit is {base / learning:.2f}x faster"
        print(f"  {name:<12} learning {learning:6.1f} steps/s, "
              f"{statistics.median(r['updates_per_s'] for r in rs):5.1f} updates/s, "
              f"replay {rs[0]['replay_gb']:.2f} GB{ratio}")  # fmt: skip
    r = results["rlkit"][0]
    print(f"  rlkit, one learning step: env {r['env_ms']:.2f} ms, act {r['act_ms']:.2f} ms, "
          f"sample+stack {r['sample_ms'] / 4:.2f} ms (a minibatch every 4 steps: "
          f"{r['sample_ms']:.2f}), update {r['update_ms'] / 4:.2f} ms ({r['update_ms']:.1f} "
          "per update)")  # fmt: skip
    print(json.dumps(results))


if __name__ == "__main__":
    main()
