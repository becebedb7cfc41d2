"""Shipped presets: resolution order, listing, bad names; Box2D envs resume; extras named."""

from __future__ import annotations

import tomllib

import pytest

from rlkit.agents.registry import agent_spec
from rlkit.cli.main import main
from rlkit.config import presets
from rlkit.config.options import make_config
from rlkit.core.errors import UsageError
from rlkit.run import experiment


def cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("preset", presets.presets(), ids=lambda p: p.name)
def test_every_shipped_preset_validates_and_says_where_it_comes_from(preset):
    make_config(agent_spec(preset.agent).config_class, preset.agent_config)
    # its [run] table too; a family's preset without an env of its own is planned on an id
    # of its family (its env_kwargs are ALE's: the agent's default CartPole refuses them,
    # in plan as in train)
    env = "ALE/Pong-v5" if preset.env is None and preset.run.get("env_kwargs") else None
    experiment.plan(preset.agent, env, preset=preset.name)
    assert preset.source
    assert "# result:" not in preset.text  # results live in docs/presets.md
    assert tomllib.loads(preset.text)  # readable and valid as a --config file


def test_resolution_order_preset_then_config_file_then_options_then_set(tmp_path):
    picked = experiment.plan("dqn", "LunarLander-v3")
    assert picked.preset.name == "dqn/LunarLander-v3" and picked.preset_picked
    assert picked.agent_config.learning_rate == 0.00063 and picked.settings.steps == 100_000
    assert picked.settings.preset == "dqn/LunarLander-v3"
    config = tmp_path / "c.toml"
    config.write_text("[run]\nsteps = 7000\n[agent]\nlearning_rate = 0.001\nbatch_size = 32\n")
    plan = experiment.plan(
        "dqn", "LunarLander-v3", config_file=config, steps=9000, overrides=["batch_size=16"]
    )
    assert plan.agent_config.learning_rate == 0.001  # the file over the preset
    assert plan.settings.steps == 9000  # the option over the file
    assert plan.agent_config.batch_size == 16  # --set over everything
    assert plan.agent_config.target_update == 250  # untouched preset keys stay
    generic = experiment.plan("dqn", "LunarLander-v3", preset="none")
    assert generic.preset is None and generic.agent_config.learning_rate == 0.0023
    assert generic.settings.preset == "none"
    named = experiment.plan("ddpg", preset="Pendulum-v1-td3")
    assert named.agent_config.td3 and named.settings.env == "Pendulum-v1"
    assert not named.preset_picked


def test_unknown_preset_is_one_line_listing_the_valid_ones(capsys):
    status, _, err = cli(capsys, "train", "dqn", "--preset", "nope")
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "unknown preset 'nope' for dqn; valid: dqn/Acrobot-v1" in err and "none" in err
    with pytest.raises(UsageError):
        presets.lookup("ddpg", "dqn/Acrobot-v1")


def test_presets_command_and_config_preset(capsys):
    status, out, _ = cli(capsys, "presets")
    assert status == 0 and "dqn/LunarLander-v3" in out and "ddpg/BipedalWalker-v3-td3" in out
    assert "docs/presets.md" in out
    status, out, _ = cli(capsys, "presets", "--long")
    assert status == 0 and "source: rl-zoo" in out and "docs/presets.md" in out
    status, out, _ = cli(capsys, "config", "dqn", "--preset", "MountainCar-v0")
    assert status == 0 and 'env = "MountainCar-v0"' in out and "learning_rate = 0.004" in out


def test_the_cli_says_which_preset_it_uses(capsys, tmp_path):
    args = ["train", "dqn", "--steps", "300", "--out", tmp_path, "--quiet", "--eval-every", "0",
            "--set", "hidden_sizes=8", "--set", "jit_compile=false"]  # fmt: skip
    status, _, err = cli(capsys, *args)
    assert status == 0
    assert "using preset dqn/CartPole-v1; --preset none for the generic defaults" in err
    status, _, err = cli(capsys, *args, "--preset", "none")
    assert status == 0 and "using preset" not in err


@pytest.mark.slow
def test_box2d_run_resumes(capsys, tmp_path):
    pytest.importorskip("Box2D")
    args = ["--out", tmp_path, "--quiet", "--eval-every", "0", "--checkpoint-every", "1000",
            "--set", "hidden_sizes=8", "--set", "jit_compile=false", "--set", "batch_size=8",
            "--set", "learning_starts=500"]  # fmt: skip
    status, _, err = cli(capsys, "train", "dqn", "--env", "LunarLander-v3", "--steps", "2000",
                         *args)  # fmt: skip
    assert status == 0, err
    (run_dir,) = tmp_path.iterdir()
    assert list(run_dir.glob("checkpoints/*/env.pkl"))  # ResumableEnv keeps its state
    status, _, err = cli(capsys, "resume", run_dir, "--steps", "3000", "--quiet")
    assert status == 0, err
    assert '"steps": 3000' in (run_dir / "summary.json").read_text()


def test_box2d_env_without_its_package_names_the_extra(monkeypatch):
    import gymnasium as gym

    from rlkit.envs.make import make_env

    def missing(*args, **kwargs):
        raise gym.error.DependencyNotInstalled("Box2D is not installed")

    monkeypatch.setattr(gym, "make", missing)
    with pytest.raises(UsageError, match=r"pip install '\.\[box2d\]'"):
        make_env("LunarLander-v3")
    from rlkit.envs import atari

    def no_package(env_id):
        raise ImportError("No module named 'ale_py'")

    monkeypatch.setattr(atari, "register", no_package)
    for env_id in ("ALE/Pong-v5", "MinAtar/Breakout-v0"):
        with pytest.raises(UsageError, match=r"needs an extra package.*pip install '\.\[atari\]'"):
            make_env(env_id)
