"""Your own policy and value baseline for REINFORCE: a Keras model, a builder, or an
importable builder named in the config; checked, trained through rlkit's update,
checkpointed, resumed and loaded."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import keras
import numpy as np
import pytest

import rlkit
from rlkit.cli.main import main
from rlkit.core.errors import UsageError


def policy(observation_space, action_space, width: int = 16):
    """A plain Dense stack: logits (Discrete) or the Gaussian's mean (Box, tanh)."""
    discrete = hasattr(action_space, "n")
    out = int(action_space.n) if discrete else int(np.prod(action_space.shape))
    head = keras.layers.Dense(out, activation=None if discrete else "tanh")
    return keras.Sequential([keras.Input(observation_space.shape),
                             keras.layers.Dense(width, activation="relu"), head])  # fmt: skip


def layer_norm(observation_space, action_space):
    x = keras.Input(observation_space.shape)
    h = keras.layers.LayerNormalization()(keras.layers.Dense(16, activation="relu")(x))
    return keras.Model(x, keras.layers.Dense(int(action_space.n))(h))


def flat_value(observation_space, action_space):
    """One value per observation as ``[B]`` (not a Dense stack: a compiled call)."""
    x = keras.Input(observation_space.shape)
    v = keras.layers.Dense(1)(keras.layers.Dense(16, activation="relu")(x))
    return keras.Model(x, keras.ops.squeeze(v, axis=-1))


def value(observation_space, action_space):
    hidden = keras.layers.Dense(16, activation="relu")
    return keras.Sequential([keras.Input(observation_space.shape), hidden, keras.layers.Dense(1)])


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


@pytest.fixture
def env():
    return gym.make("CartPole-v1")


OBS = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32)


@pytest.mark.slow
def test_a_dense_stack_policy_acts_through_the_numpy_copy_and_follows_updates(env):
    agent = rlkit.agents.Reinforce.from_env(env, policy=policy, baseline=value)
    assert agent.policy.fast_path and agent.value.fast_path
    assert agent.config.policy == agent.config.baseline_network == "<python object>"
    before = [v.numpy().copy() for v in agent.policy.variables + agent.value.variables]
    rlkit.train(agent, env, steps=300)
    assert agent.num_updates > 0
    after = agent.policy.variables + agent.value.variables
    assert all(not np.array_equal(b, v.numpy()) for b, v in zip(before, after, strict=True))
    np.testing.assert_allclose(agent.action_probabilities(OBS),
                               softmax(agent.policy.model(OBS).numpy()), rtol=1e-5)  # fmt: skip
    copy = agent.learner.policy().value  # the numpy copy bootstrapping reads
    np.testing.assert_allclose(copy(OBS), agent.value.model(OBS).numpy(), rtol=1e-5)


@pytest.mark.slow
def test_a_layer_norm_policy_and_a_flat_value_act_through_one_compiled_call(env):
    agent = rlkit.agents.Reinforce.from_env(env, policy=layer_norm, baseline=flat_value)
    assert not agent.policy.fast_path and not agent.value.fast_path
    rlkit.train(agent, env, steps=300)
    assert agent.num_updates > 0
    np.testing.assert_allclose(agent.action_probabilities(OBS),
                               softmax(agent.policy.model(OBS).numpy()), rtol=1e-5)  # fmt: skip
    assert agent.act(OBS[0], explore=False) == int(np.argmax(agent.policy.model(OBS[:1])[0]))
    assert agent.learner.policy().value(OBS).shape == (5,)


@pytest.mark.slow
def test_the_update_is_rlkits_own_a_twin_of_the_builtin_networks_learns_identically(env):
    """The same architecture and weights as the built-in MLPs, given as the user's models:
    the same losses and weights after the same episodes (the loss formula is unchanged)."""
    builtin = rlkit.agents.Reinforce.from_env(env, seed=3, hidden_sizes=(16,),
                                              value_hidden_sizes=(16,))  # fmt: skip
    mine = {"policy": policy(env.observation_space, env.action_space),
            "baseline": value(env.observation_space, env.action_space)}  # fmt: skip
    mine["policy"].set_weights(builtin.policy.model.get_weights())
    mine["baseline"].set_weights(builtin.value.model.get_weights())
    agent = rlkit.agents.Reinforce.from_env(env, seed=3, **mine)
    histories = [rlkit.train(a, gym.make("CartPole-v1"), steps=400, seed=7)
                 for a in (builtin, agent)]  # fmt: skip
    first, second = ([m for _, m in h.updates] for h in histories)
    assert len(first) > 3 and first == second
    for a, b in zip(builtin.policy.variables + builtin.value.variables,
                    agent.policy.variables + agent.value.variables, strict=True):  # fmt: skip
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.slow
def test_a_gaussian_policy_of_ones_own_gives_the_mean_the_log_std_stays_the_agents(tmp_path):
    pendulum = gym.make("Pendulum-v1")
    agent = rlkit.agents.Reinforce.from_env(pendulum, policy=policy, baseline=False)
    assert agent.policy.fast_path and agent.value is None and agent.config.baseline is False
    assert any(v is agent.log_std for v in agent.policy_pipeline.variables)
    rlkit.train(agent, pendulum, steps=400)
    assert agent.num_updates == 2
    mean = agent.policy.model(OBS[:, :3]).numpy()
    np.testing.assert_allclose(agent.act(OBS[:, :3], explore=False), 2 * mean, rtol=1e-5)
    agent.save(tmp_path / "g")
    loaded = rlkit.load(tmp_path / "g", policy=policy)
    np.testing.assert_array_equal(loaded.log_std.numpy(), agent.log_std.numpy())
    np.testing.assert_array_equal(loaded.act(OBS[:, :3], explore=False),
                                  agent.act(OBS[:, :3], explore=False))  # fmt: skip


@pytest.mark.slow
def test_save_and_load_need_the_builder_given_again(env, tmp_path):
    agent = rlkit.agents.Reinforce.from_env(env, policy=layer_norm, baseline=value)
    rlkit.train(agent, env, steps=200)
    agent.save(tmp_path / "a")
    assert rlkit.load(tmp_path / "a", baseline=value).config.policy == "<python object>"
    (tmp_path / "a" / "policy.keras").unlink()  # (a plain Keras policy is kept in its format)
    with pytest.raises(UsageError, match=r"give it again, e.g. rlkit.load\(path, policy="):
        rlkit.load(tmp_path / "a", baseline=value)
    with pytest.raises(UsageError, match=r"give it again, e.g. rlkit.load\(path, baseline="):
        rlkit.load(tmp_path / "a", policy=layer_norm)
    loaded = rlkit.load(tmp_path / "a", policy=layer_norm, baseline=value)
    np.testing.assert_array_equal(loaded.action_probabilities(OBS), agent.action_probabilities(OBS))
    copies = agent.learner.policy().value, loaded.learner.policy().value
    np.testing.assert_array_equal(copies[1](OBS), copies[0](OBS))


def _dense(width: int, inputs: int = 4, activation=None):
    return lambda o, a: keras.Sequential(
        [keras.Input((inputs,)), keras.layers.Dense(width, activation=activation)]
    )


@pytest.mark.parametrize(
    ("networks", "message"),
    [
        ({"policy": _dense(3)}, r"policy returns \[batch, 3\] but needs \[batch, 2\]$"),
        ({"policy": _dense(2, activation="softmax")},
         r"policy returns softmax probabilities but needs logits"),
        ({"policy": _dense(2, inputs=7)},
         r"policy takes \[batch, 7\] but the observation is \[batch, 4\]"),
        ({"baseline": _dense(2)},
         r"baseline returns \[batch, 2\] but needs \[batch, 1\] or \[batch\]$"),
        ({"policy": lambda o, a: 1 / 0}, "the policy builder raised ZeroDivisionError"),
        ({"baseline": lambda o, a: None}, "the baseline builder returned NoneType, not a"),
        ({"policy": 3}, "policy must be a keras.Model or a builder, got int"),
        ({"baseline": "no_such_module:build"},
         "cannot import baseline builder 'no_such_module:build'"),
        ({"policy": "nocolon"}, "bad policy 'nocolon': expected an importable builder"),
        ({"baseline": "maybe"}, "bad value 'maybe' for baseline: expected true or false"),
    ],
)  # fmt: skip
def test_a_network_that_does_not_fit_is_refused_in_one_line(env, networks, message):
    with pytest.raises(UsageError, match=message) as caught:
        rlkit.agents.Reinforce.from_env(env, **networks)
    assert "\n" not in str(caught.value)


def test_a_baseline_network_with_the_baseline_off_is_refused(env):
    with pytest.raises(UsageError, match="baseline_network needs baseline = true"):
        rlkit.agents.Reinforce.from_env(env, baseline_network="mypolicynets:value", baseline=False)


NETS = """
import keras


def policy(observation_space, action_space):
    return keras.Sequential([keras.Input(observation_space.shape),
                             keras.layers.Dense(16, activation="relu"),
                             keras.layers.Dense(int(action_space.n))])


def value(observation_space, action_space):
    x = keras.Input(observation_space.shape)
    h = keras.layers.LayerNormalization()(keras.layers.Dense(16, activation="relu")(x))
    return keras.Model(x, keras.layers.Dense(1)(h))


def wide(observation_space, action_space):
    return keras.Sequential([keras.Input(observation_space.shape), keras.layers.Dense(5)])
"""


@pytest.mark.slow
def test_the_cli_takes_importable_builders_records_them_and_resumes_exactly(
    capsys, tmp_path, monkeypatch
):
    (tmp_path / "mypolicynets.py").write_text(NETS)
    monkeypatch.syspath_prepend(str(tmp_path))
    common = ["reinforce", "--env", "CartPole-v1", "--set", "policy=mypolicynets:policy", "--set",
              "baseline_network=mypolicynets:value", "--seed", "5", "--checkpoint-every", "0",
              "--eval-episodes", "2", "--quiet"]  # fmt: skip
    assert main(["train", *common, "--steps", "500", "--out", str(tmp_path / "whole")]) == 0
    assert main(["train", *common, "--steps", "230", "--out", str(tmp_path / "cut")]) == 0
    (whole,) = (tmp_path / "whole").iterdir()
    (cut,) = (tmp_path / "cut").iterdir()
    config = (cut / "config.toml").read_text()
    assert 'policy = "mypolicynets:policy"' in config
    assert 'baseline_network = "mypolicynets:value"' in config
    assert main(["resume", str(cut), "--steps", "500", "--quiet"]) == 0
    rows = (whole / "metrics.csv").read_text()
    assert rows.count("\nepisode,") > 5 and (cut / "metrics.csv").read_text() == rows
    assert main(["evaluate", str(cut), "--episodes", "1"]) == 0
    agent = rlkit.load(cut / "model")  # the named builders come back by themselves
    assert agent.policy.fast_path and not agent.value.fast_path
    assert agent.policy.variables[0].shape == (4, 16)
    capsys.readouterr()
    status = main(["train", "reinforce", "--set", "policy=mypolicynets:wide", "--out",
                   str(tmp_path / "bad"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "policy returns [batch, 5] but needs [batch, 2]" in err
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())


@pytest.mark.slow
def test_the_docs_example_runs(tmp_path, monkeypatch):
    doc = (Path(__file__).resolve().parents[3] / "docs" / "api.md").read_text()
    section = doc.split("### REINFORCE: a policy and a baseline of one's own", 1)[1]
    (example,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    monkeypatch.chdir(tmp_path)
    exec(compile(example.replace("steps=20_000", "steps=300"), "docs/api.md", "exec"), {})
    assert (tmp_path / "cartpole-reinforce" / "agent.json").is_file()


def test_a_bandits_preset_keeps_the_baseline_one_gives_a_network_for():
    from rlkit.agents.reinforce.config import ReinforceConfig, resolve_preset

    bandit = gym.spaces.Box(1.0, 1.0, (1,), np.float32)
    assert resolve_preset(ReinforceConfig(), bandit).baseline is False
    mine = resolve_preset(ReinforceConfig(baseline_network="mylab:baseline"), bandit)
    assert mine.preset == "bandit" and mine.baseline and mine.hidden_sizes == (5, 5)
