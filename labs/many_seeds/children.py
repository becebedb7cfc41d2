"""What one child process of :mod:`labs.many_seeds.measure` runs: one mode at one ``S``.

Each prints one JSON line: ``compile_s`` (the first call, tracing and XLA), ``train_s`` (the
chunks after it), ``steps`` (environment steps of all seeds), ``rss_mb`` (the process's peak
resident memory), ``final_return`` (mean training return of the episodes that ended in the
last chunk, over all seeds).

- ``one``: one seed through rlkit's own :class:`~rlkit.run.compiled.dqn.DQNProgram` (today's
  program: what ``rlkit train dqn --env rlkit/CartPole-v1`` compiles), ``run_chunk`` only.
- ``joint``: ``S`` such programs (``S`` agents, ``S`` sets of variables), their vector steps
  traced into one ``tf.while_loop`` body of one ``tf.function(jit_compile=True)``.
- ``stacked``: :class:`~labs.many_seeds.stacked.StackedDQN`, the weights stacked ``[S, ...]``.
"""

from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np

#: PureJaxRL's settings as rlkit keys (as benchmarks/purejaxrl_dqn.py)
from benchmarks.purejaxrl_dqn import RLKIT_KEYS

CHUNK = 2000  # vector steps per call: 20,000 env steps a seed, as the product's chunks


def build_program(seed: int, steps: int):
    """rlkit's DQN agent and its :class:`DQNProgram` for ``seed`` at PureJaxRL's settings."""
    from rlkit.run import experiment
    from rlkit.run.compiled.dqn import DQNProgram
    from rlkit.run.plan import make_envs

    plan = experiment.plan("dqn", "rlkit/CartPole-v1", steps=steps, seed=seed, num_envs=10,
                           eval_every=0, checkpoint_every=0, preset="none",
                           overrides=RLKIT_KEYS)  # fmt: skip
    env = make_envs(plan.settings, plan.spec)
    agent = plan.spec.load_class().from_env(env, seed=seed, config=plan.agent_config)
    env.close()
    from rlkit.envs.tf import make_tf_env

    return DQNProgram(agent, make_tf_env("rlkit/CartPole-v1"), 10, seed, CHUNK)


def joint_function(programs):
    """One compiled function running every program's vector steps in one loop body."""
    import tensorflow as tf

    n = programs[0].num_envs
    width = n * len(programs)

    def chunk(vector_steps):
        done_log = tf.TensorArray(tf.bool, size=CHUNK, element_shape=[width])
        return_log = tf.TensorArray(tf.float64, size=CHUNK, element_shape=[width])

        def body(i, updates, done_log, return_log):
            done, returns = [], []
            for p in programs:
                d, r, _, _, u = p._vector_step()
                done.append(d)
                returns.append(r)
                updates += u
            return (i + 1, updates, done_log.write(i, tf.concat(done, 0)),
                    return_log.write(i, tf.concat(returns, 0)))  # fmt: skip

        start = (tf.constant(0), tf.constant(0, tf.int64), done_log, return_log)
        i, updates, done_log, return_log = tf.while_loop(
            lambda i, *_: i < vector_steps, body, start, maximum_iterations=CHUNK
        )
        return i, updates, done_log.stack(), return_log.stack()

    return tf.function(chunk, jit_compile=True,
                       input_signature=[tf.TensorSpec([], tf.int32)])  # fmt: skip


def race(num_seeds: int, rounds: int, vector_steps: int) -> None:
    """Steady-state learning throughput of the three modes in one process, chunks taken in
    turn (one, joint, stacked, one, ...) so that the machine's load falls on all alike.

    Each mode first runs past ``learning_starts`` (1,000 vector steps), then ``rounds``
    chunks of ``vector_steps``; prints the median total env steps/s of each."""
    import statistics

    import tensorflow as tf

    from labs.many_seeds.stacked import StackedDQN

    programs = [build_program(k, 10**9) for k in range(num_seeds)]
    joint = joint_function(programs)
    single = build_program(100, 10**9)
    stacked = StackedDQN(num_seeds, 0, chunk=CHUNK)
    calls = {
        "one": (1, lambda k: single._run(tf.constant(k), tf.constant(2**62, tf.int64))[0]),
        "joint": (num_seeds, lambda k: joint(tf.constant(k))[0]),
        "stacked": (num_seeds, lambda k: stacked.run_chunk(tf.constant(k))[0]),
    }
    rates: dict[str, list[float]] = {name: [] for name in calls}
    for _, call in calls.values():
        int(call(1000))
    for _ in range(rounds):
        for name, (seeds, call) in calls.items():
            start = time.perf_counter()
            int(call(vector_steps))
            rates[name].append(seeds * vector_steps * 10 / (time.perf_counter() - start))
    print(json.dumps({name: statistics.median(r) for name, r in rates.items()}))


def main() -> None:
    mode, num_seeds, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if mode == "race":
        race(num_seeds, steps, int(sys.argv[4]))
        return
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    import tensorflow as tf

    if mode == "one":
        program = build_program(seed, steps)

        def call(k):
            out = program._run(tf.constant(k, tf.int32), tf.constant(2**62, tf.int64))
            return out[0], out[1], out[2]
    elif mode == "joint":
        programs = [build_program(seed + k, steps) for k in range(num_seeds)]
        fn = joint_function(programs)

        def call(k):
            i, _, done, returns = fn(tf.constant(k, tf.int32))
            return i, done, returns
    elif mode == "stacked":
        from labs.many_seeds.stacked import StackedDQN

        stacked = StackedDQN(num_seeds, seed, chunk=CHUNK)

        def call(k):
            i, _, done, returns = stacked.run_chunk(tf.constant(k, tf.int32))
            return i, done, returns
    else:
        sys.exit(f"unknown mode {mode}")
    start = time.perf_counter()
    call(0)
    compile_s = time.perf_counter() - start
    vector_steps, last = steps // 10, np.array([])
    start = time.perf_counter()
    while vector_steps > 0:
        i, done, returns = call(min(CHUNK, vector_steps))
        k = int(i)
        vector_steps -= k
        last = returns.numpy()[:k][done.numpy()[:k]]
    train_s = time.perf_counter() - start
    seeds = 1 if mode == "one" else num_seeds
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "compile_s": compile_s,
                "train_s": train_s,
                "steps": seeds * steps,
                "rss_mb": rss,
                "final_return": float(np.mean(last)) if last.size else 0.0,
            }
        )
    )


if __name__ == "__main__":
    main()
