"""Where a training step's time goes: acting vs the environment, vector envs, memory.

Prints, on this machine:
- the cost of one ``agent.act`` (numpy copy of the policy) against one ``env.step``,
  and against a ``tf.function`` forward pass and ``model.predict`` for reference;
- the same per environment step when 1, 4 and 16 environments step together;
- DQN's training throughput (steps/s) on CartPole-v1 with 1, 4 and 16 environments;
- the bytes a 1M-transition CartPole replay memory takes, and the peak RSS.

    python -m benchmarks.throughput
    python -m benchmarks.throughput --steps 20000 --num-envs 1,4,16
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def per_call_ms(fn, calls: int, repeats: int = 5) -> float:
    """Median over ``repeats`` of the mean time of ``calls`` calls, in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1000)
    return statistics.median(times)


def acting_costs(agent_name: str, env_id: str) -> None:
    import gymnasium as gym
    import numpy as np
    import tensorflow as tf

    import rlkit

    env = gym.make(env_id)
    agent = rlkit.agents.__getattr__(agent_name).from_env(env, seed=0)
    obs, _ = env.reset(seed=0)
    actions = [env.action_space.sample() for _ in range(1000)]
    env.reset(seed=0)
    it = iter(range(10**9))

    def env_step():
        _, _, term, trunc, _ = env.step(actions[next(it) % 1000])
        if term or trunc:
            env.reset()

    act_ms = per_call_ms(lambda: agent.act(obs, explore=False), 5000)
    env_ms = per_call_ms(env_step, 5000)
    model = agent.q.model if agent_name == "DQN" else agent.actor.model
    x = np.asarray(obs, np.float32)[None]
    fn = tf.function(lambda t: model(t))
    fn(x)
    tf_ms = per_call_ms(lambda: fn(x).numpy(), 300)
    predict_ms = per_call_ms(lambda: model.predict(x, verbose=0), 10, repeats=3)
    print(f"{agent_name} {env_id}: agent.act {act_ms:.4f} ms | env.step {env_ms:.4f} ms | "
          f"act/env {act_ms / env_ms:.2f} | tf.function forward {tf_ms:.3f} ms | "
          f"model.predict {predict_ms:.1f} ms")  # fmt: skip


def batched_acting_costs(num_envs: list[int]) -> None:
    """Acting and environment cost per environment step when N environments step together."""
    import gymnasium as gym
    import numpy as np

    import rlkit
    from rlkit.envs.make import make_vector_env

    agent = rlkit.agents.DQN.from_env(gym.make("CartPole-v1"), seed=0)
    for n in num_envs:
        env = make_vector_env("CartPole-v1", n)
        obs, _ = env.reset(seed=0)
        actions = np.zeros(n, dtype=np.int64)
        act_us = per_call_ms(lambda o=obs: agent.act(o, explore=False), 2000) * 1000 / n
        env_us = per_call_ms(lambda e=env, a=actions: e.step(a), 2000) * 1000 / n
        print(f"DQN CartPole-v1 acting with {n:>2} env(s): agent.act {act_us:.2f} us | "
              f"env.step {env_us:.2f} us per environment step | act/env "
              f"{act_us / env_us:.2f}")  # fmt: skip


def vector_throughput(num_envs: list[int], steps: int) -> None:
    import gymnasium as gym

    import rlkit
    from rlkit.envs.make import make_vector_env
    from rlkit.run.loop import Trainer

    for learning in (True, False):
        for n in num_envs:
            env = gym.make("CartPole-v1") if n == 1 else make_vector_env("CartPole-v1", n)
            overrides = {} if learning else {"learning_starts": 10**9}  # acting and envs only
            agent = rlkit.agents.DQN.from_env(env, seed=0, **overrides)
            trainer = Trainer(agent, env, tensorboard=False)
            trainer.run(2_000)  # compile the update block
            start = time.perf_counter()
            trainer.run(2_000 + steps)
            seconds = time.perf_counter() - start
            what = "training (defaults)" if learning else "collecting (no updates)"
            print(f"DQN CartPole-v1 {what:<24} {n:>2} env(s): {steps / seconds:8.0f} steps/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--num-envs", default="1,4,16")
    args = parser.parse_args()
    acting_costs("DQN", "CartPole-v1")
    try:
        acting_costs("DDPG", "Pendulum-v1")
    except AttributeError as exc:  # an agent without the expected network attribute
        print(f"DDPG acting cost not measured: {exc}")
    num_envs = [int(n) for n in args.num_envs.split(",")]
    batched_acting_costs(num_envs)
    vector_throughput(num_envs, args.steps)
    from rlkit import ReplayMemory

    memory = ReplayMemory(1_000_000, obs_shape=(4,))
    print(f"replay memory for 1M CartPole transitions: {memory.nbytes / 2**20:.1f} MiB")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
