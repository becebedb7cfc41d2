"""A run folder's fingerprint for bit-identity checks: the sha256 of metrics.csv with its
time columns left out, and of the final checkpoint's weights (every array of the saved
agent and program state, by name). ``python labs/ppo_speed/hash_run.py RUN_DIR``."""

from __future__ import annotations

import csv
import hashlib
import pickle
import sys
from pathlib import Path

import numpy as np

TIME_COLUMNS = {"time", "seconds", "wall_time", "elapsed", "steps_per_second", "fps"}


def metrics_hash(run: Path) -> str:
    digest = hashlib.sha256()
    with open(run / "metrics.csv", newline="") as f:
        rows = list(csv.reader(f))
    keep = [i for i, name in enumerate(rows[0]) if name not in TIME_COLUMNS and "time" not in name
            and "second" not in name]  # fmt: skip
    for row in rows:
        digest.update(",".join(row[i] for i in keep if i < len(row)).encode() + b"\n")
    return (
        digest.hexdigest()[:16] + f" ({len(rows) - 1} rows, columns {[rows[0][i] for i in keep]})"
    )


def weights_hash(run: Path) -> str:
    """The final model's arrays (model/weights.npz, by name), the last checkpoint's
    state arrays (its state.npz: the optimizer's and counters) and the compiled loop's
    variables it keeps (env.pkl: the environments, the rollout)."""
    digest = hashlib.sha256()
    last = sorted((run / "checkpoints").glob("step-*"))[-1]
    count = 0
    for path in (run / "model" / "weights.npz", last / "state.npz"):
        with np.load(path, allow_pickle=False) as arrays:
            for name in sorted(arrays.files):
                digest.update(name.encode() + np.ascontiguousarray(arrays[name]).tobytes())
                count += 1
    with open(last / "env.pkl", "rb") as f:
        arrays = pickle.load(f).arrays  # the compiled loop's ProgramState: its variables
    for name in sorted(arrays):
        digest.update(name.encode() + np.ascontiguousarray(arrays[name]).tobytes())
        count += 1
    return digest.hexdigest()[:16] + f" ({count} arrays, {last.name})"


if __name__ == "__main__":
    run = Path(sys.argv[1])
    print(f"metrics {metrics_hash(run)}  weights {weights_hash(run)}")
