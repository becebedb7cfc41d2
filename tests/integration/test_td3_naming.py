"""A TD3 run is called td3: its run folder, its summary and its lines (issue 26 part 5,
issue 29 part 3); it stays a ddpg run where rlkit rebuilds it (config.toml)."""

import json
import tomllib

import pytest

import rlkit
from rlkit.cli.main import main
from rlkit.run import experiment
from rlkit.run.plan import variant_name
from rlkit.run.plotting import group_runs

TINY_AGENT = [
    "--set", "learning_starts=100", "--set", "train_freq=50", "--set", "gradient_steps=4",
    "--set", "actor_hidden_sizes=16,16", "--set", "critic_hidden_sizes=16,16",
    "--set", "batch_size=32", "--set", "jit_compile=false",
]  # fmt: skip
TINY_OVERRIDES = {"learning_starts": 100, "train_freq": 50, "gradient_steps": 4,
                  "actor_hidden_sizes": "16,16", "critic_hidden_sizes": "16,16",
                  "batch_size": 32, "jit_compile": False}  # fmt: skip


def run_cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_variant_name_reads_a_config_or_its_table():
    from rlkit.agents.ddpg.config import DDPGConfig
    from rlkit.agents.dqn.config import DQNConfig

    assert variant_name("ddpg", DDPGConfig(td3=True)) == "td3"
    assert variant_name("ddpg", DDPGConfig()) == "ddpg"
    assert variant_name("ddpg", {"td3": True}) == "td3"
    assert variant_name("ddpg", {"td3": False}) == variant_name("ddpg") == "ddpg"
    assert variant_name("dqn", DQNConfig()) == "dqn"
    assert experiment.plan("ddpg", preset="Pendulum-v1-td3").variant == "td3"
    assert experiment.plan("ddpg", overrides=["td3=true"]).variant == "td3"


@pytest.mark.slow
def test_a_td3_run_is_named_td3_and_stays_a_ddpg_run_to_rebuild(capsys, tmp_path):
    status, out, err = run_cli(capsys, "train", "ddpg", "--seed", "2", "--out", tmp_path,
                               "--steps", "300", "--eval-episodes", "1", "--set", "td3=true",
                               *TINY_AGENT)  # fmt: skip
    assert status == 0, err
    (run_dir,) = tmp_path.iterdir()
    assert run_dir.name.startswith("td3-Pendulum-v1-2-")
    assert "training td3 on Pendulum-v1" in err
    assert out.strip().splitlines()[-1].startswith("td3 Pendulum-v1: eval return")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["variant"] == "td3" and summary["agent"] == "ddpg"
    config = tomllib.loads((run_dir / "config.toml").read_text())
    assert config["run"]["agent"] == "ddpg" and config["agent"]["td3"] is True
    agent = rlkit.load(run_dir / "model")
    assert agent.name == "ddpg" and agent.config.td3
    status, out, err = run_cli(capsys, "evaluate", run_dir, "--episodes", "1")
    assert status == 0 and "return" in out, err
    (group,) = group_runs([run_dir])
    assert group.label == "td3 Pendulum-v1"


@pytest.mark.slow
def test_a_plain_ddpg_run_is_still_named_ddpg(capsys, tmp_path):
    status, out, err = run_cli(capsys, "train", "ddpg", "--out", tmp_path, "--steps", "200",
                               "--eval-episodes", "1", "--quiet", *TINY_AGENT)  # fmt: skip
    assert status == 0, err
    (run_dir,) = tmp_path.iterdir()
    assert run_dir.name.startswith("ddpg-Pendulum-v1-0-")
    assert json.loads((run_dir / "summary.json").read_text())["variant"] == "ddpg"
    assert out.strip().splitlines()[-1].startswith("ddpg Pendulum-v1: eval return")


def stopped_td3_run(run_dir=None, out=None):
    """A TD3 run stopped at step 200 of 300 (checkpoints every 100 steps)."""
    plan = experiment.plan("ddpg", steps=300, eval_episodes=1, checkpoint_every=100,
                           overrides={**TINY_OVERRIDES, "td3": True})  # fmt: skip
    trainer = experiment.start(plan, out or "runs", tensorboard=False, run_dir=run_dir)
    trainer.run(200)
    trainer.close()
    return trainer.run_dir


@pytest.mark.slow
def test_a_td3_named_run_resumes_and_evaluates(capsys, tmp_path):
    run_dir = stopped_td3_run(out=tmp_path)
    assert run_dir.name.startswith("td3-Pendulum-v1-0-")
    status, out, err = run_cli(capsys, "resume", run_dir, "--quiet")
    assert status == 0, err
    assert "resuming td3 on Pendulum-v1 at step 200 of 300" in err
    assert out.strip().splitlines()[-1].startswith("td3 Pendulum-v1: eval return")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["variant"] == "td3" and summary["steps"] == 300
    status, out, err = run_cli(capsys, "evaluate", run_dir, "--episodes", "1")
    assert status == 0 and out.startswith("td3 Pendulum-v1: return"), (out, err)


@pytest.mark.slow
def test_an_old_ddpg_named_td3_run_resumes_as_td3(capsys, tmp_path):
    # before TD3 runs were named td3, their folders were ddpg-ENV-SEED-STAMP
    run_dir = stopped_td3_run(run_dir=tmp_path / "ddpg-Pendulum-v1-0-20240101-000000")
    status, out, err = run_cli(capsys, "resume", run_dir, "--quiet")
    assert status == 0, err
    assert out.strip().splitlines()[-1].startswith("td3 Pendulum-v1: eval return")
    assert json.loads((run_dir / "summary.json").read_text())["variant"] == "td3"
    status, out, err = run_cli(capsys, "evaluate", run_dir, "--episodes", "1")
    assert status == 0, err
    assert [g.label for g in group_runs([run_dir])] == ["td3 Pendulum-v1"]
