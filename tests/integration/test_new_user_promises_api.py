"""What a new user met (issue 40), items 15-19, the Docs paragraph (40) and what the rerun
of labs/bad_inputs.py found (50). Helpers and fixtures:
tests/integration/test_new_user_promises.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from rlkit.core.errors import UsageError
from tests.integration.test_new_user_promises import TINY, cli, refused, train_finished_run
from tests.integration.test_new_user_promises_runs import copy_stopped


@pytest.fixture(scope="module", name="finished_run")
def _finished_run(tmp_path_factory) -> Path:
    return train_finished_run(tmp_path_factory)


@pytest.fixture(name="stopped_run")
def _stopped_run(tmp_path, finished_run) -> Path:
    return copy_stopped(tmp_path, finished_run)


# -- 15: an environment id where an environment is taken -------------------------------------------
def test_15_from_env_train_and_evaluate_take_an_id():
    import rlkit

    agent = rlkit.agents.DQN.from_env("CartPole-v1", seed=0, learning_starts=50,
                                      hidden_sizes=(16,), jit_compile=False)  # fmt: skip
    history = rlkit.train(agent, "CartPole-v1", steps=60)
    assert history.steps == 60
    mean, _ = rlkit.evaluate(agent, "CartPole-v1", episodes=1)
    assert mean > 0
    with pytest.raises(UsageError, match="unknown environment 'CartPole-v9'"):
        rlkit.agents.DQN.from_env("CartPole-v9")


# -- 16: TensorFlow's native start-up lines quiet, Python's own lines not --------------------------
QUIET_SCRIPT = """
import os, sys, warnings
from rlkit.core.quiet import silenced_stderr
with silenced_stderr():
    os.write(2, b"native line\\n")
    print("python line", file=sys.stderr)
    warnings.warn("a warning of the user's")
print("after", file=sys.stderr)
"""


def test_16_quieting_drops_native_lines_only(tmp_path):
    import subprocess

    done = subprocess.run([sys.executable, "-c", QUIET_SCRIPT], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "native line" not in done.stderr
    assert "python line" in done.stderr and "a warning of the user's" in done.stderr
    assert "after" in done.stderr


TRAIN_SCRIPT = """
import gymnasium as gym
import rlkit
env = gym.make("CartPole-v1")
agent = rlkit.agents.DQN.from_env(env, seed=0, learning_starts=50, hidden_sizes=(16,))
rlkit.train(agent, env, steps=100)
print("trained")
"""


@pytest.mark.slow
@pytest.mark.parametrize("asked", [False, True])
def test_16_training_from_python_is_quiet_unless_asked(tmp_path, asked):
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL",
                                                              "RLKIT_TF_LOGS")}  # fmt: skip
    if asked:
        env["RLKIT_TF_LOGS"] = "1"
    done = subprocess.run([sys.executable, "-c", TRAIN_SCRIPT], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    native = [line for line in done.stderr.splitlines() if "absl::InitializeLog" in line
              or ".cc:" in line]  # fmt: skip
    assert bool(native) == asked, done.stderr
    assert "TF_CPP_MIN_LOG_LEVEL" not in env  # (the user's own environment is left as it was)


# -- 17: a builder written as users write it -------------------------------------------------------
def q_network_as_users_write_it(observation_space, action_space):
    import keras

    inputs = keras.Input(observation_space.shape)
    return keras.Model(inputs, keras.layers.Dense(action_space.n)(inputs))  # a numpy int64


def test_17_a_builder_given_discrete_n_as_is_works():
    import rlkit

    agent = rlkit.agents.DQN.from_env(gym.make("CartPole-v1"), seed=0,
                                      q_network=q_network_as_users_write_it)  # fmt: skip
    assert agent.act(np.zeros(4, np.float32), explore=False) in (0, 1)


# -- 19: the final line and rlkit evaluate tell the same story ------------------------------------
@pytest.mark.slow
def test_19_evaluate_reproduces_the_runs_own_final_figures(capsys, finished_run):
    import json

    summary = json.loads((finished_run / "summary.json").read_text())
    final, best = summary["final_model"], summary["best_model"]
    status, out, err = cli(capsys, "evaluate", finished_run)
    assert status == 0, err
    assert f"return {final['eval_return_mean']:.1f} ± {final['eval_return_std']:.1f}" in out
    assert "final model" in out and "the run's final evaluation" in out
    status, out, err = cli(capsys, "evaluate", finished_run, "--best")
    assert status == 0, err
    assert f"return {best['eval_return_mean']:.1f} ± {best['eval_return_std']:.1f}" in out
    assert f"best model, step {best['step']}" in out


def test_19_the_final_line_headlines_the_model_that_scored_higher():
    from rlkit.run.experiment import headline

    higher_final = headline((300.0, 10.0), (200.0, 5.0), 4200, 10, "10 greedy episodes")
    assert higher_final.startswith("eval return 300.0 ± 10.0 (s.e. 3.2) over 10 greedy episodes "
                                   "(final model, in model/; best model, step 4200, in best/: "
                                   "200.0")  # fmt: skip
    higher_best = headline((200.0, 5.0), (300.0, 10.0), 4200, 10, "10 greedy episodes")
    expected = ("eval return 300.0 ± 10.0 (s.e. 3.2) over 10 greedy episodes (best model, step "
                "4200, in best/; final model 200.0")  # fmt: skip
    assert higher_best.startswith(expected)


# -- 40: the Docs paragraph (numbered 40 here: the issue's own number) -----------------------------
@pytest.mark.slow
def test_40_a_schedule_longer_than_the_run_says_so(capsys, tmp_path):
    status, _, err = cli(capsys, "train", "dqn", "--preset", "none", "--steps", "300", "--out",
                         tmp_path, *TINY)  # fmt: skip
    assert status == 0, err
    (line,) = [x for x in err.splitlines() if x.startswith("schedule: learning rate")]
    assert line.endswith("over 49,000 steps (longer than this 300-step run: it stops part-way; "
                         "--set lr_anneal_fraction=F fits it to the run)")  # fmt: skip


def test_40_the_api_docs_name_every_argument_of_train():
    import inspect

    import rlkit

    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    for name, parameter in inspect.signature(rlkit.train).parameters.items():
        if parameter.default is not inspect.Parameter.empty:
            assert f"{name}=" in text, name
    assert "about 3 minutes" not in (Path(__file__).resolve().parents[2] / "README.md").read_text()


# -- 50: found by the rerun of labs/bad_inputs.py -------------------------------------------------
def tree(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes())
            for p in folder.rglob("*") if p.is_file()}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("args", [[], ["--steps", "100"], ["--steps", "0"], ["--episodes", "-1"]])
def test_50_a_refused_resume_leaves_the_run_folder_as_it_was(capsys, finished_run, args):
    import time

    before = tree(finished_run)
    time.sleep(0.01)  # (a rewrite would show in the modification times)
    refused(capsys, "resume", finished_run, *args)
    assert tree(finished_run) == before


def test_50_a_refused_resume_makes_no_lock_file(capsys, stopped_run):
    (stopped_run / ".lock").unlink()
    config = stopped_run / "config.toml"
    config.write_text(config.read_text().replace("seed = 0", "seed = 3"))
    refused(capsys, "resume", stopped_run, "--steps", "400")
    assert not (stopped_run / ".lock").exists()


@pytest.mark.slow
def test_50_an_empty_plot_output_says_it_is_empty(capsys, finished_run, tmp_path):
    refused(capsys, "plot", finished_run, "-o", "", message="must not be empty")
