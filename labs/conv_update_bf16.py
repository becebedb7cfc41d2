"""Would bfloat16 make the Atari update fast enough? Nature CNN updates in fp32 and bf16.

docs/atari.md: rlkit's dqn3 learning step is ~2.08x SB3's at one torch thread but 1.42x
at two, and the update (Nature CNN, batch 32, the target pass, centred RMSProp) is most
of the step. This CPU has AVX512_BF16, so the lever left would be Keras'
``mixed_bfloat16`` policy (bf16 convolutions and products, fp32 weights and optimizer).
This times that update both ways, each in a fresh process, alternating, and prints
ms per update and the ratio; the numbers change in the last bits, so it is a measurement
of the lever, not an rlkit option.

    python -m labs.conv_update_bf16 --updates 100 --reps 2
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time


def time_updates(precision: str, updates: int, queue) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    if precision == "bf16":
        tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")

    def nature_cnn() -> tf.keras.Model:
        frames = tf.keras.Input((84, 84, 4), dtype="uint8")
        x = tf.keras.layers.Rescaling(1 / 255.0)(frames)
        for filters, size, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
            x = tf.keras.layers.Conv2D(filters, size, stride, activation="relu")(x)
        x = tf.keras.layers.Dense(512, activation="relu")(tf.keras.layers.Flatten()(x))
        return tf.keras.Model(frames, tf.keras.layers.Dense(4, dtype="float32")(x))

    online, target = nature_cnn(), nature_cnn()
    optimizer = tf.keras.optimizers.RMSprop(2.5e-4, rho=0.95, epsilon=0.01, centered=True)

    @tf.function
    def update(obs, actions, rewards, next_obs, done):
        y = rewards + 0.99 * (1.0 - done) * tf.reduce_max(target(next_obs), axis=1)
        with tf.GradientTape() as tape:
            q = tf.reduce_sum(online(obs) * tf.one_hot(actions, 4), axis=1)
            surrogate = -tf.reduce_sum(tf.stop_gradient(tf.clip_by_value(y - q, -1, 1)) * q)
        grads = tape.gradient(surrogate, online.trainable_variables)
        optimizer.apply_gradients(zip(grads, online.trainable_variables, strict=True))

    rng = np.random.default_rng(0)
    batch = (
        tf.constant(rng.integers(0, 256, (32, 84, 84, 4), dtype=np.uint8)),
        tf.constant(rng.integers(0, 4, 32)),
        tf.zeros(32),
        tf.constant(rng.integers(0, 256, (32, 84, 84, 4), dtype=np.uint8)),
        tf.zeros(32),
    )
    for _ in range(20):  # trace and warm up
        update(*batch)
    start = time.perf_counter()
    for _ in range(updates):
        update(*batch)
    queue.put(1000 * (time.perf_counter() - start) / updates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=100)
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    if args.updates <= 0 or args.reps <= 0:
        parser.error("--updates and --reps must be positive")
    ctx = mp.get_context("spawn")
    times: dict[str, list[float]] = {"fp32": [], "bf16": []}
    for rep in range(args.reps):
        for precision in ("fp32", "bf16") if rep % 2 == 0 else ("bf16", "fp32"):
            queue = ctx.Queue()
            proc = ctx.Process(target=time_updates, args=(precision, args.updates, queue))
            proc.start()
            times[precision].append(queue.get())
            proc.join()
            print(f"{precision}: {times[precision][-1]:.1f} ms an update", flush=True)
    fp32, bf16 = (statistics.median(times[p]) for p in ("fp32", "bf16"))
    print(f"median: fp32 {fp32:.1f} ms, bf16 {bf16:.1f} ms; bf16 is {fp32 / bf16:.2f}x fp32")


if __name__ == "__main__":
    main()
