"""PPO's and A2C's networks of one's own (rlkit/agents/ppo/user_networks.py): an actor, a
critic or a shared torso, as a Keras model, a builder or an importable builder named in the
config; checked in one line, trained through PPO's update, acting through a numpy copy or
one compiled call, saved, loaded, resumed; refused by the compiled loop."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import keras
import numpy as np
import pytest
from gymnasium import spaces

import rlkit
from rlkit.cli.main import main
from rlkit.core.errors import UsageError

SMALL = dict(n_steps=8, batch_size=8, n_epochs=2, learning_rate=1e-2)


def outputs(action_space) -> int:
    """What the policy returns: n, sum(nvec) or the action's size."""
    if isinstance(action_space, spaces.Discrete):
        return int(action_space.n)
    if isinstance(action_space, spaces.MultiDiscrete):
        return int(np.sum(action_space.nvec))
    return int(np.prod(action_space.shape))


def actor(observation_space, action_space):
    """A plain Dense stack (ReLU, linear logits): acts through the numpy copy."""
    return keras.Sequential([keras.Input(observation_space.shape),
                             keras.layers.Dense(16, activation="relu"),
                             keras.layers.Dense(outputs(action_space))])  # fmt: skip


def layer_norm_actor(observation_space, action_space):
    """Not a Dense stack: acts through one compiled call."""
    x = keras.Input(observation_space.shape)
    h = keras.layers.LayerNormalization()(keras.layers.Dense(16, activation="relu")(x))
    return keras.Model(x, keras.layers.Dense(outputs(action_space))(h))


def critic(observation_space, action_space):
    """``[B]`` out (squeezed inside the model)."""
    x = keras.Input(observation_space.shape)
    v = keras.layers.Dense(1)(keras.layers.Dense(16, activation="tanh")(x))
    return keras.Model(x, keras.ops.squeeze(v, axis=-1))


def torso(observation_space, action_space):
    """Features ``[B, 12]`` for rlkit's two heads."""
    return keras.Sequential([keras.Input(observation_space.shape),
                             keras.layers.Dense(12, activation="relu")])  # fmt: skip


def conv_torso(observation_space, action_space):
    """uint8 images in (as stored), features ``[B, D]`` out."""
    x = keras.Input(observation_space.shape, dtype="uint8")
    h = keras.layers.Conv2D(4, 3, activation="relu")(keras.ops.cast(x, "float32") / 255.0)
    return keras.Model(x, keras.layers.Flatten()(h))


def dense(units: int, activation=None, inputs: int | None = None):
    def build(observation_space, action_space):
        shape = observation_space.shape if inputs is None else (inputs,)
        return keras.Sequential([keras.Input(shape), keras.layers.Dense(units, activation)])

    return build


def weights(variables) -> list[np.ndarray]:
    return [v.numpy().copy() for v in variables]


OBS = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32)


@pytest.mark.slow
def test_an_actor_and_a_critic_of_ones_own_train_and_the_actor_acts_through_its_numpy_copy():
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.PPO.from_env(env, seed=0, actor=actor, critic=critic, **SMALL)
    assert agent.config.actor == agent.config.critic == "<python object>"
    assert agent.policy.fast_path and agent.learner.networks.value_network.squeeze is False
    groups = agent.checkpoint_variables()
    assert [v.shape for v in groups["policy"]] == [(4, 16), (16,), (16, 2), (2,)]
    before = weights(groups["policy"] + groups["value"])
    rlkit.train(agent, env, steps=64)
    assert agent.num_updates == 8
    after = groups["policy"] + groups["value"]
    assert all(not np.array_equal(b, v.numpy()) for b, v in zip(before, after, strict=True))
    np.testing.assert_allclose(agent.learner.policy().forward(OBS),
                               agent.policy.model(OBS).numpy(), rtol=1e-5, atol=1e-6)  # fmt: skip
    np.testing.assert_array_equal(agent.act(OBS, explore=False),
                                  agent.policy.model(OBS).numpy().argmax(-1))  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("cls", ["PPO", "A2C"])
def test_an_actor_alone_keeps_rlkits_value_network_and_a_compiled_actor_acts(cls):
    env = gym.make("CartPole-v1")
    settings = SMALL if cls == "PPO" else {"n_steps": 8}
    agent = getattr(rlkit.agents, cls).from_env(env, seed=0, actor=layer_norm_actor, **settings)
    assert not agent.policy.fast_path
    assert agent.value.model.name == "value"  # rlkit's tanh MLP
    rlkit.train(agent, env, steps=32)
    assert agent.num_updates == 4
    np.testing.assert_allclose(agent.learner.policy().forward(OBS),
                               agent.policy.model(OBS).numpy(), rtol=1e-5, atol=1e-6)  # fmt: skip


@pytest.mark.slow
def test_a_critic_alone_keeps_rlkits_policy_bit_for_bit():
    """rlkit's policy is built as without a critic of one's own (same seed: same weights)."""
    env = gym.make("Pendulum-v1")
    plain = rlkit.agents.PPO.from_env(env, seed=4, **SMALL)
    mine = rlkit.agents.PPO.from_env(env, seed=4, critic=critic, **SMALL)
    for a, b in zip(plain.checkpoint_variables()["policy"], mine.checkpoint_variables()["policy"],
                    strict=True):  # fmt: skip
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    rlkit.train(mine, env, steps=16)
    assert mine.num_updates == 2


@pytest.mark.slow
def test_a_torso_of_ones_own_is_shared_by_rlkits_two_heads():
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.PPO.from_env(env, seed=0, torso=torso, **SMALL)
    groups = agent.checkpoint_variables()
    assert [v.shape for v in groups["torso"]] == [(4, 12), (12,)]
    assert [v.shape for v in groups["policy"]] == [(12, 2), (2,)]
    assert [v.shape for v in groups["value"]] == [(12, 1), (1,)]
    # rlkit's heads: orthogonal, gain 0.01 for the policy's (its columns' norm), zero biases
    kernel = groups["policy"][0].numpy()
    np.testing.assert_allclose(np.linalg.norm(kernel, axis=0), 0.01, rtol=1e-4)
    assert not groups["value"][1].numpy().any()
    before = weights(groups["torso"])
    rlkit.train(agent, env, steps=32)
    assert all(not np.array_equal(b, v.numpy()) for b, v in zip(before, groups["torso"],
                                                                 strict=True))  # fmt: skip
    np.testing.assert_allclose(agent.learner.policy().forward(OBS),
                               agent.policy.model(OBS).numpy(), rtol=1e-5, atol=1e-6)  # fmt: skip


@pytest.mark.slow
def test_a_torso_on_images_and_multidiscrete_actions():
    agent = rlkit.agents.PPO(spaces.Box(0, 255, (6, 6, 2), np.uint8), spaces.MultiDiscrete([2, 3]),
                             seed=0, torso=conv_torso, **SMALL)  # fmt: skip
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, size=(2, 6, 6, 2), dtype=np.uint8)
    agent.observe_first(frames)
    for _ in range(8):
        action = agent.act(frames)
        assert action.shape == (2, 2)
        agent.observe_next(action, np.ones(2), frames, np.zeros(2, bool), np.zeros(2, bool))
    metrics = agent.update()
    assert metrics is not None and np.isfinite(metrics["loss"])
    assert agent.policy.model(frames).shape == (2, 5)


@pytest.mark.parametrize(
    ("networks", "message"),
    [
        ({"actor": dense(3)}, r"actor returns \[batch, 3\] but needs \[batch, 2\]: 2 logits, one"
                              r" per action of Discrete\(2\)$"),
        ({"actor": dense(2, "softmax")}, "actor returns softmax probabilities but needs logits"),
        ({"actor": dense(2, inputs=7)},
         r"actor takes \[batch, 7\] but the observation is \[batch, 4\]"),
        ({"critic": dense(2)}, r"critic returns \[batch, 2\] but needs \[batch, 1\] or \[batch\]$"),
        ({"torso": lambda o, a: keras.Sequential([keras.Input(o.shape), keras.layers.Reshape(
            (2, 2))])}, r"the torso: it must return features \[batch, D\] for the policy and "
                        r"value heads, but returns \[batch, 2, 2\]"),
        ({"actor": lambda o, a: 1 / 0}, "the actor builder raised ZeroDivisionError"),
        ({"critic": lambda o, a: None}, "the critic builder returned NoneType, not a"),
        ({"actor": 3}, "actor must be a keras.Model or a builder, got int"),
        ({"torso": 3}, "torso must be a keras.Model or a builder, got int"),
        ({"critic": "no_such_module:build"},
         "cannot import critic builder 'no_such_module:build': ModuleNotFoundError"),
        ({"actor": "nocolon"}, "bad actor 'nocolon': expected an importable builder"),
        ({"torso": "bogus"}, "must be auto, nature, minatar or a builder"),
        ({"torso": torso, "actor": actor}, "actor and critic are whole networks, torso one under"),
    ],
)  # fmt: skip
def test_a_network_that_does_not_fit_is_refused_in_one_line(networks, message):
    for cls in (rlkit.agents.PPO, rlkit.agents.A2C):
        with pytest.raises(UsageError, match=message) as caught:
            cls.from_env(gym.make("CartPole-v1"), **networks)
        assert "\n" not in str(caught.value)


def test_a_multidiscrete_actor_of_the_wrong_size_is_told_the_slices():
    told = r"actor returns \[batch, 4\] but needs \[batch, 5\]: 5 logits \(2 \+ 3\), one slice"
    with pytest.raises(UsageError, match=told):
        rlkit.agents.PPO(spaces.Box(-1, 1, (3,)), spaces.MultiDiscrete([2, 3]), actor=dense(4))


def test_images_take_both_networks_or_a_torso():
    images = spaces.Box(0, 255, (6, 6, 2), np.uint8)
    with pytest.raises(UsageError, match="one torso under both heads: give a critic of your own "
                                         "too") as caught:  # fmt: skip
        rlkit.agents.PPO(images, spaces.Discrete(3), actor=dense(3))
    assert "\n" not in str(caught.value)


def test_the_compiled_loop_refuses_networks_of_ones_own():
    from rlkit.agents.ppo.config import A2CConfig, PPOConfig
    from rlkit.run.compiled.choice import unsupported

    for config in (PPOConfig, A2CConfig):
        assert unsupported("rlkit/CartPole-v1", "ppo", config()) is None
        for key, what in (("actor", "an actor of your own"), ("critic", "a critic of your own"),
                          ("torso", "a torso of your own")):  # fmt: skip
            why = unsupported("rlkit/CartPole-v1", "ppo", config(**{key: "mylab:net"}))
            assert why is not None and what in why and "\n" not in why


@pytest.mark.slow
def test_networks_given_in_python_are_saved_and_load_by_themselves(tmp_path):
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.PPO.from_env(env, seed=0, actor=actor, critic=critic, **SMALL)
    rlkit.train(agent, env, steps=16)
    agent.save(tmp_path / "model")
    assert (tmp_path / "model" / "actor.keras").is_file()
    loaded = rlkit.load(tmp_path / "model")  # plain Keras models come back from their files
    np.testing.assert_array_equal(loaded.act(OBS, explore=False), agent.act(OBS, explore=False))
    shared = rlkit.agents.PPO.from_env(env, seed=0, torso=torso, **SMALL)
    shared.save(tmp_path / "shared")
    again = rlkit.load(tmp_path / "shared")
    np.testing.assert_allclose(again.learner.policy().forward(OBS),
                               shared.learner.policy().forward(OBS), rtol=1e-6)  # fmt: skip


NETS = """
import keras


def actor(observation_space, action_space):
    return keras.Sequential([keras.Input(observation_space.shape),
                             keras.layers.Dense(16, activation="relu"),
                             keras.layers.Dense(int(action_space.n))])


def critic(observation_space, action_space):
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
    (tmp_path / "mypponets.py").write_text(NETS)
    monkeypatch.syspath_prepend(str(tmp_path))
    common = ["ppo", "--env", "CartPole-v1", "--preset", "none", "--num-envs", "2", "--set",
              "actor=mypponets:actor", "--set", "critic=mypponets:critic", "--set", "n_steps=25",
              "--set", "batch_size=10", "--seed", "5", "--checkpoint-every", "125",
              "--eval-every", "0", "--eval-episodes", "1", "--quiet"]  # fmt: skip
    assert main(["train", *common, "--steps", "300", "--out", str(tmp_path / "whole")]) == 0
    assert main(["train", *common, "--steps", "125", "--out", str(tmp_path / "cut")]) == 0
    (whole,) = (tmp_path / "whole").iterdir()
    (cut,) = (tmp_path / "cut").iterdir()
    config = (cut / "config.toml").read_text()
    assert 'actor = "mypponets:actor"' in config and 'critic = "mypponets:critic"' in config
    assert main(["resume", str(cut), "--steps", "300", "--quiet"]) == 0
    assert (cut / "metrics.csv").read_text() == (whole / "metrics.csv").read_text()
    assert main(["evaluate", str(cut), "--episodes", "1"]) == 0
    agent = rlkit.load(cut / "model")  # the named builders come back by themselves
    assert agent.policy.fast_path and agent.policy.variables[0].shape == (4, 16)
    capsys.readouterr()
    status = main(["train", "ppo", "--set", "actor=mypponets:wide", "--out",
                   str(tmp_path / "bad"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "actor returns [batch, 5] but needs [batch, 2]" in err
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())
    status = main(["train", "ppo", "--env", "rlkit/CartPole-v1", "--loop", "compiled", "--set",
                   "torso=mypponets:actor", "--out", str(tmp_path / "bad"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2 and "does not take a torso of your own" in err


@pytest.mark.slow
def test_the_docs_example_runs(tmp_path, monkeypatch):
    doc = (Path(__file__).resolve().parents[3] / "docs" / "ppo.md").read_text()
    section = doc.split("## Networks of your own", 1)[1].split("\n## ", 1)[0]
    (example,) = re.findall(r"```python\n(.*?)```", section, re.S)
    monkeypatch.chdir(tmp_path)
    exec(compile(example.replace("steps=50_000", "steps=64"), "docs/ppo.md", "exec"), {})
    assert (tmp_path / "cartpole-ppo" / "agent.json").is_file()
