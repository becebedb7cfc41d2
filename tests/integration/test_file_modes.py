"""Every file and folder rlkit writes honours the process umask (others can read a run on
shared storage under umask 022; nobody else can under 077)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rlkit.core.files import atomic_write_text, current_umask, make_temp_folder

RUN = ["train", "dqn", "--env", "CartPole-v1", "--steps", "600", "--eval-every", "300",
       "--eval-episodes", "2", "--checkpoint-every", "200", "--set", "hidden_sizes=8",
       "--set", "learning_starts=100", "--set", "jit_compile=false", "--quiet"]  # fmt: skip


def modes(root: Path) -> dict[str, set[str]]:
    """``{"files": {...}, "folders": {...}}``: the permission bits seen under ``root``."""
    seen: dict[str, set[str]] = {"files": set(), "folders": set()}
    for path in [root, *root.rglob("*")]:
        kind = "folders" if path.is_dir() else "files"
        seen[kind].add(oct(stat.S_IMODE(path.stat().st_mode)))
    return seen


@pytest.mark.slow
@pytest.mark.parametrize(("mask", "file", "folder"), [(0o022, "0o644", "0o755"),
                                                      (0o077, "0o600", "0o700")])  # fmt: skip
def test_a_run_folder_honours_the_umask(tmp_path, mask, file, folder):
    code = (f"import os, sys; os.umask({mask}); from rlkit.cli.main import main; "
            f"sys.exit(main({RUN + ['--out', str(tmp_path)]!r}))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    (run_dir,) = tmp_path.iterdir()
    for name in ("config.toml", "summary.json", "metrics.csv", "checkpoints/latest",
                 "model/agent.json", "best/weights.npz"):  # fmt: skip
        assert (run_dir / name).is_file(), name
    assert modes(run_dir) == {"files": {file}, "folders": {folder}}


def test_atomic_files_and_temporary_folders_take_the_umasks_mode(tmp_path):
    old = os.umask(0o027)
    try:
        assert current_umask() == 0o027
        atomic_write_text(tmp_path / "sweep.json", "{}")
        made = make_temp_folder(".x.", tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "sweep.json").stat().st_mode) == 0o640
    assert stat.S_IMODE(made.stat().st_mode) == 0o750
