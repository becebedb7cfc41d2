"""Your own network for DQN: a Keras model, a builder, or an importable builder named in
the config; checked, trained through rlkit's pipeline, checkpointed, resumed and loaded."""

from __future__ import annotations

import gymnasium as gym
import keras
import numpy as np
import pytest

import rlkit
from rlkit.cli.main import main
from rlkit.core.errors import UsageError

SMALL = {"learning_starts": 100, "train_freq": 50, "gradient_steps": 4, "jit_compile": False}


def mlp(observation_space, action_space, width: int = 32):
    return keras.Sequential([keras.Input(observation_space.shape),
                             keras.layers.Dense(width, activation="relu"),
                             keras.layers.Dense(int(action_space.n))])  # fmt: skip


def layer_norm(observation_space, action_space):
    x = keras.Input(observation_space.shape)
    h = keras.layers.LayerNormalization()(keras.layers.Dense(32, activation="relu")(x))
    return keras.Model(x, keras.layers.Dense(int(action_space.n))(h))


@pytest.fixture
def env():
    return gym.make("CartPole-v1")


def test_a_dense_stack_of_the_users_acts_through_the_numpy_fast_path(env):
    agent = rlkit.agents.DQN.from_env(env, q_network=mlp, **SMALL)
    assert agent.q.fast_path and agent.q_target.model is not agent.q.model
    obs = np.random.default_rng(1).normal(size=(6, 4)).astype(np.float32)
    np.testing.assert_allclose(agent.q_values(obs), agent.q.model(obs).numpy(), rtol=1e-5)
    before = [v.numpy().copy() for v in agent.q.variables]
    rlkit.train(agent, env, steps=400)
    assert any(
        not np.array_equal(b, v.numpy()) for b, v in zip(before, agent.q.variables, strict=True)
    )
    # the numpy copy follows the trained weights; the target copies the online network
    np.testing.assert_allclose(agent.q_values(obs), agent.q.model(obs).numpy(), rtol=1e-5)


def test_any_other_model_acts_through_one_compiled_call_and_learns(env):
    agent = rlkit.agents.DQN.from_env(env, q_network=layer_norm, target_update=100, **SMALL)
    assert not agent.q.fast_path
    rlkit.train(agent, env, steps=400)
    obs = np.random.default_rng(2).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(agent.q_values(obs), agent.q.model(obs).numpy(), rtol=1e-5)
    for target, online in zip(agent.q_target.variables, agent.q.variables, strict=True):
        np.testing.assert_array_equal(target.numpy(), online.numpy())  # copied at step 400


def test_a_model_instance_gets_a_cloned_target_and_save_load_needs_the_builder(env, tmp_path):
    agent = rlkit.agents.DQN.from_env(env, q_network=mlp(env.observation_space,
                                                          env.action_space), **SMALL)  # fmt: skip
    rlkit.train(agent, env, steps=300)
    agent.save(tmp_path / "a")
    with pytest.raises(UsageError, match=r"give it again, e.g. rlkit.load\(path, q_network="):
        rlkit.load(tmp_path / "a")
    loaded = rlkit.load(tmp_path / "a", q_network=mlp)
    obs = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(loaded.q_values(obs), agent.q_values(obs))


@pytest.mark.parametrize(
    ("network", "message"),
    [
        (lambda o, a: keras.Sequential([keras.Input(o.shape), keras.layers.Dense(3)]),
         r"q_network returns \[batch, 3\] but needs \[batch, 2\]"),
        (lambda o, a: keras.Sequential([keras.Input((7,)), keras.layers.Dense(2)]),
         r"q_network takes \[batch, 7\] but the observation is \[batch, 4\]"),
        (lambda o, a: 1 / 0, "the q_network builder raised ZeroDivisionError"),
        (lambda o, a: "a model", "the q_network builder returned str, not a keras.Model"),
        ("no_such_module:build", "cannot import q_network builder 'no_such_module:build'"),
        ("nocolon", "bad q_network 'nocolon': expected an importable builder"),
    ],
)  # fmt: skip
def test_a_network_that_does_not_fit_is_refused_naming_the_shapes(env, network, message):
    with pytest.raises(UsageError, match=message):
        rlkit.agents.DQN.from_env(env, q_network=network)


NETS = """
import keras


def build(observation_space, action_space):
    return keras.Sequential([keras.Input(observation_space.shape),
                             keras.layers.Dense(16, activation="relu"),
                             keras.layers.Dense(int(action_space.n))])
"""


def test_the_cli_takes_an_importable_builder_records_it_and_resumes_exactly(
    capsys, tmp_path, monkeypatch
):
    (tmp_path / "mynets.py").write_text(NETS)
    monkeypatch.syspath_prepend(str(tmp_path))
    common = ["dqn", "--env", "CartPole-v1", "--set", "q_network=mynets:build", "--set",
              "learning_starts=100", "--set", "jit_compile=false", "--eval-every", "200",
              "--eval-episodes", "2", "--checkpoint-every", "200", "--quiet"]  # fmt: skip
    assert main(["train", *common, "--steps", "400", "--out", str(tmp_path / "whole")]) == 0
    assert main(["train", *common, "--steps", "200", "--out", str(tmp_path / "cut")]) == 0
    (whole,) = (tmp_path / "whole").iterdir()
    (cut,) = (tmp_path / "cut").iterdir()
    assert 'q_network = "mynets:build"' in (cut / "config.toml").read_text()
    assert main(["resume", str(cut), "--steps", "400", "--quiet"]) == 0
    assert (cut / "metrics.csv").read_text() == (whole / "metrics.csv").read_text()
    assert main(["evaluate", str(cut), "--episodes", "1"]) == 0
    agent = rlkit.load(cut / "model")  # the named builder comes back by itself
    assert agent.q.fast_path and agent.q.variables[0].shape == (4, 16)
    capsys.readouterr()
