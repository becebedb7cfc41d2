"""Where a DQN-family update's time goes at MinAtar scale (issue 36's speed targets).

One update of batch 32 on MinAtar/Breakout-v0 with Dopamine's MinAtar network (one
16-channel 3x3 convolution straight into the head), after warm-up, for DQN, QR-DQN, C51 and
IQN (N = N' = K = 32, Revisiting Rainbow's) with and without XLA, and Munchausen DQN;
and the quantile Huber loss with its gradient alone (32 x 200 x 200 pairs) as TensorFlow's
ops, with XLA on the loss only, and with XLA on the whole step.

    python -m labs.family_update_costs

The findings are in docs/dqn-family.md ("Why QR-DQN cannot be within 1.5x of DQN").
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def timed(call, repeats: int) -> float:
    """Milliseconds per call, after one call to warm up."""
    call()
    start = time.perf_counter()
    for _ in range(repeats):
        call()
    return (time.perf_counter() - start) / repeats * 1e3


def agent_updates() -> None:
    import rlkit
    from rlkit.envs.make import make_env

    env = make_env("MinAtar/Breakout-v0")
    settings = dict(torso="minatar", hidden_sizes=(), batch_size=32, train_freq=4,
                    gradient_steps=1, learning_starts=0, buffer_size=10_000)  # fmt: skip
    iqn = dict(num_tau_samples=32, num_tau_prime_samples=32, num_quantile_samples=32)
    for name, jit in (("DQN", False), ("QRDQN", False), ("QRDQN", True), ("C51", False),
                      ("C51", True), ("IQN", False), ("IQN", True), ("MDQN", False)):  # fmt: skip
        extra = iqn if name == "IQN" else {}
        agent = getattr(rlkit.agents, name).from_env(env, seed=0, jit_compile=jit, **settings,
                                                     **extra)  # fmt: skip
        obs, _ = env.reset(seed=0)
        agent.observe_first(obs)
        for _ in range(300):
            action = env.action_space.sample()
            obs, reward, terminated, truncated, _ = env.step(action)
            agent.observe(action, reward, obs, terminated, truncated)
            if terminated or truncated:
                obs, _ = env.reset()
                agent.observe_first(obs)
        learn = timed(lambda: agent.learn(agent.replay.sample(32, 1)), 30)  # noqa: B023
        policy, x = agent.learner.policy(), agent.encode(obs)
        act = timed(lambda: policy(x), 200)  # noqa: B023
        width = agent.learner.q.model.output_shape[-1]
        print(f"{name:6s} jit={jit!s:5s} update {learn:6.2f} ms  act {act:5.3f} ms  "
              f"head outputs {width}")  # fmt: skip


def quantile_loss() -> None:
    import numpy as np
    import tensorflow as tf

    from rlkit.learn import distributional

    rng = np.random.default_rng(0)
    q = tf.Variable(rng.normal(size=(32, 200)).astype(np.float32))
    target = tf.constant(rng.normal(size=(32, 200)).astype(np.float32))
    taus = distributional.quantile_midpoints(200)
    inner = tf.function(distributional.quantile_huber_loss, jit_compile=True)

    def step(loss_fn):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(loss_fn(q, target, taus, 1.0))
        return tape.gradient(loss, q)

    ways = {
        "TensorFlow's ops": tf.function(lambda: step(distributional.quantile_huber_loss)),
        "XLA on the loss only": tf.function(lambda: step(inner)),
        "XLA on the whole step": tf.function(
            lambda: step(distributional.quantile_huber_loss), jit_compile=True
        ),  # fmt: skip
    }
    for name, call in ways.items():
        print(f"quantile Huber loss + gradient, {name}: {timed(call, 50):.2f} ms")


if __name__ == "__main__":
    agent_updates()
    quantile_loss()
