"""rlkit export: a SavedModel (or TFLite model) of the greedy policy that serves without rlkit
and acts as the agent does, checked before the export folder appears; bad input is one line,
exit 2, nothing written; rlkit evaluate plays an export as it plays the run's model."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import gymnasium as gym
import keras
import numpy as np
import pytest

from rlkit.agents import DDPG, DQN, Reinforce
from rlkit.core.errors import UsageError
from rlkit.exporting.exported import ExportedPolicy
from rlkit.exporting.writer import ExportCheckFailed

VECTOR = gym.spaces.Box(-2.0, 2.0, (4,), np.float32)
IMAGES = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
FEW = 300  # observations the check draws per source in these tests


def observations(space, n: int = 64, seed: int = 1):
    space.seed(seed)
    samples = [space.sample() for _ in range(n)]
    if isinstance(space, gym.spaces.Dict):
        return {k: np.stack([s[k] for s in samples]) for k in space.spaces}
    return np.stack(samples)


def perturbed(agent, networks, scale: float = 0.5, seed: int = 3):
    """Random weights in ``networks`` (REINFORCE's zero output layer would act as a tie)."""
    rng = np.random.default_rng(seed)
    for model in networks:
        for v in model.trainable_variables:
            v.assign(rng.normal(0, scale, v.shape).astype(np.float32))
    agent.after_restore()
    return agent


def no_leftovers(parent, name: str) -> bool:
    """Nothing of an export called ``name`` in ``parent``: no folder, no temporary one."""
    return not any(p.name == name or p.name.startswith(f".{name}.") for p in parent.iterdir())


# -- SavedModel: each agent and observation kind acts as the agent --------------------------------
@pytest.mark.slow
def test_dqn_vector_export_equals_act_with_the_action_spaces_numbering(tmp_path):
    agent = DQN(VECTOR, gym.spaces.Discrete(3, start=-1), seed=0, hidden_sizes=(32, 32))
    result = agent.export(tmp_path / "dqn", check_observations=FEW)
    assert "equal the agent's greedy act on 300 of 300 (100.00%)" in result.lines[0]
    assert float(result.lines[0].rsplit("largest Q-value difference ", 1)[1]) < 1e-5
    policy = ExportedPolicy(tmp_path / "dqn")
    obs = observations(VECTOR, 256)
    got = policy.act(obs)
    np.testing.assert_array_equal(got, agent.act(obs, explore=False))
    assert set(np.unique(got)) <= {-1, 0, 1} and len(np.unique(got)) > 1  # start=-1 counted
    q = policy.run("q_values", obs)["q_values"]
    np.testing.assert_allclose(q, agent.q_values(obs), rtol=1e-5, atol=1e-6)
    assert policy.act(obs[0]) == agent.act(obs[0], explore=False)  # one observation: an int
    meta = policy.metadata
    assert meta["agent"] == "dqn" and meta["action_space"]["start"] == -1
    assert policy.signatures == sorted(meta["signatures"]) == ["action", "metadata", "q_values"]
    assert meta["inputs"]["observation"]["shape"] == [None, 4]


@pytest.mark.slow
def test_dqn_images_take_uint8_and_scale_inside(tmp_path):
    agent = DQN(IMAGES, gym.spaces.Discrete(4), seed=0, hidden_sizes=(16,), jit_compile=False)
    agent.export(tmp_path / "cnn", check_observations=100)
    policy = ExportedPolicy(tmp_path / "cnn")
    assert policy.inputs["observation"]["dtype"] == "uint8"
    frames = observations(IMAGES, 16)
    np.testing.assert_array_equal(policy.act(frames), agent.act(frames, explore=False))
    assert "divides by 255" in policy.metadata["preprocessing"]["observation"]


def build_dict(observation_space, action_space):
    inputs = {key: keras.Input(space.shape, dtype=space.dtype, name=key)
              for key, space in observation_space.spaces.items()}  # fmt: skip
    cell = keras.ops.one_hot(inputs["cell"], observation_space["cell"].n)
    x = keras.layers.Concatenate()([inputs["position"], cell])
    x = keras.layers.Dense(16, activation="relu")(x)
    return keras.Model(inputs, keras.layers.Dense(int(action_space.n))(x))


DICT = gym.spaces.Dict({"position": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
                        "cell": gym.spaces.Discrete(5)})  # fmt: skip


@pytest.mark.slow
def test_dqn_dict_observations_are_named_inputs_and_replay_is_checked(tmp_path):
    agent = DQN(DICT, gym.spaces.Discrete(3), seed=0, q_network=build_dict, jit_compile=False)
    obs = observations(DICT, 40)
    agent.observe_first({k: v[0] for k, v in obs.items()})
    for i in range(1, 40):
        agent.observe(i % 3, 0.0, {k: v[i] for k, v in obs.items()}, False, False)
    result = agent.export(tmp_path / "dict", check_observations=FEW)
    assert "from the agent's replay" in result.lines[0] and "100.00%" in result.lines[0]
    policy = ExportedPolicy(tmp_path / "dict")
    assert sorted(policy.inputs) == ["cell", "position"]
    assert policy.inputs["cell"]["dtype"] == "int64"
    np.testing.assert_array_equal(policy.act(obs), agent.act(obs, explore=False))


def linear_actor(observation_space, action_space):
    """A user's actor with a linear output far beyond the bounds: the export must clip."""
    inputs = keras.Input(observation_space.shape)
    return keras.Model(inputs, keras.layers.Dense(action_space.shape[0])(inputs) * 50.0)


@pytest.mark.slow
@pytest.mark.parametrize("td3", [False, True])
def test_ddpg_actions_are_rescaled_and_clipped_inside_the_graph(tmp_path, td3):
    actions = gym.spaces.Box(np.array([0.0, -1.0], np.float32), np.array([3.0, 1.0], np.float32))
    agent = DDPG(VECTOR, actions, seed=0, td3=td3, actor_hidden_sizes=(32,),
                 critic_hidden_sizes=(32,))  # fmt: skip
    perturbed(agent, [agent.actor.model])
    result = agent.export(tmp_path / "ddpg", check_observations=FEW)
    assert "bit for bit" in result.lines[0] and result.metadata["variant"] == (
        "td3" if td3 else "ddpg")  # fmt: skip
    policy = ExportedPolicy(tmp_path / "ddpg")
    obs = observations(VECTOR, 256)
    got, want = policy.act(obs), agent.act(obs, explore=False)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    assert got.min(axis=0)[0] >= 0 and got.max(axis=0)[0] <= 3
    value = policy.run("value", obs)["value"]
    critic = agent.critics[0].model([obs, want]).numpy()
    np.testing.assert_allclose(value, critic, rtol=1e-4, atol=1e-5)
    clipping = DDPG(VECTOR, actions, seed=0, actor=linear_actor, critic_hidden_sizes=(8,))
    clipping.export(tmp_path / "clip", check_observations=FEW)
    clipped = ExportedPolicy(tmp_path / "clip").act(obs)
    assert np.all(clipped >= actions.low) and np.all(clipped <= actions.high)
    assert np.any(clipped == actions.high) and np.any(clipped == actions.low)  # saturated
    np.testing.assert_allclose(clipped, clipping.act(obs, explore=False), atol=1e-5)


@pytest.mark.slow
def test_reinforce_discrete_greedy_logits_and_seeded_sample(tmp_path):
    agent = Reinforce(VECTOR, gym.spaces.Discrete(3, start=2), seed=0, hidden_sizes=(16,))
    perturbed(agent, [agent.policy.model])
    agent.export(tmp_path / "pg", check_observations=FEW)
    policy = ExportedPolicy(tmp_path / "pg")
    assert policy.signatures == sorted(policy.metadata["signatures"])
    assert policy.signatures == ["action", "logits", "metadata", "sample"]
    obs = observations(VECTOR, 512)
    np.testing.assert_array_equal(policy.act(obs), agent.act(obs, explore=False))
    logits = policy.run("logits", obs)["logits"]
    np.testing.assert_allclose(keras.ops.softmax(logits).numpy(),
                               agent.action_probabilities(obs), rtol=1e-4, atol=1e-6)  # fmt: skip
    first = policy.run("sample", obs, seed=7)["action"]
    assert np.array_equal(first, policy.run("sample", obs, seed=7)["action"])
    assert not np.array_equal(first, policy.run("sample", obs, seed=8)["action"])
    assert set(np.unique(first)) <= {2, 3, 4}
    # the samples follow pi: the share of the greedy action is near its mean probability
    greedy = policy.act(obs)
    share = np.mean(first == greedy)
    expected = np.mean(np.max(agent.action_probabilities(obs), axis=-1))
    assert abs(share - expected) < 0.1


@pytest.mark.slow
def test_reinforce_box_mean_is_the_greedy_action(tmp_path):
    actions = gym.spaces.Box(-2.0, 2.0, (1,), np.float32)
    agent = Reinforce(VECTOR, actions, seed=0, hidden_sizes=(16,))
    perturbed(agent, [agent.policy.model])
    agent.export(tmp_path / "pgbox", check_observations=FEW)
    policy = ExportedPolicy(tmp_path / "pgbox")
    obs = observations(VECTOR, 256)
    np.testing.assert_allclose(policy.act(obs), agent.act(obs, explore=False), atol=1e-5)
    dist = policy.run("distribution", obs)
    std = np.broadcast_to(2.0 * np.exp(agent.log_std.numpy()), (256, 1))  # half-range 2
    np.testing.assert_allclose(dist["std"], std, rtol=1e-5)
    sampled = policy.run("sample", obs, seed=1)["action"]
    assert np.all(np.abs(sampled) <= 2.0) and not np.allclose(sampled, policy.act(obs))


@pytest.mark.slow
def test_the_saved_model_serves_in_a_python_without_rlkit_or_gymnasium(tmp_path):
    dqn = DQN(VECTOR, gym.spaces.Discrete(3, start=-1), seed=0, hidden_sizes=(16,))
    ddpg = DDPG(VECTOR, gym.spaces.Box(-1.0, 1.0, (2,), np.float32), seed=0)
    obs = observations(VECTOR, 128)
    for name, agent in (("dqn", dqn), ("ddpg", ddpg)):
        agent.export(tmp_path / name, check_observations=100)
        np.save(tmp_path / f"{name}_want.npy", agent.act(obs, explore=False))
    np.save(tmp_path / "obs.npy", obs)
    script = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        import tensorflow as tf
        root = {str(tmp_path)!r}
        obs = np.load(root + "/obs.npy")
        for name in ("dqn", "ddpg"):
            loaded = tf.saved_model.load(root + "/" + name)
            got = loaded.signatures["action"](observation=tf.constant(obs))["action"].numpy()
            want = np.load(root + "/" + name + "_want.npy")
            assert np.allclose(got, want, atol=1e-5) and got.dtype == want.dtype, name
            if name == "dqn":
                assert np.array_equal(got, want)
            meta = json.loads(loaded.signatures["metadata"]()["json"].numpy())
            assert meta["agent"] == name, meta
        assert "rlkit" not in sys.modules and "gymnasium" not in sys.modules
        print("served")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)  # fmt: skip
    assert done.returncode == 0 and "served" in done.stdout, done.stderr[-2000:]


# -- the check refuses an export that does not act as the agent --------------------------------
@pytest.mark.slow
def test_an_export_that_acts_otherwise_is_refused_and_nothing_is_written(tmp_path, monkeypatch):
    from rlkit.exporting import check as export_check

    agent = DQN(VECTOR, gym.spaces.Discrete(3), seed=0, hidden_sizes=(16,))
    real = export_check.greedy_actions
    monkeypatch.setattr(
        export_check, "greedy_actions", lambda a, b, masks=None: (real(a, b, masks) + 1) % 3
    )
    with pytest.raises(ExportCheckFailed, match="does not act as the agent"):
        agent.export(tmp_path / "wrong", check_observations=100)
    assert no_leftovers(tmp_path, "wrong")
    with pytest.raises(ExportCheckFailed):  # the folders made for it go too
        agent.export(tmp_path / "new" / "deeper" / "1", check_observations=100)
    assert no_leftovers(tmp_path, "new")


# -- TFLite --------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("dueling", [False, True])
def test_tflite_float32_agrees_and_quantised_ones_report(tmp_path, dueling):
    agent = DQN(VECTOR, gym.spaces.Discrete(3), seed=0, hidden_sizes=(64, 64), dueling=dueling)
    result = agent.export(tmp_path / "f32", format="tflite", check_observations=FEW)
    assert "TFLite model's actions equal" in result.lines[0] and "(100.00%)" in result.lines[0]
    assert sorted(p.name for p in (tmp_path / "f32").iterdir()) == [
        "policy.tflite", "rlkit_export.json"]  # fmt: skip
    obs = observations(VECTOR, 128)
    np.testing.assert_array_equal(ExportedPolicy(tmp_path / "f32").act(obs),
                                  agent.act(obs, explore=False))  # fmt: skip
    sizes = {}
    for quantize in ("float16", "dynamic"):
        out = tmp_path / quantize
        result = agent.export(out, format="tflite", quantize=quantize, check_observations=FEW)
        assert "of 300" in result.lines[0] and "largest Q-value difference" in result.lines[0]
        sizes[quantize] = (out / "policy.tflite").stat().st_size
    full = (tmp_path / "f32" / "policy.tflite").stat().st_size
    assert sizes["dynamic"] < sizes["float16"] < full  # the weights shrink: 4, 2, 1 bytes


@pytest.mark.slow
def test_tflite_nature_cnn_converts_with_builtin_ops(tmp_path):
    agent = DQN(IMAGES, gym.spaces.Discrete(4), seed=0, hidden_sizes=(512,), jit_compile=False)
    result = agent.export(tmp_path / "cnn", format="tflite", check_observations=64)
    assert "(100.00%)" in result.lines[0]


class Unconvertible(keras.Model):
    """A user's network with an op TFLite has no built-in kernel for."""

    def __init__(self, actions: int) -> None:
        super().__init__()
        self.dense = keras.layers.Dense(actions)

    def call(self, x):
        import tensorflow as tf

        return self.dense(tf.math.erf(x))  # (exact GELU's op)


@pytest.mark.slow
def test_tflite_names_the_op_it_cannot_convert_and_writes_nothing(tmp_path):
    agent = DQN(VECTOR, gym.spaces.Discrete(2), seed=0, jit_compile=False,
                q_network=lambda o, a: Unconvertible(2))  # fmt: skip
    with pytest.raises(UsageError, match="op Erf has no built-in kernel.*--format saved_model"):
        agent.export(tmp_path / "lite", format="tflite", check_observations=50)
    assert no_leftovers(tmp_path, "lite")
    agent.export(tmp_path / "sm", check_observations=50)  # the SavedModel takes it as it is
    obs = observations(VECTOR, 32)
    np.testing.assert_array_equal(ExportedPolicy(tmp_path / "sm").act(obs),
                                  agent.act(obs, explore=False))  # fmt: skip


def build_tuple(observation_space, action_space):
    pair = keras.Input(observation_space[0].shape)
    cell = keras.Input((), dtype="int64")
    x = keras.layers.Concatenate()([pair, keras.ops.one_hot(cell, int(observation_space[1].n))])
    x = keras.layers.Dense(16, activation="relu")(x)
    return keras.Model([pair, cell], keras.layers.Dense(int(action_space.n))(x))


@pytest.mark.slow
def test_tuple_observations_are_numbered_inputs_in_both_formats(tmp_path):
    space = gym.spaces.Tuple((gym.spaces.Box(0.0, 1.0, (2,), np.float32), gym.spaces.Discrete(6)))
    agent = DQN(space, gym.spaces.Discrete(2), seed=0, q_network=build_tuple, jit_compile=False)
    perturbed(agent, [agent.q.model], scale=1.0)
    space.seed(2)
    samples = [space.sample() for _ in range(64)]
    obs = (np.stack([s[0] for s in samples]), np.array([s[1] for s in samples]))
    want = agent.act(obs, explore=False)
    for format in ("saved_model", "tflite"):
        agent.export(tmp_path / format, format=format, check_observations=FEW)
        policy = ExportedPolicy(tmp_path / format)
        assert list(policy.inputs) == ["part_0", "part_1"]
        assert policy.signatures == sorted(policy.metadata["signatures"])
        np.testing.assert_array_equal(policy.act(obs), want)


@pytest.mark.slow
def test_minatar_bool_images_and_the_atari_preprocessing_in_the_metadata(tmp_path):
    from rlkit.envs.make import make_env
    from rlkit.exporting.writer import preprocessing

    env = make_env("MinAtar/Breakout-v0", training=False)
    agent = DQN.from_env(env, seed=0, hidden_sizes=(16,), jit_compile=False)
    result = agent.export(tmp_path / "minatar", env=env, check_observations=FEW)
    assert "300 from the environment" in result.lines[0] and "(100.00%)" in result.lines[0]
    policy = ExportedPolicy(tmp_path / "minatar")
    assert policy.inputs["observation"]["dtype"] == "bool"
    assert policy.metadata["env_id"] == "MinAtar/Breakout-v0"
    atari = DQN(IMAGES, gym.spaces.Discrete(4), seed=0, hidden_sizes=(16,), jit_compile=False)
    wrappers = preprocessing(atari, "ALE/Pong-v5")["wrappers"]
    assert wrappers["AtariPreprocessing"]["screen_size"] == 84
    assert wrappers["FrameStackObservation"]["stack_size"] == 4


ODD_KEYS = gym.spaces.Dict({"pos x": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
                            "9cell": gym.spaces.Discrete(4)})  # fmt: skip


def _odd_inputs(space):
    return {k: keras.Input(s.shape, dtype=s.dtype, name=k) for k, s in space.spaces.items()}


def odd_actor(observation_space, action_space):
    inputs = _odd_inputs(observation_space)
    x = keras.layers.Concatenate()([inputs["pos x"], keras.ops.one_hot(inputs["9cell"], 4)])
    return keras.Model(inputs, keras.layers.Dense(action_space.shape[0])(x) * 3.0)


def odd_critic(observation_space, action_space):
    inputs, action = _odd_inputs(observation_space), keras.Input(action_space.shape)
    x = keras.layers.Concatenate()([inputs["pos x"], keras.ops.one_hot(inputs["9cell"], 4),
                                    action])  # fmt: skip
    return keras.Model([inputs, action], keras.layers.Dense(1)(x))


@pytest.mark.slow
def test_ddpg_dict_observations_with_keys_no_signature_takes_as_they_are(tmp_path):
    actions = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    agent = DDPG(ODD_KEYS, actions, seed=0, actor=odd_actor, critic=odd_critic,
                 jit_compile=False)  # fmt: skip
    agent.export(tmp_path / "ddpg", check_observations=FEW)
    policy = ExportedPolicy(tmp_path / "ddpg")
    assert {n: i["key"] for n, i in policy.inputs.items()} == {"pos_x": "pos x",
                                                                "part_9cell": "9cell"}  # fmt: skip
    obs = observations(ODD_KEYS, 128)
    got = policy.act(obs)
    np.testing.assert_allclose(got, agent.act(obs, explore=False), atol=1e-5)
    assert np.abs(got).max() == 1.0  # the linear actor's actions beyond the bounds: clipped
    value = policy.run("value", obs)["value"]
    np.testing.assert_allclose(value, agent.critics[0].model([obs, got]).numpy(), atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize(
    "space",
    [gym.spaces.Box(-1.0, 1.0, (2, 3), np.float64), gym.spaces.Discrete(7, start=3)],
    ids=["float64 2x3 box", "discrete start 3"],
)
def test_observations_are_encoded_inside_the_graph(tmp_path, space):
    """A float64 [2, 3] Box goes in as it is (cast and flattened inside); a Discrete one as
    its integer (one-hot inside, start counted), as acting encodes them in numpy."""
    agent = DQN(space, gym.spaces.Discrete(4), seed=0, hidden_sizes=(16,))
    perturbed(agent, [agent.q.model], scale=1.0)
    agent.export(tmp_path / "enc", check_observations=FEW)
    policy = ExportedPolicy(tmp_path / "enc")
    expected = "int64" if isinstance(space, gym.spaces.Discrete) else "float64"
    assert policy.inputs["observation"]["dtype"] == expected
    obs = observations(space, 64)
    got = policy.act(obs)
    np.testing.assert_array_equal(got, agent.act(obs, explore=False))
    assert len(np.unique(got)) > 1


@pytest.mark.slow
def test_tflite_bounds_finds_a_file_cut_short_without_tensorflow_reading_it(tmp_path):
    """rlkit.exporting.exported.tflite_bounds walks the flatbuffer (the root Model, its buffers,
    each Buffer's data): a whole export has nothing past its end; cut anywhere after its
    identifier, the weights it points at lie past the end (a trial interpreter in a child
    process may or may not crash on that: it read past the end: exit 139 or not)."""
    import gymnasium as gym

    import rlkit
    from rlkit.exporting.exported import tflite_bounds

    agent = rlkit.agents.DQN.from_env(gym.make("CartPole-v1"), hidden_sizes=(64,),
                                      jit_compile=False)  # fmt: skip
    agent.export(tmp_path / "export", format="tflite", env="CartPole-v1", check_observations=5)
    whole = (tmp_path / "export" / "policy.tflite").read_bytes()
    assert tflite_bounds(whole) is None
    for fraction in (0.99, 0.5, 0.05):
        problem = tflite_bounds(whole[: int(len(whole) * fraction)])
        assert problem is not None and "past the file's" in problem, fraction


def test_agent_export_checks_its_destination_as_the_cli_does(tmp_path):
    """Agent.export goes through the one entry, so a path under a file is refused in one
    line before anything is written (it moved into rlkit.exporting with issue 51; before,
    only rlkit export checked it)."""
    agent = DQN(gym.spaces.Box(-1, 1, (3,), np.float32), gym.spaces.Discrete(2), seed=0)
    blocker = tmp_path / "a-file.txt"
    blocker.write_text("x")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        agent.export(blocker / "sub")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file.txt"]
