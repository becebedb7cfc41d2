"""What a new user met (issue 55), items 4, 7, 9, 10, 13, 14, 15 and 16: each test here
failed before its fix. Helpers and fixtures: tests/integration/test_new_user_promises.py.

The promise (docs/cli.md): bad input gets one line on stderr, exit 2, nothing written;
from Python, :class:`rlkit.core.errors.UsageError` with one clear line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from rlkit.core.errors import UsageError
from rlkit.run import experiment
from tests.integration.test_new_user_promises import cli, refused, train_finished_run

REPO = Path(__file__).resolve().parents[2]


def one_line(exc: pytest.ExceptionInfo) -> str:
    """The error's message, which must be one line."""
    text = str(exc.value)
    assert "\n" not in text, text
    return text


@pytest.fixture(scope="module", name="finished_run")
def _finished_run(tmp_path_factory) -> Path:
    return train_finished_run(tmp_path_factory)


# -- 4: the Python API's doors: an unknown env, env=None, hooks that are not hooks ----------------
def test_4_plan_refuses_an_unknown_environment():
    with pytest.raises(UsageError) as exc:
        experiment.plan("dqn", env="NoSuchEnv-v0")
    assert "unknown environment 'NoSuchEnv-v0'" in one_line(exc)


@pytest.fixture(scope="module", name="small_agent")
def _small_agent():
    import rlkit

    return rlkit.agents.DQN.from_env("CartPole-v1", hidden_sizes=(8,), learning_starts=10,
                                     jit_compile=False)  # fmt: skip


@pytest.mark.parametrize("door", ["train", "evaluate"])
@pytest.mark.parametrize("env", [None, 5])
def test_4_train_and_evaluate_refuse_what_is_no_environment(small_agent, door, env):
    import rlkit

    call = {"train": lambda: rlkit.train(small_agent, env, steps=10),
            "evaluate": lambda: rlkit.evaluate(small_agent, env)}[door]  # fmt: skip
    with pytest.raises(UsageError) as exc:
        call()
    assert "env must be a gymnasium environment or its id" in one_line(exc)


@pytest.mark.parametrize(
    ("hooks", "message"),
    [
        ([object()], "hooks[0] is an object, not an rlkit.run.hooks.Hook"),
        (5, "hooks must be a list of rlkit.run.hooks.Hook objects, got an int"),
        ("abc", "hooks must be a list of rlkit.run.hooks.Hook objects, got a str"),
        ([lambda step, info, history: None], "a function of (step, info, history)"),
    ],
)
def test_4_start_refuses_hooks_that_are_not_hooks_and_writes_nothing(tmp_path, hooks, message):
    plan = experiment.plan("dqn", "CartPole-v1", steps=100)
    out = tmp_path / "runs"
    with pytest.raises(UsageError) as exc:
        experiment.start(plan, out, hooks=hooks)
    assert message in one_line(exc)
    assert not out.exists()


def test_4_resume_refuses_hooks_that_are_not_hooks(tmp_path):
    with pytest.raises(UsageError) as exc:
        experiment.resume(tmp_path / "a-run", hooks=5)
    assert "hooks must be a list" in one_line(exc)


def test_4_real_hooks_still_pass():
    from rlkit.run.hooks.base import Hook

    mine = [Hook(), Hook()]
    assert experiment.check_hooks(mine) == mine
    assert experiment.check_hooks(h for h in mine) == mine  # any iterable, once
    assert experiment.check_hooks(()) == []


# -- 14: one check of the environment, from the CLI and from plan ---------------------------------
def test_14_plan_refuses_what_train_refuses(capsys, tmp_path):
    with pytest.raises(UsageError) as exc:
        experiment.plan("rainbow", env="Pendulum-v1")
    line = refused(capsys, "train", "rainbow", "--env", "Pendulum-v1", "--out", tmp_path / "r")
    assert line == f"rlkit: error: {one_line(exc)}"
    assert "discrete" in line
    assert not (tmp_path / "r").exists()


def test_14_plan_refuses_num_envs_for_an_on_policy_agent():
    with pytest.raises(UsageError) as exc:
        experiment.plan("reinforce", "CartPole-v1", num_envs=2)
    assert "drop --num-envs" in one_line(exc)


# -- 7: Rainbow without noisy nets and without epsilon never explores -----------------------------
def test_7_rainbow_without_noise_or_epsilon_is_refused(capsys, tmp_path):
    line = refused(capsys, "train", "rainbow", "--set", "noisy=false", "--out", tmp_path / "r",
                   message="eps_start")  # fmt: skip
    assert "noisy=false" in line and "eps_end" in line
    assert not (tmp_path / "r").exists()
    with pytest.raises(UsageError, match="eps_start"):
        experiment.plan("rainbow", overrides={"noisy": False})
    fine = experiment.plan("rainbow", overrides=["noisy=false", "eps_start=1", "eps_end=0.01"])
    assert not fine.agent_config.noisy and fine.agent_config.eps_start == 1


def test_7_a_noisy_agent_describes_no_epsilon_schedule():
    rainbow = experiment.plan("rainbow", "CartPole-v1")
    lines = rainbow.spec.describe_schedules(rainbow.agent_config, 10_000, 0)
    assert not any(line.startswith("epsilon") for line in lines), lines
    plain = experiment.plan("rainbow", overrides=["noisy=false", "eps_start=1"])
    lines = plain.spec.describe_schedules(plain.agent_config, 10_000, 0)
    assert any(line.startswith("epsilon 1 -> 0") for line in lines), lines
    noisy_dqn = experiment.plan("dqn", overrides=["noisy=true", "eps_start=0", "eps_end=0"])
    lines = noisy_dqn.spec.describe_schedules(noisy_dqn.agent_config, 10_000, 0)
    assert not any(line.startswith("epsilon") for line in lines), lines


# -- 9: an export destination that cannot be written: one line, before TensorFlow -----------------
@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("/proc/nope", "cannot make the export folder /proc/nope"),
        ("a-file.txt/sub", "a-file.txt is a file, not a folder"),
        ("/sys/nope/deeper", "cannot make the export folder /sys/nope/deeper"),
    ],
)
def test_9_export_refuses_a_destination_it_cannot_make(capsys, tmp_path, monkeypatch, out, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file.txt").write_text("mine")
    run = tmp_path / "run"
    run.mkdir()
    refused(capsys, "export", run, "--out", out, message=message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file.txt", "run"]
    assert (tmp_path / "a-file.txt").read_text() == "mine"


def test_9_export_refuses_an_unwritable_destination_without_tensorflow(tmp_path):
    script = (
        "import sys\n"
        "from rlkit.cli.main import main\n"
        f"status = main(['export', {str(tmp_path)!r}, '--out', '/proc/nope'])\n"
        "assert 'tensorflow' not in sys.modules, 'TensorFlow was imported'\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO, timeout=120)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().startswith("rlkit: error: cannot make the export folder")


def test_9_the_python_export_refuses_it_too(tmp_path):
    from rlkit.exporting.destination import check_destination

    (tmp_path / "f").write_text("")
    with pytest.raises(UsageError) as exc:
        check_destination(tmp_path / "f" / "sub")
    assert "is a file, not a folder" in one_line(exc)
    assert check_destination(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # the probe leaves nothing


# -- 10: a run stopped before its first model: export its newest checkpoint's ---------------------
@pytest.mark.slow
@pytest.mark.parametrize("model", ["best", "final"])
def test_10_export_of_a_stopped_run_takes_its_newest_checkpoint(capsys, tmp_path, finished_run,
                                                                model):  # fmt: skip
    run = tmp_path / finished_run.name
    shutil.copytree(finished_run, run)
    for name in ("model", "best"):
        shutil.rmtree(run / name)
    (run / "summary.json").unlink()
    out = tmp_path / "export"
    status, stdout, err = cli(capsys, "export", run, "--out", out, "--model", model)
    assert status == 0, err
    newest = sorted((run / "checkpoints").glob("step-*"))[-1]
    assert "newest checkpoint" in err and newest.name in err
    assert f"(the model of checkpoint {newest.name})" in stdout.strip().splitlines()[-1]
    meta = json.loads((out / "rlkit_export.json").read_text())
    assert meta["model"] == f"checkpoint {newest.name}"


# -- 13: rlkit.agents.TD3, from the registry's aliases ---------------------------------------------
def test_13_td3_is_a_ddpg_with_td3_on():
    import rlkit
    from rlkit.agents.registry import ALIASES

    assert "TD3" in rlkit.agents.__all__
    for name in ALIASES:
        assert name.upper() in rlkit.agents.__all__
    td3 = rlkit.agents.TD3.from_env("Pendulum-v1", seed=1, actor_hidden_sizes=(8,),
                                    critic_hidden_sizes=(8,), jit_compile=False)  # fmt: skip
    assert isinstance(td3, rlkit.agents.DDPG) and td3.config.td3
    assert isinstance(td3, rlkit.agents.TD3)
    assert not isinstance(rlkit.agents.DDPG.from_env("Pendulum-v1", actor_hidden_sizes=(8,),
                          critic_hidden_sizes=(8,)), rlkit.agents.TD3)  # fmt: skip
    env = gym.make("Pendulum-v1")
    made = rlkit.agents.TD3(env.observation_space, env.action_space, actor_hidden_sizes=(8,),
                            critic_hidden_sizes=(8,))  # fmt: skip
    assert type(made) is rlkit.agents.DDPG and made.config.td3
    with pytest.raises(UsageError) as exc:
        rlkit.agents.TD3.from_env("Pendulum-v1", td3=False)
    assert "rlkit.agents.DDPG" in one_line(exc)


def test_13_unknown_names_still_say_so():
    import rlkit

    with pytest.raises(AttributeError, match="no attribute 'TD4'"):
        rlkit.agents.TD4  # noqa: B018


# -- 15: evaluate on a vector environment ----------------------------------------------------------
def _vector_env(mode: str):
    if mode == "make_vec":  # CartPole's own vector env (NEXT_STEP), as the issue made it
        return gym.make_vec("CartPole-v1", 2)
    autoreset = getattr(gym.vector.AutoresetMode, mode.upper())
    return gym.make_vec("CartPole-v1", 2, vectorization_mode="sync",
                        vector_kwargs={"autoreset_mode": autoreset})  # fmt: skip


@pytest.mark.parametrize("mode", ["make_vec", "next_step", "same_step"])
def test_15_evaluate_plays_a_vector_env(small_agent, mode):
    import rlkit
    from rlkit.run.evaluation import episode_returns

    returns = episode_returns(small_agent, _vector_env(mode), 5, seed=7)
    assert len(returns) == 5
    # sub-environment i is seeded seed + i: its first episode is a single env's with that seed
    first = [episode_returns(small_agent, gym.make("CartPole-v1"), 1, seed=s)[0] for s in (7, 8)]
    assert first[0] in returns and first[1] in returns
    mean, std = rlkit.evaluate(small_agent, _vector_env(mode), episodes=3, seed=7)
    assert np.isfinite(mean) and np.isfinite(std) and mean > 0


def test_15_a_vector_env_without_autoreset_is_refused_in_one_line(small_agent):
    import rlkit

    with pytest.raises(UsageError) as exc:
        rlkit.evaluate(small_agent, _vector_env("disabled"), episodes=2)
    assert "autoreset" in one_line(exc)


# -- 16: TF_CPP_MIN_LOG_LEVEL quiets, it does not bring TensorFlow's lines back -------------------
def test_16_only_rlkit_tf_logs_asks_for_tensorflows_lines(monkeypatch):
    from rlkit.core.quiet import user_wants_tf_logs

    monkeypatch.delenv("RLKIT_TF_LOGS", raising=False)
    for level in ("0", "2", "3"):
        monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", level)
        assert not user_wants_tf_logs()
    monkeypatch.setenv("RLKIT_TF_LOGS", "1")
    assert user_wants_tf_logs()


def _train_stderr(tmp_path: Path, name: str, **env: str) -> list[str]:
    """A real ``rlkit train``'s stderr lines, run folders and figures blanked out."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("TF_CPP_MIN_LOG_LEVEL", "RLKIT_TF_LOGS")}  # fmt: skip
    (tmp_path / name).mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "rlkit.cli.main", "train", "dqn", "--env", "CartPole-v1",
         "--steps", "300", "--eval-every", "0", "--quiet", "--out", "runs"],
        capture_output=True, text=True, cwd=tmp_path / name, env={**base, **env}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [re.sub(r"\d+", "N", line) for line in done.stderr.splitlines()]


@pytest.mark.slow
def test_16_a_real_run_is_as_quiet_with_tf_cpp_min_log_level(tmp_path):
    plain = _train_stderr(tmp_path, "plain")
    leveled = _train_stderr(tmp_path, "leveled", TF_CPP_MIN_LOG_LEVEL="3")
    assert leveled == plain
    assert not any("oneDNN" in line or "absl" in line for line in plain)
    asked = _train_stderr(tmp_path, "asked", TF_CPP_MIN_LOG_LEVEL="3", RLKIT_TF_LOGS="1")
    assert any("absl::InitializeLog" in line or ".cc:" in line for line in asked), asked
