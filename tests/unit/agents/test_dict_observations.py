"""Dict and Tuple observations: replay keeps each part in its own array and dtype and
returns the structure with every next observation as the environment gave it; DQN learns
with a network of one's own that takes the structure, from Python and from the CLI
(``--env module:Id``), saves, loads and resumes exactly; the built-in networks refuse."""

from __future__ import annotations

import sys
from collections import OrderedDict

import gymnasium as gym
import keras
import numpy as np
import pytest

import rlkit
from rlkit.cli.main import main
from rlkit.core.errors import UsageError
from rlkit.replay.memory import LINKED, STORED
from rlkit.replay.structured import StructuredReplay

MODULE = '''
import gymnasium as gym
import keras
import numpy as np


class GoalLine(gym.Env):
    """Walk a line of `size` cells to a goal drawn at reset. Dict observation: position and
    goal in [0, 1] (float32), a 2 x size uint8 picture of both; Tuple: ([position, goal],
    the cell as a Discrete)."""

    action_space = gym.spaces.Discrete(2)  # left, right

    def __init__(self, size: int = 8, structure: str = "dict"):
        self.size, self.structure = size, structure
        unit = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
        if structure == "dict":
            picture = gym.spaces.Box(0, 255, (2, size), np.uint8)
            self.observation_space = gym.spaces.Dict(
                {"position": unit, "goal": unit, "picture": picture}
            )
        else:
            pair = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
            self.observation_space = gym.spaces.Tuple((pair, gym.spaces.Discrete(size)))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position, self.goal = 0, int(self.np_random.integers(1, self.size))
        return self._obs(), {}

    def step(self, action):
        self.position = min(self.size - 1, max(0, self.position + (1 if action == 1 else -1)))
        done = self.position == self.goal
        return self._obs(), 1.0 if done else -0.01, done, False, {}

    def _obs(self):
        where = np.array([self.position / self.size, self.goal / self.size], np.float32)
        if self.structure != "dict":
            return where, self.position
        picture = np.zeros((2, self.size), np.uint8)
        picture[0, self.position] = picture[1, self.goal] = 255
        return {"position": where[:1], "goal": where[1:], "picture": picture}


gym.register("goals/GoalLine-v0", entry_point=GoalLine, max_episode_steps=30)


def build(observation_space, action_space):
    """A dict of named Inputs, one per key; the uint8 picture scaled inside."""
    inputs = {key: keras.Input(space.shape, dtype=space.dtype, name=key)
              for key, space in observation_space.spaces.items()}
    picture = keras.layers.Flatten()(keras.ops.cast(inputs["picture"], "float32") / 255.0)
    x = keras.layers.Concatenate()([inputs["position"], inputs["goal"], picture])
    x = keras.layers.Dense(32, activation="relu")(x)
    return keras.Model(inputs, keras.layers.Dense(int(action_space.n))(x))


def build_tuple(observation_space, action_space):
    """A list of Inputs, one per part: the Discrete cell one-hot inside."""
    pair = keras.Input(observation_space[0].shape)
    cell = keras.Input((), dtype="int64")
    size = int(observation_space[1].n)
    x = keras.layers.Concatenate()([pair, keras.ops.one_hot(cell, size)])
    x = keras.layers.Dense(32, activation="relu")(x)
    return keras.Model([pair, cell], keras.layers.Dense(int(action_space.n))(x))
'''
ENV = "goals:goals/GoalLine-v0"
SMALL = {"learning_starts": 64, "train_freq": 32, "gradient_steps": 4, "batch_size": 16,
         "jit_compile": False}  # fmt: skip


@pytest.fixture
def goals(tmp_path, monkeypatch):
    (tmp_path / "goals.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import goals

    yield goals
    gym.registry.pop("goals/GoalLine-v0", None)
    sys.modules.pop("goals", None)


# -- replay ---------------------------------------------------------------------------------------
SPACE = gym.spaces.Dict(
    {
        "image": gym.spaces.Box(0, 255, (3, 3, 2), np.uint8),
        "vector": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
        "cell": gym.spaces.Discrete(5),
    }
)


def episodes(space, steps: int, seed: int = 0, streams: int = 1):
    """Per stream, transitions (obs, next_obs, terminated, truncated) of random episodes of
    random observations: a next observation is the next obs unless the episode ended."""
    space.seed(seed)
    rng = np.random.default_rng(seed)
    out = [[] for _ in range(streams)]
    obs = [space.sample() for _ in range(streams)]
    for _ in range(steps):
        for j in range(streams):
            next_obs = space.sample()
            terminated, truncated = rng.random() < 0.15, rng.random() < 0.05
            out[j].append((obs[j], next_obs, terminated, truncated))
            obs[j] = space.sample() if terminated or truncated else next_obs
    return out


def assert_same(got, want):
    """Two structured observations are the same part by part, dtype included."""
    keys = got.keys() if isinstance(got, dict) else range(len(got))
    for key in keys:
        want_part = np.asarray(want[key])
        assert got[key].dtype == want_part.dtype or np.issubdtype(want_part.dtype, np.integer)
        np.testing.assert_array_equal(got[key], want_part)


def test_replay_keeps_each_part_in_its_own_array_and_returns_the_structure():
    memory = StructuredReplay.from_spaces(50, SPACE, gym.spaces.Discrete(2), seed=0)
    assert [a.dtype for a in memory.obs.arrays] == [np.int64, np.uint8, np.float32]
    assert [a.shape for a in memory.obs.arrays] == [(50,), (50, 3, 3, 2), (50, 2)]
    for obs, next_obs, terminated, truncated in episodes(SPACE, 30)[0]:
        memory.add(obs, 1, 0.5, next_obs, terminated, truncated)
    batch = memory.sample(8)
    assert isinstance(batch.obs, dict) and isinstance(batch.next_obs, dict)
    assert batch.obs["image"].dtype == np.uint8 and batch.obs["image"].shape == (8, 3, 3, 2)
    assert batch.next_obs["vector"].dtype == np.float32 and batch.obs["cell"].shape == (8,)
    blocks = memory.sample(8, 3)
    assert blocks.obs["image"].shape == (3, 8, 3, 3, 2) and blocks.rewards.shape == (3, 8)


@pytest.mark.parametrize("streams", [1, 3])
def test_every_next_obs_comes_back_as_given_across_episode_ends_and_wrap_around(streams):
    capacity, steps = 20, 30  # the ring wraps around: the oldest are overwritten
    memory = StructuredReplay.from_spaces(capacity, SPACE, gym.spaces.Discrete(2), seed=1)
    given = episodes(SPACE, steps, seed=streams, streams=streams)
    for t in range(steps):
        rows = [given[j][t] for j in range(streams)]
        if streams == 1:
            obs, next_obs, terminated, truncated = rows[0]
            memory.add(obs, t % 2, float(t), next_obs, terminated, truncated)
            continue
        stack = {key: np.stack([r[0][key] for r in rows]) for key in SPACE.spaces}
        next_stack = {key: np.stack([r[1][key] for r in rows]) for key in SPACE.spaces}
        memory.add_batch(stack, np.zeros(streams, np.int64), np.full(streams, float(t)),
                         next_stack, [r[2] for r in rows], [r[3] for r in rows])  # fmt: skip
    batch = memory.ordered()  # the newest `capacity` transitions, oldest first
    first = steps * streams - capacity
    for n in range(capacity):
        t, j = divmod(first + n, streams)
        obs, next_obs, terminated, truncated = given[j][t]
        assert_same({k: v[n] for k, v in batch.obs.items()}, obs)
        assert_same({k: v[n] for k, v in batch.next_obs.items()}, next_obs)
        assert batch.terminated[n] == terminated and batch.truncated[n] == truncated
    # each observation stored once: a next observation that continues its stream is linked
    ended = np.logical_or(memory.terminated, memory.truncated)
    assert (memory.next_kind[~ended] == LINKED).mean() > 0.5
    assert (memory.next_kind[ended] == STORED).all()


def test_tuple_observations_come_back_as_tuples():
    space = gym.spaces.Tuple((gym.spaces.Box(0, 255, (4,), np.uint8), gym.spaces.Discrete(3)))
    memory = StructuredReplay.from_spaces(20, space, gym.spaces.Discrete(2), seed=0)
    given = episodes(space, 25, seed=3)[0]
    for obs, next_obs, terminated, truncated in given:
        memory.add(obs, 0, 0.0, next_obs, terminated, truncated)
    batch = memory.ordered()
    assert isinstance(batch.obs, tuple) and batch.obs[0].dtype == np.uint8
    for n, (obs, next_obs, _, _) in enumerate(given[-20:]):
        assert_same(tuple(part[n] for part in batch.obs), obs)
        assert_same(tuple(part[n] for part in batch.next_obs), next_obs)


def test_replay_state_round_trips_and_refuses_other_parts():
    memory = StructuredReplay.from_spaces(30, SPACE, gym.spaces.Discrete(2), seed=4)
    for obs, next_obs, terminated, truncated in episodes(SPACE, 40, seed=5)[0]:
        memory.add(obs, 1, 1.0, next_obs, terminated, truncated)
    state = memory.state_dict()
    assert state["obs/1"].dtype == np.uint8 and "obs" not in state
    copy = StructuredReplay.from_spaces(30, SPACE, gym.spaces.Discrete(2), seed=9)
    copy.load_state_dict(state)
    a, b = memory.sample(16), copy.sample(16)  # the generator state travels too
    for key in SPACE.spaces:
        np.testing.assert_array_equal(a.obs[key], b.obs[key])
        np.testing.assert_array_equal(a.next_obs[key], b.next_obs[key])
    other = gym.spaces.Dict({"vector": SPACE["vector"]})
    with pytest.raises(ValueError, match="does not have the 1 parts expected"):
        StructuredReplay.from_spaces(30, other, gym.spaces.Discrete(2)).load_state_dict(state)


def test_the_observation_in_progress_round_trips_through_json_for_a_vector_env():
    import json

    from gymnasium.vector.utils import batch_space

    from rlkit.core import structure

    space = batch_space(SPACE, 3)  # what a vector env of 3 gives: {key: [3, ...]}
    space.seed(0)
    obs = space.sample()
    back = structure.from_json(json.loads(json.dumps(structure.to_json(obs))), space)
    assert_same(back, obs)
    assert back["image"].dtype == np.uint8 and back["vector"].dtype == np.float32


# -- DQN with a network of one's own --------------------------------------------------------------
def weights(agent) -> list[np.ndarray]:
    return [v.numpy().copy() for v in agent.q.variables]


@pytest.mark.slow
def test_dqn_learns_on_a_dict_env_and_replay_holds_what_the_env_gave(goals):
    env = gym.make("goals/GoalLine-v0")
    agent = rlkit.agents.DQN.from_env(env, seed=0, q_network=goals.build, buffer_size=100,
                                      **SMALL)  # fmt: skip
    assert not agent.q.fast_path and isinstance(agent.replay, StructuredReplay)
    assert agent.replay.obs.arrays[agent.replay.parts.index(
        next(p for p in agent.replay.parts if p.key == "picture"))].dtype == np.uint8  # fmt: skip
    before, given = weights(agent), []
    obs, _ = env.reset(seed=0)
    for _ in range(250):  # the replay (100) wraps around
        action = agent.act(obs)
        assert isinstance(action, int)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        agent.observe(obs, action, reward, next_obs, terminated, truncated)
        agent.update()
        given.append((obs, next_obs))
        obs = env.reset()[0] if terminated or truncated else next_obs
    assert agent.num_updates > 0
    assert all(not np.array_equal(b, a) for b, a in zip(before, weights(agent), strict=True))
    batch = agent.replay.ordered()
    for n, (obs, next_obs) in enumerate(given[-100:]):
        assert_same({k: v[n] for k, v in batch.obs.items()}, obs)
        assert_same({k: v[n] for k, v in batch.next_obs.items()}, next_obs)
    # acting and learning pass the structure: q_values of a batch equal the model's
    probe = {k: v[:5] for k, v in batch.obs.items()}
    np.testing.assert_allclose(agent.q_values(probe), agent.q.model(probe).numpy(), rtol=1e-5)
    assert agent.act(probe).shape == (5,) and agent.act(probe, explore=False).shape == (5,)


@pytest.mark.slow
def test_vector_envs_store_each_final_obs_of_a_dict_env(goals):
    from rlkit.envs.make import make_vector_env

    env = make_vector_env(ENV, 2)
    agent = rlkit.agents.DQN.from_env(env, seed=1, q_network=goals.build, **SMALL)
    rlkit.train(agent, env, steps=200)
    assert agent.num_updates > 0
    batch = agent.replay.ordered()
    pos, goal = batch.obs["position"][:, 0], batch.obs["goal"][:, 0]
    next_pos, next_goal = batch.next_obs["position"][:, 0], batch.next_obs["goal"][:, 0]
    done = batch.terminated | batch.truncated
    assert batch.terminated.sum() >= 2
    np.testing.assert_array_equal(next_pos[batch.terminated], next_goal[batch.terminated])
    for stream in (0, 1):  # rows alternate between the two sub-environments
        rows = np.arange(stream, len(pos), 2)
        for a, b in zip(rows[:-1], rows[1:], strict=True):
            if done[a]:
                assert pos[b] == 0  # a fresh episode
            else:
                assert next_pos[a] == pos[b] and next_goal[a] == goal[b]


@pytest.mark.slow
def test_a_tuple_env_learns_with_a_list_of_inputs_and_saves_and_loads(goals, tmp_path):
    env = gym.make("goals/GoalLine-v0", structure="tuple")
    agent = rlkit.agents.DQN.from_env(env, seed=2, q_network=goals.build_tuple, **SMALL)
    before = weights(agent)
    rlkit.train(agent, env, steps=200)
    assert all(not np.array_equal(b, a) for b, a in zip(before, weights(agent), strict=True))
    assert isinstance(agent.replay.sample(4).next_obs, tuple)
    agent.save(tmp_path / "t")
    loaded = rlkit.load(tmp_path / "t", q_network=goals.build_tuple)
    obs, _ = env.reset(seed=5)
    np.testing.assert_array_equal(loaded.q_values(obs), agent.q_values(obs))


def test_a_dict_space_keeps_its_key_order_through_save_and_load(tmp_path):
    unit = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    space = gym.spaces.Dict(OrderedDict([("z", unit), ("a", gym.spaces.Discrete(3))]))

    def build(observation_space, action_space):
        z, a = keras.Input((2,), name="z"), keras.Input((), dtype="int64", name="a")
        x = keras.layers.Concatenate()([z, keras.ops.one_hot(a, 3)])
        return keras.Model({"z": z, "a": a}, keras.layers.Dense(2)(x))

    agent = rlkit.agents.DQN(space, gym.spaces.Discrete(2), q_network=build, seed=0)
    agent.save(tmp_path / "k")
    loaded = rlkit.load(tmp_path / "k", q_network=build)
    assert list(loaded.observation_space.spaces) == ["z", "a"]
    assert [p.key for p in loaded.replay.parts] == ["z", "a"]
    obs = {"z": np.array([0.5, -0.5], np.float32), "a": 2}
    np.testing.assert_array_equal(loaded.q_values(obs), agent.q_values(obs))


# -- refusals -------------------------------------------------------------------------------------
def test_the_builtin_network_refuses_a_dict_space_in_one_line():
    with pytest.raises(UsageError) as refused:
        rlkit.agents.DQN(SPACE, gym.spaces.Discrete(2))
    message = str(refused.value)
    assert len(message.splitlines()) == 1
    assert "Dict {cell: int64, image: [3, 3, 2] uint8, vector: [2] float32}" in message
    assert "--set q_network=module:function" in message


def single_input(observation_space, action_space):
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])


def wrong_keys(observation_space, action_space):
    a, b = keras.Input((1,), name="position"), keras.Input((1,), name="target")
    return keras.Model({"position": a, "target": b}, keras.layers.Dense(2)(a))


def wrong_shape(observation_space, action_space):
    inputs = {k: keras.Input((3,) if k == "goal" else s.shape, name=k)
              for k, s in observation_space.spaces.items()}  # fmt: skip
    return keras.Model(inputs, keras.layers.Dense(2)(inputs["goal"]))


def wrong_output(observation_space, action_space):
    inputs = {k: keras.Input(s.shape, name=k) for k, s in observation_space.spaces.items()}
    return keras.Model(inputs, keras.layers.Dense(3)(inputs["goal"]))


def subclassed_raising(observation_space, action_space):
    class Broken(keras.Model):
        def call(self, obs):
            return obs["no such key"]

    return Broken()


@pytest.mark.parametrize(
    ("network", "message"),
    [
        (single_input, r"q_network takes one input \[batch, 4\] but the observation is Dict "
                       r"\{goal: \[batch, 1\] float32, picture: \[batch, 2, 8\] uint8"),
        (wrong_keys, r"q_network takes inputs named \['position', 'target'\] but the observa"),
        (wrong_shape, r"q_network's input 'goal' takes \[batch, 3\] but that part of the "
                      r"observation is \[batch, 1\]"),
        (wrong_output, r"q_network returns \[batch, 3\] but needs \[batch, 2\]"),
        (subclassed_raising, r"q_network does not accept the observation Dict \{goal: "
                             r"\[batch, 1\] float32, .*\}: KeyError"),
    ],
)  # fmt: skip
def test_a_network_that_does_not_take_the_structure_is_one_line(goals, network, message):
    env = gym.make("goals/GoalLine-v0")
    with pytest.raises(UsageError, match=message) as refused:
        rlkit.agents.DQN.from_env(env, q_network=network)
    assert len(str(refused.value).splitlines()) == 1


def test_a_tuple_network_with_the_wrong_number_of_inputs_is_refused(goals):
    env = gym.make("goals/GoalLine-v0", structure="tuple")
    with pytest.raises(UsageError, match=r"takes 1 input\(s\) but the observation is Tuple "
                       r"\(\[batch, 2\] float32, \[batch\] int64\)"):  # fmt: skip
        rlkit.agents.DQN.from_env(env, q_network=single_input)


# -- the CLI --------------------------------------------------------------------------------------
COMMON = ["dqn", "--env", ENV, "--set", "q_network=goals:build", "--set", "learning_starts=64",
          "--set", "train_freq=32", "--set", "gradient_steps=4", "--set", "jit_compile=false",
          "--eval-every", "150", "--eval-episodes", "2", "--checkpoint-every", "150", "--quiet",
          # schedules in steps: a 150-step run extended to 300 is then the 300-step run
          "--set", "eps_anneal_fraction=0", "--set", "lr_anneal_fraction=0"]  # fmt: skip


@pytest.mark.slow
def test_the_cli_trains_a_dict_env_and_resumes_it_exactly(capsys, goals, tmp_path):
    import json

    assert main(["train", *COMMON, "--steps", "300", "--out", str(tmp_path / "whole")]) == 0
    assert main(["train", *COMMON, "--steps", "150", "--out", str(tmp_path / "cut")]) == 0
    (whole,) = (tmp_path / "whole").iterdir()
    (cut,) = (tmp_path / "cut").iterdir()
    state = json.loads((cut / "checkpoints" / "step-0000000150" / "state.json").read_text())
    assert state["loop"]["state"]["episode_length"][0] > 0  # cut in the middle of an episode
    assert set(state["loop"]["state"]["obs"]) == {"position", "goal", "picture"}
    assert main(["resume", str(cut), "--steps", "300", "--quiet"]) == 0
    assert (cut / "metrics.csv").read_text() == (whole / "metrics.csv").read_text()
    assert main(["evaluate", str(cut), "--episodes", "1"]) == 0
    agent = rlkit.load(cut / "model")  # the named builder comes back by itself
    assert isinstance(agent.replay, StructuredReplay)
    capsys.readouterr()


def test_the_cli_refuses_the_builtin_network_for_a_dict_env_in_one_line(capsys, goals, tmp_path):
    out = tmp_path / "runs"
    status = main(["train", "dqn", "--env", ENV, "--steps", "100", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and "--set q_network=module:function" in err
    assert not out.exists() or not any(out.iterdir())
