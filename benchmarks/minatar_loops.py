"""MinAtar's DQN at the paper's settings: rlkit's Python loop against its compiled loop.

Each game's DQN preset (``dqn/MinAtar_<Game>-v0``: batch 32, an update after every step,
centred RMSprop, the paper's one-convolution network) runs in turn

- in the **Python loop** on minatar's own ``MinAtar/<Game>-v0``, and
- in the **compiled loop** on rlkit's TensorFlow twin ``rlkit/MinAtar-<Game>-v0`` (the same
  game step for step; acting, the game, the replay and the updates in one XLA program),

in one process, the two alternating per repetition. Each run learns from
``--learning-starts`` on, so most of its steps carry an update; steps/s and the process's
CPU seconds per step are over the run after the compiled loop's compile (printed apart).
Printed: each run, then per game the medians and the compiled loop's ratio over the Python
loop (wall clock and CPU). The two loops draw different random numbers: they learn alike,
not identically.

    python -m benchmarks.minatar_loops
    python -m benchmarks.minatar_loops --games Breakout,SpaceInvaders --steps 8000 --reps 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

GAMES = ("Breakout", "SpaceInvaders", "Freeway", "Asterix", "Seaquest")


def one_run(env_id: str, loop: str, steps: int, learning_starts: int, seed: int, out: str):
    """``(steps/s, CPU ms per step, compile s or None, updates)`` of one preset DQN run."""
    from rlkit.run import experiment

    overrides = {"learning_starts": learning_starts}
    plan = experiment.plan(
        "dqn", env_id, steps=steps, seed=seed, eval_every=0, checkpoint_every=0,
        overrides=overrides,
    )  # fmt: skip
    trainer = experiment.start(plan, out, tensorboard=False, loop=loop)
    try:
        compile_seconds = trainer.compile() if loop == "compiled" else None
        wall, cpu = time.perf_counter(), time.process_time()
        trainer.run(steps)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        trainer.close()
    return steps / wall, 1e3 * cpu / steps, compile_seconds, trainer.agent.learner.num_updates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="Breakout", help="comma-separated (default Breakout)")
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--learning-starts", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    games = [g for g in args.games.split(",") if g]
    for game in games:
        if game not in GAMES:
            parser.error(f"--games: {game!r} is not one of {', '.join(GAMES)}")
    from rlkit.core.quiet import import_tensorflow_quietly

    import_tensorflow_quietly()
    import tensorflow as tf

    print(f"tensorflow {tf.__version__}, {os.cpu_count()} CPUs; DQN preset per game, "
          f"{args.steps:,} steps learning from {args.learning_starts:,}; load "
          f"{os.getloadavg()[0]:.2f} at start", flush=True)  # fmt: skip
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as out:
        for rep in range(args.reps):
            for game in games:
                loops = [("python", f"MinAtar/{game}-v0"), ("compiled", f"rlkit/MinAtar-{game}-v0")]
                for loop, env_id in loops if rep % 2 == 0 else loops[::-1]:
                    rate, cpu_ms, compile_s, updates = one_run(
                        env_id, loop, args.steps, args.learning_starts, args.seed, out
                    )
                    results.setdefault((game, loop), []).append((rate, cpu_ms))
                    extra = f", compiled in {compile_s:.1f} s" if compile_s is not None else ""
                    print(f"rep {rep}: {game:13s} {loop:8s} {rate:7.0f} steps/s "
                          f"{cpu_ms:6.2f} CPU ms/step ({updates:,} updates{extra}; load "
                          f"{os.getloadavg()[0]:.2f})", flush=True)  # fmt: skip
    print(f"\nmedians of {args.reps}:")
    for game in games:
        py, co = results[(game, "python")], results[(game, "compiled")]
        py_rate, co_rate = (statistics.median(r for r, _ in x) for x in (py, co))
        py_cpu, co_cpu = (statistics.median(c for _, c in x) for x in (py, co))
        print(f"  {game:13s} python {py_rate:6.0f} steps/s {py_cpu:5.2f} CPU ms/step | "
              f"compiled {co_rate:6.0f} steps/s {co_cpu:5.2f} CPU ms/step | "
              f"{co_rate / py_rate:.2f}x steps/s, {py_cpu / co_cpu:.2f}x less CPU")  # fmt: skip
    print(time.strftime("%H:%M:%S UTC", time.gmtime()), f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
