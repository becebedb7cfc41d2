"""IQN, Munchausen DQN and td3 from the CLI (issue 36): listed where users look, td3 by its own
name, bad settings in one line, a stopped and resumed run equal to the uninterrupted one.
Their losses by hand are in tests/unit/agents/test_iqn_mdqn.py."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit
from rlkit.agents import IQN, MDQN
from rlkit.cli.main import main
from rlkit.core.errors import UsageError


# -- where users look ----------------------------------------------------------------------------
def test_listed_where_users_look(capsys):
    assert main(["train", "--help"]) == 0
    listed = capsys.readouterr().out
    assert all(f"  {name} " in listed for name in ("iqn", "mdqn", "td3"))
    assert main(["config", "iqn"]) == 0
    shown = capsys.readouterr().out
    assert all(k in shown for k in ("num_tau_samples", "num_tau_prime_samples",
                                    "num_quantile_samples", "quantile_embedding_dim"))  # fmt: skip
    assert main(["config", "mdqn"]) == 0
    shown = capsys.readouterr().out
    assert "tau = 0.03" in shown and "alpha = 0.9" in shown and "clip_value_min = -1.0" in shown


def test_td3_is_trained_by_its_own_name(tmp_path, capsys):
    code = main(["train", "td3", "--steps", "300", "--eval-every", "0", "--eval-episodes", "1",
                 "--quiet", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    (run,) = tmp_path.iterdir()
    assert run.name.startswith("td3-Pendulum-v1-0-")
    config = (run / "config.toml").read_text()
    assert 'agent = "ddpg"' in config and "td3 = true" in config
    assert "ddpg/Pendulum-v1-td3" in config  # its own preset, picked by itself
    code = main(["train", "td3", "--steps", "10", "--set", "td3=false", "--out", str(tmp_path)])
    assert code == 2 and "rlkit train ddpg" in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "agent, setting, words",
    [("iqn", "num_tau_samples=0", "num_tau_samples"),
     ("iqn", "num_tau_prime_samples=0", "num_tau_prime_samples"),
     ("iqn", "num_quantile_samples=0", "num_quantile_samples"),
     ("iqn", "quantile_embedding_dim=0", "quantile_embedding_dim"),
     ("iqn", "loss=huber", "does not combine"), ("iqn", "kappa=-1", "kappa"),
     ("mdqn", "tau=0", "tau"), ("mdqn", "alpha=1.5", "alpha"),
     ("mdqn", "clip_value_min=0", "clip_value_min"), ("mdqn", "double_dqn=true", "double_dqn"),
     ("mdqn", "loss=dqn3", "huber or mse")],
)  # fmt: skip
def test_bad_settings_are_one_line(agent, setting, words, tmp_path, capsys):
    code = main(["train", agent, "--steps", "10", "--set", setting, "--out", str(tmp_path)])
    assert code == 2 and not any(tmp_path.iterdir())
    assert words in capsys.readouterr().err.strip().splitlines()[-1]
    agent_class = {"iqn": IQN, "mdqn": MDQN}[agent]
    key, _, value = setting.partition("=")
    with pytest.raises(UsageError, match=words):
        agent_class.from_env(gym.make("CartPole-v1"), **{key: value})


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["iqn", "mdqn"])
def test_a_stopped_and_resumed_run_writes_the_uninterrupted_metrics(tmp_path, agent):
    from rlkit.run.folder import RunFolder

    argv = [agent, "--env", "CartPole-v1", "--set", "hidden_sizes=16", "--set",
            "learning_starts=100", "--set", "train_freq=50", "--set", "gradient_steps=4",
            "--set", "jit_compile=false", "--set", "eps_anneal_fraction=0", "--set",
            "lr_anneal_fraction=0", "--eval-every", "250", "--checkpoint-every", "250",
            "--eval-episodes", "1", "--quiet"]  # fmt: skip
    if agent == "iqn":  # its fractions drawn on both sides of the stop
        argv += ["--set", "num_tau_samples=4", "--set", "num_tau_prime_samples=5",
                 "--set", "num_quantile_samples=3"]  # fmt: skip
    runs = {}
    for name, steps in (("whole", "500"), ("stopped", "250")):
        assert main(["train", *argv, "--steps", steps, "--out", str(tmp_path / name)]) == 0
        (run_dir,) = (tmp_path / name).iterdir()
        runs[name] = RunFolder(run_dir)
    assert main(["resume", str(runs["stopped"].path), "--steps", "500", "--quiet"]) == 0
    assert runs["stopped"].metrics_path.read_text() == runs["whole"].metrics_path.read_text()
    # the weights too: each update after the stop drew the fractions the whole run drew
    whole, resumed = (rlkit.load(runs[k].path / "model") for k in ("whole", "stopped"))
    for ours, theirs in zip(whole.learner.q.variables, resumed.learner.q.variables, strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
