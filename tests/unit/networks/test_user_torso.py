"""A torso of one's own under rlkit's head (issue 36: "a user's own torso works with each
head"): Rainbow's noisy dueling 51-atom head on it, C51's and QR-DQN's values per action,
learning, saving and loading, the CLI by name; a misfit refused in one line naming the shape."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest

from rlkit.agents import C51, DQN, IQN, QRDQN, Rainbow
from rlkit.agents.dqn import config as dqn_config
from rlkit.cli.main import main
from rlkit.core.errors import UsageError
from rlkit.networks import user_torso

MODULE = '''
import keras


def torso(observation_space, action_space):
    """Two ReLU layers: [batch, 4] -> [batch, 24]."""
    obs = keras.Input(observation_space.shape)
    x = keras.layers.Dense(32, activation="relu", name="mine_1")(obs)
    return keras.Model(obs, keras.layers.Dense(24, activation="relu", name="mine_2")(x))


def grid(observation_space, action_space):
    """A misfit: [batch, 4] -> [batch, 2, 2]."""
    obs = keras.Input(observation_space.shape)
    return keras.Model(obs, keras.layers.Reshape((2, 2))(obs))
'''
FEW = dict(learning_starts=32, train_freq=8, batch_size=16, buffer_size=500, jit_compile=False)


@pytest.fixture
def torsos(tmp_path, monkeypatch):
    (tmp_path / "torsos.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import torsos

    yield torsos
    sys.modules.pop("torsos", None)


def run(agent, env, steps: int, seed: int = 0) -> None:
    obs, _ = env.reset(seed=seed)
    agent.observe_first(obs)
    for _ in range(steps):
        action = agent.act(obs)
        obs, reward, terminated, truncated, _ = env.step(action)
        agent.observe(action, reward, obs, terminated, truncated)
        agent.update()
        if terminated or truncated:
            obs, _ = env.reset()
            agent.observe_first(obs)


@pytest.mark.slow
def test_rainbows_noisy_dueling_head_goes_on_the_torso_and_learns(torsos):
    env = gym.make("CartPole-v1")
    agent = Rainbow.from_env(env, seed=1, torso="torsos:torso", hidden_sizes=(16,), **FEW)
    q = agent.learner.q
    assert q.user_torso is not None and not q.mirrored and q.noisy and q.dueling
    assert q.model.output.shape[-1] == 2 * 51
    names = [v.path for v in q.variables]
    assert any("mine_1" in n for n in names) and any("kernel_sigma" in n for n in names)
    # the target starts as a copy of the online network, torso included
    for online, target in zip(q.variables, agent.learner.q_target.variables, strict=True):
        np.testing.assert_array_equal(online.numpy(), target.numpy())
    torso_before = [w.copy() for w in q.user_torso.get_weights()]
    run(agent, env, 64)
    assert agent.num_updates > 0
    after = q.user_torso.get_weights()
    assert all(not np.array_equal(b, a) for b, a in zip(torso_before, after, strict=True))
    obs = env.observation_space.sample()
    assert agent.act(obs) in (0, 1) and agent.act(obs, explore=False) in (0, 1)
    # greedy acting reads the noise-free expected values of the head on the torso
    values = agent.q_values(obs[None])
    assert values.shape == (1, 2) and np.all(np.abs(values) <= 10.0)


@pytest.mark.slow
@pytest.mark.parametrize("agent_class, per_action", [(C51, 51), (QRDQN, 200), (DQN, 1)])
def test_each_value_head_takes_the_torso(torsos, agent_class, per_action):
    agent = agent_class.from_env(gym.make("CartPole-v1"), torso=torsos.torso, **FEW)
    assert agent.learner.q.model.output.shape[-1] == 2 * per_action
    assert agent.config.torso == "<python object>"


@pytest.mark.slow
def test_a_torso_given_in_python_saves_and_loads(torsos, tmp_path):
    env = gym.make("CartPole-v1")
    agent = C51.from_env(env, seed=3, torso=torsos.torso, hidden_sizes=(), **FEW)
    run(agent, env, 60)
    agent.save(tmp_path / "c51")
    probe = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    for loaded in (C51.load(tmp_path / "c51"), C51.load(tmp_path / "c51", torso=torsos.torso)):
        np.testing.assert_array_equal(loaded.q_values(probe), agent.q_values(probe))


def test_a_misfit_is_refused_in_one_line_naming_its_shape(torsos):
    with pytest.raises(UsageError, match=r"returns \[batch, 2, 2\] \(flatten it\)"):
        Rainbow.from_env(gym.make("CartPole-v1"), torso=torsos.grid, **FEW)
    with pytest.raises(UsageError, match="for torso: must be auto, nature, minatar or a builder"):
        Rainbow.from_env(gym.make("CartPole-v1"), torso="natrue", **FEW)
    with pytest.raises(UsageError, match="give one of them, not both"):
        DQN.from_env(gym.make("CartPole-v1"), torso="torsos:torso", q_network="torsos:grid")
    with pytest.raises(UsageError, match="its q_network"):
        IQN.from_env(gym.make("CartPole-v1"), torso="torsos:torso")


@pytest.mark.slow
def test_the_cli_trains_rainbow_on_a_torso_and_refuses_a_misfit(torsos, tmp_path, capsys):
    common = ["--env", "CartPole-v1", "--steps", "200", "--eval-every", "0", "--eval-episodes",
              "1", "--quiet", "--set", "learning_starts=50",
              "--set", "jit_compile=false"]  # fmt: skip
    assert main(["train", "rainbow", *common, "--set", "torso=torsos:torso",
                 "--out", str(tmp_path / "ok")]) == 0  # fmt: skip
    (run_dir,) = (tmp_path / "ok").iterdir()
    assert 'torso = "torsos:torso"' in (run_dir / "config.toml").read_text()
    assert main(["evaluate", str(run_dir), "--episodes", "1"]) == 0
    capsys.readouterr()
    bad = tmp_path / "bad"
    assert main(["train", "rainbow", *common, "--set", "torso=torsos:grid",
                 "--out", str(bad)]) == 2  # fmt: skip
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "returns [batch, 2, 2] (flatten it)" in line
    assert not bad.exists() or not any(bad.iterdir())


def test_the_compiled_loop_says_it_takes_no_torso_of_ones_own():
    from rlkit.run.compiled.choice import unsupported

    config = dqn_config.DQNConfig(torso="torsos:torso")
    assert "torso of your own" in unsupported("rlkit/CartPole-v1", "dqn", config)
    assert unsupported("rlkit/CartPole-v1", "dqn", dqn_config.DQNConfig()) is None


def test_the_config_knows_the_networks_torsos_without_importing_them():
    assert dqn_config.BUILT_IN_TORSOS == user_torso.BUILT_IN_TORSOS
