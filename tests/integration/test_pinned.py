"""Behaviour pinned bit for bit: today's runs must write the metrics.csv the code before
the off-policy core wrote (tests/fixtures/pin_runs.py made the fixtures), and a run
folder checkpointed by that older code must still resume to the same file.

Bit for bit holds on one platform: the fixtures were made with OpenBLAS's Haswell
kernels (numpy's matrix products: acting with an MLP's numpy copy), and OpenBLAS picks
its kernels by CPU (its SkylakeX ones round differently in the last bits, and a DDPG
run then drifts by 0.6 in its fifth episode). So the runs go in a subprocess with
``OPENBLAS_CORETYPE=Haswell``, set before numpy loads: the code, not the CPU, is what
these tests pin."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures"
sys.path.insert(0, str(FIXTURES))
from pin_runs import BLAS_KERNELS, OLD_CHECKPOINTS, RUNS  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                       reason="the fixtures were made with x86-64 (Haswell) BLAS kernels"),
]  # fmt: skip


def rlkit(*argv: str) -> None:
    """``rlkit ARGV --quiet`` in a fresh process on the fixtures' BLAS kernels; must succeed."""
    command = [sys.executable, "-m", "rlkit.cli.main", *argv, "--quiet"]
    done = subprocess.run(command, env={**os.environ, **BLAS_KERNELS},
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()  # line-ending-insensitive


@pytest.mark.parametrize("name", sorted(RUNS))
def test_run_writes_the_pinned_metrics(name, tmp_path):
    rlkit("train", *RUNS[name], "--out", str(tmp_path))
    (run_dir,) = tmp_path.iterdir()
    assert _lines(run_dir / "metrics.csv") == _lines(FIXTURES / "pinned" / f"{name}.csv")


@pytest.mark.parametrize("name", sorted(OLD_CHECKPOINTS))
def test_checkpoint_from_before_the_change_resumes_to_the_pinned_metrics(name, tmp_path):
    run_dir = tmp_path / name
    shutil.copytree(FIXTURES / "old_runs" / name, run_dir)
    rlkit("resume", str(run_dir))
    assert _lines(run_dir / "metrics.csv") == _lines(FIXTURES / "pinned" / f"{name}.csv")
