"""The pieces every agent is built from: named seeds, observations of any shape (the CNN
torso for images), and rlkit.run.experiment, the run procedure as library calls."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.spaces import observation_format
from rlkit.run import experiment

IMAGES = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)


def test_seed_streams_are_the_numbers_rlkit_always_used():
    for name, word in (("explore", 1), ("noise", 2), ("sample", 2), ("replay", 3)):
        expected = np.random.default_rng([7, word]).random(3)
        np.testing.assert_array_equal(seeding.generator(7, name).random(3), expected)
    assert seeding.network_seed(3, "q") == 3000 and seeding.network_seed(3, "actor") == 3000
    assert seeding.network_seed(3, "critic") == 3400
    assert seeding.network_seed(3, "critic", 1) == 3550
    assert seeding.network_seed(3, "value") == 3500
    assert seeding.eval_seed(5, 0) == 1_000_005 and seeding.eval_seed(5, 2) == 1_002_005
    assert seeding.final_eval_seed(5) == 2_000_005 and seeding.restart_seed(5, 40) == 45


def test_observation_formats():
    vector = observation_format(gym.spaces.Box(-1, 1, (2, 3), np.float64))
    assert vector.kind == "vector" and vector.shape == (6,) and vector.dtype == np.float32
    assert vector.encode(np.ones((5, 2, 3))).shape == (5, 6)
    image = observation_format(IMAGES, "dqn", images=True)
    assert image.shape == (84, 84, 4) and image.dtype == np.uint8 and image.scale == 255.0
    one_hot = observation_format(gym.spaces.Discrete(3, start=1))
    np.testing.assert_array_equal(one_hot.encode(np.array([1, 3])), [[1, 0, 0], [0, 0, 1]])


@pytest.mark.parametrize("agent", ["ddpg", "reinforce"])
def test_image_observations_are_refused_by_vector_agents_in_one_line(agent):
    from rlkit.agents.registry import agent_spec

    actions = gym.spaces.Box(-1, 1, (1,)) if agent == "ddpg" else gym.spaces.Discrete(2)
    with pytest.raises(UsageError, match="takes vector observations.*use dqn for pixels"):
        agent_spec(agent).check_spaces(IMAGES, actions, "Pixels-v0")


@pytest.mark.slow
def test_dqn_on_images_uses_the_nature_cnn_and_compiled_acting():
    import tensorflow as tf

    from rlkit.agents import DQN

    agent = DQN(IMAGES, gym.spaces.Discrete(3), seed=0, hidden_sizes=(512,), batch_size=4,
                buffer_size=50, learning_starts=0, train_freq=4, gradient_steps=2,
                jit_compile=False)  # fmt: skip
    q = agent.q
    assert [layer.kernel.shape for layer in q.convs] == [
        (8, 8, 4, 32), (4, 4, 32, 64), (3, 3, 64, 64)
    ]  # fmt: skip
    assert q.hidden[0].kernel.shape == (7 * 7 * 64, 512)  # 84 -> 20 -> 9 -> 7
    assert q.model.inputs[0].dtype == "uint8"
    # Torch7 initialisation: U(+-1/sqrt(fan_in)) with fan_in = kernel area x input channels
    bound = 1 / np.sqrt(8 * 8 * 4)
    first = q.convs[0].kernel.numpy()
    assert np.abs(first).max() <= bound and np.abs(first).max() > 0.9 * bound
    # the input is divided by 255 inside the network
    frames = np.random.default_rng(0).integers(0, 256, (2, 84, 84, 4), dtype=np.uint8)
    scaled = tf.constant(frames, tf.float32) / 255.0
    x = scaled
    for conv in q.convs:
        x = conv(x)
    x = tf.reshape(x, [2, -1])
    for layer in q.hidden:
        x = layer(x)
    np.testing.assert_allclose(q.model(frames).numpy(), q.heads[0](x).numpy(), rtol=1e-5)
    # acting: one compiled call per batch, equal to the model
    np.testing.assert_allclose(agent.q_values(frames), q.model(frames).numpy(), rtol=1e-5)
    assert agent.act(frames[0], explore=False) == int(np.argmax(q.model(frames[:1])[0]))
    assert agent.act(frames).shape == (2,)
    # learning from uint8 replay: a block of updates runs and changes the weights
    before = [v.numpy().copy() for v in q.variables]
    for i in range(8):
        agent.observe(frames[i % 2], i % 3, 1.0, frames[(i + 1) % 2], False, False)
        metrics = agent.update()
    assert metrics is not None and np.isfinite(metrics["loss"])
    assert agent.replay.obs.dtype == np.uint8
    assert any(not np.array_equal(b, v.numpy()) for b, v in zip(before, q.variables, strict=True))


def test_dopamines_network_pads_same_with_glorot_kernels_and_zero_biases():
    import tensorflow as tf

    from rlkit.agents import DQN

    agent = DQN(IMAGES, gym.spaces.Discrete(3), seed=0, hidden_sizes=(512,), conv_padding="same",
                init="glorot", jit_compile=False)  # fmt: skip
    q = agent.q
    assert q.hidden[0].kernel.shape == (11 * 11 * 64, 512)  # 84 -> 21 -> 11 -> 11
    first = q.convs[0]
    limit = np.sqrt(6 / (8 * 8 * 4 + 8 * 8 * 32))  # Glorot uniform: fan_in + fan_out
    assert limit * 0.9 < np.abs(first.kernel.numpy()).max() <= limit
    assert all(not layer.bias.numpy().any() for layer in (*q.convs, *q.hidden, *q.heads))
    # "same": the input padded so the output is ceil(84 / 4) = 21 a side, as tf.nn.conv2d's
    frames = np.random.default_rng(1).integers(0, 256, (1, 84, 84, 4), dtype=np.uint8)
    x = tf.constant(frames, tf.float32) / 255.0
    expected = tf.nn.relu(tf.nn.conv2d(x, first.kernel, 4, "SAME") + first.bias)
    assert expected.shape == (1, 21, 21, 32)
    np.testing.assert_allclose(first(x).numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="conv_padding"):
        DQN(IMAGES, gym.spaces.Discrete(3), conv_padding="full")


def test_dqn3_network_pads_only_the_first_convolution_by_one_pixel():
    """DQN3.0's convnet.lua: ``SpatialConvolution(4, 32, 8, 8, 4, 4, 1)``, then no padding."""
    import keras
    import tensorflow as tf

    from rlkit.agents import DQN

    agent = DQN(IMAGES, gym.spaces.Discrete(3), seed=0, hidden_sizes=(512,), conv_padding="dqn3",
                jit_compile=False)  # fmt: skip
    q = agent.q
    assert q.hidden[0].kernel.shape == (7 * 7 * 64, 512)  # 86 -> 20 -> 9 -> 7
    frames = np.random.default_rng(2).integers(1, 256, (1, 84, 84, 4), dtype=np.uint8)
    x = tf.constant(frames, tf.float32) / 255.0
    first = q.convs[0]
    kernel, bias = first.kernel.numpy(), first.bias.numpy()
    conv_out = keras.Model(q.model.inputs[0], first.output)(frames).numpy()
    assert conv_out.shape == (1, 20, 20, 32)
    # by hand: output (i, j) reads padded rows 4i..4i+7, i.e. input rows 4i-1..4i+6 (-1: zero)
    padded = np.pad(x.numpy()[0], ((1, 1), (1, 1), (0, 0)))
    for i, j in [(0, 0), (0, 19), (7, 3), (19, 19)]:
        window = padded[4 * i : 4 * i + 8, 4 * j : 4 * j + 8, :]
        want = np.maximum(np.tensordot(window, kernel, axes=3) + bias, 0)
        np.testing.assert_allclose(conv_out[0, i, j], want, rtol=1e-4, atol=1e-5)
    unpadded = tf.nn.relu(tf.nn.conv2d(x, first.kernel, 4, "VALID") + first.bias).numpy()
    assert not np.allclose(conv_out, unpadded, atol=1e-3)


def test_plan_resolves_like_the_cli_and_refuses_bad_values():
    plan = experiment.plan("dqn", overrides=["gamma=0.9"])
    assert plan.settings.env == "CartPole-v1" and plan.settings.steps == 50_000
    assert plan.settings.eval_every == 2_500 and plan.agent_config.gamma == 0.9
    bandit = experiment.plan("reinforce", "rlkit/MultiArmedBandit-v0")
    assert bandit.settings.episodes == 10_000
    assert experiment.plan("dqn", overrides={"batch_size": 8}).agent_config.batch_size == 8
    with pytest.raises(UsageError, match="unknown config key 'gama'"):
        experiment.plan("dqn", overrides={"gama": 0.9})
    with pytest.raises(UsageError, match="missing AGENT"):
        experiment.plan()


@pytest.mark.slow
def test_experiment_run_returns_a_result_and_writes_what_the_cli_writes(tmp_path):
    from pathlib import Path

    fixtures = Path(__file__).parents[2] / "fixtures" / "pinned"
    plan = experiment.plan(
        "dqn", "CartPole-v1", steps=4000, eval_every=2000, eval_episodes=3,
        checkpoint_every=2000, overrides={"hidden_sizes": "32,32", "buffer_size": 3000,
        "eps_anneal_fraction": 0, "lr_anneal_fraction": 0},  # as pinned: tests/fixtures/pin_runs.py
    )  # fmt: skip
    result = experiment.run(plan, tmp_path, handle_signals=False)
    assert result.status == experiment.FINISHED and result.run_dir.parent == tmp_path
    assert (result.run_dir / "metrics.csv").read_text().splitlines() == (
        fixtures / "dqn_cartpole.csv"
    ).read_text().splitlines()
    assert result.final_return == result.summary["final_model"]["eval_return_mean"]
    assert result.best_return is not None and result.history.steps == 4000
    assert "eval return" in result.message and str(result.run_dir) in result.message


def test_one_step_counter_the_agents(tmp_path):
    import rlkit
    from rlkit.run.loop import Trainer

    env = gym.make("CartPole-v1")
    agent = rlkit.agents.DQN.from_env(env, seed=0, hidden_sizes=(8,), learning_starts=10**6)
    history = rlkit.train(agent, env, steps=50)
    assert agent.num_steps == history.steps == 50
    history = rlkit.train(agent, env, steps=30)  # 30 more, counted on
    assert agent.num_steps == history.steps == 80
    trainer = Trainer(agent, env, run_dir=tmp_path)
    trainer.run(100)  # up to the agent's step 100
    assert trainer.step == agent.num_steps == 100
    state = __import__("json").loads(
        next(tmp_path.glob("checkpoints/step-*/state.json")).read_text()
    )
    assert state["loop"]["state"]["step"] == state["counters"]["num_steps"] == 100
    trainer.close()


def test_frame_stack_needs_image_observations():
    from rlkit.agents import DQN

    with pytest.raises(UsageError, match="frame_stack needs image observations"):
        DQN(gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2), frame_stack=True)
    agent = DQN(IMAGES, gym.spaces.Discrete(2), frame_stack=True, buffer_size=100,
                hidden_sizes=(16,), jit_compile=False)  # fmt: skip
    assert type(agent.replay).__name__ == "FrameReplay" and agent.replay.obs.shape == (100, 84, 84)
