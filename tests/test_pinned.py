"""Behaviour pinned bit for bit: today's runs must write the metrics.csv the code before
the off-policy core wrote (tests/fixtures/pin_runs.py made the fixtures), and a run
folder checkpointed by that older code must still resume to the same file."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from rlkit.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES))
from pin_runs import OLD_CHECKPOINTS, RUNS  # noqa: E402

pytestmark = pytest.mark.slow


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()  # line-ending-insensitive


@pytest.mark.parametrize("name", sorted(RUNS))
def test_run_writes_the_pinned_metrics(name, tmp_path):
    assert main(["train", *RUNS[name], "--out", str(tmp_path), "--quiet"]) == 0
    (run_dir,) = tmp_path.iterdir()
    assert _lines(run_dir / "metrics.csv") == _lines(FIXTURES / "pinned" / f"{name}.csv")


@pytest.mark.parametrize("name", sorted(OLD_CHECKPOINTS))
def test_checkpoint_from_before_the_change_resumes_to_the_pinned_metrics(name, tmp_path):
    run_dir = tmp_path / name
    shutil.copytree(FIXTURES / "old_runs" / name, run_dir)
    assert main(["resume", str(run_dir), "--quiet"]) == 0
    assert _lines(run_dir / "metrics.csv") == _lines(FIXTURES / "pinned" / f"{name}.csv")
