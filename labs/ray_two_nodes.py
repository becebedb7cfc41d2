"""A real two-node Ray cluster on this machine: trials land on both nodes; a worker node
killed mid-sweep has its trials retried on the other, and nothing is lost.

A head node and a worker node, one CPU each, both on 127.0.0.1 (ray.cluster_utils.Cluster
starts each as its own raylet, as `ray start --head` / `ray start --address` would). Then
`rlkit sweep --address <head>` runs 4 seeds of CartPole DQN; once both nodes run a trial
with a checkpoint, the worker node is killed. The sweep must finish all 4 seeds, the
killed trials' run folders must show a second attempt on the head node, and each trial's
metrics.csv must equal an uninterrupted `rlkit train` of the same seed.

    python -m labs.ray_two_nodes                 # ~3 minutes on 2 cores
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = "12000"
COMMON = ["dqn", "--env", "CartPole-v1", "--steps", STEPS, "--checkpoint-every", "2000",
          "--eval-every", "0", "--set", "hidden_sizes=64,64"]  # fmt: skip


def main() -> None:
    # a cluster on one machine: keep Ray on the loopback interface (Ray's own switch; else it
    # advertises the machine's network address)
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    from ray.cluster_utils import Cluster

    from rlkit.sweeps.grid import trial_dir

    out = Path(tempfile.mkdtemp(prefix="rlkit-two-nodes-")) / "sweep"
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False})  # fmt: skip
    worker = cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    print(f"cluster at {cluster.address}: head {cluster.head_node.node_id[:8]}, "
          f"worker {worker.node_id[:8]}", flush=True)  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    sweep = subprocess.Popen(
        [sys.executable, "-m", "rlkit.cli.main", "sweep", *COMMON, "--seeds", "0-3",
         "--address", cluster.address, "--out", str(out), "--max-failures", "3"], env=env,
    )  # fmt: skip
    start = time.time()
    killed = False
    while sweep.poll() is None:
        attempts = {s: _attempts(out, s) for s in range(4)}
        running_on = {line.split()[-1] for lines in attempts.values() for line in lines}
        with_checkpoint = [
            s
            for s in range(4)
            if list((trial_dir(out, "default", s) / "checkpoints").glob("step-*"))
        ]
        if not killed and worker.node_id in running_on and len(with_checkpoint) >= 2:
            print(
                f"[{time.time() - start:.0f} s] trials on nodes "
                f"{sorted(n[:8] for n in running_on)}; killing the worker node",
                flush=True,
            )
            cluster.remove_node(worker, allow_graceful=False)
            killed = True
        time.sleep(0.5)
    print(f"sweep exited {sweep.returncode} after {time.time() - start:.0f} s", flush=True)
    for seed in range(4):
        lines = _attempts(out, seed)
        nodes = ["head" if cluster.head_node.node_id in line else "worker" for line in lines]
        same = _equal_to_train(out, seed)
        print(
            f"seed {seed}: attempts on {', '.join(nodes)}; finished "
            f"{(trial_dir(out, 'default', seed) / 'summary.json').is_file()}; "
            f"metrics.csv equal to an uninterrupted rlkit train: {same}"
        )
    print((out / "sweep.csv").read_text())
    cluster.shutdown()


def _attempts(out: Path, seed: int) -> list[str]:
    path = out / "runs" / "default" / f"seed-{seed}.attempts"
    return path.read_text().splitlines() if path.is_file() else []


def _equal_to_train(out: Path, seed: int) -> bool:
    from rlkit.sweeps.grid import trial_dir

    with tempfile.TemporaryDirectory() as reference:
        subprocess.run([sys.executable, "-m", "rlkit.cli.main", "train", *COMMON, "--seed",
                        str(seed), "--quiet", "--out", reference],
                       check=True, capture_output=True)  # fmt: skip
        (run_dir,) = Path(reference).iterdir()
        trial = trial_dir(out, "default", seed) / "metrics.csv"
        return trial.read_text() == (run_dir / "metrics.csv").read_text()


if __name__ == "__main__":
    main()
