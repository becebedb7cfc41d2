import json
import subprocess
import sys
import tomllib

import pytest

from rlkit.cli.main import main

TINY = [
    "--steps", "400", "--eval-episodes", "2", "--quiet",
    "--set", "learning_starts=100", "--set", "train_freq=50", "--set", "gradient_steps=4",
    "--set", "hidden_sizes=16,16", "--set", "jit_compile=false",
]  # fmt: skip


def run_cli(capsys, *args):
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_help_lists_commands_and_options(capsys):
    status, out, _ = run_cli(capsys, "--help")
    assert status == 0 and "train" in out and "config" in out
    status, out, _ = run_cli(capsys, "train", "--help")
    for option in ("--env", "--steps", "--seed", "--set", "--out", "dqn"):
        assert option in out


def test_cli_module_does_not_import_tensorflow():
    code = "import sys, rlkit.cli.main; sys.exit('tensorflow' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_console_script_help_runs():
    result = subprocess.run(
        [sys.executable, "-m", "rlkit.cli.main", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0 and "rlkit train dqn" in result.stdout


@pytest.mark.slow
def test_tiny_train_run_writes_its_run_directory(capsys, tmp_path):
    status, out, err = run_cli(capsys, "train", "dqn", "--env", "CartPole-v1", "--seed", "3",
                               "--out", str(tmp_path), *TINY)  # fmt: skip
    assert status == 0, err
    (run_dir,) = tmp_path.iterdir()
    assert run_dir.name.startswith("dqn-CartPole-v1-3-")
    config = tomllib.loads((run_dir / "config.toml").read_text())
    assert config["run"] == {"agent": "dqn", "env": "CartPole-v1", "steps": 400, "seed": 3,
                             "num_envs": 1, "episodes": 0, "eval_every": 2500, "eval_episodes": 2,
                             "checkpoint_every": 10_000, "preset": "dqn/CartPole-v1",
                             "env_kwargs": {}}  # fmt: skip
    assert config["agent"]["hidden_sizes"] == [16, 16] and config["agent"]["gamma"] == 0.99
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["steps"] == 400 and summary["eval_episodes"] == 2
    assert "best_model" not in summary  # dqn evaluates every 2500 steps by default
    assert "eval return" in out and str(run_dir) in out
    assert (run_dir / "metrics.csv").read_text().startswith("kind,step,episode,return,length")
    assert (run_dir / "curves.png").read_bytes()[:4] == b"\x89PNG"
    import gymnasium as gym

    import rlkit

    agent = rlkit.load(run_dir / "model")
    assert agent.config.hidden_sizes == (16, 16) and agent.num_steps == 400
    mean, _ = rlkit.evaluate(agent, gym.make("CartPole-v1"), episodes=2, seed=2_000_003)
    assert mean == pytest.approx(summary["final_model"]["eval_return_mean"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["train", "dqn", "--env", "CartPol-v1"], "did you mean CartPole-v1"),
        (["train", "dqn", "--env", "Pendulum-v1"], "use ddpg"),
        (["train", "dqn", "--set", "gamma"], "malformed --set 'gamma'"),
        (
            ["train", "dqn", "--set", "gama=0.9"],
            "unknown config key 'gama'; valid keys: adam_epsilon, batch_size",
        ),
        (["train", "dqn", "--set", "gamma=high"], "bad value 'high' for gamma"),
        (["train", "dqn", "--set", "gamma=1.5"], "gamma: must be in [0, 1]"),
        (["train", "dqn", "--set", "batch_size=512", "--set", "buffer_size=100"], "buffer_size"),
        (["train", "dqn", "--steps", "0"], "--steps must be a positive"),
        (["train", "dqn", "--steps", "-5"], "--steps must be a positive"),
        (["train", "dqn", "--steps", "lots"], "'lots' is not a valid integer"),
        (["train", "qdn"], "unknown agent 'qdn'"),
        (["trian"], "No such command 'trian'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, args, message):
    status, out, err = (
        run_cli(capsys, *args, "--out", str(tmp_path))
        if args[0] == "train"
        else run_cli(capsys, *args)
    )
    assert status == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not any(tmp_path.iterdir())  # nothing written for a rejected run


def test_unwritable_output_directory(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    status, _, err = run_cli(capsys, "train", "dqn", "--out", str(blocker / "runs"), *TINY)
    assert status == 2 and "cannot write to output directory" in err


def test_config_command_lists_every_key_with_help(capsys):
    status, out, _ = run_cli(capsys, "config", "dqn")
    assert status == 0
    assert "learning_rate = " in out and "clip_delta = 1.0" in out
    assert "DQN3.0" in out
