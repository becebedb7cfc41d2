"""REINFORCE and the multi-armed bandit: formulas by hand, the episode store, learning, the CLI."""

import json
import subprocess
import sys
import tomllib

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

import rlkit
from rlkit.agents import Reinforce
from rlkit.agents.reinforce.config import ReinforceConfig, resolve_preset
from rlkit.cli.main import main
from rlkit.core.errors import UsageError
from rlkit.envs.bandit import DEFAULT_ARM_MEANS, ENV_ID, MultiArmedBandit, register_envs
from rlkit.learn.losses import (
    gaussian_log_loss,
    softmax_entropy,
    softmax_log_loss,
    value_loss,
)
from rlkit.learn.returns import returns_to_go
from rlkit.replay.memory import Batch

register_envs()  # until rlkit/__init__.py does it on import

CARTPOLE_OBS = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
BANDIT_OBS = gym.spaces.Box(1.0, 1.0, (1,), np.float32)
SMALL = dict(hidden_sizes=(8, 8), value_hidden_sizes=(8, 8))


def run_episode(agent, rewards, terminated=True, obs_dim=4, seed=0):
    """Feed one episode of ``len(rewards)`` transitions; returns what the last update gave."""
    rng = np.random.default_rng(seed)
    metrics = None
    for t, r in enumerate(rewards):
        last = t == len(rewards) - 1
        agent.observe(
            rng.normal(size=obs_dim), t % 2, r, rng.normal(size=obs_dim),
            last and terminated, last and not terminated,
        )  # fmt: skip
        metrics = agent.update()
        if not last:
            assert metrics is None
    return metrics


# -- formulas ------------------------------------------------------------------------------
def test_log_loss_gradient_at_logits_is_minus_onehot_minus_pi_times_return():
    logits = tf.constant([[0.2, -1.0, 0.5], [1.0, 0.0, -0.3], [0.0, 0.0, 0.0]])
    actions = tf.constant([2, 0, 1])
    returns = tf.constant([1.5, -2.0, 0.7])
    with tf.GradientTape() as tape:
        tape.watch(logits)
        per_example = softmax_log_loss(logits, actions, returns)
        total = tf.reduce_sum(per_example)
    pi = np.exp(logits.numpy()) / np.exp(logits.numpy()).sum(axis=1, keepdims=True)
    onehot = np.eye(3)[actions.numpy()]
    assert per_example.shape == (3,)  # per example, never reduced inside
    np.testing.assert_allclose(
        per_example.numpy(), -np.log(pi[[0, 1, 2], [2, 0, 1]]) * returns.numpy(), rtol=1e-6
    )
    expected = -(onehot - pi) * returns.numpy()[:, None]
    np.testing.assert_allclose(tape.gradient(total, logits).numpy(), expected, atol=1e-6)


def test_no_gradient_flows_into_the_returns():
    returns = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(softmax_log_loss(tf.zeros([2, 2]), tf.constant([0, 1]), returns))
    assert tape.gradient(loss, returns) is None


def test_gaussian_log_loss_gradient_by_hand():
    mean = tf.Variable([[0.5, -1.0]])
    log_std = tf.Variable([0.0, np.log(2.0)], dtype=tf.float32)
    actions, w = tf.constant([[1.0, 1.0]]), tf.constant([3.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(gaussian_log_loss(mean, log_std, actions, w))
    d_mean, d_log_std = tape.gradient(loss, [mean, log_std])
    sigma = np.array([1.0, 2.0])
    z = (np.array([1.0, 1.0]) - np.array([0.5, -1.0])) / sigma
    log_prob = np.sum(-0.5 * z**2 - np.log(sigma) - 0.5 * np.log(2 * np.pi))
    assert loss.numpy() == pytest.approx(-3.0 * log_prob, rel=1e-6)
    np.testing.assert_allclose(d_mean.numpy(), [-3.0 * z / sigma], rtol=1e-6)
    np.testing.assert_allclose(d_log_std.numpy(), -3.0 * (z**2 - 1), rtol=1e-6)


def test_entropy_and_value_loss():
    np.testing.assert_allclose(softmax_entropy(tf.zeros([2, 4])).numpy(), [np.log(4)] * 2)
    loss = value_loss(tf.constant([1.0, 3.0]), tf.constant([2.0, 0.0]))
    np.testing.assert_allclose(loss.numpy(), [0.5, 4.5])


def test_returns_to_go_one_terminated_episode():
    # gamma 0.5: G2 = 3, G1 = 2 + 0.5 * 3, G0 = 1 + 0.5 * 3.5
    np.testing.assert_allclose(returns_to_go([1.0, 2.0, 3.0], 0.5), [2.75, 3.5, 3.0])
    np.testing.assert_allclose(returns_to_go([1.0, 2.0, 3.0], 1.0), [6.0, 5.0, 3.0])


def test_returns_to_go_stops_at_episode_ends():
    rewards, ends = [1.0, 2.0, 3.0, 4.0], [False, True, False, True]
    np.testing.assert_allclose(returns_to_go(rewards, 0.5, ends), [2.0, 2.0, 5.0, 4.0])


def test_returns_to_go_bootstraps_where_not_terminated():
    # episode 1 truncated with V(s_T) = 10, episode 2 cut by the end of the batch, V = -4
    rewards = [1.0, 2.0, 3.0, 4.0]
    ends = [False, True, False, False]
    bootstrap = [99.0, 10.0, 99.0, -4.0]  # read only at the ends
    g3 = 4.0 + 0.9 * -4.0
    expected = [1.0 + 0.9 * (2.0 + 0.9 * 10.0), 2.0 + 0.9 * 10.0, 3.0 + 0.9 * g3, g3]
    np.testing.assert_allclose(returns_to_go(rewards, 0.9, ends, bootstrap), expected, rtol=1e-6)


@pytest.mark.slow
def test_agent_returns_bootstrap_truncated_not_terminated():
    agent = Reinforce(CARTPOLE_OBS, gym.spaces.Discrete(2), seed=0, gamma=0.5, **SMALL)
    agent.value.head.bias.assign([10.0])  # V(s) = 10 everywhere
    agent.after_restore()
    obs = np.zeros((4, 4), np.float32)
    batch = Batch(
        obs, np.zeros(4, np.int64), np.ones(4, np.float32), obs,
        terminated=np.array([0, 1, 0, 0], bool), truncated=np.array([0, 0, 0, 1], bool),
    )  # fmt: skip
    returns, segments = agent.returns(batch)
    assert segments == 2
    np.testing.assert_allclose(returns, [1.5, 1.0, 1 + 0.5 * 6.0, 1 + 0.5 * 10.0])
    no_baseline = Reinforce(CARTPOLE_OBS, gym.spaces.Discrete(2), gamma=0.5, baseline=False)
    np.testing.assert_allclose(no_baseline.returns(batch)[0], [1.5, 1.0, 1.5, 1.0])


# -- the episode store and the compiled update ---------------------------------------------
@pytest.mark.slow
def test_memory_is_cleared_after_each_update():
    agent = Reinforce(CARTPOLE_OBS, gym.spaces.Discrete(2), seed=1, **SMALL)
    for n, length in enumerate([5, 9, 3], start=1):
        metrics = run_episode(agent, [1.0] * length, seed=n)
        assert metrics is not None and np.isfinite(metrics["loss"])
        assert set(metrics) == {"loss", "entropy", "value_loss"}
        assert len(agent.memory) == 0 and agent.episodes_in_memory == 0
        assert agent.num_updates == n and agent.num_episodes == n
    assert agent.num_steps == 17


@pytest.mark.slow
def test_episodes_per_update_waits_for_enough_episodes():
    agent = Reinforce(CARTPOLE_OBS, gym.spaces.Discrete(2), seed=1, episodes_per_update=2, **SMALL)
    assert run_episode(agent, [1.0] * 4) is None
    assert len(agent.memory) == 4 and agent.episodes_in_memory == 1
    assert run_episode(agent, [1.0] * 3, terminated=False) is not None
    assert len(agent.memory) == 0 and agent.num_updates == 1


@pytest.mark.slow
def test_full_memory_updates_mid_episode_and_refuses_to_overflow():
    agent = Reinforce(CARTPOLE_OBS, gym.spaces.Discrete(2), seed=2, buffer_size=4, **SMALL)
    x = np.zeros(4)
    for _ in range(3):
        agent.observe(x, 0, 1.0, x, False, False)
        assert agent.update() is None
    agent.observe(x, 0, 1.0, x, False, False)
    assert agent.update() is not None and len(agent.memory) == 0 and agent.num_episodes == 0
    for _ in range(4):
        agent.observe(x, 0, 1.0, x, False, False)
    with pytest.raises(RuntimeError, match="call update"):
        agent.observe(x, 0, 1.0, x, False, False)


@pytest.mark.slow
def test_update_is_traced_once_for_all_episode_lengths():
    agent = Reinforce(CARTPOLE_OBS, gym.spaces.Discrete(2), seed=3, **SMALL)
    for length in (3, 17, 1, 40):
        run_episode(agent, [1.0] * length)
    assert agent.num_updates == 4 and agent.tracing_count == 1


@pytest.mark.slow
def test_update_changes_the_policy_and_refreshes_the_numpy_copy():
    agent = Reinforce(CARTPOLE_OBS, gym.spaces.Discrete(2), seed=4, **SMALL)
    obs = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    np.testing.assert_array_equal(agent.action_probabilities(obs), 0.5)  # exactly uniform
    for seed in range(3):
        run_episode(agent, list(np.linspace(1, -1, 12)), seed=seed)
    probs = agent.action_probabilities(obs)
    keras_probs = tf.nn.softmax(agent.policy.model(obs)).numpy()
    assert not np.allclose(probs, 0.5)
    np.testing.assert_allclose(probs, keras_probs, atol=1e-6)
    values = agent.learner.policy().value(obs)[:, 0]
    np.testing.assert_allclose(values, agent.value.model(obs).numpy()[:, 0], atol=1e-5)


@pytest.mark.slow
def test_act_samples_from_pi_and_greedy_is_argmax():
    agent = Reinforce(CARTPOLE_OBS, gym.spaces.Discrete(3, start=1), seed=5, **SMALL)
    agent.policy.head.bias.assign([0.0, 1.0, -1.0])
    agent.after_restore()
    obs = np.zeros(4, np.float32)
    probs = agent.action_probabilities(obs)
    draws = np.array([agent.act(obs) for _ in range(20_000)])
    freq = np.bincount(draws - 1, minlength=3) / len(draws)
    np.testing.assert_allclose(freq, probs, atol=0.015)
    assert agent.act(obs, explore=False) == 2
    batch = agent.act(np.zeros((5, 4)), explore=False)
    assert batch.shape == (5,) and (batch == 2).all()


@pytest.mark.slow
def test_gaussian_policy_on_box_actions(tmp_path):
    env = gym.make("Pendulum-v1")
    agent = Reinforce.from_env(env, seed=0, log_std_init=0.0, **SMALL)
    obs, _ = env.reset(seed=0)
    action = agent.act(obs)
    assert action.shape == (1,) and env.action_space.contains(action)
    assert agent.act(obs, explore=False)[0] == pytest.approx(0.0)  # zero output layer: centre
    history = rlkit.train(agent, env, steps=400)
    assert agent.num_updates == 2 and history.updates and agent.tracing_count == 1
    assert np.isfinite(history.updates[-1][1]["loss"])
    assert not np.allclose(agent.log_std.numpy(), 0.0)
    loaded = Reinforce.load(agent.save(tmp_path / "pendulum"))
    np.testing.assert_array_equal(loaded.log_std.numpy(), agent.log_std.numpy())
    np.testing.assert_array_equal(loaded.act(obs, explore=False), agent.act(obs, explore=False))


# -- presets and config --------------------------------------------------------------------
def test_bandit_preset_is_picked_for_a_constant_observation():
    bandit = resolve_preset(ReinforceConfig(), BANDIT_OBS)
    assert bandit.preset == "bandit" and bandit.hidden_sizes == (5, 5)
    assert bandit.learning_rate == 1e-3 and not bandit.baseline
    assert not bandit.normalize_returns and bandit.optimizer == "adam"
    assert resolve_preset(bandit, BANDIT_OBS) == bandit  # idempotent
    other = resolve_preset(ReinforceConfig(), CARTPOLE_OBS)
    assert other == ReinforceConfig(preset="none")
    explicit = resolve_preset(ReinforceConfig(hidden_sizes=(7,)), BANDIT_OBS)
    assert explicit.hidden_sizes == (7,) and explicit.learning_rate == 1e-3
    off = resolve_preset(ReinforceConfig(preset="none"), BANDIT_OBS)
    assert off == ReinforceConfig(preset="none")


def test_config_rejects_bad_values():
    with pytest.raises(UsageError, match="preset"):
        Reinforce(CARTPOLE_OBS, gym.spaces.Discrete(2), preset="casino")
    with pytest.raises(UsageError, match="episodes_per_update"):
        Reinforce(CARTPOLE_OBS, gym.spaces.Discrete(2), episodes_per_update=0)


def test_config_module_does_not_import_tensorflow():
    code = (
        "import sys, rlkit.agents.reinforce.config, rlkit.learn.returns; "
        "sys.exit('tensorflow' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# -- the bandit ----------------------------------------------------------------------------
def test_bandit_env_contract():
    env = gym.make(ENV_ID)
    obs, info = env.reset(seed=0)
    assert env.observation_space == BANDIT_OBS and env.action_space == gym.spaces.Discrete(4)
    np.testing.assert_array_equal(obs, [1.0])
    for arm in range(4):
        obs, reward, terminated, truncated, info = env.step(arm)
        np.testing.assert_array_equal(obs, [1.0])
        assert terminated and not truncated and isinstance(reward, float)
        assert info["arm_mean"] == DEFAULT_ARM_MEANS[arm]
    assert env.unwrapped.best_arm == int(np.argmax(DEFAULT_ARM_MEANS))
    assert len(set(DEFAULT_ARM_MEANS)) == 4  # four arms with different means
    with pytest.raises(ValueError):
        env.step(4)


def test_bandit_reward_means_and_seeding():
    means, std = [2.0, -1.0, 0.5], 0.5
    env = MultiArmedBandit(means, std)
    env.reset(seed=123)
    rewards = np.array([[env.step(arm)[1] for _ in range(4000)] for arm in range(3)])
    np.testing.assert_allclose(rewards.mean(axis=1), means, atol=0.03)  # 4 standard errors
    np.testing.assert_allclose(rewards.std(axis=1), std, atol=0.03)
    again = gym.make(ENV_ID, arm_means=means, std=std)
    again.reset(seed=123)
    np.testing.assert_array_equal([again.step(0)[1] for _ in range(5)], rewards[0, :5])
    for bad in ({"arm_means": []}, {"std": -1.0}, {"arm_means": [0.0, np.nan]}):
        with pytest.raises(ValueError):
            MultiArmedBandit(**bad)


def test_register_envs_is_idempotent():
    register_envs()
    register_envs()
    assert ENV_ID in gym.registry


@pytest.mark.slow
def test_bandit_agent_is_the_source_network_and_starts_uniform():
    agent = Reinforce.from_env(gym.make(ENV_ID), seed=0)
    assert [layer.units for layer in agent.policy.hidden] == [5, 5]
    assert all(layer.activation.__name__ == "relu" for layer in agent.policy.hidden)
    assert agent.policy_pipeline.optimizer.learning_rate.numpy() == pytest.approx(1e-3)
    assert agent.value is None
    np.testing.assert_array_equal(agent.action_probabilities(np.ones(1)), [0.25] * 4)


@pytest.mark.slow
def test_short_bandit_run_puts_most_probability_on_the_best_arm():
    env = gym.make(ENV_ID)
    agent = Reinforce.from_env(env, seed=3)
    rlkit.train(agent, env, steps=1_000)
    probs = agent.action_probabilities(np.ones(1))
    assert int(np.argmax(probs)) == env.unwrapped.best_arm and probs.max() > 0.5, probs
    report = agent.report(env)
    assert "probability" in report and "best arm: 2 (mean 2.000)" in report


# -- learning on CartPole ------------------------------------------------------------------
@pytest.mark.slow
def test_short_cartpole_run_beats_random():
    env = gym.make("CartPole-v1")
    agent = Reinforce.from_env(env, seed=0)
    history = rlkit.train(agent, env, steps=100_000, max_episodes=200)
    mean, _ = rlkit.evaluate(agent, gym.make("CartPole-v1"), episodes=10, seed=123)
    assert len(history.episode_returns) == 200 and agent.num_updates == 200
    assert mean > 150, mean  # random play: about 22


# -- persistence ---------------------------------------------------------------------------
@pytest.mark.slow
def test_save_load_round_trip(tmp_path):
    env = gym.make("CartPole-v1")
    agent = Reinforce.from_env(env, seed=6, **SMALL)
    rlkit.train(agent, env, steps=300)
    assert agent.report(env) is None  # not a bandit
    agent.save(tmp_path / "cartpole")
    loaded = rlkit.load(tmp_path / "cartpole")
    assert isinstance(loaded, Reinforce) and loaded.config == agent.config
    assert loaded.num_steps == 300
    obs = np.random.default_rng(1).normal(size=(8, 4)).astype(np.float32)
    np.testing.assert_array_equal(loaded.action_probabilities(obs), agent.action_probabilities(obs))
    value, loaded_value = agent.learner.policy().value, loaded.learner.policy().value
    np.testing.assert_array_equal(loaded_value(obs), value(obs))
    assert set(agent.checkpoint_variables()) == {"policy", "value"}
    state = agent.state()
    assert set(state["optimizer"]) == {"policy", "value"}
    assert state["memory"] == {"episodes": agent.memory} and "explore" in state["rngs"]

    bandit = Reinforce.from_env(gym.make(ENV_ID), seed=0)
    rlkit.train(bandit, gym.make(ENV_ID), steps=20)
    bandit.save(tmp_path / "bandit")
    again = Reinforce.load(tmp_path / "bandit")
    assert again.config.preset == "bandit" and again.config == bandit.config
    np.testing.assert_array_equal(
        again.action_probabilities(np.ones(1)), bandit.action_probabilities(np.ones(1))
    )


# -- the command line ----------------------------------------------------------------------
def run_cli(capsys, *args):
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.slow
def test_cli_bandit_run_prints_the_arm_probabilities(capsys, tmp_path):
    args = ["--episodes", "30", "--eval-episodes", "2", "--quiet", "--out", str(tmp_path)]
    status, out, err = run_cli(capsys, "train", "reinforce", "--env", ENV_ID, *args)
    assert status == 0, err
    assert "arm      mean  probability" in out and "best arm: 2" in out
    assert len([line for line in out.splitlines() if line[:3].strip().isdigit()]) == 4
    (run_dir,) = tmp_path.iterdir()
    assert run_dir.name.startswith("reinforce-rlkit_MultiArmedBandit-v0-0-")
    agent = rlkit.load(run_dir / "model")
    assert agent.config.preset == "bandit" and agent.config.hidden_sizes == (5, 5)
    assert agent.num_steps == 30  # one pull per episode


@pytest.mark.slow
def test_cli_cartpole_run_writes_its_run_directory(capsys, tmp_path):
    status, out, err = run_cli(capsys, "train", "reinforce", "--env", "CartPole-v1", "--seed", "2",
                               "--episodes", "5", "--eval-episodes", "2", "--quiet",
                               "--set", "hidden_sizes=16,16", "--out", str(tmp_path))  # fmt: skip
    assert status == 0, err
    (run_dir,) = tmp_path.iterdir()
    assert run_dir.name.startswith("reinforce-CartPole-v1-2-")
    config = tomllib.loads((run_dir / "config.toml").read_text())
    assert config["run"]["agent"] == "reinforce" and config["agent"]["hidden_sizes"] == [16, 16]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["episodes"] == 5 and summary["eval_episodes"] == 2
    rows = (run_dir / "metrics.csv").read_text().splitlines()
    assert sum(row.startswith("episode,") for row in rows) == 5
    assert "eval return" in out and "arm" not in out
    assert rlkit.load(run_dir / "model").num_steps == summary["steps"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--set", "preset=casino"], "preset: must be one of auto, none, bandit"),
        (["--set", "gamma=2"], "gamma: must be in [0, 1]"),
        (["--set", "baseline=maybe"], "bad value 'maybe' for baseline"),
        (["--env", "FrozenLake-v1", "--set", "hidden_sizes=0"], "hidden_sizes"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(capsys, tmp_path, args, message):
    status, _, err = run_cli(capsys, "train", "reinforce", *args, "--out", str(tmp_path))
    assert status == 2 and message in err
    assert len(err.strip().splitlines()) == 1 and not any(tmp_path.iterdir())


def test_cli_config_lists_reinforce_keys(capsys):
    status, out, _ = run_cli(capsys, "config", "reinforce")
    assert status == 0 and 'preset = "auto"' in out and "normalize_returns = " in out
    assert "hidden_sizes = [32, 32]" in out


@pytest.mark.slow
def test_cli_resume_mid_episode_equals_uninterrupted_run(capsys, tmp_path):
    common = ["--seed", "5", "--checkpoint-every", "0", "--eval-episodes", "2", "--quiet",
              "--set", "hidden_sizes=16,16", "--set", "value_hidden_sizes=16,16"]  # fmt: skip
    runs = {}
    for name, steps in (("whole", "600"), ("split", "270")):
        status, _, err = run_cli(capsys, "train", "reinforce", "--steps", steps,
                                 "--out", str(tmp_path / name), *common)  # fmt: skip
        assert status == 0, err
        (runs[name],) = (tmp_path / name).iterdir()
    status, _, err = run_cli(capsys, "resume", str(runs["split"]), "--steps", "600", "--quiet")
    assert status == 0, err
    whole_rows = (runs["whole"] / "metrics.csv").read_text()
    assert whole_rows.count("\nepisode,") > 10
    assert (runs["split"] / "metrics.csv").read_text() == whole_rows
    with np.load(runs["whole"] / "model" / "weights.npz") as a:
        with np.load(runs["split"] / "model" / "weights.npz") as b:
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_array_equal(a[key], b[key])
