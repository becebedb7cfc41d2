"""Why IQN and QR-DQN cannot be within 1.5x of DQN's step time at Revisiting Rainbow's MinAtar
settings on this CPU: the multiply-adds of one update, counted from the shapes, against what
this CPU does per second, measured.

Settings: the presets' network (one 16-channel 3x3 convolution, "same" padding, so
``D = 10 x 10 x 16 = 1,600`` features, straight into the head), batch 32, 6 actions; IQN with
``N = N' = K = 32`` fractions and 64 cosines (``iqn/minatar``); QR-DQN with 200 quantiles and
no Double DQN (``qrdqn/minatar``). Printed: each update's
multiply-adds by part; one update of each in-process (``agent.learn`` after warm-up); the
fraction embedding's product ``[B N, 64] x [64, D]`` alone and a large square product, as
GFLOP/s this CPU reaches; one greedy act of each.

    nice python -m labs.iqn_update_arithmetic

The finding is in docs/dqn-family.md ("IQN and Munchausen DQN").
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

B, A, C, D, COSINES = 32, 6, 4, 1600, 64
N = N_PRIME = K = 32
QUANTILES = 200
#: DQN's whole environment step on the quiet machine, ms (1,303 steps/s: docs/dqn-family.md)
DQN_STEP_MS = 0.77
CONV = B * 100 * 9 * C * 16  # the convolution's multiply-adds on a batch
#: AVX2/AVX-512 on this AMD EPYC (Zen 4): two 256-bit FMA pipes, 16 float32 FMAs a cycle
FLOP_PER_CYCLE = 32
BOOST_GHZ = 3.7  # generous: /proc/cpuinfo says 2.6


def dqn_macs() -> dict[str, int]:
    """One DQN update: online forward, target forward, backward (weights and the features)."""
    head = B * D * A
    return {"online forward": CONV + head, "target forward": CONV + head,
            "backward": CONV + 2 * head}  # fmt: skip


def iqn_macs() -> dict[str, int]:
    """One IQN update: the online pass at N fractions (forward, backward: the embedding's and
    the head's weight gradients, the gradient into the product), the target pass at N' + K."""
    online_rows, target_rows = B * N, B * (N_PRIME + K)
    embed = COSINES * D
    return {
        "online forward": CONV + online_rows * (embed + D * A),
        "target forward (N' + K)": CONV + target_rows * (embed + D * A),
        "backward": CONV + online_rows * (embed + 2 * D * A),
    }


def qrdqn_macs() -> dict[str, int]:
    """One QR-DQN update (no Double DQN): the head gives ``A x QUANTILES`` outputs, so each
    pass through it is 200 times DQN's. The loss's ``B x 200 x 200`` pairs are elementwise
    work, not multiply-adds, and are left out (a lower bound)."""
    head = B * D * A * QUANTILES
    return {"online forward": CONV + head, "target forward": CONV + head,
            "backward": CONV + 2 * head}  # fmt: skip


MEMBERS = {"DQN": dqn_macs, "IQN": iqn_macs, "QRDQN": qrdqn_macs}


def timed(call, repeats: int) -> float:
    """Milliseconds per call, after one call to warm up."""
    call()
    start = time.perf_counter()
    for _ in range(repeats):
        call()
    return (time.perf_counter() - start) / repeats * 1e3


def measured() -> None:
    import numpy as np
    import tensorflow as tf

    import rlkit
    from rlkit.envs.make import make_env

    rows = {}
    env = make_env("MinAtar/Breakout-v0")
    settings = dict(torso="minatar", conv_padding="same", hidden_sizes=(), batch_size=B,
                    train_freq=4, gradient_steps=1, learning_starts=0, buffer_size=10_000,
                    jit_compile=False)  # fmt: skip
    own = {
        "DQN": {},
        "IQN": dict(num_tau_samples=N, num_tau_prime_samples=N_PRIME, num_quantile_samples=K),
        "QRDQN": dict(num_quantiles=QUANTILES, double_dqn=False),
    }
    for name in MEMBERS:
        agent = getattr(rlkit.agents, name).from_env(env, seed=0, **settings, **own[name])
        obs, _ = env.reset(seed=0)
        agent.observe_first(obs)
        for _ in range(300):
            action = env.action_space.sample()
            obs, reward, terminated, truncated, _ = env.step(action)
            agent.observe(action, reward, obs, terminated, truncated)
            if terminated or truncated:
                obs, _ = env.reset()
                agent.observe_first(obs)
        learn = timed(lambda: agent.learn(agent.replay.sample(B, 1)), 30)  # noqa: B023
        policy, x = agent.learner.policy(), agent.encode(obs)
        act = timed(lambda: policy(x), 200)  # noqa: B023
        rows[name] = (learn, act)
        print(f"{name}: one update {learn:6.2f} ms, one greedy act {act:5.3f} ms")
    rng = np.random.default_rng(0)
    cos = tf.constant(rng.random((B * N, COSINES), np.float32))
    kernel = tf.constant(rng.random((COSINES, D), np.float32))
    square = tf.constant(rng.random((1024, 1024), np.float32))
    embed = tf.function(lambda: tf.matmul(cos, kernel))
    big = tf.function(lambda: tf.matmul(square, square))
    embed_ms, big_ms = timed(embed, 50), timed(big, 20)
    gflops = 2 * B * N * COSINES * D / embed_ms / 1e6
    peak = 2 * 1024**3 / big_ms / 1e6
    shape = f"[{B * N}, {COSINES}] x [{COSINES}, {D}]"
    print(f"the embedding's product {shape}: {embed_ms:.2f} ms = {gflops:.1f} GFLOP/s; "
          f"a 1024^3 product: {big_ms:.2f} ms = {peak:.1f} GFLOP/s")  # fmt: skip
    cores = os.cpu_count() or 1
    peak = cores * FLOP_PER_CYCLE * BOOST_GHZ  # GFLOP/s, every core at its boost clock
    print(f"this CPU's theoretical peak: {cores} cores x {FLOP_PER_CYCLE} float32 FLOP/cycle x "
          f"{BOOST_GHZ} GHz = {peak:.0f} GFLOP/s")  # fmt: skip
    for name in ("IQN", "QRDQN"):
        extra = 2 * (sum(MEMBERS[name]().values()) - sum(dqn_macs().values())) / 1e6  # MFLOP
        floor = extra / peak  # ms beyond DQN's update
        bound = (DQN_STEP_MS + floor / 4) / DQN_STEP_MS
        print(
            f"{name}'s update: {extra:.0f} MFLOP more than DQN's, at peak at least {floor:.2f} ms "
            f"beyond it (measured here {rows[name][0]:.2f} ms against DQN's "
            f"{rows['DQN'][0]:.2f} ms); one update every 4 steps adds >= {floor / 4:.2f} ms a "
            f"step to DQN's {DQN_STEP_MS} ms: step time >= {bound:.2f}x DQN's"
        )


def main() -> None:
    dqn_total = sum(dqn_macs().values())
    for name, count in MEMBERS.items():
        parts = count()
        total = sum(parts.values())
        detail = ", ".join(f"{part} {macs / 1e6:.1f}M" for part, macs in parts.items())
        print(f"{name} update: {total / 1e6:.1f}M multiply-adds ({detail}), "
              f"{total / dqn_total:.0f}x DQN's")  # fmt: skip
    measured()


if __name__ == "__main__":
    main()
