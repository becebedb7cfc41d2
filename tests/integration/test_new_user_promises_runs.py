"""What a new user met (issue 40), items 10-14: resume of an edited config, the Python
API's arguments, Ctrl-C, configs and videos, sweep and tune progress. Helpers and
fixtures: tests/integration/test_new_user_promises.py."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

from rlkit.core.errors import UsageError
from tests.integration.test_new_user_promises import (
    TINY,
    cli,
    nothing_in,
    refused,
    train_finished_run,
)


@pytest.fixture(scope="module", name="finished_run")
def _finished_run(tmp_path_factory) -> Path:
    return train_finished_run(tmp_path_factory)


# -- 10: a config.toml edited by hand after the run stopped ----------------------------------------
@pytest.fixture
def stopped_run(tmp_path, finished_run) -> Path:
    """A copy of the finished run as if stopped at its last checkpoint (no summary)."""
    return copy_stopped(tmp_path, finished_run)


def copy_stopped(tmp_path: Path, finished_run: Path) -> Path:
    """What :func:`stopped_run` makes."""
    import shutil

    run = tmp_path / finished_run.name
    shutil.copytree(finished_run, run)
    (run / "summary.json").unlink()
    return run


@pytest.mark.slow
@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('env = "CartPole-v1"', 'env = "Acrobot-v1"', "env (Acrobot-v1's observation space"),
        ("learning_rate = ", "learning_rate = -5\n# was ", "learning_rate (-5 in config.toml, "),
        ("hidden_sizes = [16, 16]", "hidden_sizes = [64]", "hidden_sizes ([64] in config.toml, "
         "[16, 16] in the checkpoint)"),
        ("seed = 0", "seed = 3", "seed (3 in config.toml, 0 in the checkpoint)"),
    ],
)  # fmt: skip
def test_10_resume_refuses_a_config_that_no_longer_describes_the_run(
    capsys, stopped_run, old, new, message
):
    config = stopped_run / "config.toml"
    text = config.read_text()
    assert old in text
    config.write_text(text.replace(old, new, 1))
    before = sorted(p.name for p in (stopped_run / "checkpoints").iterdir())
    refused(capsys, "resume", stopped_run, "--steps", "400", message=message)
    assert sorted(p.name for p in (stopped_run / "checkpoints").iterdir()) == before


@pytest.mark.slow
def test_10_an_untouched_config_resumes(capsys, stopped_run):
    status, _, err = cli(capsys, "resume", stopped_run, "--steps", "400", "--quiet")
    assert status == 0, err


# -- 11: the Python API checks its arguments as the CLI does ---------------------------------------
@pytest.fixture(scope="module")
def small_agent():
    import rlkit

    env = gym.make("CartPole-v1")
    return rlkit.agents.DQN.from_env(env, seed=0, learning_starts=50, hidden_sizes=(16,),
                                     jit_compile=False)  # fmt: skip


@pytest.mark.parametrize("steps", [0, -1, 1.5, "100", True])
def test_11_train_refuses_a_step_count_that_is_no_positive_whole_number(small_agent, steps):
    import rlkit

    with pytest.raises(UsageError, match=f"steps must be a positive whole number, got {steps!r}"):
        rlkit.train(small_agent, gym.make("CartPole-v1"), steps=steps)


def test_11_train_and_evaluate_refuse_an_env_of_other_spaces(small_agent):
    import rlkit

    for call in (lambda env: rlkit.train(small_agent, env, steps=10),
                 lambda env: rlkit.evaluate(small_agent, env, episodes=1)):  # fmt: skip
        with pytest.raises(UsageError, match="the agent was made for another observation space"):
            call(gym.make("Acrobot-v1"))


def test_11_a_string_for_a_switch_and_a_negative_seed_are_refused_by_name():
    import rlkit

    env = gym.make("Pendulum-v1")
    with pytest.raises(UsageError, match="bad value 'yes' for td3: expected true or false"):
        rlkit.agents.DDPG.from_env(env, td3="yes")
    with pytest.raises(UsageError, match=r"seed must be a whole number in \[0, 2\*\*32\), got -1"):
        rlkit.agents.DQN.from_env(gym.make("CartPole-v1"), seed=-1)


# -- 12: Ctrl-C during an evaluation; Ctrl-C after the final line ----------------------------------
def small_plan(eval_episodes: int = 5):
    from rlkit.run import experiment

    overrides = {"learning_starts": 100, "train_freq": 50, "gradient_steps": 4,
                 "hidden_sizes": "16,16", "jit_compile": False}  # fmt: skip
    return experiment.plan("dqn", "CartPole-v1", steps=300, eval_every=150,
                           eval_episodes=eval_episodes, checkpoint_every=100,
                           overrides=overrides)  # fmt: skip


class StopWhileEvaluating(gym.Wrapper):
    """The evaluation env: a stop request (as Ctrl-C makes one) at its ``at``-th step."""

    def __init__(self, env, trainer, at: int = 3) -> None:
        super().__init__(env)
        self.trainer, self.at, self.steps = trainer, at, 0

    def step(self, action):
        self.steps += 1
        if self.steps == self.at:
            self.trainer.request_stop()
        return self.env.step(action)


@pytest.mark.slow  # three small runs: ~20 s
def test_12_ctrl_c_during_an_evaluation_stops_it_and_the_resume_is_exact(tmp_path):
    from rlkit.run import experiment
    from rlkit.run.hooks.evaluation_hook import EvaluationHook

    whole = experiment.run(small_plan(), tmp_path / "whole", handle_signals=False)
    assert whole.status == experiment.FINISHED

    trainer = experiment.start(small_plan(), tmp_path / "stopped")
    (hook,) = [h for h in trainer.hooks if isinstance(h, EvaluationHook)]
    hook.env = StopWhileEvaluating(hook.env, trainer)
    stopped = experiment.drive(trainer, small_plan().settings, handle_signals=False)
    assert stopped.status == experiment.INTERRUPTED
    assert hook.env.steps == 3  # the evaluation stopped at once, not after its 5 episodes
    trainer, run = experiment.resume(stopped.run_dir)
    resumed = experiment.drive(trainer, run, handle_signals=False)
    assert resumed.status == experiment.FINISHED
    metrics = [(r.run_dir / "metrics.csv").read_text() for r in (whole, resumed)]
    assert metrics[0] == metrics[1]  # the evaluation it stopped is made on resume


@pytest.mark.slow
def test_12_ctrl_c_after_the_final_line_keeps_the_finished_status(capsys, tmp_path, monkeypatch):
    import click

    import rlkit.cli.train as train_cli

    real_echo = click.echo

    def echo_then_ctrl_c(message=None, *args, **kwargs):
        real_echo(message, *args, **kwargs)
        if message and "saved to" in str(message):
            raise KeyboardInterrupt  # the signal arriving right after the final line

    monkeypatch.setattr(train_cli.click, "echo", echo_then_ctrl_c)
    status, out, err = cli(capsys, "train", "dqn", "--steps", "200", "--out", tmp_path, *TINY)
    assert status == 0, err
    assert "saved to" in out


# -- 13: a config of another agent; a video format that cannot be written -------------------------
@pytest.mark.slow
def test_13_a_config_of_another_agent_says_so(capsys, finished_run, tmp_path):
    for command in ("train", "sweep", "tune"):
        refused(capsys, command, "ddpg", "--config", finished_run / "config.toml", "--out",
                tmp_path / "r", message=f"{finished_run / 'config.toml'} is a config for dqn, "
                "not ddpg")  # fmt: skip
    assert nothing_in(tmp_path / "r")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["out.txt", "out", "out.avi"])
def test_13_a_video_name_of_no_video_format_is_refused_before_playing(
    capsys, tmp_path, monkeypatch, finished_run, name
):
    monkeypatch.setattr("rlkit.run.video.record_video", lambda *a, **k: pytest.fail("played"))
    refused(
        capsys,
        "evaluate",
        finished_run,
        "--video",
        tmp_path / name,
        message="--video writes .mp4, .mkv, .mov, .webm, .ogv or .gif",
    )
    assert not (tmp_path / name).exists()


@pytest.mark.slow
def test_13_a_gif_is_written(capsys, tmp_path, finished_run):
    status, _, err = cli(capsys, "evaluate", finished_run, "--video", tmp_path / "out.gif",
                         "--episodes", "1")  # fmt: skip
    assert status == 0, err
    assert (tmp_path / "out.gif").read_bytes()[:3] == b"GIF"


# -- 14: sweep and tune progress said right --------------------------------------------------------
class FakeTrial:
    def __init__(self, status: str, final: float | None = None) -> None:
        self.config = {"trial": {"config": "default"}}
        self.status = status
        self.last_result = {"final_return": final} if final is not None else {}


def test_14_progress_counts_every_trial_of_a_configuration_started_or_not():
    from rlkit.sweeps.sweep_on_ray import progress_lines

    assert progress_lines([FakeTrial("RUNNING")], 2).strip() == (
        "default: 0/2 done, 1 running, 0 failed"
    )
    line = progress_lines([FakeTrial("TERMINATED", 20.0), FakeTrial("RUNNING")], 2)
    assert line.strip() == "default: 1/2 done, 1 running, 0 failed; best final 20.0"


def test_14_a_stopped_sweep_counts_the_trials_that_never_started():
    from rlkit.sweeps.grid import SweepSpec
    from rlkit.sweeps.sweep_on_ray import stopped_message

    spec = SweepSpec("dqn", {}, [0, 1])
    assert stopped_message(spec, 0, Path("s")).startswith("sweep stopped with 0 of 2 trials ")


def test_14_one_configuration_and_one_seed_are_said_in_the_singular(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("rlkit.cli.sweep._ray", lambda address: None)
    monkeypatch.setattr("rlkit.cli.sweep._run", lambda *args, **kwargs: 0)
    status, _, err = cli(capsys, "sweep", "dqn", "--seeds", "0", "--steps", "300", "--out",
                         tmp_path / "s")  # fmt: skip
    assert status == 0, err
    assert "sweep of 1 trial (1 configuration x 1 seed)" in err


@pytest.mark.parametrize(
    ("value", "shown"),
    [("0.9999", "0.9999"), ("0.99", "0.99"), ("0.000234567", "0.000235"), ("64", "64"),
     ("0.99999", "0.99999"), ("1.0", "1")],
)  # fmt: skip
def test_14_a_tuned_value_is_never_rounded_onto_a_whole_number(value, shown):
    from rlkit.sweeps.tuning import _short

    assert _short(value) == shown


def test_14_an_actor_not_a_actor():
    from rlkit.networks.custom import network_source

    with pytest.raises(UsageError, match="made with an actor of your own"):
        network_source("actor", "<python object>", None)
