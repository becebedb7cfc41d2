"""PPO and A2C on image observations (rlkit/agents/ppo/networks.py: ConvActorCritic): the
shared torso's shapes and initial gains, pixels scaled inside the network, the torso taking
both heads' gradients, acting's numpy copy of MinAtar's torso, frames stored in their own
dtype, rewards clipped, exact resume, the one-line refusals; and short runs of the Python
loop on MinAtar and Atari (slow)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

import rlkit.agents
from rlkit.core.errors import UsageError
from rlkit.networks.numpy_conv import conv2d_relu
from rlkit.networks.patch_conv import PatchConv2D
from rlkit.replay.rollout import RolloutBatch

T, N = 8, 2
ATARI = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
MINATAR = gym.spaces.Box(0, 1, (10, 10, 4), bool)  # (MinAtar's boards)


def image_agent(space=MINATAR, actions: int = 6, cls=rlkit.agents.PPO, seed: int = 3,
                **overrides):  # fmt: skip
    settings = {"n_steps": T, "batch_size": 4, "n_epochs": 2, "learning_rate": 1e-3,
                "ent_coef": 0.01} if cls is rlkit.agents.PPO else {"n_steps": T}  # fmt: skip
    return cls(space, gym.spaces.Discrete(actions), seed=seed, **{**settings, **overrides})


@pytest.fixture(scope="module")
def nature():
    """A PPO agent on Atari's frames as built (read only: its tests do not update it)."""
    return image_agent(ATARI, 4)


def random_images(space, shape, rng) -> np.ndarray:
    if space.dtype == np.uint8:
        return rng.integers(0, 256, (*shape, *space.shape), dtype=np.uint8)
    return rng.random((*shape, *space.shape)) < 0.2


def image_rollout(agent, seed: int = 0) -> RolloutBatch:
    rng = np.random.default_rng(seed)
    space = agent.observation_space
    terminated, truncated = np.zeros((T, N), bool), np.zeros((T, N), bool)
    terminated[3, 0], truncated[5, 1] = True, True
    return RolloutBatch(
        random_images(space, (T, N), rng), rng.integers(0, agent.action_space.n, (T, N)),
        rng.normal(size=(T, N)).astype(np.float32), random_images(space, (T, N), rng),
        terminated, truncated,
    )  # fmt: skip


def assert_orthogonal(kernel, gain: float) -> None:
    """``kernel`` as a ``[fan_in, F]`` matrix (``fan_in >= F``) has orthogonal columns of norm
    ``gain``: ``W^T W = gain^2 I``."""
    matrix = np.asarray(kernel).reshape(-1, kernel.shape[-1]).astype(np.float64)
    assert matrix.shape[0] >= matrix.shape[1]
    np.testing.assert_allclose(matrix.T @ matrix, gain**2 * np.eye(matrix.shape[1]),
                               atol=1e-5 * max(gain**2, 1e-2))  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    "space, actions, kind, shapes",
    [
        (ATARI, 4, "nature", [(8, 8, 4, 32), (4, 4, 32, 64), (3, 3, 64, 64), (3136, 512)]),
        (MINATAR, 6, "minatar", [(3, 3, 4, 16), (1024, 128)]),
    ],
    ids=["nature", "minatar"],
)
def test_the_shared_torsos_shapes_and_initial_gains(space, actions, kind, shapes, nature):
    """CleanRL's ppo_atari.py ``Agent.network``: the Nature CNN then Dense 512 (MinAtar's: 16
    3x3 then 128), orthogonal gain sqrt(2), zero biases; the policy's head gain 0.01, the
    value's 1; one torso, so every variable is in the update once."""
    agent = nature if kind == "nature" else image_agent(space, actions)
    net = agent.learner.networks
    assert net.shared and net.kind == kind and agent.config.torso == "auto"
    assert all(isinstance(conv, PatchConv2D) for conv in net.convs)
    groups = agent.learner.variables()
    assert list(groups) == ["torso", "policy", "value"]
    assert [tuple(v.shape) for v in groups["torso"][::2]] == shapes
    for kernel in groups["torso"][::2]:
        assert_orthogonal(kernel.numpy(), math.sqrt(2.0))
    assert_orthogonal(groups["policy"][0].numpy(), 0.01)
    assert_orthogonal(groups["value"][0].numpy(), 1.0)
    assert tuple(groups["policy"][0].shape) == (shapes[-1][-1], actions)
    assert tuple(groups["value"][0].shape) == (shapes[-1][-1], 1)
    for bias in [*groups["torso"][1::2], groups["policy"][1], groups["value"][1]]:
        assert not np.any(bias.numpy())
    flat = [v for vs in groups.values() for v in vs]
    assert len({id(v) for v in flat}) == len(flat) == len(agent.pipeline.variables)
    assert {id(v) for v in flat} == {id(v) for v in net.model.trainable_variables}
    obs = random_images(space, (3,), np.random.default_rng(0))
    out, value = net.model(obs)
    assert out.shape == (3, actions) and value.shape == (3, 1)


@pytest.mark.slow
def test_a_torso_and_its_heads_are_seeded_from_the_run_seed():
    a, b, c = image_agent(), image_agent(), image_agent(seed=4)
    for x, y, z in zip(a.learner.networks.model.weights, b.learner.networks.model.weights,
                       c.learner.networks.model.weights, strict=True):  # fmt: skip
        np.testing.assert_array_equal(x.numpy(), y.numpy())
        if np.any(x.numpy()):
            assert not np.array_equal(x.numpy(), z.numpy())


@pytest.mark.slow
def test_uint8_pixels_are_divided_by_255_inside_the_network(nature):
    net = nature.learner.networks
    first = tf.keras.Model(net.model.inputs[0], net.convs[0].output)
    frames = random_images(ATARI, (2,), np.random.default_rng(1))
    kernel, bias = (w.numpy() for w in (net.convs[0].kernel, net.convs[0].bias))
    want = conv2d_relu(frames.astype(np.float32) / 255.0, kernel, bias, stride=4)
    np.testing.assert_allclose(first(frames).numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_the_shared_torso_takes_the_gradients_of_both_heads():
    """The policy's loss reaches the torso and its own head, not the value's head; the value's
    the torso and its head, not the policy's; the torso's gradient of the sum is the sum."""
    net = image_agent(MINATAR).learner.networks
    groups = net.groups()
    obs = random_images(MINATAR, (16,), np.random.default_rng(2))

    def gradients(which):
        with tf.GradientTape() as tape:
            out, value = net.forward(obs)
            loss = {"policy": tf.reduce_sum(out * np.arange(6.0, dtype=np.float32)),
                    "value": tf.reduce_sum(value ** 2)}  # fmt: skip
            total = sum(loss[w] for w in which)
        grads = tape.gradient(total, [v for vs in groups.values() for v in vs])
        return dict(zip([f"{g}/{i}" for g, vs in groups.items() for i in range(len(vs))],
                        grads, strict=True))  # fmt: skip

    policy, value = gradients(["policy"]), gradients(["value"])
    both = gradients(["policy", "value"])
    for name in policy:
        group = name.split("/")[0]
        got_p = policy[name] is not None and np.any(policy[name].numpy())
        got_v = value[name] is not None and np.any(value[name].numpy())
        assert got_p == (group != "value"), name
        assert got_v == (group != "policy"), name
        if group == "torso":
            np.testing.assert_allclose(both[name].numpy(),
                                       policy[name].numpy() + value[name].numpy(),
                                       rtol=1e-5, atol=1e-6)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    "cls, space, actions",
    [(rlkit.agents.PPO, ATARI, 4), (rlkit.agents.PPO, MINATAR, 6), (rlkit.agents.A2C, MINATAR, 6)],
    ids=["ppo-atari", "ppo-minatar", "a2c-minatar"],
)
def test_an_update_on_image_rollouts_moves_the_torso_and_both_heads(cls, space, actions):
    agent = image_agent(space, actions, cls)
    before = {g: [v.numpy().copy() for v in vs] for g, vs in agent.learner.variables().items()}
    metrics, _ = agent.learner.learn(image_rollout(agent), step=0,
                                     rng=np.random.default_rng(0))  # fmt: skip
    assert all(np.isfinite(v) for v in metrics.values())
    for group, variables in agent.learner.variables().items():
        moved = [not np.array_equal(v.numpy(), b) for v, b in zip(variables, before[group],
                                                                  strict=True)]  # fmt: skip
        assert all(moved), group


@pytest.mark.slow
def test_acting_on_minatar_reads_a_numpy_copy_of_the_policy(nature):
    """MinAtar's torso acts through numpy (NumpyConvNet), refreshed after each update; the
    Nature CNN through one compiled call of the live network."""
    agent = image_agent(MINATAR)
    boards = random_images(MINATAR, (32,), np.random.default_rng(3))
    agent.observe_first(random_images(MINATAR, (N,), np.random.default_rng(7)))
    for updates in range(2):
        assert agent.num_updates == updates
        forward = agent.learner.policy().forward
        assert type(forward).__name__ == "NumpyConvNet"
        want = agent.policy.model(boards).numpy()
        np.testing.assert_allclose(forward(boards), want, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(forward(boards[0]), want[0], rtol=1e-4, atol=1e-6)
        np.testing.assert_array_equal(agent.act(boards, explore=False), np.argmax(want, -1))
        drive(agent, T, seed=updates)  # a rollout, then its update
    atari = nature
    frames = random_images(ATARI, (3,), np.random.default_rng(4))
    want = atari.policy.model(frames).numpy()  # (eagerly: the compiled call rounds apart)
    np.testing.assert_allclose(atari.learner.policy().forward(frames), want, rtol=1e-5,
                               atol=1e-7)  # fmt: skip
    np.testing.assert_allclose(atari.learner.policy().forward(frames[1]), want[1], rtol=1e-5,
                               atol=1e-7)  # fmt: skip
    assert atari.act(frames[0]) in range(4)


@pytest.mark.slow
def test_frames_are_stored_as_uint8_and_rewards_clipped_before_the_rollout():
    agent = image_agent(ATARI, 4, reward_clip=1.0)
    rng = np.random.default_rng(5)
    frames = random_images(ATARI, (3, N), rng)
    agent.observe_first(frames[0])
    for k in (1, 2):
        action = agent.act(frames[k - 1])
        agent.observe_next(action, np.array([4.0, -0.5]), frames[k], np.zeros(N, bool),
                           np.zeros(N, bool))  # fmt: skip
    rollout = agent.rollout
    assert rollout.obs.dtype == rollout.next_obs.dtype == np.uint8
    np.testing.assert_array_equal(rollout.obs[:2], frames[:2])
    np.testing.assert_array_equal(rollout.next_obs[:2], frames[1:])
    np.testing.assert_array_equal(rollout.rewards[:2], [[1.0, -0.5], [1.0, -0.5]])


@pytest.mark.parametrize(
    "space, overrides, message",
    [
        (MINATAR, {"norm_obs": True}, r"^ppo's norm_obs normalises vector observations; the image"),
        (MINATAR, {"torso": "nature"}, r"^torso nature needs images of 36 pixels a side"),
        (MINATAR, {"torso": "resnet"}, "torso"),
    ],
)
def test_what_images_cannot_take_is_refused_in_one_line(space, overrides, message):
    with pytest.raises(UsageError, match=message) as caught:
        image_agent(space, **overrides)
    assert "\n" not in str(caught.value)
    with pytest.raises(UsageError, match=message.replace("ppo's", "a2c's")):
        image_agent(space, cls=rlkit.agents.A2C, **overrides)


def drive(agent, steps: int, seed: int) -> list[np.ndarray]:
    """``steps`` steps of ``N`` streams on random boards (an episode ends now and then)."""
    rng = np.random.default_rng(seed)
    taken = []
    for _ in range(steps):
        action = agent.act(agent.rollout.current.copy())
        taken.append(np.copy(action))
        ended = rng.random(N) < 0.2
        agent.observe_next(action, rng.normal(size=N), random_images(MINATAR, (N,), rng),
                           ended & (rng.random(N) < 0.5), ended)  # fmt: skip
        if ended.any():
            restart = random_images(MINATAR, (int(ended.sum()),), rng)
            agent.observe_first(restart, streams=np.flatnonzero(ended))
        agent.update()
    return taken


@pytest.mark.slow
def test_exact_resume_mid_rollout_on_boards(tmp_path):
    """A saved model and a checkpoint's state half-way through a rollout of bool boards: the
    loaded agent acts and updates as the original (torso, heads, optimizer, rollout)."""
    from rlkit.run.checkpoint import flatten_state, unflatten_state

    agent = image_agent(MINATAR)
    agent.observe_first(random_images(MINATAR, (N,), np.random.default_rng(6)))
    drive(agent, T + T // 2, seed=1)
    assert agent.num_updates == 1 and agent.rollout.obs.dtype == bool
    arrays, scalars = flatten_state(agent.state())
    arrays = {k: v.copy() for k, v in arrays.items()}
    agent.save(tmp_path / "model")
    resumed = rlkit.agents.PPO.load(tmp_path / "model")
    resumed.load_state(unflatten_state(arrays, scalars))
    for a, b in zip(drive(agent, T, seed=2), drive(resumed, T, seed=2), strict=True):
        np.testing.assert_array_equal(a, b)
    assert agent.num_updates == resumed.num_updates == 2
    for group, variables in agent.checkpoint_variables().items():
        for mine, theirs in zip(variables, resumed.checkpoint_variables()[group], strict=True):
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=group)


@pytest.mark.slow
@pytest.mark.atari
@pytest.mark.parametrize("env_id", ["MinAtar/Breakout-v0", "ALE/Breakout-v5"])
def test_the_python_loop_trains_on_the_family_preset(tmp_path, env_id):
    """The family preset picked by itself (rl-zoo's atari entry; MinAtar's torso on MinAtar),
    two updates of 2 envs x 128 steps in the Python loop on the env's own pipeline (ALE:
    rlkit.envs.atari's 84x84x4 uint8 stacks), a saved model that acts as the agent."""
    from rlkit.run import experiment

    plan = experiment.plan("ppo", env_id, steps=512, seed=0, num_envs=2, eval_every=0)
    assert plan.preset.name == ("ppo/atari" if env_id.startswith("ALE/") else "ppo/minatar")
    trainer = experiment.start(plan, tmp_path, tensorboard=False)
    assert type(trainer).__name__ == "Trainer"
    trainer.run(512)
    trainer.close()
    agent = trainer.agent
    assert agent.num_updates == 2
    assert agent.rollout.obs.dtype == (np.uint8 if env_id.startswith("ALE/") else bool)
    assert agent.learner.networks.kind == ("nature" if env_id.startswith("ALE/") else "minatar")
    agent.save(tmp_path / "model")
    loaded = rlkit.agents.PPO.load(tmp_path / "model")
    obs = agent.rollout.obs[-1]
    np.testing.assert_array_equal(loaded.act(obs, explore=False), agent.act(obs, explore=False))


@pytest.mark.slow
def test_the_cli_refuses_norm_obs_on_images_in_one_line(tmp_path, capsys):
    from rlkit.cli.main import main

    status = main(["train", "ppo", "--env", "rlkit/MinAtar-Breakout-v0", "--steps", "256",
                   "--set", "norm_obs=true", "--out", str(tmp_path)])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert err == [
        "rlkit: error: ppo's norm_obs normalises vector observations; the image "
        "observations (10, 10, 4) bool go to the convolutional torso as they are "
        "(uint8 frames divided by 255 inside it): drop norm_obs"
    ]
    assert not any(tmp_path.iterdir())  # refused before the run folder
