"""Steps per second of rlkit's TensorFlow environments against gymnasium's, in one run.

For each environment and each batch size N it measures, on this machine:

- ``compiled``: N copies stepped inside one ``tf.function(jit_compile=True)`` holding a
  ``tf.while_loop`` of random actions (drawn in the graph) with autoreset: what a training
  loop compiled with its environment gets. Compile time is printed apart.
- ``adapter``: the same N copies as a ``gymnasium.vector.VectorEnv``
  (:class:`rlkit.envs.tf.gym_adapter.TFVectorEnv`), stepped from Python with numpy actions:
  one compiled call per vector step.
- ``gymnasium``: gymnasium's own env, N copies in a ``SyncVectorEnv`` (``SAME_STEP``
  autoreset, as rlkit steps it), actions sampled beforehand.

and prints the steps/s (environment steps: N per vector step) with the ratio compiled /
gymnasium. Each figure is the best of ``--repeats`` timed runs of about ``--seconds`` each.

    python -m benchmarks.tf_envs
    python -m benchmarks.tf_envs --envs CartPole-v1 --num-envs 1,1000 --seconds 0.5
    python -m benchmarks.tf_envs --threads 1     # XLA on one thread: faster on a busy 2-core CPU
    python -m benchmarks.tf_envs --envs minatar --num-envs 1,64   # MinAtar's five games

MinAtar's games (``MinAtar/Breakout-v0``, ...) are timed as ``rlkit/MinAtar-Breakout-v0``
against ``minatar``'s own env in a ``SyncVectorEnv``.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ENVS = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1")
MINATAR = tuple(f"MinAtar/{game}-v0" for game in
                ("Breakout", "SpaceInvaders", "Freeway", "Asterix", "Seaquest"))  # fmt: skip


def rlkit_id(env_id: str) -> str:
    """rlkit's id of gymnasium's ``env_id`` (``MinAtar/Breakout-v0``:
    ``rlkit/MinAtar-Breakout-v0``)."""
    return "rlkit/" + env_id.replace("/", "-")


def compiled_loop(env, num_envs: int):
    """A compiled function ``run(seed, steps)`` -> (total reward, episodes ended, last state)
    of ``steps`` vector steps. (Everything the loop computes reaches an output: XLA drops
    loop state no output depends on, CartPole's constant reward would leave it nothing.)"""
    import tensorflow as tf

    @tf.function(jit_compile=True)
    def run(seed, steps):
        keys = tf.random.experimental.stateless_split(seed, 2)
        state, _ = env.reset(keys[0], num_envs)

        def body(i, key, state, total, ended):
            key, act_key, step_key = tf.unstack(tf.random.experimental.stateless_split(key, 3))
            if env.discrete_actions:
                shape, low, high, dtype = [num_envs], 0, env.discrete_actions, tf.int32
            else:
                shape, low, high, dtype = [num_envs, 1], env.action_low, env.action_high, tf.float32
            actions = tf.random.stateless_uniform(shape, act_key, low, high, dtype)
            out = env.step(state, actions, step_key)
            done = tf.cast(out.terminated | out.truncated, tf.int32)
            total = total + tf.reduce_sum(out.reward)
            return i + 1, key, out.state, total, ended + tf.reduce_sum(done)

        loop = (tf.constant(0), keys[1], state, tf.constant(0.0, tf.float64), tf.constant(0))
        _, _, state, total, ended = tf.while_loop(lambda i, *_: i < steps, body, loop)
        return total, ended, state.physics

    return run


def time_compiled(env_id: str, num_envs: int, seconds: float, repeats: int) -> tuple[float, float]:
    """(steps/s, compile seconds) of the compiled loop."""
    import tensorflow as tf

    from rlkit.envs.tf import make_tf_env

    run = compiled_loop(make_tf_env(rlkit_id(env_id)), num_envs)
    start = time.perf_counter()
    run(tf.constant([0, 0]), tf.constant(1))[0].numpy()  # trace and compile
    compile_s = time.perf_counter() - start
    steps = 16
    while True:  # grow the loop until one run takes about `seconds`
        start = time.perf_counter()
        run(tf.constant([1, 0]), tf.constant(steps))[0].numpy()
        took = time.perf_counter() - start
        if took >= seconds / 4 or steps >= 10**7:
            break
        steps *= 4
    steps = max(1, int(steps * seconds / took))
    best = min(_timed(lambda s=s: run(tf.constant([s, 0]), tf.constant(steps))[0].numpy())
               for s in range(repeats))  # fmt: skip
    return steps * num_envs / best, compile_s


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def time_vector_env(env, num_envs: int, seconds: float, repeats: int) -> float:
    """steps/s of a gymnasium VectorEnv stepped from Python with pre-sampled actions."""
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(64)]
    env.step(actions[0])

    def play(steps: int) -> float:
        return _timed(lambda: [env.step(actions[i % 64]) for i in range(steps)])

    steps = 1
    while (took := play(steps)) < seconds / 4:
        steps *= 4
    steps = max(1, int(steps * seconds / took))
    best = min(play(steps) for _ in range(repeats))
    env.close()
    return steps * num_envs / best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--envs", default=",".join(ENVS), help="gymnasium ids, comma-separated; minatar: its five"
    )
    parser.add_argument("--num-envs", default="1,10,100,1000", help="batch sizes N")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the best is kept")
    parser.add_argument("--no-adapter", action="store_true", help="skip the Python adapter")
    parser.add_argument(
        "--threads", type=int, default=0, help="TensorFlow's intra-op threads (0: its default)"
    )
    args = parser.parse_args(argv)

    import gymnasium as gym
    import tensorflow as tf

    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)

    import rlkit  # noqa: F401  (registers the rlkit/ ids)
    from rlkit.envs.make import make_vector_env

    threads = args.threads or "default"
    print(f"tensorflow {tf.__version__}, gymnasium {gym.__version__}, {os.cpu_count()} CPUs, "
          f"TensorFlow threads: {threads}")  # fmt: skip
    print(f"{'env':26} {'N':>5} {'compiled':>12} {'compile s':>9} {'adapter':>10} "
          f"{'gymnasium':>10} {'compiled/gym':>12}")  # fmt: skip
    for env_id in args.envs.replace("minatar", ",".join(MINATAR)).split(","):
        for num_envs in (int(n) for n in args.num_envs.split(",")):
            ours, compile_s = time_compiled(env_id, num_envs, args.seconds, args.repeats)
            adapter = float("nan")
            if not args.no_adapter:
                vec = gym.make_vec(
                    rlkit_id(env_id), num_envs, vectorization_mode="vector_entry_point"
                )
                adapter = time_vector_env(vec, num_envs, args.seconds, args.repeats)
            sync = make_vector_env(env_id, num_envs)  # SAME_STEP autoreset, as rlkit steps it
            theirs = time_vector_env(sync, num_envs, args.seconds, args.repeats)
            print(f"{env_id:26} {num_envs:>5} {ours:>12,.0f} {compile_s:>9.2f} {adapter:>10,.0f} "
                  f"{theirs:>10,.0f} {ours / theirs:>11.1f}x", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
