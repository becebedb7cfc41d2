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


@pytest.mark.slow
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


@pytest.mark.slow
def test_any_other_model_acts_through_one_compiled_call_and_learns(env):
    agent = rlkit.agents.DQN.from_env(env, q_network=layer_norm, target_update=100, **SMALL)
    assert not agent.q.fast_path
    rlkit.train(agent, env, steps=400)
    obs = np.random.default_rng(2).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(agent.q_values(obs), agent.q.model(obs).numpy(), rtol=1e-5)
    for target, online in zip(agent.q_target.variables, agent.q.variables, strict=True):
        np.testing.assert_array_equal(target.numpy(), online.numpy())  # copied at step 400


@pytest.mark.slow
def test_a_model_instance_gets_a_cloned_target_and_save_load_needs_no_builder(env, tmp_path):
    agent = rlkit.agents.DQN.from_env(env, q_network=mlp(env.observation_space,
                                                          env.action_space), **SMALL)  # fmt: skip
    rlkit.train(agent, env, steps=300)
    agent.save(tmp_path / "a")
    obs = np.ones((2, 4), np.float32)
    by_itself = rlkit.load(tmp_path / "a")  # a plain Keras model: kept in Keras' format
    np.testing.assert_array_equal(by_itself.q_values(obs), agent.q_values(obs))
    (tmp_path / "a" / "q_network.keras").unlink()  # without it, the builder is given again
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


@pytest.mark.slow
def test_the_cli_takes_an_importable_builder_records_it_and_resumes_exactly(
    capsys, tmp_path, monkeypatch
):
    (tmp_path / "mynets.py").write_text(NETS)
    monkeypatch.syspath_prepend(str(tmp_path))
    common = ["dqn", "--env", "CartPole-v1", "--set", "q_network=mynets:build", "--set",
              "learning_starts=100", "--set", "jit_compile=false", "--eval-every", "200",
              "--eval-episodes", "2", "--checkpoint-every", "200", "--quiet",
              # schedules in steps: a 200-step run extended to 400 is then the 400-step run
              "--set", "eps_anneal_fraction=0", "--set", "lr_anneal_fraction=0"]  # fmt: skip
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


# -- DDPG / TD3: actor and critic of one's own ----------------------------------------------------
def actor(observation_space, action_space):
    width = action_space.shape[0]
    return keras.Sequential([keras.Input(observation_space.shape),
                             keras.layers.Dense(32, activation="relu"),
                             keras.layers.Dense(width, activation="tanh")])  # fmt: skip


def critic(observation_space, action_space):
    obs, action = keras.Input(observation_space.shape), keras.Input(action_space.shape)
    x = keras.layers.Dense(32, activation="relu")(keras.layers.Concatenate()([obs, action]))
    return keras.Model([obs, action], keras.layers.Dense(1)(x))


DDPG_SMALL = {"learning_starts": 100, "batch_size": 32, "jit_compile": False}


@pytest.fixture
def pendulum():
    return gym.make("Pendulum-v1")


@pytest.mark.slow
def test_ddpg_with_the_users_actor_and_critic_learns_with_ema_targets(pendulum, tmp_path):
    agent = rlkit.agents.DDPG.from_env(pendulum, actor=actor, critic=critic, **DDPG_SMALL)
    assert agent.actor.fast_path  # a Dense stack with a tanh output: the numpy copy
    obs = np.random.default_rng(3).normal(size=(4, 3)).astype(np.float32)
    actions = np.full((4, 1), 0.3, np.float32)
    # the targets start as the online networks (EMA shadows initialised to them)
    online = agent.critics[0].model([obs, actions]).numpy()
    np.testing.assert_allclose(agent.learner.target_q(obs, actions).numpy(), online, rtol=1e-6)
    rlkit.train(agent, pendulum, steps=300)
    np.testing.assert_allclose(agent.acting.policy(obs), agent.actor.model(obs).numpy(), atol=1e-5)
    # after updates the targets lag the online critic: shadow <- decay*shadow + (1-decay)*w
    assert not np.allclose(agent.learner.target_q(obs, actions).numpy(),
                           agent.critics[0].model([obs, actions]).numpy())  # fmt: skip
    agent.save(tmp_path / "d")
    loaded = rlkit.load(tmp_path / "d", actor=actor, critic=critic)
    np.testing.assert_array_equal(
        loaded.act(obs[0], explore=False), agent.act(obs[0], explore=False)
    )


@pytest.mark.slow
def test_td3_builds_twin_critics_of_the_users_with_their_own_seeds(pendulum):
    agent = rlkit.agents.DDPG.from_env(pendulum, actor=actor, critic=critic, td3=True,
                                       **DDPG_SMALL)  # fmt: skip
    first, second = (c.variables[0].numpy() for c in agent.critics)
    assert first.shape == second.shape and not np.array_equal(first, second)
    rlkit.train(agent, pendulum, steps=250)


@pytest.mark.parametrize(
    ("networks", "message"),
    [
        ({"critic": lambda o, a: keras.Sequential([keras.Input(o.shape), keras.layers.Dense(1)])},
         r"critic takes 1 input\(s\) but needs two: \[observation \[batch, 3\], action"),
        ({"actor": lambda o, a: keras.Sequential([keras.Input(o.shape), keras.layers.Dense(3)])},
         r"actor returns \[batch, 3\] but needs \[batch, 1\]"),
    ],
)  # fmt: skip
def test_an_actor_or_critic_that_does_not_fit_is_refused(pendulum, networks, message):
    with pytest.raises(UsageError, match=message):
        rlkit.agents.DDPG.from_env(pendulum, **networks)
