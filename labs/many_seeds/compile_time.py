"""Where the compiled loop's compile time goes, at PureJaxRL's DQN CartPole settings.

Each variant in a child process of its own (a fresh TensorFlow: nothing cached), one after
another, ``--repeat`` times in turn: building the agent and program (not compile time), tracing
``DQNProgram._chunk`` to a graph (Python: the Keras model, the loss, the optimizer), and the first
call (graph passes and XLA's compilation); the sum of the last two is what ``compiled the loop
in N s`` reports. A variant is a setting tried on top of today's program; each also checks that
the weights after 2,000 vector steps (10k of them learning) are bit for bit today's (seed 1;
``cached``: seed 1 loading the XLA code seed 0's process compiled, as a sweep's seeds do).

    nice python -m labs.many_seeds.compile_time --repeat 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

#: Python run after TensorFlow's import and before the program is built; ``AUTOGRAPH`` puts
#: AutoGraph back on the program's function (as before it was turned off for rlkit's own code)
AUTOGRAPH = "import rlkit.run.compiled.program as cp; cp.needs_autograph = lambda config: True"
NO_GRAPPLER = "tf.config.optimizer.set_experimental_options({'disable_meta_optimizer': True})"
VARIANTS = {
    "autograph": AUTOGRAPH,
    "no autograph": "",
    "no grappler": f"{AUTOGRAPH}; {NO_GRAPPLER}",
    "neither": NO_GRAPPLER,
    # XLA's code of this configuration compiled before by another seed's process (seed 0,
    # not timed): what rlkit sweep's later seeds do (use_xla_cache)
    "cached": "from rlkit.run.compiled.choice import use_xla_cache; "
    "use_xla_cache(os.environ['CACHE'], 'rlkit/CartPole-v1')",
}


def child(variant: str) -> None:
    start = time.perf_counter()
    import tensorflow as tf

    exec(VARIANTS[variant], {"tf": tf, "os": os})
    from labs.many_seeds.children import build_program

    program = build_program(int(os.environ.get("SEED", "1")), 10**9)
    built = time.perf_counter() - start
    start = time.perf_counter()
    program._run.get_concrete_function()
    traced = time.perf_counter() - start
    start = time.perf_counter()
    program.compile()
    first = time.perf_counter() - start
    start = time.perf_counter()
    program.run_chunk(2000)
    run = time.perf_counter() - start
    digest = hashlib.sha256()
    for w in program.agent.learner.q.model.weights:
        digest.update(w.numpy().tobytes())
    print(json.dumps({"import_build_s": built, "trace_s": traced, "first_call_s": first,
                      "chunk_s": run, "weights": digest.hexdigest()[:12]}))  # fmt: skip


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    names = args.variants.split(",")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    rows: dict[str, list[dict]] = {name: [] for name in names}
    cache = tempfile.mkdtemp(prefix="xla-cache-")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CACHE=cache)
    env.pop("TF_XLA_FLAGS", None)
    if "cached" in names:  # seed 0 compiles and keeps the code; every timed child is seed 1
        argv = [sys.executable, "-m", "labs.many_seeds.compile_time", "--child", "cached"]
        subprocess.run(argv, capture_output=True, env=dict(env, SEED="0"), check=True)
    for _ in range(args.repeat):
        for name in names:
            argv = [sys.executable, "-m", "labs.many_seeds.compile_time", "--child", name]
            done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            rows[name].append(r)
            print(f"{name:<14} build {r['import_build_s']:5.1f} s  trace {r['trace_s']:5.2f} s  "
                  f"first call {r['first_call_s']:5.2f} s  2,000 vector steps {r['chunk_s']:5.2f} s"
                  f"  weights {r['weights']}", flush=True)  # fmt: skip
    for name, rs in rows.items():
        trace = statistics.median(r["trace_s"] for r in rs)
        first = statistics.median(r["first_call_s"] for r in rs)
        print(
            f"{name:<14} median trace {trace:.2f} s + first call {first:.2f} s = "
            f"{trace + first:.2f} s"
        )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
