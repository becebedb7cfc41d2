"""PPO (rlkit/agents/ppo/): one update against SB3's ``PPO.train`` written out on copies of
the weights, acting, the config's one-line refusals, exact resume mid-rollout, and a short
learning run on CartPole (slow)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

import rlkit.agents
from rlkit.core.errors import UsageError
from rlkit.learn.advantages import gae
from rlkit.replay.rollout import RolloutBatch

T, N = 8, 2  # the rollout: 8 steps of 2 streams, 16 rows, minibatches of 4 -> 4 per epoch


def tiny_agent(env_id: str = "CartPole-v1", **overrides):
    settings = dict(hidden_sizes=(8,), value_hidden_sizes=(8,), n_steps=T, batch_size=4,
                    n_epochs=2, learning_rate=1e-2, ent_coef=0.01, clip_range_vf=0.3)  # fmt: skip
    return rlkit.agents.PPO.from_env(gym.make(env_id), seed=3, **{**settings, **overrides})


def random_rollout(agent, seed: int = 0) -> RolloutBatch:
    rng = np.random.default_rng(seed)
    dim = agent.obs_format.size
    if agent.discrete:
        actions = rng.integers(0, agent.action_space.n, (T, N))
    else:
        actions = rng.normal(size=(T, N, 1)).astype(np.float32)
    terminated, truncated = np.zeros((T, N), bool), np.zeros((T, N), bool)
    terminated[3, 0], truncated[5, 1] = True, True
    obs, next_obs = (rng.normal(size=(T, N, dim)).astype(np.float32) for _ in range(2))
    rewards = rng.normal(size=(T, N)).astype(np.float32)
    return RolloutBatch(obs, actions, rewards, next_obs, terminated, truncated)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_one_update_equals_sb3s_train_written_out(env_id):
    """SB3 ``PPO.train``: per minibatch, advantages normalised, ``-min(ratio A, clip(ratio) A)``
    + ``ent_coef * -entropy`` + ``vf_coef * mse(R, V_old + clip(V - V_old))``, the global
    norm clipped to 0.5, one step of PyTorch's Adam (epsilon 1e-5 on the bias-corrected
    root), written out in numpy; on copies of the weights here."""
    agent = tiny_agent(env_id)
    learner, batch = agent.learner, random_rollout(agent)
    copies = {k: [tf.Variable(v.numpy()) for v in vs] for k, vs in learner.variables().items()}
    policy, value = learner.policy_network.model, learner.value_network.model
    discrete = agent.discrete
    n_policy = len(policy.trainable_variables)

    def log_prob_entropy(weights, obs, actions):
        out = policy.stateless_call(weights[:n_policy], [], obs)[0]
        if discrete:
            logp = tf.nn.log_softmax(out)
            taken = tf.gather(logp, actions, axis=-1, batch_dims=1)
            return taken, -tf.reduce_sum(tf.exp(logp) * logp, axis=-1)
        log_std = weights[n_policy]
        z = (actions - out) / tf.exp(log_std)
        logp = tf.reduce_sum(-0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi), axis=-1)
        entropy = tf.reduce_sum(log_std + 0.5 * (math.log(2 * math.pi) + 1.0))
        return logp, tf.fill(tf.shape(logp), entropy)

    def v(weights, obs):
        return value.stateless_call(weights, [], obs)[0][:, 0]

    m = T * N
    obs = tf.constant(batch.obs.reshape(m, -1))
    next_obs = tf.constant(batch.next_obs.reshape(m, -1))
    acts = batch.actions.reshape(m) if discrete else batch.actions.reshape(m, -1)
    actions = tf.constant(acts.astype(np.int32 if discrete else np.float32))
    old_values = v(copies["value"], obs).numpy()
    old_logp = log_prob_entropy(copies["policy"], obs, actions)[0].numpy()
    next_values = v(copies["value"], next_obs).numpy()
    adv, ret = gae(batch.rewards, old_values.reshape(T, N), next_values.reshape(T, N),
                   batch.terminated, batch.truncated, 0.99, 0.95)  # fmt: skip
    adv, ret = adv.reshape(-1), ret.reshape(-1)
    order = learner.minibatch_order(np.random.default_rng(11), m)
    assert order.shape == (2 * 4, 4)
    assert sorted(order[:4].reshape(-1)) == list(range(m))  # an epoch: every row once
    variables = copies["policy"] + copies["value"]
    moments = [[np.zeros(v.shape), np.zeros(v.shape)] for v in variables]
    for t, idx in enumerate(order, start=1):
        a = adv[idx]
        a = (a - a.mean()) / (a.std(ddof=1) + 1e-8)
        with tf.GradientTape() as tape:
            logp, entropy = log_prob_entropy(copies["policy"], tf.gather(obs, idx),
                                             tf.gather(actions, idx))  # fmt: skip
            ratio = tf.exp(logp - old_logp[idx])
            pg = -tf.reduce_mean(tf.minimum(ratio * a, tf.clip_by_value(ratio, 0.8, 1.2) * a))
            pred = v(copies["value"], tf.gather(obs, idx))
            pred = old_values[idx] + tf.clip_by_value(pred - old_values[idx], -0.3, 0.3)
            vloss = tf.reduce_mean((ret[idx] - pred) ** 2)
            loss = pg + 0.01 * -tf.reduce_mean(entropy) + 0.5 * vloss
        grads, _ = tf.clip_by_global_norm(tape.gradient(loss, variables), 0.5)
        for variable, g, (mean, square) in zip(variables, grads, moments, strict=True):
            # torch.optim.Adam(lr 1e-2, eps 1e-5): eps on the bias-corrected root
            g = g.numpy().astype(np.float64)
            mean += 0.1 * (g - mean)
            square[...] = 0.999 * square + 0.001 * g**2
            root = np.sqrt(square) / math.sqrt(1 - 0.999**t)
            step = 1e-2 / (1 - 0.9**t) * mean / (root + 1e-5)
            variable.assign(variable.numpy() - step.astype(np.float32))
    # --- rlkit's update, on the agent ---
    metrics, _ = learner.learn(batch, step=0, rng=np.random.default_rng(11))
    assert metrics["epochs"] == 2.0
    assert metrics["loss"] == pytest.approx(metrics["loss"])  # (finite)
    for group, live in learner.variables().items():
        for mine, theirs in zip(live, copies[group], strict=True):
            np.testing.assert_allclose(np.asarray(mine), theirs.numpy(), rtol=2e-5, atol=2e-6,
                                       err_msg=group)  # fmt: skip
    # acting follows the new weights: its numpy copy gives the graph's logits or mean
    x = batch.obs[0]
    np.testing.assert_allclose(learner.policy().forward(x), policy(x).numpy(), rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    assert learner.tracing_count == 1


@pytest.mark.slow
def test_without_bootstrap_truncated_a_truncation_is_a_termination():
    agent = tiny_agent()
    batch = random_rollout(agent)  # stream 1 truncated at t=5
    (values, next_values, _), r = agent.learner.evaluate(batch), batch.rewards
    right = agent.learner.advantages(batch)[2]
    wrong = tiny_agent(bootstrap_truncated=False).learner.advantages(batch)[2]
    boot = r[5, 1] + 0.99 * next_values[5, 1] - values[5, 1]
    assert right[5, 1] == pytest.approx(boot, rel=1e-5)
    assert wrong[5, 1] == pytest.approx(r[5, 1] - values[5, 1], rel=1e-5)
    differs = right != wrong  # there and before it in stream 1 only
    assert not differs[6:, 1].any() and not differs[:, 0].any()


@pytest.mark.slow
def test_target_kl_stops_the_epochs_before_the_minibatch_that_crosses_it():
    agent = tiny_agent(target_kl=1e-9, learning_rate=0.1)
    before = [v.numpy().copy() for v in agent.learner.variables()["policy"]]
    metrics, _ = agent.learner.learn(random_rollout(agent), rng=np.random.default_rng(0))
    # the first minibatch's ratio is exactly 1 (KL 0): applied; the second crosses 1.5e-9
    assert 0 < metrics["epochs"] < 2
    after = agent.learner.variables()["policy"]
    assert any(not np.array_equal(a, b.numpy()) for a, b in zip(before, after, strict=True))


@pytest.mark.slow
def test_box_actions_are_stored_unclipped_and_sent_clipped():
    agent = tiny_agent("Pendulum-v1", log_std_init=2.0)  # std e^2: most draws leave [-2, 2]
    obs = np.zeros((N, 3), np.float32)
    agent.observe_first(obs)
    sent = agent.act(obs)
    assert np.all(np.abs(sent) <= 2.0)
    agent.observe_next(sent, np.zeros(N), obs, np.zeros(N, bool), np.zeros(N, bool))
    stored = agent.rollout.actions[0]
    assert np.abs(stored).max() > 2.0
    np.testing.assert_array_equal(np.clip(stored, -2, 2), sent)
    greedy = agent.act(obs[0], explore=False)
    np.testing.assert_allclose(greedy, agent.learner.policy().forward(obs[0]), rtol=1e-6)


@pytest.mark.slow
def test_discrete_acting_samples_and_acts_greedily():
    agent = tiny_agent()
    obs = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    greedy = agent.act(obs, explore=False)
    np.testing.assert_array_equal(greedy, np.argmax(agent.learner.policy().forward(obs), -1))
    assert set(np.unique(agent.act(obs))) == {0, 1}  # near-uniform at the start


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"gae_lambda": 1.5}, "gae_lambda"),
        ({"gamma": -0.1}, "gamma"),
        ({"clip_range": 0.0}, "clip_range"),
        ({"n_epochs": 0}, "n_epochs"),
        ({"lr_end_fraction": 0.0}, "lr_end_fraction needs lr_anneal_steps"),
    ],
)
def test_bad_settings_are_refused_in_one_line(overrides, message):
    with pytest.raises(UsageError, match=message) as caught:
        tiny_agent(**overrides)
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_a_rollout_not_cut_into_whole_minibatches_is_refused():
    from rlkit.run.plan import plan

    with pytest.raises(UsageError, match=r"n_steps x num_envs \(10 x 3 = 30\) is not a multiple"):
        plan("ppo", "CartPole-v1", num_envs=3, overrides={"n_steps": 10, "batch_size": 4},
             preset="none")  # fmt: skip
    agent = tiny_agent(n_steps=5, batch_size=4)
    with pytest.raises(UsageError, match=r"\(5 x 3 = 15\)"):
        agent.observe_first(np.zeros((3, 4), np.float32))


def test_an_action_space_it_cannot_parameterise_names_the_alternatives():
    with pytest.raises(UsageError, match=r"MultiBinary\(n\) is MultiDiscrete\(\[2\] \* n\)"):
        rlkit.agents.PPO(gym.spaces.Box(-1, 1, (3,)), gym.spaces.MultiBinary(3))


def drive(agent, steps: int, seed: int) -> list[np.ndarray]:
    """``steps`` steps of ``N`` streams on made-up observations and rewards (an episode ends
    now and then): the protocol's calls in the Python loop's order. Returns the actions."""
    rng = np.random.default_rng(seed)
    taken = []
    for _ in range(steps):
        obs = agent.rollout.current.copy()
        action = agent.act(obs)
        taken.append(np.copy(action))
        nxt = rng.normal(size=(N, 4)).astype(np.float32)
        ended = rng.random(N) < 0.2
        agent.observe_next(action, rng.normal(size=N), nxt, ended & (rng.random(N) < 0.5),
                           ended)  # fmt: skip
        if ended.any():
            restart = rng.normal(size=(int(ended.sum()), 4)).astype(np.float32)
            agent.observe_first(restart, streams=np.flatnonzero(ended))
        agent.update()
    return taken


NORMALIZED = {"norm_obs": True, "norm_reward": True}


@pytest.mark.slow
@pytest.mark.parametrize("settings", [{}, NORMALIZED], ids=["plain", "normalized"])
def test_exact_resume_mid_rollout(tmp_path, settings):
    """A checkpoint's state taken half-way through a rollout, loaded into a fresh agent:
    both then act and update alike (the rollout, the generators, the optimizer, and with
    norm_obs and norm_reward their running statistics)."""
    from rlkit.run.checkpoint import flatten_state, unflatten_state

    agent = tiny_agent(**settings)
    agent.observe_first(np.zeros((N, 4), np.float32))
    drive(agent, T + T // 2, seed=1)  # one update, then half a rollout
    assert agent.num_updates == 1 and len(agent.rollout) == N * (T // 2)
    arrays, scalars = flatten_state(agent.state())
    arrays = {k: v.copy() for k, v in arrays.items()}
    agent.save(tmp_path / "model")
    resumed = rlkit.agents.PPO.load(tmp_path / "model")
    resumed.load_state(unflatten_state(arrays, scalars))
    ours, theirs = drive(agent, T, seed=2), drive(resumed, T, seed=2)
    assert agent.num_updates == resumed.num_updates == 2
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    for group, variables in agent.checkpoint_variables().items():
        for mine, theirs_v in zip(variables, resumed.checkpoint_variables()[group], strict=True):
            np.testing.assert_array_equal(mine.numpy(), theirs_v.numpy(), err_msg=group)


@pytest.mark.slow
def test_observations_are_normalised_with_the_statistics_frozen_at_the_last_update(tmp_path):
    agent = tiny_agent(**NORMALIZED)
    agent.observe_first(np.zeros((N, 4), np.float32))
    drive(agent, T, seed=4)  # one rollout: the statistics in use move at its update
    norm = agent.obs_norm
    np.testing.assert_array_equal(norm.mean.numpy(), norm.running.mean)
    drive(agent, 3, seed=5)  # the running ones move on; those in use wait for the next update
    assert not np.array_equal(norm.mean.numpy(), norm.running.mean)
    obs = np.random.default_rng(0).normal(3, 2, size=(5, 4)).astype(np.float32)
    x = np.clip((obs - norm.mean.numpy()) / np.sqrt(norm.var.numpy() + 1e-8), -10, 10)
    np.testing.assert_array_equal(agent.act(obs, explore=False),
                                  np.argmax(agent.learner.policy().forward(x), -1))  # fmt: skip
    assert np.abs(agent.rollout.rewards[:3]).max() > 0  # (rewards stored scaled)
    agent.save(tmp_path / "model")  # a saved model acts with the statistics in use
    loaded = rlkit.agents.PPO.load(tmp_path / "model")
    np.testing.assert_array_equal(loaded.act(obs, explore=False), agent.act(obs, explore=False))


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_the_export_acts_as_the_agent_with_normalised_observations(tmp_path, env_id):
    agent = tiny_agent(env_id, **NORMALIZED)
    dim = agent.obs_format.size
    agent.observe_first(np.zeros((N, dim), np.float32))
    rng = np.random.default_rng(0)
    agent.obs_norm.observe(rng.normal(2, 3, size=(64, dim)))
    agent.obs_norm.freeze()
    agent.export(tmp_path / "export", env=env_id)  # checks its actions against the agent's


@pytest.mark.slow
def test_learns_cartpole_in_20k_steps():
    """rl-zoo's CartPole settings at 20,000 steps: the greedy policy well above random (~22)."""
    from rlkit.envs.make import make_vector_env
    from rlkit.run.evaluation import evaluate

    env = make_vector_env("CartPole-v1", 8)
    agent = rlkit.agents.PPO.from_env(env, seed=0, n_steps=32, batch_size=256, gae_lambda=0.8,
                                      gamma=0.98, n_epochs=20, learning_rate=1e-3)  # fmt: skip
    rlkit.train(agent, env, steps=20_000)
    mean, _ = evaluate(agent, "CartPole-v1", episodes=10, seed=100)
    assert mean >= 150, mean


@pytest.mark.slow
@pytest.mark.parametrize("settings", [[], ["--set", "norm_obs=true", "--set", "norm_reward=true"]],
                         ids=["plain", "normalized"])  # fmt: skip
def test_a_cli_run_stopped_mid_rollout_resumes_to_the_uninterrupted_metrics(tmp_path, settings):
    """2 envs x 50 steps a rollout: the checkpoint at step 250 is 25 steps into the third."""
    from rlkit.cli.main import main
    from rlkit.run.folder import RunFolder

    argv = ["ppo", "--env", "CartPole-v1", "--preset", "none", "--num-envs", "2", "--set",
            "n_steps=50", "--set", "batch_size=20", "--set", "hidden_sizes=[16]", "--set",
            "value_hidden_sizes=[16]", "--eval-every", "250", "--eval-episodes", "1",
            "--checkpoint-every", "250", "--quiet", *settings]  # fmt: skip
    runs = {}
    for name, steps in (("whole", "500"), ("stopped", "250")):
        assert main(["train", *argv, "--steps", steps, "--out", str(tmp_path / name)]) == 0
        (runs[name],) = (RunFolder(p) for p in (tmp_path / name).iterdir())
    assert main(["resume", str(runs["stopped"].path), "--steps", "500", "--quiet"]) == 0
    whole, resumed = (runs[k].metrics_path.read_text() for k in ("whole", "stopped"))
    assert resumed == whole
