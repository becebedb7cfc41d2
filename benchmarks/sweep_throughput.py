"""Ten CartPole DQN seeds: a sequential loop of `rlkit train` against one `rlkit sweep`.

Both run exactly the CLI's defaults (50,000 steps, evaluation every 2,500). The loop runs
one process after the other, each with TensorFlow's default threads (all cores); the
sweep runs as many 1-CPU trials at once as there are cores, Ray's start-up included.

    python -m benchmarks.sweep_throughput                  # ~6 minutes on 2 cores
    python -m benchmarks.sweep_throughput --seeds 0-3 --steps 20000
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import parse_seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-9")
    parser.add_argument("--steps", default="50000")
    args = parser.parse_args()
    seeds = parse_seeds(args.seeds)
    base = [sys.executable, "-m", "rlkit.cli.main"]
    common = ["dqn", "--env", "CartPole-v1", "--steps", args.steps]
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        for seed in seeds:
            subprocess.run([*base, "train", *common, "--seed", str(seed), "--quiet", "--out",
                            f"{tmp}/loop"], check=True, capture_output=True)  # fmt: skip
        loop = time.perf_counter() - start
        print(f"loop of {len(seeds)} rlkit train runs: {loop:.1f} s", flush=True)
        start = time.perf_counter()
        result = subprocess.run(
            [*base, "sweep", *common, "--seeds", args.seeds, "--out", f"{tmp}/sweep"],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        sweep = time.perf_counter() - start
        print(f"rlkit sweep of the same {len(seeds)} seeds: {sweep:.1f} s "
              f"({sweep / loop:.2f}x the loop's wall-clock)")  # fmt: skip
        print(result.stderr.strip().splitlines()[-2])
        loop_rows = sorted(Path(f"{tmp}/loop").iterdir())
        print(f"loop summaries: {len(loop_rows)} runs")


if __name__ == "__main__":
    main()
