"""``rlkit evaluate RUN`` plays the run's own evaluation episodes unless told otherwise."""

from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner

from rlkit.cli.main import cli as click_cli
from rlkit.cli.main import main

TINY = ["--steps", "300", "--quiet", "--eval-every", "0", "--set", "hidden_sizes=8",
        "--set", "jit_compile=false", "--set", "learning_starts=100"]  # fmt: skip


def run(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.slow
def test_evaluate_defaults_to_the_runs_own_eval_episodes(capsys, tmp_path):
    status, _, err = run(capsys, "train", "dqn", "--out", tmp_path, "--eval-episodes", "3", *TINY)
    assert status == 0, err
    (run_dir,) = tmp_path.iterdir()
    status, out, err = run(capsys, "evaluate", run_dir)
    assert status == 0, err
    assert "over 3 greedy episodes" in out  # the run's eval_episodes, not a fixed 10
    status, out, _ = run(capsys, "evaluate", run_dir, "--episodes", "2")
    assert status == 0 and "over 2 greedy episodes" in out
    status, out, _ = run(capsys, "evaluate", run_dir / "model", "--env", "CartPole-v1")
    assert status == 0 and "over 10 greedy episodes" in out  # a model folder has no run
    status, _, err = run(capsys, "evaluate", run_dir, "--episodes", "0")
    assert status == 2 and len(err.strip().splitlines()) == 1
    if importlib.util.find_spec("moviepy") is not None:
        video = tmp_path / "one.mp4"
        status, _, err = run(capsys, "evaluate", run_dir, "--episodes", "1", "--video", video)
        assert status == 0 and f"recorded 1 episode to {video}" in err


def test_evaluate_help_says_the_default_is_the_runs_own():
    result = CliRunner().invoke(click_cli, ["evaluate", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "[default: the run's own, its config.toml's eval_episodes" in text
    assert "default: 10]" not in text
