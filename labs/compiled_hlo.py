"""Is the compiled loop's XLA program for uniform one-step DQN unchanged by a commit?

Builds a small DQN run (``--agent``: another, with the env's preset) in the compiled loop
(``experiment.start``; num_envs 2, replay 300, batch 16) with the rlkit of each source
folder given and prints the md5 of XLA's optimized HLO of the program's chunk, raw and with
the names TensorFlow and XLA number per process (function and instruction ids, source
lines, op names) renamed in order of appearance.
Equal normalised digests: the same program, so the same numbers.

    git worktree add /tmp/before COMMIT
    python -m labs.compiled_hlo /tmp/before . --env rlkit/CartPole-v1 rlkit/MinAtar-Breakout-v0
    python -m labs.compiled_hlo /tmp/before . --env rlkit/MinAtar-Breakout-v0 --agent rainbow
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys

DUMP = """
import sys, tempfile
import tensorflow as tf
from rlkit.run import experiment
plan = experiment.plan(sys.argv[2], sys.argv[1], steps=500, seed=3, num_envs=2, eval_every=0,
                       checkpoint_every=0,
                       overrides={"buffer_size": 300, "learning_starts": 64, "batch_size": 16})
with tempfile.TemporaryDirectory() as folder:
    trainer = experiment.start(plan, folder, tensorboard=False)
    ir = trainer.program._run.experimental_get_compiler_ir(
        tf.constant(10, tf.int32), tf.constant(5, tf.int64))
    sys.stdout.write(ir(stage="optimized_hlo"))
    trainer.close()
"""


def normalised(hlo: str) -> str:
    """The HLO without what differs from process to process: source places, and names
    (TensorFlow numbers its functions per process, XLA its instructions as it makes them):
    every ``%name`` becomes ``%vK``, ``K`` the order of its first appearance."""
    hlo = re.sub(r'(source_file|op_name)="[^"]*"|source_line=\d+', "", hlo)
    hlo = re.sub(r"_\d+(_|\b)", r"_N\1", hlo)
    names: dict[str, str] = {}
    return re.sub(r"%[\w.\-]+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), hlo)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", help="folders holding an rlkit/ to import")
    parser.add_argument("--env", nargs="+", default=["rlkit/CartPole-v1"])
    parser.add_argument("--agent", default="dqn", help="e.g. rainbow: its preset's program")
    args = parser.parse_args()
    for env in args.env:
        for source in args.sources:
            environment = {**os.environ, "PYTHONPATH": os.path.abspath(source),
                           "TF_CPP_MIN_LOG_LEVEL": "3"}  # fmt: skip
            command = [sys.executable, "-c", DUMP, env, args.agent]
            hlo = subprocess.run(command, capture_output=True, text=True, check=True,
                                 env=environment, cwd="/").stdout  # fmt: skip
            raw = hashlib.md5(hlo.encode()).hexdigest()[:12]
            norm = hashlib.md5(normalised(hlo).encode()).hexdigest()[:12]
            print(f"{env:28s} {source:24s} raw {raw}  normalised {norm}  ({len(hlo):,} chars)")


if __name__ == "__main__":
    main()
