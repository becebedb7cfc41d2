"""What a new user met (issue 14): each fix here has a test that fails without it."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import rlkit
from rlkit.cli.main import main
from rlkit.core.errors import UsageError
from rlkit.run.loop import Trainer
from rlkit.run.progress import TrainingProgress, format_duration
from rlkit.run.signals import stop_on_signals

TINY = [
    "--quiet", "--eval-episodes", "2", "--set", "learning_starts=100", "--set", "train_freq=50",
    "--set", "gradient_steps=4", "--set", "hidden_sizes=16,16", "--set", "jit_compile=false",
]  # fmt: skip


def cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def train(capsys, out: Path, *extra) -> Path:
    status, _, err = cli(capsys, "train", "dqn", "--out", out, *TINY, *extra)
    assert status == 0, err
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    return run_dir


class History:
    def __init__(self, episodes: int, recent: float | None):
        self.episode_returns = [0.0] * episodes
        self._recent = recent

    def recent_return(self):
        return self._recent


# -- 1, 2: the progress line ---------------------------------------------------------------------
@pytest.mark.parametrize("width", [20, 40, 60, 80, 100, 200])
def test_progress_line_never_exceeds_the_terminal(width):
    progress = TrainingProgress(50_000, "dqn SomeVeryLongEnvironmentName-v3", stream=io.StringIO())
    progress(12_345, {}, History(7, -12345.678))
    line = progress.line(width)
    assert len(line) <= width - 1 and "%" in line
    if width >= 80:
        assert "12,345/50,000 steps" in line and "return -12345.7" in line and "left" in line


def test_episode_capped_runs_count_episodes_and_a_true_time_left():
    progress = TrainingProgress(
        1_000_000, "reinforce CartPole-v1", total_episodes=1_000, stream=io.StringIO()
    )
    progress._start_time -= 10.0  # 10 s in: 250 of 1,000 episodes, 4,000 of 1M steps
    progress(4_000, {}, History(250, 20.0))
    line = progress.line(120)
    assert "250/1,000 episodes" in line and "25%" in line
    assert "0:30 left" in line  # 10 s for a quarter: 30 s for the rest, not ~40 minutes
    assert format_duration(3725) == "1:02:05"


def test_progress_writes_plain_lines_when_not_a_terminal():
    stream = io.StringIO()
    with TrainingProgress(100, "dqn CartPole-v1", stream=stream, line_interval=0.0) as p:
        for step in range(1, 101, 25):
            p(step, {}, History(1, 9.0))
    text = stream.getvalue()
    assert "\r" not in text and "\x1b" not in text and text.count("\n") >= 4


@pytest.mark.slow
def test_cli_progress_fits_an_80_column_terminal(tmp_path):
    controller, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": "80"}
    command = [sys.executable, "-m", "rlkit.cli.main", "train", "dqn", "--steps", "3000",
               "--out", str(tmp_path), *TINY[1:]]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=terminal, env=env)
    os.close(terminal)
    chunks = []
    while True:
        try:
            data = os.read(controller, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=120) == 0
    os.close(controller)
    screen = b"".join(chunks).decode()
    redraws = [re.sub(r"\x1b\[K", "", part) for part in screen.split("\r")[1:]]
    drawn = [line for part in redraws for line in part.split("\n") if "steps/s" in line]
    assert len(drawn) >= 2, screen
    assert all(len(line) <= 79 for line in drawn), max(drawn, key=len)


# -- 3: Ctrl-C is answered at once ----------------------------------------------------------------
@pytest.mark.slow
def test_stop_is_announced_while_the_main_thread_is_busy_in_native_code(tmp_path):
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.DQN.from_env(env, hidden_sizes=(8,), jit_compile=False)
    trainer = Trainer(agent, env)
    heard = []
    big = np.random.default_rng(0).random((2500, 2500))
    with stop_on_signals(trainer, on_stop=lambda signum: heard.append(time.perf_counter())):
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
        start = time.perf_counter()
        for _ in range(6):  # native BLAS calls: Python's own handler waits for them
            big @ big
        end = time.perf_counter()
    assert heard and heard[0] < end - 0.2, (heard, start, end)
    assert trainer._stop.is_set()


# -- 4, 8, 13: the command line -------------------------------------------------------------------
@pytest.mark.parametrize("args", [["--env", ""], ["--out", ""], ["--config", ""]])
def test_empty_options_are_usage_errors(capsys, args):
    status, _, err = cli(capsys, "train", "dqn", *args)
    assert status == 2 and "must not be empty" in err and len(err.strip().splitlines()) == 1


def test_bare_rlkit_prints_the_help(capsys):
    status, out, err = cli(capsys)
    assert status == 0 and out.startswith("Usage: rlkit") and "train" in out and not err


@pytest.mark.slow
def test_checkpoint_every_zero_means_only_at_the_end_and_negative_is_refused(capsys, tmp_path):
    run_dir = train(capsys, tmp_path / "a", "--steps", "300", "--checkpoint-every", "0")
    assert [p.name for p in (run_dir / "checkpoints").glob("step-*")] == ["step-0000000300"]
    status, _, err = cli(capsys, "train", "dqn", "--checkpoint-every", "-1")
    assert status == 2 and "--checkpoint-every must be 0 or more" in err


# -- 5, 11: metrics.csv and summary.json after a resume --------------------------------------------
@pytest.mark.slow
def test_resume_keeps_lf_line_endings_and_times_the_whole_run(capsys, tmp_path):
    run_dir = train(capsys, tmp_path, "--steps", "300")
    assert cli(capsys, "resume", run_dir, "--steps", "600", "--quiet")[0] == 0
    data = (run_dir / "metrics.csv").read_bytes()
    assert b"\r" not in data and data.count(b"\n") > 10
    summary = json.loads((run_dir / "summary.json").read_text())
    session = summary["this_session"]
    assert summary["steps"] == 600 and session["steps"] == 300
    assert summary["seconds"] > session["seconds"] > 0
    assert summary["steps_per_second"] == pytest.approx(600 / summary["seconds"], rel=0.01)


# -- 6: a Trainer's run folder ---------------------------------------------------------------------
@pytest.mark.slow
def test_trainer_makes_its_run_folder_and_it_resumes_and_evaluates(capsys, tmp_path):
    run_dir = tmp_path / "runs" / "mine"
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.DQN.from_env(env, hidden_sizes=(8,), learning_starts=50, train_freq=25,
                                      gradient_steps=2, jit_compile=False)  # fmt: skip
    trainer = Trainer(agent, env, run_dir=run_dir, tensorboard=False)
    trainer.run(200)
    trainer.close()
    assert (run_dir / "config.toml").is_file()
    status, out, err = cli(capsys, "evaluate", run_dir, "--episodes", "2")
    assert status == 0, err
    status, _, err = cli(capsys, "resume", run_dir, "--steps", "300", "--quiet")
    assert status == 0, err
    assert rlkit.load(run_dir / "model").num_steps == 300


# -- 7: messages that named the wrong thing, and the corrupt newest checkpoint --------------------
@pytest.mark.slow
def test_evaluate_without_any_model_says_so(capsys, tmp_path):
    run_dir = train(capsys, tmp_path, "--steps", "300")
    shutil.rmtree(run_dir / "model")
    shutil.rmtree(run_dir / "checkpoints")
    status, _, err = cli(capsys, "evaluate", run_dir)
    assert status == 2 and "no model to evaluate yet" in err and "resume" not in err


@pytest.mark.slow
def test_corrupt_newest_checkpoint_falls_back_to_the_older_one(capsys, tmp_path):
    run_dir = train(capsys, tmp_path, "--steps", "600", "--checkpoint-every", "200")
    newest = run_dir / "checkpoints" / "step-0000000600"
    older = run_dir / "checkpoints" / "step-0000000400"
    assert newest.is_dir() and older.is_dir()
    (newest / "state.npz").write_bytes(b"not a zip file")
    status, _, err = cli(capsys, "resume", run_dir, "--steps", "800", "--quiet")
    assert status == 0, err
    assert "corrupt checkpoint" in err and "step-0000000400" in err
    assert json.loads((run_dir / "summary.json").read_text())["steps"] == 800


def test_divergence_before_the_first_checkpoint_says_there_is_none(capsys, tmp_path):
    status, _, err = cli(
        capsys, "train", "dqn", "--out", tmp_path, *TINY, "--steps", "400",
        "--set", "learning_rate=1e30", "--set", "optimizer=sgd", "--checkpoint-every", "0",
    )  # fmt: skip
    assert status == 1 and "diverged before the first checkpoint" in err


# -- 9: TensorFlow's start-up noise ----------------------------------------------------------------
@pytest.mark.slow
def test_library_import_is_quiet(tmp_path):
    code = (
        "import gymnasium as gym, rlkit\n"
        "agent = rlkit.agents.DQN.from_env(gym.make('CartPole-v1'))\n"
        "print(agent.act([0.0, 0.0, 0.0, 0.0]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr


# -- 10: one panel per environment ---------------------------------------------------------------
@pytest.mark.slow
def test_plot_draws_one_panel_per_environment(capsys, tmp_path):
    import matplotlib.pyplot as plt

    a = train(capsys, tmp_path / "a", "--steps", "300")
    status, _, err = cli(
        capsys, "train", "dqn", "--env", "Acrobot-v1", "--out", tmp_path / "b", *TINY,
        "--steps", "600",
    )  # fmt: skip
    assert status == 0, err
    (b,) = (tmp_path / "b").iterdir()
    assert cli(capsys, "plot", a, b, "-o", tmp_path / "both.png")[0] == 0
    assert cli(capsys, "plot", a, "-o", tmp_path / "one.png")[0] == 0
    both, one = plt.imread(tmp_path / "both.png"), plt.imread(tmp_path / "one.png")
    assert both.shape[1] == 2 * one.shape[1]


# -- 12: config mappings and late gradient chains ------------------------------------------------
def test_config_takes_a_mapping_or_refuses_clearly():
    obs, actions = gym.spaces.Box(-1, 1, (3,)), gym.spaces.Discrete(2)
    agent = rlkit.agents.DQN(obs, actions, config={"gamma": 0.9}, hidden_sizes=(8,))
    assert agent.config.gamma == 0.9 and agent.config.hidden_sizes == (8,)
    with pytest.raises(UsageError, match="config must be a DQNConfig or a mapping"):
        rlkit.agents.DQN(obs, actions, config=[("gamma", 0.9)])


def test_a_gradient_chain_set_before_the_first_update_is_used_and_a_late_one_refused():
    from rlkit.learn import gradients
    from rlkit.replay.memory import Batch

    obs, actions = gym.spaces.Box(-1, 1, (3,)), gym.spaces.Discrete(2)
    small = dict(hidden_sizes=(8,), jit_compile=False, batch_size=4, learning_starts=0)
    plain = rlkit.agents.DQN(obs, actions, seed=1, **small)
    halved = rlkit.agents.DQN(obs, actions, seed=1, **small)
    halved.pipeline.process = gradients.scale(0.5)
    rng = np.random.default_rng(0)
    batch = Batch(rng.normal(size=(4, 3)).astype(np.float32), np.array([0, 1, 1, 0]),
                  np.ones(4, np.float32), rng.normal(size=(4, 3)).astype(np.float32),
                  np.zeros(4, bool), np.zeros(4, bool))  # fmt: skip
    for g, h in zip(plain.gradients(batch), halved.gradients(batch), strict=True):
        np.testing.assert_allclose(h.numpy(), 0.5 * g.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="before the first update"):
        halved.pipeline.process = gradients.identity
