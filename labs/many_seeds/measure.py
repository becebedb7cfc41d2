"""Many seeds of one configuration: one program per seed, one after another (as ``rlkit sweep``
runs them today), against all seeds in one XLA program, at PureJaxRL's DQN CartPole settings.

For ``S`` = 1, 2, 4, 8 (``--seeds-list``), in this one invocation, each in a child process
of its own (:mod:`labs.many_seeds.children`), interleaved so the machine's load falls on
all alike:

- ``one after another``: rlkit's own compiled program (``DQNProgram``), one process per seed;
  the ``S`` seeds' times summed (seeds 0..S-1, each run once and reused for larger ``S``);
- ``joint``: ``S`` copies of that program traced into one loop body of one XLA program;
- ``stacked``: the batched design, the seeds' weights stacked ``[S, ...]``
  (:mod:`labs.many_seeds.stacked`);
- ``PureJaxRL vmap``: ``jax.jit(jax.vmap(make_train(config)))`` on ``S`` keys (its
  ``purejaxrl/dqn.py``, in its own venv), with ``--purejaxrl``.

Prints per mode and ``S``: compile seconds, training seconds, total environment steps/s
over all seeds, seconds per seed, the ratio to one after another (total steps/s, compile
excluded; and with compile), peak memory (MB), the mean training return in the last chunk.

    nice python -m labs.many_seeds.measure --steps 100000 \\
        --venv /work/venv-purejaxrl --purejaxrl /work/purejaxrl
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.purejaxrl_dqn import PUREJAXRL_CHILD

#: PureJaxRL's child with S keys and its peak memory
VMAP_CHILD = PUREJAXRL_CHILD.replace(
    "rngs = jax.random.split(jax.random.PRNGKey(seed), 1)",
    "rngs = jax.random.split(jax.random.PRNGKey(seed), int(sys.argv[4]))",
).replace(
    '"steps": int(config["NUM_ENVS"] * len(returns)),',
    '"steps": int(config["NUM_ENVS"] * len(returns)) * len(rngs), '
    '"rss_mb": __import__("resource").getrusage(0).ru_maxrss / 1024,',
)


def child(argv: list[str]) -> dict:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", WANDB_MODE="disabled")
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"{argv[:4]} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ours(mode: str, s: int, steps: int, seed: int = 0) -> dict:
    return child([sys.executable, "-m", "labs.many_seeds.children", mode, str(s), str(steps),
                  str(seed)])  # fmt: skip


def show(name: str, s: int, r: dict, base: dict | None) -> None:
    rate = r["steps"] / r["train_s"]
    line = (f"S={s} {name:<20} compile {r['compile_s']:5.1f} s  train {r['train_s']:6.1f} s  "
            f"{rate:8,.0f} steps/s  {r['train_s'] / s:5.1f} s/seed  "
            f"{r['rss_mb']:6.0f} MB  return {r['final_return']:5.1f}")  # fmt: skip
    if base is not None:
        ratio = rate / (base["steps"] / base["train_s"])
        whole = (base["compile_s"] + base["train_s"]) / (r["compile_s"] + r["train_s"])
        line += f"  x{ratio:.2f} (x{whole:.2f} with compile)"
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100_000, help="env steps a seed [100000]")
    parser.add_argument("--seeds-list", default="1,2,4,8", help="values of S [1,2,4,8]")
    parser.add_argument("--modes", default="joint,stacked", help="batched modes [joint,stacked]")
    parser.add_argument("--venv", help="PureJaxRL's virtual environment (its vmap over seeds)")
    parser.add_argument("--purejaxrl", help="a clone of luchris429/purejaxrl")
    args = parser.parse_args()
    sizes = [int(x) for x in args.seeds_list.split(",")]
    modes = [m for m in args.modes.split(",") if m]
    print(
        f"CartPole, PureJaxRL's settings, {args.steps:,} env steps a seed; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
        flush=True,
    )
    singles: list[dict] = []
    for s in sizes:
        while len(singles) < s:
            singles.append(ours("one", 1, args.steps, len(singles)))
        seq = {"compile_s": sum(r["compile_s"] for r in singles[:s]),
               "train_s": sum(r["train_s"] for r in singles[:s]), "steps": s * args.steps,
               "rss_mb": max(r["rss_mb"] for r in singles[:s]),
               "final_return": sum(r["final_return"] for r in singles[:s]) / s}  # fmt: skip
        show("one after another", s, seq, None)
        for mode in modes:
            show(mode, s, ours(mode, s, args.steps), seq)
        if args.venv and args.purejaxrl:
            python = str(Path(args.venv) / "bin" / "python")
            dqn = str(Path(args.purejaxrl) / "purejaxrl" / "dqn.py")
            pjx = {}
            for k in sorted({1, s}):
                pjx[k] = child([python, "-c", VMAP_CHILD, dqn, "0", str(args.steps), str(k)])
            show("PureJaxRL vmap", s, pjx[s], None if s == 1 else {
                "compile_s": s * pjx[1]["compile_s"], "train_s": s * pjx[1]["train_s"],
                "steps": s * pjx[1]["steps"]})  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.1f} at the end", flush=True)


if __name__ == "__main__":
    main()
