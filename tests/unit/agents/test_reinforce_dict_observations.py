"""REINFORCE with Dict and Tuple observations: a policy and a baseline of one's own receive
the structure (each part in its own dtype, an uint8 part as uint8), the episode memory keeps
each part in its own array, acting and bootstrapping are one compiled call, misfit networks
and the built-in ones are refused in one line, and an agent saves, loads and resumes exactly
(from the CLI, ``--env module:Id``)."""

from __future__ import annotations

import json
import sys

import gymnasium as gym
import keras
import numpy as np
import pytest
import tensorflow as tf

import rlkit
from rlkit.cli.main import main
from rlkit.core.errors import UsageError
from rlkit.replay.structured import StructuredReplay
from tests.unit.agents.test_ddpg_dict_observations import MODULE as SLIDES_MODULE

# DQN's GoalLine (Discrete actions) and DDPG's GoalSlide (a Box action in [-1, 1]) with their
# networks (test_dict_observations.py, test_ddpg_dict_observations.py beside this file): ``build``
# gives logits, ``actor`` a tanh mean; and value baselines for the Dict and the Tuple
MODULE = (
    SLIDES_MODULE
    + '''

def value(observation_space, action_space):
    """The Dict in, one value per observation [batch, 1] out."""
    inputs, parts = _dict_inputs(observation_space)
    x = keras.layers.Dense(16, activation="relu")(keras.layers.Concatenate()(parts))
    return keras.Model(inputs, keras.layers.Dense(1)(x))


def value_tuple(observation_space, action_space):
    """The Tuple in (a list of Inputs), [batch] out."""
    inputs, parts = _tuple_inputs(observation_space)
    x = keras.layers.Dense(16, activation="relu")(keras.layers.Concatenate()(parts))
    return keras.Model(inputs, keras.ops.squeeze(keras.layers.Dense(1)(x), axis=-1))
'''
)
ENV = "rgoals:goals/GoalLine-v0"


@pytest.fixture
def rgoals(tmp_path, monkeypatch):
    (tmp_path / "rgoals.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import rgoals

    yield rgoals
    for env_id in ("slides/GoalSlide-v0", "goals/GoalLine-v0"):
        gym.registry.pop(env_id, None)
    sys.modules.pop("rgoals", None)


def weights(*networks) -> list[np.ndarray]:
    return [v.numpy().copy() for network in networks for v in network.variables]


def all_changed(before, after) -> bool:
    return all(not np.array_equal(b, a) for b, a in zip(before, after, strict=True))


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


# -- learning ------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.filterwarnings("error:The structure of `inputs`:UserWarning")
def test_updates_change_the_users_weights_and_the_memory_keeps_each_part(rgoals):
    env = gym.make("goals/GoalLine-v0")
    agent = rlkit.agents.Reinforce.from_env(env, seed=0, policy=rgoals.build,
                                            baseline=rgoals.value)  # fmt: skip
    assert isinstance(agent.memory, StructuredReplay)
    assert not agent.policy.fast_path and not agent.value.fast_path
    picture = [p.key for p in agent.memory.parts].index("picture")
    assert agent.memory.obs.arrays[picture].dtype == np.uint8
    before = weights(agent.policy, agent.value)
    history = rlkit.train(agent, env, steps=300)
    assert agent.num_updates > 3 and agent.tracing_count == 1  # one trace, any episode length
    assert all_changed(before, weights(agent.policy, agent.value))
    assert all(np.isfinite(m["loss"]) and np.isfinite(m["value_loss"]) for _, m in history.updates)
    # the memory's episode in progress comes back as the structure, uint8 kept
    batch = agent.memory.ordered()
    assert isinstance(batch.obs, dict) and isinstance(batch.next_obs, dict)
    assert batch.obs["picture"].dtype == np.uint8 and batch.obs["picture"].shape[1:] == (2, 8)
    assert batch.next_obs["goal"].dtype == np.float32 and batch.next_obs["goal"].shape[1:] == (1,)


class Seeing(keras.Model):
    """A subclassed network that notes the structure and dtypes it is called with (Python
    runs its ``call`` only when it is traced, or when it is called eagerly)."""

    def __init__(self, out: int) -> None:
        super().__init__()
        self.hidden, self.out = keras.layers.Dense(16, activation="relu"), keras.layers.Dense(out)
        self.seen = []

    def call(self, obs):
        self.seen.append(tf.nest.map_structure(lambda t: keras.backend.standardize_dtype(
            t.dtype), obs))  # fmt: skip
        x = keras.ops.concatenate([obs[0], keras.ops.one_hot(obs[1], 8)], axis=-1)
        return self.out(self.hidden(x))


@pytest.mark.slow
def test_tuple_observations_reach_the_users_networks_and_acting_is_one_compiled_call(rgoals):
    env = gym.make("goals/GoalLine-v0", structure="tuple")
    policy, value = Seeing(2), Seeing(1)
    agent = rlkit.agents.Reinforce.from_env(env, seed=1, policy=policy, baseline=value)
    before = weights(agent.policy, agent.value)
    rlkit.train(agent, env, steps=200)
    assert agent.num_updates > 0 and all_changed(before, weights(agent.policy, agent.value))
    assert isinstance(agent.memory.ordered().obs, tuple)
    for seen in (policy.seen, value.seen):
        assert seen and all(one == ("float32", "int64") for one in seen)
    # acting on one observation: traced once, then the compiled call (no eager call per step)
    obs, _ = env.reset(seed=3)
    agent.act(obs)
    calls = len(policy.seen)
    actions = [agent.act(obs) for _ in range(20)]
    assert len(policy.seen) == calls and all(isinstance(a, int) for a in actions)


@pytest.mark.slow
def test_acting_on_one_observation_and_a_batch_follows_the_users_policy(rgoals):
    env = gym.make("goals/GoalLine-v0")
    agent = rlkit.agents.Reinforce.from_env(env, seed=2, policy=rgoals.build, baseline=False)
    rlkit.train(agent, env, steps=150)
    obs = [env.reset(seed=s)[0] for s in range(5)]
    batch = {k: np.stack([o[k] for o in obs]) for k in obs[0]}
    logits = agent.policy.model(batch).numpy()
    np.testing.assert_allclose(agent.action_probabilities(batch), softmax(logits), rtol=1e-5)
    np.testing.assert_allclose(agent.action_probabilities(obs[1]), softmax(logits[1]), rtol=1e-5)
    greedy = agent.act(batch, explore=False)
    assert greedy.shape == (5,)
    np.testing.assert_array_equal(greedy, np.argmax(logits, axis=-1))
    one = agent.act(obs[3], explore=False)
    assert isinstance(one, int) and one == int(np.argmax(logits[3]))
    assert agent.act(obs[0]) in (0, 1) and agent.act(batch).shape == (5,)


@pytest.mark.slow
def test_box_actions_take_the_users_mean_and_bootstrap_from_the_users_baseline(rgoals):
    env = gym.make("slides/GoalSlide-v0")
    agent = rlkit.agents.Reinforce.from_env(env, seed=3, policy=rgoals.actor,
                                            baseline=rgoals.value)  # fmt: skip
    log_std = agent.log_std.numpy().copy()
    before = weights(agent.policy, agent.value)
    rlkit.train(agent, env, steps=200)
    assert agent.num_updates > 0 and all_changed(before, weights(agent.policy, agent.value))
    assert not np.array_equal(agent.log_std.numpy(), log_std)
    obs, _ = env.reset(seed=4)
    sample = agent.act(obs)
    assert sample.shape == (1,) and sample.dtype == np.float32 and -1 <= sample[0] <= 1
    mean = agent.policy.model({k: v[None] for k, v in obs.items()}).numpy()[0]
    np.testing.assert_allclose(agent.act(obs, explore=False), mean, rtol=1e-5)
    # a cut episode bootstraps from V(s_T) of the user's baseline (one compiled call)
    agent.memory.clear()
    rewards = [0.5, -0.25, 1.0]
    for t, reward in enumerate(rewards):
        next_obs, _ = env.reset(seed=10 + t)
        agent.observe(obs, np.array([0.1], np.float32), reward, next_obs, False, t == 2)
        obs = next_obs
    returns, segments = agent.returns(agent.memory.ordered())
    v_last = agent.value.model({k: v[None] for k, v in obs.items()}).numpy()[0, 0]
    gamma = agent.config.gamma
    assert segments == 1
    np.testing.assert_allclose(returns[-1], rewards[-1] + gamma * v_last, rtol=1e-5)
    np.testing.assert_allclose(returns[0], rewards[0] + gamma * returns[1], rtol=1e-5)


# -- refusals ------------------------------------------------------------------------------------
SPACE = "Dict {goal: [1] float32, picture: [2, 8] uint8, position: [1] float32}"


@pytest.mark.parametrize(
    ("networks", "missing", "given"),
    [
        ({}, "policy and baseline", "policy=build_policy, baseline=build_baseline"),
        ({"baseline": False}, "policy", "policy=build_policy"),
        ({"policy": "rgoals:build"}, "baseline", "baseline=build_baseline"),
        ({"baseline": "rgoals:value"}, "policy", "policy=build_policy"),
    ],
)  # fmt: skip
def test_the_builtin_networks_refuse_a_dict_space_in_one_line(rgoals, networks, missing, given):
    env = gym.make("goals/GoalLine-v0")
    with pytest.raises(UsageError) as refused:
        rlkit.agents.Reinforce.from_env(env, **networks)
    message = str(refused.value)
    assert len(message.splitlines()) == 1
    assert message.startswith(f"reinforce's built-in {missing} cannot take a {SPACE} observation")
    assert f"Reinforce(..., {given})" in message
    assert ("--set policy=module:function" in message) == ("policy" in missing)
    assert ("--set baseline_network=module:function" in message) == ("baseline" in missing)


def single_input(observation_space, action_space):
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])


def wrong_keys(observation_space, action_space):
    a, b = keras.Input((1,), name="position"), keras.Input((1,), name="target")
    return keras.Model({"position": a, "target": b}, keras.layers.Dense(2)(a))


def dict_model(observation_space, out: int, **shapes):
    inputs = {k: keras.Input(shapes.get(k, s.shape), dtype=s.dtype, name=k)
              for k, s in observation_space.spaces.items()}  # fmt: skip
    return keras.Model(inputs, keras.layers.Dense(out)(inputs["goal"]))


DICT = (r"Dict \{goal: \[batch, 1\] float32, picture: \[batch, 2, 8\] uint8, position: "
        r"\[batch, 1\] float32\}")  # fmt: skip


@pytest.mark.parametrize(
    ("networks", "message"),
    [
        ({"policy": single_input},
         rf"policy takes one input \[batch, 4\] but the observation is {DICT}"),
        ({"policy": wrong_keys},
         r"policy takes inputs named \['position', 'target'\] but the observation is Dict"),
        ({"policy": lambda o, a: dict_model(o, 2, goal=(3,))},
         r"policy's input 'goal' takes \[batch, 3\] but that part of the observation is "
         r"\[batch, 1\]"),
        ({"policy": lambda o, a: dict_model(o, 3)},
         r"policy returns \[batch, 3\] but needs \[batch, 2\]$"),
        ({"baseline": single_input},
         rf"baseline takes one input \[batch, 4\] but the observation is {DICT}"),
        ({"baseline": lambda o, a: dict_model(o, 2)},
         r"baseline returns \[batch, 2\] but needs \[batch, 1\] or \[batch\]$"),
    ],
)  # fmt: skip
def test_a_network_that_does_not_take_the_structure_is_one_line(rgoals, networks, message):
    env = gym.make("goals/GoalLine-v0")
    given = {"policy": rgoals.build, "baseline": rgoals.value, **networks}
    with pytest.raises(UsageError, match=message) as refused:
        rlkit.agents.Reinforce.from_env(env, **given)
    assert len(str(refused.value).splitlines()) == 1


def test_a_tuple_policy_with_the_wrong_number_of_inputs_is_refused(rgoals):
    env = gym.make("goals/GoalLine-v0", structure="tuple")
    with pytest.raises(UsageError, match=r"^policy takes 1 input\(s\) but the observation is "
                       r"Tuple \(\[batch, 2\] float32, \[batch\] int64\)"):  # fmt: skip
        rlkit.agents.Reinforce.from_env(env, policy=single_input, baseline=False)


# -- save, load, resume --------------------------------------------------------------------------
@pytest.mark.slow
def test_save_and_load_with_the_builders_given_again(rgoals, tmp_path):
    env = gym.make("goals/GoalLine-v0", structure="tuple")
    networks = {"policy": rgoals.build_tuple, "baseline": rgoals.value_tuple}
    agent = rlkit.agents.Reinforce.from_env(env, seed=4, **networks)
    rlkit.train(agent, env, steps=150)
    agent.save(tmp_path / "t")
    assert rlkit.load(tmp_path / "t", baseline=rgoals.value_tuple).memory is not None
    (tmp_path / "t" / "policy.keras").unlink()  # (kept in Keras' format: loads by itself)
    with pytest.raises(UsageError, match=r"rlkit.load\(path, policy=build\)"):
        rlkit.load(tmp_path / "t", baseline=rgoals.value_tuple)
    loaded = rlkit.load(tmp_path / "t", **networks)
    assert isinstance(loaded.memory, StructuredReplay)
    obs = [env.reset(seed=s)[0] for s in range(4)]
    batch = (np.stack([o[0] for o in obs]), np.array([o[1] for o in obs]))
    np.testing.assert_array_equal(loaded.action_probabilities(batch),
                                  agent.action_probabilities(batch))  # fmt: skip
    copies = loaded.learner.policy().value, agent.learner.policy().value
    np.testing.assert_array_equal(copies[0](batch), copies[1](batch))
    assert copies[0](batch).shape == (4,)


COMMON = ["reinforce", "--env", ENV, "--set", "policy=rgoals:build", "--set",
          "baseline_network=rgoals:value", "--eval-every", "150", "--eval-episodes", "2",
          "--checkpoint-every", "150", "--quiet"]  # fmt: skip


@pytest.mark.slow
def test_the_cli_trains_a_dict_env_and_resumes_it_exactly(capsys, rgoals, tmp_path):
    assert main(["train", *COMMON, "--steps", "300", "--out", str(tmp_path / "whole")]) == 0
    assert main(["train", *COMMON, "--steps", "150", "--out", str(tmp_path / "cut")]) == 0
    (whole,) = (tmp_path / "whole").iterdir()
    (cut,) = (tmp_path / "cut").iterdir()
    state = json.loads((cut / "checkpoints" / "step-0000000150" / "state.json").read_text())
    assert state["loop"]["state"]["episode_length"][0] > 0  # cut in the middle of an episode
    assert set(state["loop"]["state"]["obs"]) == {"position", "goal", "picture"}
    assert main(["resume", str(cut), "--steps", "300", "--quiet"]) == 0
    rows = (whole / "metrics.csv").read_text()
    assert rows.count("\nepisode,") > 5 and (cut / "metrics.csv").read_text() == rows
    assert main(["evaluate", str(cut), "--episodes", "1"]) == 0
    agent, unsplit = rlkit.load(cut / "model"), rlkit.load(whole / "model")  # builders named
    assert isinstance(agent.memory, StructuredReplay) and agent.num_steps == 300
    for a, b in zip(weights(agent.policy, agent.value), weights(unsplit.policy, unsplit.value),
                    strict=True):  # fmt: skip
        np.testing.assert_array_equal(a, b)
    capsys.readouterr()


def test_the_cli_refuses_the_builtin_networks_for_a_dict_env_in_one_line(capsys, rgoals,
                                                                          tmp_path):  # fmt: skip
    out = tmp_path / "runs"
    status = main(["train", "reinforce", "--env", ENV, "--set", "policy=rgoals:build",
                   "--steps", "100", "--quiet", "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1
    assert "reinforce's built-in baseline cannot take a Dict" in err
    assert "--set baseline_network=module:function" in err
    assert not out.exists() or not any(out.iterdir())
