"""Faults injected: a checkpoint cut short, and retention afterwards.

Each fault must lose nothing that was complete: resume goes on from the newest checkpoint
that loads, with the metrics.csv of the uninterrupted run, and pruning never deletes a
good checkpoint while keeping one that did not load.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rlkit.cli.main import main
from rlkit.run.checkpoint import load_checkpoint
from rlkit.run.folder import RunFolder

SMALL = ["--set", "hidden_sizes=8", "--set", "learning_starts=100", "--set", "train_freq=50",
         "--set", "gradient_steps=4", "--set", "jit_compile=false"]  # fmt: skip
RUN = ["dqn", "--env", "CartPole-v1", "--eval-every", "300", "--eval-episodes", "2",
       "--checkpoint-every", "200", *SMALL, "--quiet"]  # fmt: skip


def cli(capsys, *args) -> tuple[int, str]:
    status = main([str(a) for a in args])
    _, err = capsys.readouterr()
    return status, err


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An uninterrupted 800-step run, and the same run stopped at 600 (checkpoints at 400
    and 600 kept)."""
    root = tmp_path_factory.mktemp("runs")
    for name, steps in (("whole", 800), ("stopped", 600)):
        assert main(["train", *RUN, "--steps", str(steps), "--out", str(root / name)]) == 0
    (whole,) = (root / "whole").iterdir()
    (stopped,) = (root / "stopped").iterdir()
    return whole, stopped


def newest_checkpoint_files(run_dir: Path) -> list[str]:
    newest = RunFolder(run_dir).checkpoint_dirs()[-1]
    return sorted(str(p.relative_to(newest)) for p in newest.rglob("*") if p.is_file())


def test_the_newest_checkpoint_holds_the_files_the_cut_test_cuts(runs):
    _, stopped = runs
    files = newest_checkpoint_files(stopped)
    assert {"state.json", "state.npz", "env.pkl", "model/agent.json", "model/weights.npz"} <= set(
        files
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "cut", ["state.json", "state.npz", "env.pkl", "model/agent.json", "model/weights.npz"]
)
def test_a_newest_checkpoint_cut_short_is_set_aside_and_the_run_resumes_exactly(
    capsys, tmp_path, runs, cut
):
    whole, stopped = runs
    run_dir = tmp_path / "run"
    shutil.copytree(stopped, run_dir)
    folder = RunFolder(run_dir)
    newest = folder.checkpoint_dirs()[-1]
    assert newest.name == folder.checkpoint_name(600)
    damaged = newest / cut
    damaged.write_bytes(damaged.read_bytes()[: damaged.stat().st_size // 2])
    status, err = cli(capsys, "resume", run_dir, "--steps", "800", "--quiet")
    assert status == 0, err
    assert "set aside as step-0000000600.unusable" in err and "step-0000000400" in err
    assert folder.metrics_path.read_text() == RunFolder(whole).metrics_path.read_text()
    # retention: the kept checkpoints are the newest good ones, each of which loads
    kept = folder.checkpoint_dirs()
    assert [p.name for p in kept] == ["step-0000000600", "step-0000000800"]
    for checkpoint in kept:
        load_checkpoint(checkpoint)
    assert (folder.checkpoints_dir / "step-0000000600.unusable" / cut).is_file()
