"""What a new user met (issue 40): each fix here has a test that failed without it.

The promise (docs/cli.md): bad input gets one line on stderr, exit 2, nothing written;
from Python, :class:`rlkit.core.errors.UsageError` with one clear line.
"""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
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
    return train_finished_run(tmp_path_factory)


def train_finished_run(tmp_path_factory) -> Path:
    """What :func:`finished_run` makes (the other test_new_user_promises_* modules' too)."""
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


@pytest.mark.slow
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


@pytest.mark.slow
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
