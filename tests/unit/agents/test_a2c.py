"""A2C (rlkit/agents/ppo/a2c.py: PPO's learner, one epoch of one minibatch): the ratio-1
gradient fact that makes it A2C, two updates against SB3's ``A2C.train`` written out on
copies of the weights, PyTorch's RMSprop step by hand, the config's one-line refusals, exact
resume mid-rollout, and a short learning run on CartPole (slow)."""

from __future__ import annotations

import math

import gymnasium as gym
import keras
import numpy as np
import pytest
import tensorflow as tf

import rlkit.agents
from rlkit.core.errors import UsageError
from rlkit.learn.advantages import clipped_surrogate, gae
from rlkit.learn.optimizers import torch_rmsprop
from rlkit.replay.rollout import RolloutBatch

T, N = 8, 2  # the rollout: 8 steps of 2 streams, 16 rows, all in one minibatch


def tiny_agent(env_id: str = "CartPole-v1", **overrides):
    settings = dict(hidden_sizes=(8,), value_hidden_sizes=(8,), n_steps=T, learning_rate=1e-2,
                    ent_coef=0.01)  # fmt: skip
    return rlkit.agents.A2C.from_env(gym.make(env_id), seed=3, **{**settings, **overrides})


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


def test_the_clipped_surrogate_at_ratio_one_has_the_policy_gradient():
    """PPO's loss ``-min(r A, clip(r) A)`` with ``log pi_old = log pi`` (r = 1): its gradient
    is A2C's, that of ``-(A log pi).mean()``; away from r = 1 it is r times that."""
    rng = np.random.default_rng(0)
    obs = tf.constant(rng.normal(size=(32, 4)), tf.float32)
    actions = tf.constant(rng.integers(0, 3, 32), tf.int32)
    adv = tf.constant(rng.normal(size=32), tf.float32)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"),
                              keras.layers.Dense(3)])  # fmt: skip

    def gradients(loss_of):
        with tf.GradientTape() as tape:
            logp = tf.nn.log_softmax(model(obs))
            taken = tf.gather(logp, actions, axis=-1, batch_dims=1)
            loss = loss_of(taken)
        return [g.numpy() for g in tape.gradient(loss, model.trainable_variables)]

    a2c = gradients(lambda lp: -tf.reduce_mean(adv * lp))
    ppo = gradients(
        lambda lp: tf.reduce_mean(clipped_surrogate(lp, tf.stop_gradient(lp), adv, 0.2))
    )
    for mine, theirs in zip(ppo, a2c, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-9)
    # a ratio of e^0.1 (inside the clip): the same direction, 1.105 times longer
    shifted = gradients(lambda lp: tf.reduce_mean(
        clipped_surrogate(lp, tf.stop_gradient(lp) - 0.1, adv, 0.2)))  # fmt: skip
    assert not np.allclose(shifted[0], a2c[0], rtol=1e-3)
    np.testing.assert_allclose(shifted[0], math.exp(0.1) * a2c[0], rtol=1e-5, atol=1e-7)


def test_torch_rmsprop_steps_as_pytorch_computes_them():
    """``v = .99 v + .01 g^2``, ``w -= lr g / (sqrt(v) + 1e-5)`` from ``v = 0``; Keras' RMSprop
    (epsilon inside the root) does not."""
    w = tf.Variable([1.0, -2.0, 0.5])
    opt = torch_rmsprop(0.1)
    grads = [np.array([0.5, -1.0, 1e-4]), np.array([0.25, 2.0, -1e-4])]
    v, expected = np.zeros(3), np.array([1.0, -2.0, 0.5])
    for g in grads:
        opt.apply_gradients([(tf.constant(g, tf.float32), w)])
        v = 0.99 * v + 0.01 * g**2
        expected = expected - 0.1 * g / (np.sqrt(v) + 1e-5)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5)
    # the first step by hand: sqrt(.01 g^2) = .1 |g|, so lr g / (.1 |g| + 1e-5)
    first = tf.Variable([1.0, -2.0, 0.5])
    torch_rmsprop(0.1).apply_gradients([(tf.constant(grads[0], tf.float32), first)])
    np.testing.assert_allclose(first.numpy(), [1 - 0.05 / 0.05001, -2 + 0.1 / 0.10001,
                                               0.5 - 1e-5 / 2e-5], atol=1e-6)  # fmt: skip
    keras_w = tf.Variable([1.0, -2.0, 0.5])
    keras.optimizers.RMSprop(0.1, rho=0.99, epsilon=1e-5).apply_gradients(
        [(tf.constant(grads[0], tf.float32), keras_w)]
    )
    step_keras, step_torch = 0.5 - keras_w.numpy()[2], 0.5 - first.numpy()[2]
    assert step_torch / step_keras == pytest.approx(math.sqrt(1e-10 + 1e-5) / 2e-5, rel=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("normalize_advantage", [False, True])
@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_two_updates_equal_sb3s_train_written_out(env_id, normalize_advantage):
    """SB3 ``A2C.train``, twice: on the whole rollout, ``-(A log pi).mean()`` +
    ``ent_coef * -entropy.mean()`` + ``vf_coef * F.mse_loss(R, V)`` (no half), torch's
    ``clip_grad_norm_(0.5)``, one PyTorch RMSprop step (alpha 0.99, eps 1e-5 outside the
    root); GAE with lambda 1. On copies of the weights here."""
    agent = tiny_agent(env_id, normalize_advantage=normalize_advantage)
    learner = agent.learner
    copies = {k: [tf.Variable(v.numpy()) for v in vs] for k, vs in learner.variables().items()}
    policy, value = learner.policy_network.model, learner.value_network.model
    discrete, n_policy = agent.discrete, len(policy.trainable_variables)

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

    variables = copies["policy"] + copies["value"]
    square_avg = [np.zeros(w.shape) for w in variables]
    m = T * N
    for update in range(2):
        batch = random_rollout(agent, seed=update)
        obs = tf.constant(batch.obs.reshape(m, -1))
        acts = batch.actions.reshape(m) if discrete else batch.actions.reshape(m, -1)
        actions = tf.constant(acts.astype(np.int32 if discrete else np.float32))
        values = v(copies["value"], obs).numpy().reshape(T, N)
        next_values = v(copies["value"], tf.constant(batch.next_obs.reshape(m, -1))).numpy()
        adv, ret = gae(batch.rewards, values, next_values.reshape(T, N), batch.terminated,
                       batch.truncated, 0.99, 1.0)  # fmt: skip
        (idx,) = learner.minibatch_order(np.random.default_rng(update), m)  # SB3 permutes too
        assert sorted(idx) == list(range(m))
        a, r = adv.reshape(-1)[idx], ret.reshape(-1)[idx]
        if normalize_advantage:
            a = (a - a.mean()) / (a.std(ddof=1) + 1e-8)
        with tf.GradientTape() as tape:
            logp, entropy = log_prob_entropy(copies["policy"], tf.gather(obs, idx),
                                             tf.gather(actions, idx))  # fmt: skip
            policy_loss = -tf.reduce_mean(a * logp)
            value_loss = tf.reduce_mean((r - v(copies["value"], tf.gather(obs, idx))) ** 2)
            loss = policy_loss + 0.01 * -tf.reduce_mean(entropy) + 0.5 * value_loss
        grads = [g.numpy().astype(np.float64) for g in tape.gradient(loss, variables)]
        norm = math.sqrt(sum(float(np.sum(g**2)) for g in grads))
        coef = min(0.5 / (norm + 1e-6), 1.0)  # torch's clip_grad_norm_
        for i, (w, g) in enumerate(zip(variables, grads, strict=True)):
            g = g * coef
            square_avg[i] = 0.99 * square_avg[i] + 0.01 * g**2
            w.assign(w.numpy() - 1e-2 * g / (np.sqrt(square_avg[i]) + 1e-5))
        # --- rlkit's update, on the agent ---
        metrics, _ = learner.learn(batch, step=0, rng=np.random.default_rng(update))
        assert metrics["epochs"] == 1.0
        assert metrics["approx_kl"] == pytest.approx(0.0, abs=1e-7)  # (the ratio is 1)
        assert metrics["clip_fraction"] == 0.0
        assert metrics["value_loss"] == pytest.approx(float(value_loss), rel=1e-4)
        for group, live in learner.variables().items():
            for mine, theirs in zip(live, copies[group], strict=True):
                where = f"{group}, update {update}"
                np.testing.assert_allclose(np.asarray(mine), theirs.numpy(), rtol=2e-5,
                                           atol=2e-6, err_msg=where)  # fmt: skip
    assert learner.tracing_count == 1


@pytest.mark.slow
def test_a2c_is_ppos_learner_with_one_epoch_of_the_whole_rollout():
    agent = tiny_agent()
    cfg = agent.learner.config
    assert (cfg.n_epochs, cfg.batch_size, cfg.optimizer) == (1, 0, "rmsprop")
    assert (cfg.clip_range_vf, cfg.target_kl, cfg.clip_range_end_fraction) == (0, 0, -1)
    order = agent.learner.minibatch_order(np.random.default_rng(0), 40)
    assert order.shape == (1, 40) and sorted(order[0]) == list(range(40))
    defaults = rlkit.agents.A2C.from_env(gym.make("CartPole-v1")).config
    assert (defaults.learning_rate, defaults.n_steps, defaults.gae_lambda) == (7e-4, 5, 1.0)
    assert (defaults.rms_prop_alpha, defaults.rms_prop_eps) == (0.99, 1e-5)
    assert not defaults.normalize_advantage
    assert set(agent.state()["optimizer"]) == {"rmsprop"}
    # any number of streams makes whole minibatches
    agent.observe_first(np.zeros((3, 4), np.float32))


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"gae_lambda": 1.5}, "gae_lambda"),
        ({"n_steps": 0}, "n_steps"),
        ({"optimizer": "sgd"}, "optimizer"),
        ({"rms_prop_eps": 0.0}, "rms_prop_eps"),
        ({"lr_end_fraction": 0.0}, "lr_end_fraction needs lr_anneal_steps"),
        ({"n_epochs": 4}, "unknown config key 'n_epochs'"),
        ({"clip_range": 0.1}, "unknown config key 'clip_range'"),
    ],
)
def test_bad_settings_are_refused_in_one_line(overrides, message):
    with pytest.raises(UsageError, match=message) as caught:
        tiny_agent(**overrides)
    assert "\n" not in str(caught.value)


def test_an_action_space_it_cannot_parameterise_is_refused_naming_a2c():
    with pytest.raises(UsageError, match="^a2c takes Discrete, MultiDiscrete or Box actions"):
        rlkit.agents.A2C(gym.spaces.Box(-1, 1, (3,)), gym.spaces.MultiBinary(3))


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_the_compiled_programs_update_is_the_python_learners(env_id, monkeypatch):
    """The compiled loop runs A2C with PPO's program (rlkit/run/compiled/ppo.py): on one
    rollout and one row order its update (values, GAE with lambda 1, the whole rollout as
    one minibatch) leaves the weights and RMSprop's mean squares where ``learn`` does."""
    from rlkit.envs.tf import make_tf_env
    from rlkit.run.compiled.ppo import PPOProgram

    settings = {"lr_end_fraction": 0.0, "lr_anneal_steps": 1000}
    python, compiled = tiny_agent(env_id, **settings), tiny_agent(env_id, **settings)
    batch = random_rollout(python)
    order = np.random.default_rng(9).permutation(T * N)[None].astype(np.int32)
    monkeypatch.setattr(python.learner, "minibatch_order", lambda rng, size: order)
    python.learner.learn(batch, step=300)
    tf_env = make_tf_env("rlkit/CartPole-v1" if python.discrete else "rlkit/Pendulum-v1")
    program = PPOProgram(compiled, tf_env, N, seed=0, chunk=T)
    assert compiled.learner.graph_minibatch_order(tf.constant([1, 2]), T * N).shape == (1, T * N)
    monkeypatch.setattr(compiled.learner, "graph_minibatch_order",
                        lambda seed, size: tf.constant(order))  # fmt: skip
    for name, value in zip(batch._fields, batch, strict=True):
        variable = getattr(program.rollout, name)
        variable.assign(np.asarray(value).reshape(variable.shape).astype(variable.dtype.name))
    program.rollout.filled.assign(T)
    means = tf.function(program._update)(tf.constant(300, tf.int64), tf.constant([0, 0]))
    assert np.all(np.isfinite(means.numpy())) and int(program.rollout.filled) == 0
    for group, variables in python.learner.variables().items():
        for a, b in zip(variables, compiled.learner.variables()[group], strict=True):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6, err_msg=group)
    mean_squares = (python.learner.pipeline.optimizer.variables,
                    compiled.learner.pipeline.optimizer.variables)  # fmt: skip
    for a, b in zip(*mean_squares, strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-9)


def drive(agent, steps: int, seed: int) -> list[np.ndarray]:
    """``steps`` steps of ``N`` streams on made-up observations and rewards (an episode ends
    now and then), in the Python loop's order. Returns the actions."""
    rng = np.random.default_rng(seed)
    taken = []
    for _ in range(steps):
        action = agent.act(agent.rollout.current.copy())
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


@pytest.mark.slow
def test_exact_resume_mid_rollout(tmp_path):
    """A checkpoint's state taken half-way through a rollout, loaded into a fresh agent: both
    then act and update alike (the rollout, the generators, RMSprop's mean squares)."""
    from rlkit.run.checkpoint import flatten_state, unflatten_state

    agent = tiny_agent()
    agent.observe_first(np.zeros((N, 4), np.float32))
    drive(agent, T + T // 2, seed=1)  # one update, then half a rollout
    assert agent.num_updates == 1 and len(agent.rollout) == N * (T // 2)
    arrays, scalars = flatten_state(agent.state())
    arrays = {k: v.copy() for k, v in arrays.items()}
    assert any(k.startswith("optimizer/rmsprop/") and v.any() for k, v in arrays.items())
    agent.save(tmp_path / "model")
    resumed = rlkit.agents.A2C.load(tmp_path / "model")
    resumed.load_state(unflatten_state(arrays, scalars))
    ours, theirs = drive(agent, T, seed=2), drive(resumed, T, seed=2)
    assert agent.num_updates == resumed.num_updates == 2
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    for group, variables in agent.checkpoint_variables().items():
        for mine, theirs_v in zip(variables, resumed.checkpoint_variables()[group], strict=True):
            np.testing.assert_array_equal(mine.numpy(), theirs_v.numpy(), err_msg=group)


@pytest.mark.slow
def test_learns_cartpole_in_30k_steps():
    """rl-zoo's CartPole settings (8 envs, SB3's A2C defaults) at 30,000 steps: the greedy
    policy well above random (~22)."""
    from rlkit.envs.make import make_vector_env
    from rlkit.run.evaluation import evaluate

    env = make_vector_env("CartPole-v1", 8)
    agent = rlkit.agents.A2C.from_env(env, seed=0)
    rlkit.train(agent, env, steps=30_000)
    mean, _ = evaluate(agent, "CartPole-v1", episodes=10, seed=100)
    assert mean >= 150, mean


@pytest.mark.slow
def test_a_cli_run_stopped_mid_rollout_resumes_to_the_uninterrupted_metrics(tmp_path):
    """2 envs x 15 steps a rollout: the checkpoint at step 250 is 10 steps into the ninth."""
    from rlkit.cli.main import main
    from rlkit.run.folder import RunFolder

    argv = ["a2c", "--env", "CartPole-v1", "--preset", "none", "--num-envs", "2", "--set",
            "n_steps=15", "--set", "hidden_sizes=[16]", "--set", "value_hidden_sizes=[16]",
            "--eval-every", "250", "--eval-episodes", "1", "--checkpoint-every", "250",
            "--quiet"]  # fmt: skip
    runs = {}
    for name, steps in (("whole", "500"), ("stopped", "250")):
        assert main(["train", *argv, "--steps", steps, "--out", str(tmp_path / name)]) == 0
        (runs[name],) = (RunFolder(p) for p in (tmp_path / name).iterdir())
    assert main(["resume", str(runs["stopped"].path), "--steps", "500", "--quiet"]) == 0
    whole, resumed = (runs[k].metrics_path.read_text() for k in ("whole", "stopped"))
    assert resumed == whole


@pytest.mark.slow
def test_the_compiled_loop_runs_a2c_and_resumes_exactly(tmp_path):
    """A2C in the compiled loop on rlkit/CartPole-v1: one update per rollout, and a run stopped
    at a checkpoint mid-rollout and resumed ends where the uninterrupted one does, bit for
    bit."""
    from rlkit.run import experiment
    from rlkit.run.compiled.trainer import CompiledTrainer

    settings = {"hidden_sizes": [16], "value_hidden_sizes": [16], "n_steps": 12}

    def plan(checkpoint_every):
        return experiment.plan("a2c", "rlkit/CartPole-v1", steps=480, seed=3, num_envs=2,
                               eval_every=0, checkpoint_every=checkpoint_every,
                               overrides=settings)  # fmt: skip

    straight = experiment.start(plan(0), tmp_path / "a", tensorboard=False)
    assert isinstance(straight, CompiledTrainer)
    straight.run(480)
    straight.close()
    assert straight.agent.num_updates == 480 // (12 * 2)
    stopped = experiment.start(plan(100), tmp_path / "b", tensorboard=False)
    stopped.run(200)  # the checkpoint at 200: 8 steps into the ninth rollout
    stopped.close()
    resumed, _ = experiment.resume(stopped.run_dir)
    resumed.run(480)
    resumed.close()
    for name, value in straight.program.state_dict().items():
        np.testing.assert_array_equal(resumed.program.state_dict()[name], value, err_msg=name)
    for group, variables in straight.agent.checkpoint_variables().items():
        for a, b in zip(variables, resumed.agent.checkpoint_variables()[group], strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=group)
