"""DDPG and TD3 with Dict and Tuple observations: an actor and a critic of one's own receive
the structure (each part in its own dtype, an uint8 part as uint8), the replay keeps each
part in its own array, acting is one compiled call for one observation or a vector env's
batch, misfit networks and the built-in ones are refused in one line, and an agent saves,
loads and resumes exactly (from Python and from the CLI, ``--env module:Id``)."""

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
from tests.unit.agents.test_dict_observations import MODULE as GOALS_MODULE
from tests.unit.agents.test_dict_observations import SPACE

# DQN's GoalLine module (test_dict_observations.py), with a continuous-action variant
# and DDPG's networks for its Dict and its Tuple observations
MODULE = (
    GOALS_MODULE
    + '''

class GoalSlide(GoalLine):
    """GoalLine with a Box action in [-1, 1]: > 0 steps right, else left."""

    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def step(self, action):
        return super().step(1 if float(np.asarray(action).reshape(-1)[0]) > 0 else 0)


gym.register("slides/GoalSlide-v0", entry_point=GoalSlide, max_episode_steps=30)


def _dict_inputs(observation_space):
    inputs = {key: keras.Input(space.shape, dtype=space.dtype, name=key)
              for key, space in observation_space.spaces.items()}
    picture = keras.layers.Flatten()(keras.ops.cast(inputs["picture"], "float32") / 255.0)
    return inputs, [inputs["position"], inputs["goal"], picture]


def actor(observation_space, action_space):
    """The Dict in (one named Input per key), [batch, 1] in [-1, 1] out."""
    inputs, parts = _dict_inputs(observation_space)
    x = keras.layers.Dense(32, activation="relu")(keras.layers.Concatenate()(parts))
    return keras.Model(inputs, keras.layers.Dense(action_space.shape[0], activation="tanh")(x))


def critic(observation_space, action_space):
    """[the Dict, action [batch, 1]] in, [batch, 1] out."""
    inputs, parts = _dict_inputs(observation_space)
    action = keras.Input(action_space.shape, name="action")
    x = keras.layers.Dense(32, activation="relu")(keras.layers.Concatenate()([*parts, action]))
    return keras.Model([inputs, action], keras.layers.Dense(1)(x))


def _tuple_inputs(observation_space):
    pair, cell = keras.Input(observation_space[0].shape), keras.Input((), dtype="int64")
    one_hot = keras.ops.one_hot(cell, int(observation_space[1].n))
    return [pair, cell], [pair, one_hot]


def actor_tuple(observation_space, action_space):
    inputs, parts = _tuple_inputs(observation_space)
    x = keras.layers.Dense(32, activation="relu")(keras.layers.Concatenate()(parts))
    return keras.Model(inputs, keras.layers.Dense(1, activation="tanh")(x))


def critic_tuple(observation_space, action_space):
    inputs, parts = _tuple_inputs(observation_space)
    action = keras.Input(action_space.shape)
    x = keras.layers.Dense(32, activation="relu")(keras.layers.Concatenate()([*parts, action]))
    return keras.Model([inputs, action], keras.layers.Dense(1)(x))
'''
)
ENV = "slides:slides/GoalSlide-v0"
SMALL = {"learning_starts": 64, "train_freq": 32, "gradient_steps": 4, "batch_size": 16,
         "buffer_size": 1000, "jit_compile": False}  # fmt: skip


@pytest.fixture
def slides(tmp_path, monkeypatch):
    (tmp_path / "slides.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import slides

    yield slides
    for env_id in ("slides/GoalSlide-v0", "goals/GoalLine-v0"):
        gym.registry.pop(env_id, None)
    sys.modules.pop("slides", None)


def weights(networks) -> list[np.ndarray]:
    return [v.numpy().copy() for network in networks for v in network.variables]


def changed(before, after) -> bool:
    return all(not np.array_equal(b, a) for b, a in zip(before, after, strict=True))


# -- learning ------------------------------------------------------------------------------------
# the critic's [observation, action] reaches the model in its declared structure (Keras warns
# when it has to flatten a structure that does not match)
@pytest.mark.slow
@pytest.mark.filterwarnings("error:The structure of `inputs`:UserWarning")
@pytest.mark.parametrize("td3", [False, True])
def test_ddpg_learns_on_a_dict_env_and_replay_keeps_each_part(slides, td3):
    env = gym.make("slides/GoalSlide-v0")
    agent = rlkit.agents.DDPG.from_env(env, seed=0, actor=slides.actor, critic=slides.critic,
                                       td3=td3, **SMALL)  # fmt: skip
    assert isinstance(agent.replay, StructuredReplay) and not agent.actor.fast_path
    assert len(agent.critics) == (2 if td3 else 1)
    picture = [p.key for p in agent.replay.parts].index("picture")
    assert agent.replay.obs.arrays[picture].dtype == np.uint8
    before = weights([agent.actor, *agent.critics])
    targets = [v.numpy().copy() for v in agent.actor_target_variables]
    rlkit.train(agent, env, steps=300)
    assert agent.num_updates == 32 and agent.learner.num_actor_updates == (16 if td3 else 32)
    assert changed(before, weights([agent.actor, *agent.critics]))
    # the targets are EMA shadows of the user's variables: they moved, and lag the online ones
    moved = [v.numpy() for v in agent.actor_target_variables]
    assert changed(targets, moved)
    assert changed(moved, [v.numpy() for v in agent.actor.variables])
    batch = agent.replay.sample(8)
    assert isinstance(batch.obs, dict) and isinstance(batch.next_obs, dict)
    assert batch.obs["picture"].dtype == np.uint8 and batch.obs["picture"].shape == (8, 2, 8)
    assert batch.next_obs["goal"].dtype == np.float32 and batch.next_obs["goal"].shape == (8, 1)
    tensors = agent.learner._tensors(agent.replay.sample(8, 2))  # as the compiled update has them
    assert tensors[0]["picture"].dtype == tf.uint8 and tensors[3]["picture"].shape == (2, 8, 2, 8)
    # acting reads the live weights through the structure, one observation or a batch
    probe = {k: v[:5] for k, v in batch.obs.items()}
    policy = agent.acting.policy
    np.testing.assert_allclose(policy(probe), agent.actor.model(probe).numpy(), rtol=1e-5)
    np.testing.assert_allclose(agent.act(probe, explore=False),
                               agent.actor.model(probe).numpy(), rtol=1e-5)  # fmt: skip
    assert np.isfinite(agent.learner.td_targets(batch)).all()
    assert np.isfinite(agent.learner.actor_loss(probe))


class Seeing(keras.Model):
    """A subclassed network that notes the structure and dtypes it is called with."""

    def __init__(self, squeeze: bool = False) -> None:
        super().__init__()
        self.hidden, self.out = keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)
        self.squeeze, self.seen = squeeze, []

    def call(self, inputs):
        self.seen.append(tf.nest.map_structure(lambda t: keras.backend.standardize_dtype(
            t.dtype), inputs))  # fmt: skip
        obs = inputs[0] if self.squeeze else inputs
        parts = [obs[0], keras.ops.one_hot(obs[1], 8)]
        if self.squeeze:
            parts.append(inputs[1])
        out = self.out(self.hidden(keras.ops.concatenate(parts, axis=-1)))
        return keras.ops.squeeze(out, axis=-1) if self.squeeze else keras.ops.tanh(out)


@pytest.mark.slow
def test_tuple_observations_reach_the_users_networks_as_tuples_in_their_dtypes(slides):
    env = gym.make("slides/GoalSlide-v0", structure="tuple")
    actor, critic = Seeing(), Seeing(squeeze=True)
    agent = rlkit.agents.DDPG.from_env(env, seed=1, actor=actor, critic=critic, **SMALL)
    before = weights([agent.actor, *agent.critics])
    rlkit.train(agent, env, steps=200)
    assert agent.num_updates > 0 and changed(before, weights([agent.actor, *agent.critics]))
    assert isinstance(agent.replay.sample(4).next_obs, tuple)
    assert actor.seen and all(seen == ("float32", "int64") for seen in actor.seen)
    assert critic.seen and all(seen == [("float32", "int64"), "float32"] for seen in critic.seen)


@pytest.mark.slow
def test_a_vector_env_acts_on_a_batch_and_stores_each_part(slides):
    from rlkit.envs.make import make_vector_env

    env = make_vector_env(ENV, 3)
    agent = rlkit.agents.DDPG.from_env(env, seed=2, actor=slides.actor, critic=slides.critic,
                                       **SMALL)  # fmt: skip
    rlkit.train(agent, env, steps=300)
    assert agent.num_updates > 0 and agent.num_steps >= 300
    batch = agent.replay.ordered()
    assert batch.obs["picture"].dtype == np.uint8 and batch.terminated.sum() >= 1
    done = batch.terminated | batch.truncated
    pos, next_pos = batch.obs["position"][:, 0], batch.next_obs["position"][:, 0]
    for stream in range(3):  # rows cycle through the three sub-environments
        rows = np.arange(stream, len(pos), 3)
        for a, b in zip(rows[:-1], rows[1:], strict=True):
            assert pos[b] == (0 if done[a] else next_pos[a])  # a fresh episode, or the next


# -- acting --------------------------------------------------------------------------------------
LOW, HIGH = np.array([-2.0, 0.0], np.float32), np.array([0.5, 3.0], np.float32)


def loud_actor(observation_space, action_space):
    """Outputs far outside the bounds (acting clips them)."""
    inputs = {k: keras.Input(s.shape, dtype=s.dtype, name=k)
              for k, s in observation_space.spaces.items()}  # fmt: skip
    x = keras.layers.Concatenate()([inputs["vector"], keras.ops.one_hot(inputs["cell"], 5)])
    return keras.Model(inputs, keras.layers.Dense(2)(x) * 100.0 + np.array([-50.0, 50.0]))


def plain_critic(observation_space, action_space):
    inputs = {k: keras.Input(s.shape, dtype=s.dtype, name=k)
              for k, s in observation_space.spaces.items()}  # fmt: skip
    action = keras.Input((2,), name="action")
    image = keras.layers.Flatten()(keras.ops.cast(inputs["image"], "float32"))
    x = keras.layers.Concatenate()([inputs["vector"], image, action])
    return keras.Model([inputs, action], keras.layers.Dense(1)(x))


@pytest.mark.parametrize("learning_starts", [0, 1000])  # the policy (+ noise), or uniform
def test_actions_are_in_the_bounds_for_one_observation_and_a_batch(learning_starts):
    box = gym.spaces.Box(LOW, HIGH, dtype=np.float32)
    agent = rlkit.agents.DDPG(SPACE, box, seed=3, actor=loud_actor, critic=plain_critic,
                              learning_starts=learning_starts, jit_compile=False)  # fmt: skip
    SPACE.seed(0)
    one = SPACE.sample()
    batch = {k: np.stack([SPACE.sample()[k] for _ in range(6)]) for k in SPACE.spaces}
    for explore in (True, False):
        single, many = agent.act(one, explore), agent.act(batch, explore)
        assert single.shape == (2,) and single.dtype == np.float32
        assert many.shape == (6, 2) and many.dtype == np.float32
        for action in (single, many):
            assert np.all(action >= LOW) and np.all(action <= HIGH)
    greedy = agent.act(batch, explore=False)  # the clipped policy: on the bounds here
    np.testing.assert_array_equal(greedy, np.clip(agent.actor.model(batch).numpy(), LOW, HIGH))
    assert np.isin(greedy, np.concatenate([LOW, HIGH])).any()
    one_of_them = agent.act({k: v[2] for k, v in batch.items()}, explore=False)
    np.testing.assert_allclose(one_of_them, greedy[2], rtol=1e-6)


# -- refusals ------------------------------------------------------------------------------------
BOX = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)


@pytest.mark.parametrize(
    ("networks", "missing"),
    [({}, "actor and critic"), ({"actor": loud_actor}, "critic"), ({"critic": plain_critic},
                                                                   "actor")],
)  # fmt: skip
def test_the_builtin_networks_refuse_a_dict_space_in_one_line(networks, missing):
    with pytest.raises(UsageError) as refused:
        rlkit.agents.DDPG(SPACE, gym.spaces.Box(LOW, HIGH, dtype=np.float32), **networks)
    message = str(refused.value)
    assert len(message.splitlines()) == 1
    space = "Dict {cell: int64, image: [3, 3, 2] uint8, vector: [2] float32}"
    assert message.startswith(f"ddpg's built-in {missing} cannot take a {space} observation")
    assert "--set actor=module:function --set critic=module:function" in message


def dict_inputs(observation_space, **changes):
    return {k: keras.Input(changes.get(k, s.shape), dtype=s.dtype, name=k)
            for k, s in observation_space.spaces.items()}  # fmt: skip


def critic_of(inputs, action, out: int = 1, flat: bool = False, nested_list: bool = False):
    x = keras.layers.Concatenate()([inputs["position"], action])
    declared = [*inputs.values(), action] if flat else [inputs, action]
    declared = [list(inputs.values()), action] if nested_list else declared
    return keras.Model(declared, keras.layers.Dense(out)(x))


def goal_only(observation_space, out: int):
    """The observation alone in, ``[batch, out]`` out."""
    inputs = dict_inputs(observation_space)
    return keras.Model(inputs, keras.layers.Dense(out)(inputs["goal"]))


def raising_critic(o, a):
    class Broken(keras.Model):
        def call(self, inputs):
            return inputs[0]["no such key"]

    return Broken()


DICT = (r"Dict \{goal: \[batch, 1\] float32, picture: \[batch, 2, 8\] uint8, position: "
        r"\[batch, 1\] float32\}")  # fmt: skip
ACTION = keras.Input((1,))


@pytest.mark.parametrize(
    ("networks", "message"),
    [
        ({"actor": lambda o, a: keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])},
         rf"actor takes one input \[batch, 4\] but the observation is {DICT}"),
        ({"actor": lambda o, a: goal_only(o, 3)},
         r"actor returns \[batch, 3\] but needs \[batch, 1\]"),
        ({"critic": lambda o, a: goal_only(o, 1)},
         rf"critic takes 3 input\(s\) but needs two: \[observation {DICT}, action \[batch, 1\]\]"),
        ({"critic": lambda o, a: critic_of(dict_inputs(o), ACTION, flat=True)},
         r"critic takes 4 input\(s\) but needs two: \[observation"),
        ({"critic": lambda o, a: critic_of(dict_inputs(o), ACTION, nested_list=True)},
         rf"critic takes its observation as a list but the observation is {DICT}"),
        ({"critic": lambda o, a: critic_of(dict_inputs(o, goal=(3,)), ACTION)},
         r"critic's input 'goal' takes \[batch, 3\] but that part of the observation is "
         r"\[batch, 1\]"),
        ({"critic": lambda o, a: critic_of(dict_inputs(o), keras.Input((2,)))},
         r"critic's second input \(the action\) takes \[batch, 2\] but the action is \[batch, 1\]"),
        ({"critic": lambda o, a: critic_of(dict_inputs(o), ACTION, out=2)},
         r"critic returns \[batch, 2\] but needs \[batch\] or \[batch, 1\]"),
        ({"critic": raising_critic},
         rf"critic does not accept \[observation {DICT}, action \[batch, 1\]\]: KeyError"),
    ],
)  # fmt: skip
def test_an_actor_or_critic_that_does_not_take_the_structure_is_one_line(slides, networks,
                                                                          message):  # fmt: skip
    env = gym.make("slides/GoalSlide-v0")
    with pytest.raises(UsageError, match=message) as refused:
        rlkit.agents.DDPG.from_env(env, **{"actor": slides.actor, "critic": slides.critic,
                                           **networks})  # fmt: skip
    assert len(str(refused.value).splitlines()) == 1


# -- save, load, resume --------------------------------------------------------------------------
@pytest.mark.slow
def test_save_and_load_with_the_builders_given_again(slides, tmp_path):
    env = gym.make("slides/GoalSlide-v0", structure="tuple")
    agent = rlkit.agents.DDPG.from_env(env, seed=4, actor=slides.actor_tuple,
                                       critic=slides.critic_tuple, td3=True, **SMALL)  # fmt: skip
    rlkit.train(agent, env, steps=150)
    agent.save(tmp_path / "t")
    obs, _ = env.reset(seed=5)
    by_itself = rlkit.load(tmp_path / "t")  # plain Keras models: kept in Keras' own format
    np.testing.assert_array_equal(by_itself.act(obs, explore=False), agent.act(obs, explore=False))
    for name in ("actor", "critic"):
        (tmp_path / "t" / f"{name}.keras").unlink()  # without them the builders are given again
    with pytest.raises(UsageError, match=r"rlkit.load\(path, actor=build\)"):
        rlkit.load(tmp_path / "t")
    loaded = rlkit.load(tmp_path / "t", actor=slides.actor_tuple, critic=slides.critic_tuple)
    assert isinstance(loaded.replay, StructuredReplay) and len(loaded.critics) == 2
    obs, _ = env.reset(seed=5)
    np.testing.assert_array_equal(loaded.act(obs, explore=False), agent.act(obs, explore=False))
    for a, b in zip(weights(loaded.critics), weights(agent.critics), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_model_instance_gets_a_cloned_twin_critic(slides):
    env = gym.make("slides/GoalSlide-v0")
    spaces = env.observation_space, env.action_space
    networks = {"actor": slides.actor(*spaces), "critic": slides.critic(*spaces)}
    agent = rlkit.agents.DDPG.from_env(env, td3=True, **networks, **SMALL)
    first, second = agent.critics
    assert first.model is not second.model
    obs = {k: v[None] for k, v in env.reset(seed=0)[0].items()}
    for critic in agent.critics:
        assert critic.model([obs, np.zeros((1, 1), np.float32)]).shape == (1,)


COMMON = ["ddpg", "--env", ENV, "--set", "actor=slides:actor", "--set", "critic=slides:critic",
          "--set", "learning_starts=64", "--set", "train_freq=32", "--set", "gradient_steps=4",
          "--set", "batch_size=16", "--set", "buffer_size=1000", "--set", "jit_compile=false",
          "--eval-every", "150", "--eval-episodes", "2", "--checkpoint-every", "150",
          "--quiet"]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--set", "td3=true", "--num-envs", "2"]])
def test_the_cli_trains_a_dict_env_and_resumes_it_exactly(capsys, slides, tmp_path, extra):
    assert main(["train", *COMMON, *extra, "--steps", "300", "--out", str(tmp_path / "whole")]) == 0
    assert main(["train", *COMMON, *extra, "--steps", "150", "--out", str(tmp_path / "cut")]) == 0
    (whole,) = (tmp_path / "whole").iterdir()
    (cut,) = (tmp_path / "cut").iterdir()
    state = json.loads((cut / "checkpoints" / "step-0000000150" / "state.json").read_text())
    assert set(state["loop"]["state"]["obs"]) == {"position", "goal", "picture"}
    assert main(["resume", str(cut), "--steps", "300", "--quiet"]) == 0
    assert (cut / "metrics.csv").read_text() == (whole / "metrics.csv").read_text()
    assert main(["evaluate", str(cut), "--episodes", "1"]) == 0
    agent = rlkit.load(cut / "model")  # the named builders come back by themselves
    assert isinstance(agent.replay, StructuredReplay) and agent.num_steps == 300
    capsys.readouterr()


def test_the_cli_refuses_the_builtin_networks_for_a_dict_env_in_one_line(capsys, slides,
                                                                          tmp_path):  # fmt: skip
    out = tmp_path / "runs"
    status = main(["train", "ddpg", "--env", ENV, "--steps", "100", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and "--set critic=module:function" in err
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.slow
def test_the_docs_sketch_builds_an_actor_and_a_critic_that_learn(slides):
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "api.md").read_text()
    section = doc.split("## Your own experiment", 1)[1].split("\n## ", 1)[0]
    (sketch,) = [block for block in re.findall(r"```python\n(.*?)```", section, re.S)
                 if "DDPG.from_env(env, actor=actor" in block]  # fmt: skip
    names = {"keras": keras, "rlkit": rlkit, "env": gym.make("slides/GoalSlide-v0"), "SMALL": SMALL}
    exec(compile(sketch.replace("td3=True", "td3=True, **SMALL"), "docs/api.md", "exec"), names)
    agent = names["agent"]
    assert len(agent.critics) == 2 and isinstance(agent.replay, StructuredReplay)
    rlkit.train(agent, names["env"], steps=150)
    assert agent.num_updates > 0
