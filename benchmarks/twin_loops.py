"""Settings that update after every step, in rlkit's Python loop and in its compiled loop.

Each case runs its preset in turn

- in the **Python loop** on the usual id (minatar's ``MinAtar/<Game>-v0``, gymnasium's
  ``Pendulum-v1``), and
- in the **compiled loop** on rlkit's TensorFlow twin of it (``rlkit/MinAtar-<Game>-v0``,
  ``rlkit/Pendulum-v1``: the same dynamics step for step; acting, the environment, the
  replay and the updates in one XLA program),

in one process, the two alternating per repetition. The cases: each MinAtar game with its
DQN preset at the paper's settings (``dqn/MinAtar_<Game>-v0``: batch 32, an update after
every step, centred RMSprop, the paper's one-convolution network), and ``Pendulum``: DDPG's
Pendulum preset updating after every step (``train_freq = gradient_steps = 1``). Each run
learns from ``--learning-starts`` on, so most of its steps carry an update; steps/s and the
process's CPU seconds per step are over the run after the compiled loop's compile (printed
apart). Printed: each run, then per case the medians and the compiled loop's ratio over the
Python loop (wall clock and CPU). The two loops draw different random numbers: they learn
alike, not identically.

    python -m benchmarks.twin_loops
    python -m benchmarks.twin_loops --cases Breakout,SpaceInvaders,Pendulum --steps 8000 --reps 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

GAMES = ("Breakout", "SpaceInvaders", "Freeway", "Asterix", "Seaquest")
CASES = (*GAMES, "Pendulum")


def ids(case: str) -> tuple[str, str, str, dict[str, int]]:
    """``(agent, the Python loop's id, the compiled loop's id, overrides)`` of a case."""
    if case == "Pendulum":
        return "ddpg", "Pendulum-v1", "rlkit/Pendulum-v1", {"train_freq": 1, "gradient_steps": 1}
    return "dqn", f"MinAtar/{case}-v0", f"rlkit/MinAtar-{case}-v0", {}


def one_run(case: str, loop: str, steps: int, learning_starts: int, seed: int, out: str):
    """``(steps/s, CPU ms per step, compile s or None, updates)`` of one preset run."""
    from rlkit.run import experiment

    agent, python_id, compiled_id, overrides = ids(case)
    env_id = compiled_id if loop == "compiled" else python_id
    overrides = {**overrides, "learning_starts": learning_starts}
    plan = experiment.plan(
        agent, env_id, steps=steps, seed=seed, eval_every=0, checkpoint_every=0,
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
    parser.add_argument("--cases", default="Breakout,Pendulum",
                        help=f"comma-separated, of {', '.join(CASES)}")  # fmt: skip
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--learning-starts", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    for case in cases:
        if case not in CASES:
            parser.error(f"--cases: {case!r} is not one of {', '.join(CASES)}")
    from rlkit.core.quiet import import_tensorflow_quietly

    import_tensorflow_quietly()
    import tensorflow as tf

    print(f"tensorflow {tf.__version__}, {os.cpu_count()} CPUs; each case's preset, "
          f"{args.steps:,} steps learning from {args.learning_starts:,}; load "
          f"{os.getloadavg()[0]:.2f} at start", flush=True)  # fmt: skip
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as out:
        for rep in range(args.reps):
            for case in cases:
                loops = ["python", "compiled"]
                for loop in loops if rep % 2 == 0 else loops[::-1]:
                    rate, cpu_ms, compile_s, updates = one_run(
                        case, loop, args.steps, args.learning_starts, args.seed, out
                    )
                    results.setdefault((case, loop), []).append((rate, cpu_ms))
                    extra = f", compiled in {compile_s:.1f} s" if compile_s is not None else ""
                    print(f"rep {rep}: {case:13s} {loop:8s} {rate:7.0f} steps/s "
                          f"{cpu_ms:6.2f} CPU ms/step ({updates:,} updates{extra}; load "
                          f"{os.getloadavg()[0]:.2f})", flush=True)  # fmt: skip
    print(f"\nmedians of {args.reps}:")
    for case in cases:
        py, co = results[(case, "python")], results[(case, "compiled")]
        py_rate, co_rate = (statistics.median(r for r, _ in x) for x in (py, co))
        py_cpu, co_cpu = (statistics.median(c for _, c in x) for x in (py, co))
        print(f"  {case:13s} python {py_rate:6.0f} steps/s {py_cpu:5.2f} CPU ms/step | "
              f"compiled {co_rate:6.0f} steps/s {co_cpu:5.2f} CPU ms/step | "
              f"{co_rate / py_rate:.2f}x steps/s, {py_cpu / co_cpu:.2f}x less CPU")  # fmt: skip
    print(time.strftime("%H:%M:%S UTC", time.gmtime()), f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
