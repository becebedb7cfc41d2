"""SAC's sample from given noise (issue 52, export): ``act_with_noise`` by hand for Box
actions (the squashed Gaussian, log std bounded as training bounds it) and discrete SAC
(Gumbel-max), its draws following the softmax, noise of the wrong shape refused, gSDE
refused with no ``sample`` served; the export's ``sample`` in a SavedModel and a TFLite model
against the agent's draw (slow), and a check that fails on a wrong sample (slow)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf
from gymnasium import spaces

import rlkit.agents
from rlkit.core.errors import UsageError
from tests.unit.agents.test_ppo_sample import uniform_for


def box_agent(out, low=-2.0, high=2.0, **config):
    """A SAC on a 2-d Box in ``[low, high]`` whose policy outputs ``out`` ``[2 A]`` (the
    mean and raw log std) for any observation."""
    agent = rlkit.agents.SAC(spaces.Box(-1.0, 1.0, (3,), np.float32),
                             spaces.Box(low, high, (2,), np.float32), seed=0,
                             actor_hidden_sizes=(4,), critic_hidden_sizes=(4,),
                             **config)  # fmt: skip
    out = np.asarray(out, np.float32)
    agent.acting.policy = lambda x: np.tile(out, (len(x), 1))
    return agent


def discrete_agent(logits):
    agent = rlkit.agents.SAC(spaces.Box(-1.0, 1.0, (3,), np.float32), spaces.Discrete(3),
                             seed=0, actor_hidden_sizes=(4,),
                             critic_hidden_sizes=(4,))  # fmt: skip
    logits = np.asarray(logits, np.float32)
    agent.acting.policy = lambda x: np.tile(logits, (len(x), 1))
    return agent


def test_a_squashed_gaussian_draw_from_given_noise_by_hand():
    # mean [0.5, -1], log std [log 2, -30 -> clipped to -20]; bounds [-2, 2]: action = 2 tanh(u)
    agent = box_agent([0.5, -1.0, math.log(2.0), -30.0])
    assert agent.sample_noise_spec() == ("normal", 2)
    got = agent.act_with_noise(np.zeros(3), np.array([0.25, 3.0], np.float32))
    # u = [0.5 + 2 * 0.25, -1 + exp(-20) * 3] = [1, -1 + 6.2e-9]
    np.testing.assert_allclose(got, [2 * math.tanh(1.0), 2 * math.tanh(-1.0)], rtol=1e-6)
    assert got.shape == (2,) and got.dtype == np.float32
    zero = agent.act_with_noise(np.zeros((4, 3)), np.zeros((4, 2), np.float32))
    np.testing.assert_array_equal(zero, agent.act(np.zeros((4, 3)), explore=False))


def test_the_tanh_log_std_bounding_is_the_one_the_draw_uses():
    # CleanRL's bounding: log std = -5 + 0.5 * 7 * (tanh(0) + 1) = -1.5 for a raw 0
    agent = box_agent([0.0, 0.0, 0.0, 0.0], low=0.0, high=1.0, log_std_min=-5.0,
                      log_std_max=2.0, log_std_bounding="tanh")  # fmt: skip
    got = agent.act_with_noise(np.zeros((1, 3)), np.array([[1.0, -2.0]], np.float32))
    u = np.array([math.exp(-1.5), -2 * math.exp(-1.5)])
    np.testing.assert_allclose(got, [(np.tanh(u) + 1) / 2], rtol=1e-6)  # bounds [0, 1]


def test_a_discrete_sac_draw_from_given_noise_by_hand():
    agent = discrete_agent([0.0, 1.0, 0.5])
    assert agent.sample_noise_spec() == ("uniform", 3)
    # logits + gumbel: [0 + 2, 1 + 0, 0.5 + 0] -> 0; [0, 1, 0.5 + 0.6] -> 2; no noise: 1
    assert agent.act_with_noise(np.zeros(3), uniform_for([2.0, 0.0, 0.0])) == 0
    noise = np.stack([uniform_for([0.0, 0.0, 0.6]), uniform_for([0.0, 0.0, 0.0])])
    np.testing.assert_array_equal(agent.act_with_noise(np.zeros((2, 3)), noise), [2, 1])
    np.testing.assert_array_equal(agent.noise_logits(np.zeros((2, 3))), [[0.0, 1.0, 0.5]] * 2)


def test_discrete_draws_from_uniform_noise_follow_the_softmax():
    logits = np.array([0.0, 1.0, -1.0])
    agent = discrete_agent(logits)
    noise = np.random.default_rng(0).random((20_000, 3)).astype(np.float32)
    counts = np.bincount(agent.act_with_noise(np.zeros((20_000, 3)), noise), minlength=3)
    np.testing.assert_allclose(counts / 20_000, np.exp(logits) / np.exp(logits).sum(),
                               atol=0.01)  # fmt: skip


def test_noise_of_the_wrong_shape_is_refused_in_one_line():
    with pytest.raises(UsageError, match=r"noise of width 3 for 2 action dimensions") as e:
        box_agent([0.0] * 4).act_with_noise(np.zeros(3), np.zeros(3, np.float32))
    assert "\n" not in str(e.value)
    with pytest.raises(UsageError, match=r"noise of shape \(2,\) for logits \(3,\)"):
        discrete_agent([0.0] * 3).act_with_noise(np.zeros(3), np.zeros(2, np.float32))


def test_a_gsde_policy_draws_no_sample_from_noise_and_serves_none():
    from rlkit.exporting.signatures import signature_names

    agent = rlkit.agents.SAC(spaces.Box(-1.0, 1.0, (3,), np.float32),
                             spaces.Box(-1.0, 1.0, (2,), np.float32), seed=0,
                             actor_hidden_sizes=(4,), critic_hidden_sizes=(4,),
                             use_sde=True)  # fmt: skip
    assert agent.sample_noise_spec() is None
    with pytest.raises(UsageError, match="^act_with_noise: a gSDE policy"):
        agent.act_with_noise(np.zeros(3), np.zeros(2, np.float32))
    assert signature_names(agent) == ["action", "metadata"]
    assert "sample" in signature_names(box_agent([0.0] * 4), "tflite")


def trained_looking(agent):
    """The actor's weights spread away from their start, so that draws differ."""
    rng = np.random.default_rng(0)
    for v in agent.learner.actor.model.trainable_variables:
        v.assign(rng.normal(0.0, 0.4, v.shape).astype(np.float32))
    agent.refresh_policy()
    return agent


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["Pendulum-v1", "CartPole-v1"])
def test_the_exported_sample_draws_as_the_agent_in_both_formats(tmp_path, env_id):
    from tests.unit.agents.test_ppo_sample import exported_samples_match

    agent = trained_looking(
        rlkit.agents.SAC.from_env(
            gym.make(env_id), seed=0, actor_hidden_sizes=(16,), critic_hidden_sizes=(16,)
        )
    )
    obs = np.random.default_rng(1).normal(0.0, 0.3, (64, *agent.observation_space.shape))
    saved, export = exported_samples_match(agent, env_id, obs.astype(np.float32), tmp_path)
    rule = export.metadata["sample_noise"]["rule"]
    assert rule.startswith("argmax(logits + gumbel)" if agent.discrete else "clip(low + (tanh(")
    if agent.discrete:
        assert len(set(saved.tolist())) > 1  # (draws, not the greedy action everywhere)
    else:
        greedy = export.run("action", obs.astype(np.float32))["action"]
        assert np.abs(saved - greedy).max() > 0.1


@pytest.mark.slow
def test_the_check_refuses_an_export_whose_sample_is_wrong(tmp_path, monkeypatch):
    """A sample whose log std is not bounded as training bounds it is caught, and nothing
    is written."""
    import rlkit.learn.max_entropy
    from rlkit.exporting.writer import ExportCheckFailed

    agent = trained_looking(
        rlkit.agents.SAC.from_env(
            gym.make("Pendulum-v1"), seed=0, actor_hidden_sizes=(16,), critic_hidden_sizes=(16,)
        )
    )
    monkeypatch.setattr(rlkit.learn.max_entropy, "bound_log_std",
                        lambda raw, *args: tf.zeros_like(raw))  # fmt: skip
    with pytest.raises(ExportCheckFailed, match="sample does not draw as the agent"):
        agent.export(tmp_path / "export", env="Pendulum-v1", check_observations=300)
    assert not (tmp_path / "export").exists()
