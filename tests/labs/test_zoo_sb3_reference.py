"""labs/zoo_sb3_reference.py: SB3 is given the settings rlkit's presets translated from
rl-zoo (but the batch), for the zoo's step budget; bad input is one line, exit 2."""

import importlib

import pytest

from rlkit.config import presets

pytestmark = [pytest.mark.labs]


@pytest.fixture(scope="module")
def reference():
    return importlib.import_module("labs.zoo_sb3_reference")


#: where a preset leaves rl-zoo's settings on purpose (measured: docs/benchmarks.md)
PRESET_DEPARTURES = {"BipedalWalker-v3": {"actor_learning_rate": 1e-4}}


def test_settings_are_the_presets_and_the_budget_the_zoo_tables(reference):
    zoo_table = importlib.import_module("benchmarks.zoo_table")
    for env_id, zoo in reference.ZOO_SETTINGS.items():
        preset = presets.lookup("ddpg", env_id).agent_config
        departures = PRESET_DEPARTURES.get(env_id, {})
        assert {k: preset[k] for k in departures} == departures
        assert zoo["n_timesteps"] == zoo_table.ZOO[f"ddpg/{env_id}"][3]
        for key in ("gamma", "buffer_size", "learning_starts"):
            assert zoo[key] == preset[key], (env_id, key)
        assert zoo["noise_std"] == preset["noise_scale"] and preset["noise"] == "gaussian"
        if "actor_learning_rate" not in departures:
            assert zoo["learning_rate"] == preset["actor_learning_rate"]
        assert zoo["learning_rate"] == preset["critic_learning_rate"]
        assert zoo["net_arch"] == list(preset["actor_hidden_sizes"])
        assert zoo["net_arch"] == list(preset["critic_hidden_sizes"])


@pytest.mark.parametrize(
    "bad", [["--batch-size", "0"], ["--steps", "-5"], ["--steps", "0"], ["--env", "CartPole-v1"]]
)
def test_bad_arguments_are_one_line_and_exit_2(reference, monkeypatch, capsys, bad):
    monkeypatch.setattr("sys.argv", ["zoo_sb3_reference.py", *bad])
    with pytest.raises(SystemExit) as exit_info:
        reference.main()
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err
