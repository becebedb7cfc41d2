"""What a new user met (issue 40): each fix here has a test that failed without it.

The promise (docs/cli.md): bad input gets one line on stderr, exit 2, nothing written;
from Python, :class:`rlkit.core.errors.UsageError` with one clear line.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from rlkit.cli.main import main
from rlkit.core.errors import UsageError

TINY = [
    "--quiet", "--eval-episodes", "2", "--set", "learning_starts=100", "--set", "train_freq=50",
    "--set", "gradient_steps=4", "--set", "hidden_sizes=16,16", "--set", "jit_compile=false",
]  # fmt: skip


def cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, *args, message: str = "") -> str:
    """Run the command; it must answer one line, exit 2; returns that line."""
    status, out, err = cli(capsys, *args)
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("rlkit: error: "), err
    assert message in lines[0], lines[0]
    return lines[0]


def nothing_in(folder: Path) -> bool:
    return not folder.exists()


@pytest.fixture
def corridor(tmp_path, monkeypatch):
    """A user's package ``lab40``: a corridor whose constructor refuses a bad length, an
    entry point whose module does not import, and a Dict-observation corridor."""
    package = tmp_path / "lab40"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import gymnasium as gym\n"
        "import numpy as np\n"
        "class Corridor(gym.Env):\n"
        "    action_space = gym.spaces.Discrete(2)\n"
        "    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)\n"
        "    def __init__(self, size=3):\n"
        "        if size <= 0:\n"
        "            raise ValueError(f'size must be positive, got {size}')\n"
        "        self.size = size\n"
        "    def reset(self, *, seed=None, options=None):\n"
        "        super().reset(seed=seed)\n"
        "        self.at = 0\n"
        "        return np.zeros(1, np.float32), {}\n"
        "    def step(self, action):\n"
        "        self.at += 1\n"
        "        done = self.at >= self.size\n"
        "        return np.zeros(1, np.float32), 1.0, done, False, {}\n"
        "class DictCorridor(Corridor):\n"
        "    observation_space = gym.spaces.Dict({'position': gym.spaces.Box(0.0, 1.0, (1,),"
        " np.float32)})\n"
        "    def reset(self, *, seed=None, options=None):\n"
        "        super().reset(seed=seed)\n"
        "        return {'position': np.zeros(1, np.float32)}, {}\n"
        "    def step(self, action):\n"
        "        _, r, done, trunc, info = super().step(action)\n"
        "        return {'position': np.zeros(1, np.float32)}, r, done, trunc, info\n"
        "gym.register('lab40/Corridor-v0', entry_point=Corridor, max_episode_steps=50)\n"
        "gym.register('lab40/DictCorridor-v0', entry_point=DictCorridor, max_episode_steps=50)\n"
        "gym.register('lab40/Missing-v0', entry_point='lab40_not_installed:Env')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in ("Corridor-v0", "DictCorridor-v0", "Missing-v0"):
        gym.registry.pop(f"lab40/{name}", None)
    sys.modules.pop("lab40", None)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A small finished DQN run on CartPole (with checkpoints, a best and a final model)."""
    out = tmp_path_factory.mktemp("runs")
    assert main(["train", "dqn", "--steps", "300", "--eval-every", "150", "--checkpoint-every",
                 "100", *TINY, "--out", str(out)]) == 0  # fmt: skip
    (path,) = out.iterdir()
    return path


# -- 1: sweep and tune check what train checks, before Ray starts --------------------------------
@pytest.mark.parametrize("command", ["sweep", "tune"])
def test_1_sweep_and_tune_refuse_an_unfit_network_before_ray(
    capsys, corridor, monkeypatch, command
):
    def no_ray(*args, **kwargs):
        pytest.fail("Ray was asked for before the agent was checked")

    monkeypatch.setattr("rlkit.cli.sweep._ray", no_ray)
    monkeypatch.setattr("rlkit.cli.tune._check_ray", no_ray)
    refused(
        capsys,
        command,
        "dqn",
        "--env",
        "lab40:lab40/DictCorridor-v0",
        "--steps",
        "300",
        "--out",
        corridor / "s",
        message="dqn's built-in networks cannot take a Dict",
    )
    assert nothing_in(corridor / "s")


# -- 2: an environment constructor that refuses its arguments -------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env", "lab40:lab40/Corridor-v0", "--env-kwargs", "size=0"],
         "environment 'lab40/Corridor-v0' refuses its env_kwargs ['size']: ValueError: size must"),
        (["--env", "rlkit/MultiArmedBandit-v0", "--env-kwargs", "arm_means=[]"],
         "refuses its env_kwargs ['arm_means']: ValueError: a bandit needs at least one arm"),
        (["--env", "rlkit/MultiArmedBandit-v0", "--env-kwargs", "std=-1"],
         "refuses its env_kwargs ['std']"),
        (["--env", "lab40:lab40/Missing-v0"],
         "environment 'lab40/Missing-v0' cannot be made: its entry point does not import "
         "(ModuleNotFoundError: No module named 'lab40_not_installed')"),
    ],
)  # fmt: skip
def test_2_an_env_that_refuses_its_arguments_is_one_line(capsys, corridor, args, message):
    out = corridor / "runs"
    refused(capsys, "train", "dqn", *args, "--out", out, *TINY, message=message)
    assert nothing_in(out)


def test_2_env_kwargs_as_a_string_in_a_config_file_is_one_line(capsys, corridor):
    config = corridor / "mine.toml"
    config.write_text('[run]\nagent = "dqn"\nenv_kwargs = "length=3"\n')
    refused(capsys, "train", "--config", config, "--out", corridor / "runs",
            message="bad value 'length=3' for env_kwargs: expected a table")  # fmt: skip
    assert nothing_in(corridor / "runs")


# -- 3: a folder that cannot be written ------------------------------------------------------------
def read_only(monkeypatch, suffix: str) -> None:
    """Opening (for writing) a file whose name ends with ``suffix`` fails as on a read-only
    filesystem (the tests run as root, whom chmod does not stop)."""
    import builtins
    import errno

    real_open = builtins.open

    def fake_open(file, mode="r", *args, **kwargs):
        if str(file).endswith(suffix) and any(c in mode for c in "wax+"):
            raise OSError(errno.EROFS, "Read-only file system", str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)


def test_3_resume_on_a_read_only_filesystem_is_one_line(capsys, tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.toml").write_text('[run]\nagent = "dqn"\nenv = "CartPole-v1"\n[agent]\n')
    read_only(monkeypatch, ".lock")
    refused(capsys, "resume", run, message=f"cannot write to run folder {run}: Read-only file")
    assert [p.name for p in run.iterdir()] == ["config.toml"]


def test_3_a_video_into_a_read_only_folder_is_refused_before_playing(
    capsys, tmp_path, monkeypatch, finished_run
):
    import tempfile

    def no_temp(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_temp)
    monkeypatch.setattr("rlkit.run.video.record_video", lambda *a, **k: pytest.fail("played"))
    refused(
        capsys,
        "evaluate",
        finished_run,
        "--video",
        tmp_path / "out.mp4",
        message=f"--video {tmp_path / 'out.mp4'}: cannot write to {tmp_path}: Read-only",
    )


# -- 4: a replay larger than the replay can index --------------------------------------------------
def test_4_a_buffer_beyond_2_31_is_refused_before_tensorflow(capsys, tmp_path):
    refused(capsys, "train", "dqn", "--set", "buffer_size=100000000000", "--out", tmp_path / "r",
            message="bad value 100000000000 for buffer_size: must be < 2**31")  # fmt: skip
    assert nothing_in(tmp_path / "r")


# -- 5: a window asked for where there is no display -----------------------------------------------
def test_5_render_mode_human_without_a_display_is_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    refused(capsys, "train", "dqn", "--env-kwargs", 'render_mode="human"', "--out",
            tmp_path / "r", *TINY, message="render_mode 'human' needs a display")  # fmt: skip
    assert nothing_in(tmp_path / "r")


# -- 6: evaluate while the run prunes its checkpoints ---------------------------------------------
@pytest.fixture
def training_run(tmp_path, finished_run) -> Path:
    """A copy of the finished run as it was while training: checkpoints, no model/ yet."""
    import shutil

    run = tmp_path / finished_run.name
    shutil.copytree(finished_run, run)
    for name in ("model", "summary.json"):
        target = run / name
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    return run


def write_next_checkpoint_and_prune(run: Path) -> Path:
    """What the training process does at its next checkpoint: a new complete checkpoint,
    ``latest`` names it, the older ones beyond ``keep`` are pruned."""
    import shutil

    from rlkit.run.checkpoint import STATE_FILE
    from rlkit.run.folder import RunFolder

    folder = RunFolder(run)
    newest = folder.checkpoint_dirs()[-1]
    step = int(newest.name.split("-")[1]) + 100
    new = newest.with_name(folder.checkpoint_name(step))
    shutil.copytree(newest, new)
    folder.mark_latest(new)
    complete = [p for p in folder.checkpoint_dirs() if (p / STATE_FILE).is_file()]
    folder.prune_checkpoints(1, complete)
    return new


def test_6_evaluate_racing_the_pruning_takes_the_newest_complete_checkpoint(
    capsys, training_run, monkeypatch
):
    """Deterministically: evaluate chooses the newest checkpoint, then (while TensorFlow
    loads, seconds) the run writes the next one and prunes the chosen one."""
    import rlkit.cli.inspect as inspect_cli

    written = []

    def meanwhile() -> None:
        written.append(write_next_checkpoint_and_prune(training_run))

    monkeypatch.setattr(inspect_cli, "import_tensorflow_quietly", meanwhile)
    status, out, err = cli(capsys, "evaluate", training_run, "--episodes", "1")
    assert status == 0, err
    assert f"{written[0].name}" in out  # the checkpoint written meanwhile, complete


def test_6_a_checkpoint_being_pruned_is_never_listed(training_run, monkeypatch):
    """While a pruned checkpoint's files are deleted one by one, no reader lists it."""
    import shutil

    import rlkit.run.folder as folder_module
    from rlkit.run.checkpoint import checkpoints_newest_first
    from rlkit.run.folder import RunFolder

    folder = RunFolder(training_run)
    seen_while_deleting = []
    real_rmtree = shutil.rmtree

    def slow_rmtree(path, *args, **kwargs):
        model = Path(path) / "model"
        if model.is_dir():
            real_rmtree(model)  # half-deleted: model/ gone, state.json still there
        listed = checkpoints_newest_first(folder)
        seen_while_deleting.append({p: (p / "model" / "agent.json").is_file() for p in listed})
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(folder_module.shutil, "rmtree", slow_rmtree)
    write_next_checkpoint_and_prune(training_run)
    assert seen_while_deleting
    for listed in seen_while_deleting:
        assert all(listed.values()), listed  # each listed checkpoint whole when listed


# -- 7: an error found after TensorFlow loaded leaves nothing behind -------------------------------
def test_7_an_error_after_tensorflow_leaves_no_folder_behind(capsys, tmp_path):
    out = tmp_path / "new" / "runs"
    refused(capsys, "train", "dqn", "--set", "q_network=nonexist:fn", "--out", out, *TINY,
            message="cannot import q_network builder 'nonexist:fn'")  # fmt: skip
    assert not (tmp_path / "new").exists()  # made by this invocation: removed


def test_7_an_out_folder_that_was_there_is_kept_with_what_it_held(capsys, tmp_path):
    out = tmp_path / "runs"
    (out / "older-run").mkdir(parents=True)
    refused(capsys, "train", "dqn", "--set", "q_network=nonexist:fn", "--out", out, *TINY)
    assert [p.name for p in out.iterdir()] == ["older-run"]


# -- 8: counts out of any sensible range -----------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--num-envs", "100000", "--steps", "300"], "bad value 100000 for num_envs: must be at"),
        (["--num-envs", "500", "--steps", "300"], "num_envs (500) is more than steps (300)"),
        (["--steps", "99999999999999999999"], "for steps: must be at most 1,000,000,000,000"),
        (["--eval-episodes", "100000000"], "for eval_episodes: must be at most 10,000"),
        (["--episodes", "99999999999999999999"], "for episodes: must be at most"),
    ],
)  # fmt: skip
def test_8_counts_beyond_any_run_are_refused(capsys, tmp_path, args, message):
    refused(capsys, "train", "dqn", *args, "--out", tmp_path / "r", message=message)
    assert nothing_in(tmp_path / "r")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seeds", "0-100000000"], "asks for 100,000,001 seeds: at most 1,000"),
        (["--cpus-per-trial", "100000"], "--cpus-per-trial 100000 is more than this machine's"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("command", ["sweep", "tune"])
def test_8_sweeps_that_would_never_start_are_refused(capsys, tmp_path, command, args, message):
    if command == "tune" and args[0] == "--seeds":
        args = ["--seeds", "100000000"]
        message = "--seeds"
    refused(capsys, command, "dqn", *args, "--out", tmp_path / "s", message=message)
    assert nothing_in(tmp_path / "s")


def test_8_resume_and_evaluate_take_the_same_ranges(capsys, finished_run):
    refused(capsys, "resume", finished_run, "--steps", "99999999999999999999",
            message="--steps: must be at most 1,000,000,000,000")  # fmt: skip
    refused(capsys, "evaluate", finished_run, "--episodes", "100000000",
            message="--episodes must be a positive number of at most 10,000")  # fmt: skip


# -- 9: an unclosed bracket is not a list ----------------------------------------------------------
@pytest.mark.parametrize("text", ["[64,64", "64,64]", "[[64,64]", "[64],[64]"])
def test_9_an_unbalanced_list_is_refused(capsys, tmp_path, text):
    refused(capsys, "train", "dqn", "--set", f"hidden_sizes={text}", "--out", tmp_path / "r",
            message="hidden_sizes")  # fmt: skip
    assert nothing_in(tmp_path / "r")


@pytest.mark.parametrize("grid", ["hidden_sizes=[64,64],[256", "hidden_sizes=[64,64]],[256]"])
def test_9_an_unbalanced_grid_is_refused(grid):
    from rlkit.sweeps.grid import parse_grid

    with pytest.raises(UsageError, match="malformed --grid"):
        parse_grid([grid])


# -- 10: a config.toml edited by hand after the run stopped ----------------------------------------
@pytest.fixture
def stopped_run(tmp_path, finished_run) -> Path:
    """A copy of the finished run as if stopped at its last checkpoint (no summary)."""
    import shutil

    run = tmp_path / finished_run.name
    shutil.copytree(finished_run, run)
    (run / "summary.json").unlink()
    return run


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
    from rlkit.run.hooks.evaluation import EvaluationHook

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
def test_13_a_config_of_another_agent_says_so(capsys, finished_run, tmp_path):
    for command in ("train", "sweep", "tune"):
        refused(capsys, command, "ddpg", "--config", finished_run / "config.toml", "--out",
                tmp_path / "r", message=f"{finished_run / 'config.toml'} is a config for dqn, "
                "not ddpg")  # fmt: skip
    assert nothing_in(tmp_path / "r")


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
    from rlkit.sweeps.ray_tune import progress_lines

    assert progress_lines([FakeTrial("RUNNING")], 2).strip() == (
        "default: 0/2 done, 1 running, 0 failed"
    )
    line = progress_lines([FakeTrial("TERMINATED", 20.0), FakeTrial("RUNNING")], 2)
    assert line.strip() == "default: 1/2 done, 1 running, 0 failed; best final 20.0"


def test_14_a_stopped_sweep_counts_the_trials_that_never_started():
    from rlkit.sweeps.grid import SweepSpec
    from rlkit.sweeps.ray_tune import stopped_message

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

    text = (Path(__file__).resolve().parents[1] / "docs" / "api.md").read_text()
    for name, parameter in inspect.signature(rlkit.train).parameters.items():
        if parameter.default is not inspect.Parameter.empty:
            assert f"{name}=" in text, name
    assert "about 3 minutes" not in (Path(__file__).resolve().parents[1] / "README.md").read_text()


# -- 50: found by the rerun of labs/bad_inputs.py -------------------------------------------------
def tree(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes())
            for p in folder.rglob("*") if p.is_file()}  # fmt: skip


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


def test_50_an_empty_plot_output_says_it_is_empty(capsys, finished_run, tmp_path):
    refused(capsys, "plot", finished_run, "-o", "", message="must not be empty")
