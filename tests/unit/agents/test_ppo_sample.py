"""PPO's sample from given noise (issue 53, export): the Gumbel noise of uniforms against hand
values and its graph twin, ``act_with_noise`` by hand for Discrete, MultiDiscrete and Box
actions, the refusal of noise of the wrong shape; the export's ``sample`` signature in a
SavedModel and a TFLite model against the agent's draw (slow), and a check that fails on a
wrong sample (slow)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf
from gymnasium import spaces

from rlkit.agents.ppo.acting import PPOActing
from rlkit.agents.ppo.learner import PolicySnapshot
from rlkit.core.errors import UsageError
from rlkit.learn.gumbel import UNIFORM_HIGH, graph_gumbel_from_uniform, gumbel_from_uniform


def uniform_for(gumbel) -> np.ndarray:
    """The uniforms whose Gumbel noise is ``gumbel``: the Gumbel CDF ``exp(-exp(-g))``."""
    return np.exp(-np.exp(-np.asarray(gumbel, np.float64))).astype(np.float32)


def acting_on(action_space, logits, std=None) -> PPOActing:
    """An acting rule whose policy outputs ``logits`` (or the mean) for any observation."""
    logits = np.asarray(logits, np.float64)

    def forward(x):
        x = np.asarray(x)
        return logits if x.ndim == 1 else np.tile(logits, (len(x), 1))

    acting = PPOActing(action_space, lambda obs: np.asarray(obs, np.float32),
                       np.random.default_rng(0))  # fmt: skip
    acting.follow(PolicySnapshot(forward, None if std is None else np.asarray(std, np.float64)))
    return acting


def test_gumbel_noise_of_uniforms_by_hand_and_its_twin():
    u = np.array([math.exp(-1.0), math.exp(-math.exp(-2.0)), 0.0, 1.0], np.float32)
    # -log(-log u): 0 and 2 by construction; u = 0 and 1 are clipped into the finite range:
    # -log(-log(tiny)) = -log(87.3365) and -log(-log(1 - 2^-24)) = -log(5.96e-8)
    want = [0.0, 2.0, -math.log(87.33654475), -math.log(-math.log(UNIFORM_HIGH))]
    got = gumbel_from_uniform(u)
    assert got.dtype == np.float32 and np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert abs(want[3] - 16.6355) < 1e-3
    np.testing.assert_array_equal(graph_gumbel_from_uniform(tf.constant(u)).numpy(), got)


def test_a_discrete_draw_from_given_noise_by_hand():
    acting = acting_on(spaces.Discrete(3, start=1), [0.0, 1.0, 0.5])
    # logits + gumbel: [0 + 2, 1 + 0, 0.5 + 0] -> index 0, action 1 (start 1)
    assert acting.act_with_noise(np.zeros(4), uniform_for([2.0, 0.0, 0.0])) == 1
    # [0, 1, 0.5 + 0.6]: index 2; zero Gumbel noise: the greedy index 1
    noise = np.stack([uniform_for([0.0, 0.0, 0.6]), uniform_for([0.0, 0.0, 0.0])])
    np.testing.assert_array_equal(acting.act_with_noise(np.zeros((2, 4)), noise), [3, 2])
    assert acting.act(np.zeros((2, 4)), explore=False).tolist() == [2, 2]


def test_a_multidiscrete_draw_from_given_noise_by_hand():
    space = spaces.MultiDiscrete([2, 3], start=[0, 5])
    acting = acting_on(space, [0.0, 1.0, 0.0, 0.0, 3.0])
    # dimension 0: [0 + 1.5, 1 + 0] -> 0; dimension 1: [0 + 2.5, 0 + 0, 3 + 0] -> 2, + 5
    got = acting.act_with_noise(np.zeros(4), uniform_for([1.5, 0.0, 2.5, 0.0, 0.0]))
    assert got.tolist() == [0, 7] and got.dtype == space.dtype
    # dimension 1: [0 + 3.5, 0, 3 + 0] -> 0, + 5
    got = acting.act_with_noise(np.zeros(4), uniform_for([0.0, 0.0, 3.5, 0.0, 0.0]))
    assert got.tolist() == [1, 5]


def test_a_gaussian_draw_from_given_noise_by_hand():
    space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    acting = acting_on(space, [0.5, -0.2], std=[2.0, 0.1])
    # mean + std * noise = [0.5 + 2 * 1, -0.2 + 0.1 * -1] = [2.5, -0.3], clipped to [1, -0.3]
    got = acting.act_with_noise(np.zeros(3), np.array([1.0, -1.0], np.float32))
    np.testing.assert_allclose(got, [1.0, -0.3], rtol=1e-6)
    got = acting.act_with_noise(np.zeros((1, 3)), np.array([[-0.1, 2.0]], np.float32))
    np.testing.assert_allclose(got, [[0.3, 0.0]], rtol=1e-6, atol=1e-7)  # [0.5 - 0.2, -0.2 + 0.2]


def test_draws_from_uniform_noise_follow_the_softmax():
    logits = np.array([0.0, 1.0, -1.0])
    acting = acting_on(spaces.Discrete(3), logits)
    noise = np.random.default_rng(0).random((20_000, 3)).astype(np.float32)
    counts = np.bincount(acting.act_with_noise(np.zeros((20_000, 2)), noise), minlength=3)
    probabilities = np.exp(logits) / np.exp(logits).sum()  # [0.245, 0.665, 0.090]
    np.testing.assert_allclose(counts / 20_000, probabilities, atol=0.01)


def test_noise_of_the_wrong_shape_is_refused_in_one_line():
    acting = acting_on(spaces.Discrete(3), [0.0, 1.0, 0.5])
    with pytest.raises(UsageError, match=r"noise of shape \(2,\) for policy outputs \(3,\)") as e:
        acting.act_with_noise(np.zeros(4), np.zeros(2, np.float32))
    assert "\n" not in str(e.value)


def spread_agent(cls: str, env_id: str):
    """A small agent whose policy is moved away from its near-uniform start."""
    import rlkit.agents

    env = gym.make(env_id)
    agent = getattr(rlkit.agents, cls).from_env(env, seed=0, hidden_sizes=(16,),
                                                value_hidden_sizes=(16,))  # fmt: skip
    rng = np.random.default_rng(0)
    for v in agent.learner.variables()["policy"]:
        v.assign(rng.normal(size=v.shape).astype(np.float32))
    agent.refresh_policy()
    return agent


@pytest.mark.slow
@pytest.mark.parametrize("cls, env_id", [("PPO", "CartPole-v1"), ("A2C", "Pendulum-v1"),
                                         ("PPO", "rlkit-tests/Match-v0")])  # fmt: skip
def test_the_exported_sample_draws_as_the_agent_in_both_formats(tmp_path, cls, env_id):

    if env_id.startswith("rlkit-tests/"):
        import tests.unit.agents.test_ppo_multidiscrete  # noqa: F401  (registers Match-v0)
    agent = spread_agent(cls, env_id)
    obs = np.stack([agent.observation_space.sample() for _ in range(64)])
    exported_samples_match(agent, env_id, obs, tmp_path)


def exported_samples_match(agent, env_id: str, obs: np.ndarray, folder) -> tuple:
    """Export ``agent`` as a SavedModel and a TFLite model (each checked by ``export``),
    draw ``sample`` of both on ``obs`` and seeded noise, and assert both equal the agent's
    ``act_with_noise``; returns ``(the SavedModel's draws, its export)``."""
    from rlkit.exporting.exported import ExportedPolicy

    exports = {}
    for fmt in ("saved_model", "tflite"):
        result = agent.export(folder / fmt, env=env_id, format=fmt, check_observations=300)
        assert "sample equals the agent's draw for the same noise" in result.lines[1]
        assert "sample" in result.metadata["signatures"]
        exports[fmt] = ExportedPolicy(folder / fmt)
    distribution, width = agent.sample_noise_spec()
    described = exports["saved_model"].metadata["sample_noise"]
    assert described["distribution"] == distribution and described["shape"] == [None, width]
    rng = np.random.default_rng(1)
    noise = (rng.random((len(obs), width)) if distribution == "uniform"
             else rng.standard_normal((len(obs), width))).astype(np.float32)  # fmt: skip
    saved = exports["saved_model"].run("sample", obs, noise=noise)["action"]
    lite = exports["tflite"].run("sample", obs, noise=noise)["action"]
    np.testing.assert_allclose(saved, agent.act_with_noise(obs, noise), atol=1e-5)
    np.testing.assert_allclose(lite, saved, atol=1e-5)
    if distribution == "uniform":  # (integers: the same draws)
        np.testing.assert_array_equal(lite, saved)
    return saved, exports["saved_model"]


@pytest.mark.slow
def test_the_check_refuses_an_export_whose_sample_is_wrong(tmp_path, monkeypatch):
    """A sample that forgets its noise (the greedy action) is caught, and nothing written."""
    import rlkit.learn.gumbel
    from rlkit.exporting.writer import ExportCheckFailed

    agent = spread_agent("PPO", "CartPole-v1")
    monkeypatch.setattr(rlkit.learn.gumbel, "graph_gumbel_from_uniform", tf.zeros_like)
    with pytest.raises(ExportCheckFailed, match="sample does not draw as the agent"):
        agent.export(tmp_path / "export", env="CartPole-v1", check_observations=300)
    assert not (tmp_path / "export").exists()
