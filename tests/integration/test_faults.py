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
# (schedules in steps: the 600-step run extended to 800 is then the 800-step run)
RUN = ["dqn", "--env", "CartPole-v1", "--eval-every", "300", "--eval-episodes", "2",
       "--checkpoint-every", "200", *SMALL, "--quiet", "--set", "eps_anneal_fraction=0",
       "--set", "lr_anneal_fraction=0"]  # fmt: skip


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


@pytest.mark.slow
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


# -- SIGKILL inside a checkpoint write --------------------------------------------------------
#: where the process is killed, as (module, attribute, which call): the second checkpoint
#: (step 400) is being written each time
KILL_POINTS = {
    "before-writing": ("rlkit.run.checkpoint", "flatten_state", 2),
    "between-files": ("numpy", "savez", 4),  # 1st checkpoint: weights, state; 2nd: weights|
    "index-update": ("rlkit.run.folder:RunFolder", "mark_latest", 2),  # folder in place
    "pruning": ("rlkit.run.folder:RunFolder", "prune_checkpoints", 2),  # latest updated
}
KILLED = """
import importlib, os, signal, sys
module, attribute, call = {where!r}
owner = importlib.import_module(module.split(":")[0])
if ":" in module:
    owner = getattr(owner, module.split(":")[1])
original, calls = getattr(owner, attribute), [0]
def killer(*args, **kwargs):
    calls[0] += 1
    if calls[0] == call:
        os.kill(os.getpid(), signal.SIGKILL)
    return original(*args, **kwargs)
setattr(owner, attribute, killer)
from rlkit.cli.main import main
sys.exit(main({argv!r}))
"""
FAULT_RUN = ["train", *RUN, "--eval-every", "0", "--steps", "600"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("uninterrupted")
    assert main([*FAULT_RUN, "--out", str(out)]) == 0
    (run_dir,) = out.iterdir()
    return RunFolder(run_dir)


@pytest.mark.slow
@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_sigkill_inside_a_checkpoint_write_loses_nothing_complete(
    capsys, tmp_path, uninterrupted, point
):
    import subprocess
    import sys

    code = KILLED.format(where=KILL_POINTS[point], argv=[*FAULT_RUN, "--out", str(tmp_path)])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == -9, done.stderr[-2000:]  # killed, as meant
    (run_dir,) = tmp_path.iterdir()
    folder = RunFolder(run_dir)
    assert not folder.is_finished
    status, err = cli(capsys, "resume", run_dir, "--quiet")
    assert status == 0, err
    assert folder.metrics_path.read_text() == uninterrupted.metrics_path.read_text()
    assert not [p for p in folder.checkpoints_dir.iterdir() if p.name.startswith(".")]


# -- the disk fills up during a checkpoint ----------------------------------------------------
FULL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
from rlkit.cli.main import main
sys.exit(main({argv!r}))
"""


@pytest.mark.slow
def test_a_full_disk_stops_the_run_in_one_line_and_the_last_checkpoint_resumes(
    capsys, tmp_path, uninterrupted
):
    import os
    import subprocess
    import sys

    # the first checkpoint's state.npz (~14 kB here) fits under the limit, the second's not
    code = FULL_DISK.format(limit=18_000, argv=[*FAULT_RUN, "--out", str(tmp_path)])
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    (run_dir,) = tmp_path.iterdir()
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1, done.stderr[-2000:]
    assert last.startswith(f"rlkit: training stopped: cannot write a checkpoint in {run_dir}")
    assert "File too large" in last and "(a checkpoint takes up to " in last and "kB)" in last
    assert "the last checkpoint (step-0000000200) is intact" in last
    assert f"then rlkit resume {run_dir}" in last
    folder = RunFolder(run_dir)
    assert [p.name for p in folder.checkpoint_dirs()] == ["step-0000000200"]
    assert not [p for p in folder.checkpoints_dir.iterdir() if p.name.startswith(".step")]
    status, err = cli(capsys, "resume", run_dir, "--quiet")  # space again
    assert status == 0, err
    assert folder.metrics_path.read_text() == uninterrupted.metrics_path.read_text()


# -- two processes on one run -----------------------------------------------------------------
@pytest.mark.slow
def test_a_second_resume_of_a_run_in_use_is_refused_and_a_killed_one_leaves_no_lock(
    capsys, tmp_path
):
    import signal
    import subprocess
    import sys
    import time

    assert main(["train", *RUN, "--eval-every", "0", "--steps", "300", "--out",
                 str(tmp_path)]) == 0  # fmt: skip
    capsys.readouterr()
    (run_dir,) = tmp_path.iterdir()
    first = subprocess.Popen([sys.executable, "-m", "rlkit.cli.main", "resume", str(run_dir),
                              "--steps", "1000000", "--quiet"], stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while "resuming" not in (line := first.stderr.readline().decode()):
            assert line and time.monotonic() < deadline, "the first resume did not start"
        status, err = cli(capsys, "resume", run_dir, "--steps", "400", "--quiet")
        assert status == 2
        assert err.strip() == (
            f"rlkit: error: {run_dir} is in use by another rlkit process (pid {first.pid}); "
            "wait for it to finish or stop it first"
        )
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    status, err = cli(capsys, "resume", run_dir, "--steps", "400", "--quiet")
    assert status == 0, err  # the kernel let go of the killed process's lock
