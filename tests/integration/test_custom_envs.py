"""A user's own environment from the CLI: gymnasium's ``module:Id`` (the module registers
its ids when imported) and ``--env-kwargs`` for its constructor, recorded in the run's
config.toml so that resume, evaluate and sweeps rebuild the same environment."""

from __future__ import annotations

import csv
import tomllib

import pytest

from rlkit.cli.main import main

MODULE = '''
import gymnasium as gym
import numpy as np


class Corridor(gym.Env):
    """Walk a corridor of ``length`` steps, 1 point a step: an episode's return is its length."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, length: int = 5):
        self.length, self.t = length, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0, 1.0], np.float32), {}

    def step(self, action):
        self.t += 1
        obs = np.array([self.t / self.length, 1.0], np.float32)
        return obs, 1.0, self.t >= self.length, False, {}


gym.register("mycorridor/Corridor-v0", entry_point=Corridor)
'''
SMALL = ["--set", "hidden_sizes=8", "--set", "learning_starts=50", "--set", "jit_compile=false",
         "--eval-episodes", "2", "--quiet"]  # fmt: skip
ENV = "mycorridor:mycorridor/Corridor-v0"


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "mycorridor.py").write_text(MODULE)
    (tmp_path / "broken.py").write_text("raise RuntimeError('the module is broken')\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # as a user's installed package would be
    yield tmp_path
    import sys

    import gymnasium as gym

    gym.registry.pop("mycorridor/Corridor-v0", None)
    for name in ("mycorridor", "broken"):  # imported afresh by the next test
        sys.modules.pop(name, None)


def cli(capsys, *args) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def episode_returns(run_dir) -> list[float]:
    with open(run_dir / "metrics.csv", newline="") as f:
        return [float(r["return"]) for r in csv.DictReader(f) if r["kind"] == "episode"]


@pytest.mark.slow
def test_module_id_and_env_kwargs_are_used_recorded_and_rebuilt(capsys, user_module):
    out = user_module / "runs"
    status, _, err = cli(capsys, "train", "dqn", "--env", ENV, "--env-kwargs", "length=7",
                         "--steps", "140", "--checkpoint-every", "70", "--out", out,
                         *SMALL)  # fmt: skip
    assert status == 0, err
    (run_dir,) = out.iterdir()
    config = tomllib.loads((run_dir / "config.toml").read_text())["run"]
    assert config["env"] == ENV and config["env_kwargs"] == {"length": 7}
    assert episode_returns(run_dir) == [7.0] * 20  # the constructor took length=7
    status, _, err = cli(capsys, "resume", run_dir, "--steps", "210", "--quiet")
    assert status == 0, err
    assert episode_returns(run_dir) == [7.0] * 30  # resumed on the same corridor
    status, out_text, err = cli(capsys, "evaluate", run_dir, "--episodes", "2")
    assert status == 0, err
    assert "return 7.0 ± 0.0 over 2 greedy episodes" in out_text
    status, out_text, _ = cli(capsys, "evaluate", run_dir, "--episodes", "1", "--env-kwargs",
                              "length=3")  # fmt: skip
    assert "return 3.0 ± 0.0" in out_text


def test_env_kwargs_from_a_config_file_and_the_option_over_it(capsys, user_module):
    from rlkit.run import experiment

    config = user_module / "mine.toml"
    config.write_text(f'[run]\nagent = "dqn"\nenv = "{ENV}"\nenv_kwargs = {{length = 4}}\n')
    assert experiment.plan(config_file=config).settings.env_kwargs == {"length": 4}
    plan = experiment.plan(config_file=config, env_kwargs=["length=9"])
    assert plan.settings.env_kwargs == {"length": 9}


def test_sweep_trials_rebuild_the_env_with_its_kwargs(user_module):
    from rlkit.sweeps.grid import SweepSpec

    spec = SweepSpec("dqn", {"env": ENV, "env_kwargs": ["length=6"], "overrides": []}, [0, 1])
    plan = spec.plan({}, 1)
    assert plan.settings.env == ENV and plan.settings.env_kwargs == {"length": 6}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env", "broken:Anything-v0"], "cannot import module 'broken' for --env "
         "broken:Anything-v0: RuntimeError: the module is broken"),
        (["--env", "nowhere_to_be_found:X-v0"], "cannot import module 'nowhere_to_be_found'"),
        (["--env", ENV, "--env-kwargs", "lenght=3"], "environment 'mycorridor/Corridor-v0' "
         "refuses its env_kwargs ['lenght']"),
        (["--env", ENV, "--env-kwargs", "length"], "malformed --env-kwargs 'length'"),
    ],
)  # fmt: skip
def test_a_bad_custom_env_is_one_line_and_nothing_is_written(capsys, user_module, args, message):
    out = user_module / "runs"
    status, _, err = cli(capsys, "train", "dqn", *args, "--out", out, *SMALL)
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and message in err
    assert not out.exists() or not any(out.iterdir())
