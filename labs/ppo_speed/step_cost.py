"""Where the compiled PPO's time goes, per environment step, for one or more checkouts.

Builds rlkit's compiled PPO on ``rlkit/CartPole-v1`` at PureJaxRL's settings
(``benchmarks/purejaxrl_ppo.py``'s keys: 4 envs x 128 steps, 4 epochs x 4 minibatches) in a
child process per checkout (``PYTHONPATH`` = the checkout), compiles it, then times
``PPOProgram.run_chunk`` on chunks of ``--chunk`` vector steps (``--repeats``, alternating
checkouts, median printed) in two settings:

- ``update``: the benchmark's program (an update every 128 vector steps);
- ``no-update``: ``n_steps`` one more than all the steps run, so the rollout never fills and
  a chunk is acting, the environment's step, the rollout's write and the episode
  accounting alone.

With ``--hlo DIR`` it also writes each program's optimized HLO there and prints its count
of instructions (all, in the while loops' bodies, fusions).

    nice python -m labs.ppo_speed.step_cost /tmp/ppo-base . --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = textwrap.dedent(
    """
    import json, sys, tempfile, time
    from benchmarks.purejaxrl_ppo import RLKIT_KEYS
    mode, hlo = sys.argv[1], sys.argv[5]
    chunk, repeats, threads = (int(a) for a in sys.argv[2:5])
    import tensorflow as tf
    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    from rlkit.run import experiment
    keys = dict(RLKIT_KEYS, lr_anneal_steps=10**7)
    if mode == "no-update":
        rows = chunk * (repeats + 1) + 1  # more than the steps run: never full
        keys.update(n_steps=rows, batch_size=rows)
    steps = 4 * chunk * (repeats + 1)
    plan = experiment.plan("ppo", "rlkit/CartPole-v1", steps=steps, seed=0, num_envs=4,
                           eval_every=0, checkpoint_every=0, preset="none", overrides=keys)
    with tempfile.TemporaryDirectory() as out:
        trainer = experiment.start(plan, out, tensorboard=False, loop="compiled")
        program = trainer.program
        start = time.perf_counter()
        program.compile()
        compile_s = time.perf_counter() - start
        program.run_chunk(chunk)  # warm
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            out_ = program.run_chunk(chunk)
            times.append(time.perf_counter() - start)
        if hlo:
            ir = program._run.experimental_get_compiler_ir(
                tf.constant(10, tf.int32), tf.constant(5, tf.int64))
            with open(hlo, "w") as f:
                f.write(ir(stage="optimized_hlo"))
        trainer.close()
    print(json.dumps({"compile_s": compile_s, "times": times, "updates": out_.updates}))
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", help="checkouts (folders holding rlkit/)")
    parser.add_argument(
        "--chunk", type=int, default=5000, help="vector steps a chunk (at most 5000) [5000]"
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1, help="child processes per checkout")
    parser.add_argument("--threads", type=int, default=0, help="XLA threads (0: default)")
    parser.add_argument("--modes", default="no-update,update")
    parser.add_argument("--hlo", default="", help="a folder for the optimized HLO")
    parser.add_argument("--xla-flags", action="append", default=[],
                        help="XLA_FLAGS for the children (repeatable: each checkout runs "
                        "with each, alternating; '' for none)")  # fmt: skip
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    results: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for mode in args.modes.split(","):
            runs = [(s, f) for s in args.sources for f in (args.xla_flags or [None])]
            for i, (source, flags) in enumerate(runs):
                hlo = ""
                if args.hlo:
                    os.makedirs(args.hlo, exist_ok=True)
                    hlo = os.path.join(args.hlo, f"{i}-{mode}.hlo.txt")
                env = {**os.environ, "PYTHONPATH": os.path.abspath(source),
                       "TF_CPP_MIN_LOG_LEVEL": "3"}  # fmt: skip
                if flags is not None:
                    env["XLA_FLAGS"] = flags
                name = source if flags is None else f"{source} [{flags}]"
                command = [sys.executable, "-c", CHILD, mode, str(args.chunk), str(args.repeats),
                           str(args.threads), hlo]  # fmt: skip
                done = subprocess.run(command, capture_output=True, text=True, env=env,
                                      cwd=os.path.abspath(source))  # fmt: skip
                if done.returncode:
                    sys.exit(done.stderr[-3000:])
                r = json.loads(done.stdout.strip().splitlines()[-1])
                per_step = [t / (args.chunk * 4) * 1e6 for t in r["times"]]
                results.setdefault((mode, name), []).extend(per_step)
                extra = ""
                if hlo:
                    text = Path(hlo).read_text()
                    extra = (
                        f"  HLO {text.count(' = ')} instructions, {text.count('fusion(')} fusions"
                    )
                print(f"{mode:9s} {name:20s} compile {r['compile_s']:5.1f} s  "
                      f"{statistics.median(per_step):6.2f} us/env step (min {min(per_step):.2f})  "
                      f"updates {r['updates']}{extra}", flush=True)  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.1f}")
    for (mode, name), values in results.items():
        print(f"{mode:9s} {name:20s} median {statistics.median(values):6.2f} us/env step")


if __name__ == "__main__":
    main()
