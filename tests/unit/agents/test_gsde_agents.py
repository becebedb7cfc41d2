"""gSDE in SAC, PPO and A2C (use_sde): the learners' log-probabilities against the formula
written out in numpy, the acting rules' held noise (redrawn when a collection block or a
rollout starts and every sde_sample_freq steps), where the gradient goes, exact resume of
the held matrices, and the settings refused in one line. Building a PPO or SAC agent traces
its graphs (seconds on two loaded cores): those tests are slow ones."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

import rlkit.agents
from rlkit.agents.ppo.sde import sde_log_prob_entropy
from rlkit.core.errors import UsageError

HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
OBS = np.array([[0.3, -0.4, 0.9], [1.0, 0.2, -0.5]], np.float32)


def sac(**overrides):
    settings = dict(actor_hidden_sizes=(8,), critic_hidden_sizes=(8,), batch_size=4,
                    learning_starts=0, jit_compile=False, use_sde=True,
                    log_std_init=-1.0)  # fmt: skip
    return rlkit.agents.SAC(gym.spaces.Box(-1, 1, (3,)), gym.spaces.Box(-2, 2, (2,)), seed=3,
                            **{**settings, **overrides})  # fmt: skip


def ppo(cls=rlkit.agents.PPO, **overrides):
    settings = dict(hidden_sizes=(8,), value_hidden_sizes=(8,), n_steps=4, use_sde=True,
                    log_std_init=-0.5)  # fmt: skip
    if cls is rlkit.agents.PPO:
        settings.update(batch_size=4, n_epochs=1)
    return cls(gym.spaces.Box(-1, 1, (3,)), gym.spaces.Box(-1, 1, (2,)), seed=3,
               **{**settings, **overrides})  # fmt: skip


def gaussian_log_prob(u, mean, variance):
    var = variance + 1e-6
    return np.sum(-0.5 * (u - mean) ** 2 / var - 0.5 * np.log(var) - HALF_LOG_2PI, axis=-1)


@pytest.mark.slow
def test_sac_sample_and_log_prob_are_the_formula_in_numpy():
    """``u = clip(mean) + z . (sigma * normal)``, ``a = tanh(u)`` rescaled, ``log pi = log N(u;
    mean, (z^2) @ (sigma^2)) - sum log(1 - tanh(u)^2)``, from the numpy mirror acting reads."""
    agent = sac(learning_starts=10)
    normal = np.random.default_rng(1).standard_normal((8, 2)).astype(np.float32)
    action, log_prob = agent.learner.sde_sample(tf.constant(OBS), tf.constant(normal))
    mirror = agent.learner.policy()
    latent, mean = mirror(OBS.astype(np.float64))
    u = mean + latent @ (mirror.std * normal)
    expected = gaussian_log_prob(u, mean, (latent**2) @ (mirror.std**2))
    expected -= np.sum(np.log(1.0 - np.tanh(u) ** 2), axis=-1)
    np.testing.assert_allclose(log_prob.numpy(), expected, rtol=1e-4)
    np.testing.assert_allclose(action.numpy(), 2.0 * np.tanh(u), rtol=1e-5, atol=1e-6)
    greedy = agent.act(OBS, explore=False)
    np.testing.assert_allclose(greedy, 2.0 * np.tanh(mean), rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_sac_noise_is_held_for_a_block_of_train_freq_steps_and_every_sample_freq():
    agent = sac(train_freq=4, learning_starts=1000, use_sde_at_warmup=True)
    acts = [agent.acting.act(OBS, True, step) for step in range(9)]
    for step in (1, 2, 3, 5, 6, 7):
        np.testing.assert_array_equal(acts[step], acts[step - 1])
    for step in (4, 8):  # a new block of train_freq steps: new matrices (SB3's collect_rollouts)
        assert not np.allclose(acts[step], acts[step - 1])
    assert not np.allclose(acts[0][0], acts[0][1])  # a matrix per stream
    every = sac(train_freq=4, learning_starts=1000, use_sde_at_warmup=True, sde_sample_freq=2)
    acts = [every.acting.act(OBS, True, step) for step in range(5)]
    np.testing.assert_array_equal(acts[1], acts[0])
    np.testing.assert_array_equal(acts[3], acts[2])
    assert not np.allclose(acts[2], acts[1]) and not np.allclose(acts[4], acts[3])
    warm = sac(train_freq=4, learning_starts=1000)  # without use_sde_at_warmup: uniform
    assert not np.allclose(warm.acting.act(OBS, True, 0), warm.acting.act(OBS, True, 1))


@pytest.mark.slow
def test_sac_updates_move_log_std_and_pass_it_to_acting():
    from rlkit.replay.memory import Batch

    agent = sac()
    rng = np.random.default_rng(0)
    batch = Batch(obs=rng.normal(size=(1, 4, 3)).astype(np.float32),
                  actions=rng.uniform(-2, 2, (1, 4, 2)).astype(np.float32),
                  rewards=rng.normal(size=(1, 4)).astype(np.float32),
                  next_obs=rng.normal(size=(1, 4, 3)).astype(np.float32),
                  terminated=np.zeros((1, 4), bool), truncated=np.zeros((1, 4), bool))  # fmt: skip
    before = agent.learner.actor.log_std.numpy().copy()
    agent.learn(batch)
    after = agent.learner.actor.log_std.numpy()
    assert np.all(after != before)
    np.testing.assert_allclose(agent.learner.policy().std, np.exp(after), rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("cls", [rlkit.agents.PPO, rlkit.agents.A2C])
def test_ppo_log_prob_and_entropy_are_the_formula_in_numpy(cls):
    agent = ppo(cls)
    actions = np.random.default_rng(2).normal(size=(2, 2)).astype(np.float32)
    log_prob, entropy, _ = agent.learner._terms(tf.constant(OBS), tf.constant(actions))
    latent, mean = agent.learner.policy().forward(OBS.astype(np.float64))
    variance = (latent**2) @ (np.exp(agent.log_std.numpy().astype(np.float64)) ** 2)
    np.testing.assert_allclose(log_prob.numpy(), gaussian_log_prob(actions, mean, variance),
                               rtol=1e-5)  # fmt: skip
    by_hand = np.sum(0.5 + HALF_LOG_2PI + 0.5 * np.log(variance + 1e-6), axis=-1)
    np.testing.assert_allclose(entropy.numpy(), by_hand, rtol=1e-5)
    assert agent.log_std.shape == (8, 2)
    assert ppo(cls, full_std=False).log_std.shape == (8, 1)


@pytest.mark.slow
@pytest.mark.parametrize("learn_features", [False, True])
def test_ppo_entropy_reaches_the_hidden_layers_only_with_learn_features(learn_features):
    """The entropy depends on the state only through the latent's variance: its gradient
    reaches log_std always, the policy's hidden layers only with learn_features."""
    agent = ppo(learn_features=learn_features)
    policy, cfg = agent.learner.sde, agent.learner.config
    hidden = policy.hidden[0].kernel
    with tf.GradientTape() as tape:
        _, entropy = sde_log_prob_entropy(policy, agent.log_std, tf.constant(OBS),
                                          tf.zeros((2, 2)), cfg)  # fmt: skip
        total = tf.reduce_sum(entropy)
    grad_std, grad_hidden = tape.gradient(total, [agent.log_std, hidden])
    assert np.all(np.abs(grad_std.numpy()) > 0)
    assert (grad_hidden is not None) == learn_features


def drive(agent, steps, seed):
    """``steps`` steps of 2 streams on made-up observations: the actions taken."""
    rng = np.random.default_rng(seed)
    taken = []
    for _ in range(steps):
        obs = agent.rollout.current.copy()
        action = agent.act(obs)
        taken.append(np.copy(action))
        done = rng.random(2) < 0.1
        agent.observe_next(action, rng.normal(size=2), rng.normal(size=(2, 3)).astype(np.float32),
                           np.zeros(2, bool), done)  # fmt: skip
        if done.any():
            agent.observe_first(rng.normal(size=(int(done.sum()), 3)).astype(np.float32),
                                streams=np.flatnonzero(done))  # fmt: skip
        agent.update()
    return taken


@pytest.mark.slow
def test_ppo_noise_is_held_within_a_rollout_and_redrawn_when_the_next_starts():
    agent = ppo(sde_sample_freq=-1)
    agent.observe_first(OBS)
    mean = agent.act(OBS, explore=False)
    noise = [agent.act(OBS) - agent.act(OBS, explore=False)]
    for _ in range(3):
        noise.append(agent.act(OBS) - mean)
    for k in range(1, 4):
        np.testing.assert_allclose(noise[k], noise[0], atol=1e-6)  # one matrix a rollout
    drive(agent, 4, seed=0)  # a whole rollout, then an update: the next rollout redraws
    assert agent.num_updates == 1 and agent.acting.gsde.clock == -1
    after = agent.act(OBS) - agent.act(OBS, explore=False)
    assert not np.allclose(after, noise[0], atol=1e-3)


@pytest.mark.slow
def test_ppo_exact_resume_mid_rollout_keeps_the_held_matrices(tmp_path):
    from rlkit.run.checkpoint import flatten_state, unflatten_state

    agent = ppo(sde_sample_freq=3)
    agent.observe_first(OBS)
    drive(agent, 6, seed=1)  # one update, then 2 steps into the next rollout
    assert agent.num_updates == 1 and agent.acting.gsde.clock == 2
    arrays, scalars = flatten_state(agent.state())
    arrays = {k: v.copy() for k, v in arrays.items()}
    agent.save(tmp_path / "model")
    resumed = rlkit.agents.PPO.load(tmp_path / "model")
    resumed.load_state(unflatten_state(arrays, scalars))
    ours, theirs = drive(agent, 8, seed=2), drive(resumed, 8, seed=2)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(agent.log_std.numpy(), resumed.log_std.numpy())


@pytest.mark.slow
def test_sac_exact_resume_mid_block_keeps_the_held_matrices(tmp_path):
    from rlkit.run.checkpoint import flatten_state, unflatten_state

    env = gym.make("Pendulum-v1")
    agent = rlkit.agents.SAC.from_env(env, seed=3, actor_hidden_sizes=(8,),
                                      critic_hidden_sizes=(8,), batch_size=4, learning_starts=0,
                                      jit_compile=False, use_sde=True, train_freq=8,
                                      gradient_steps=2, sde_sample_freq=3)  # fmt: skip

    def run(agent, steps, seed):
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(steps):
            obs = rng.normal(size=3).astype(np.float32)
            action = agent.act(obs)
            out.append(action)
            agent.observe_first(obs) if agent.num_steps == 0 else None
            agent.observe_next(action, float(rng.normal()), rng.normal(size=3).astype(np.float32),
                               False, False)  # fmt: skip
            agent.update()
        return out

    agent.observe_first(np.zeros(3, np.float32))
    run(agent, 13, seed=0)  # updates at step 8, 5 steps into the second block
    arrays, scalars = flatten_state(agent.state())
    arrays = {k: v.copy() for k, v in arrays.items()}
    agent.save(tmp_path / "model")
    resumed = rlkit.agents.SAC.load(tmp_path / "model")
    resumed.load_state(unflatten_state(arrays, scalars))
    for a, b in zip(run(agent, 12, seed=1), run(resumed, 12, seed=1), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: rlkit.agents.PPO(gym.spaces.Box(-1, 1, (3,)), gym.spaces.Discrete(2),
                                  use_sde=True), "use_sde.*Discrete"),
        (lambda: rlkit.agents.A2C(gym.spaces.Box(-1, 1, (3,)), gym.spaces.MultiDiscrete([2, 3]),
                                  use_sde=True), "use_sde.*MultiDiscrete"),
        (lambda: rlkit.agents.SAC(gym.spaces.Box(-1, 1, (3,)), gym.spaces.Discrete(2),
                                  use_sde=True), "use_sde.*Discrete"),
        (lambda: ppo(sde_sample_freq=0), "sde_sample_freq"),
        (lambda: sac(sde_sample_freq=-2), "sde_sample_freq"),
        (lambda: ppo(actor="package.module:function"), "use_sde.*actor"),
        (lambda: sac(actor="package.module:function"), "use_sde.*actor"),
    ],
)  # fmt: skip
def test_what_gsde_cannot_take_is_refused_in_one_line(build, message):
    with pytest.raises(UsageError, match=message) as error:
        build()
    assert "\n" not in str(error.value)


def test_the_compiled_loop_takes_use_sde_for_every_agent_that_has_it():
    """gSDE's held matrices are the compiled programs' variables too (their acting twins:
    tests/unit/agents/test_sac_twins.py, test_ppo_twins.py)."""
    from rlkit.agents.ppo.config import A2CConfig, PPOConfig
    from rlkit.agents.sac.config import SACConfig
    from rlkit.run.compiled.choice import choose_loop

    for agent, config in [("sac", SACConfig), ("ppo", PPOConfig), ("a2c", A2CConfig)]:
        compiled, note = choose_loop("rlkit/Pendulum-v1", agent, config(use_sde=True), "auto")
        assert compiled is True and note.startswith("loop: compiled"), agent


@pytest.mark.slow
@pytest.mark.parametrize("agent_name", ["sac", "ppo"])
def test_the_export_acts_greedily_as_the_agent(tmp_path, agent_name):
    """The exported ``action`` is the greedy one, ``tanh(clip(mean))`` (SAC) or the mean
    clipped (PPO), checked action for action by ``export`` itself."""
    env_id = "MountainCarContinuous-v0"
    if agent_name == "sac":
        agent = rlkit.agents.SAC.from_env(gym.make(env_id), seed=0, actor_hidden_sizes=(8,),
                                          critic_hidden_sizes=(8,), use_sde=True)  # fmt: skip
    else:
        agent = rlkit.agents.PPO.from_env(gym.make(env_id), seed=0, hidden_sizes=(8,),
                                          value_hidden_sizes=(8,), use_sde=True)  # fmt: skip
    result = agent.export(tmp_path / "export", env=env_id)
    # a gSDE draw is held across steps: no per-step-noise sample, served or listed
    exported = tf.saved_model.load(str(tmp_path / "export"))
    assert "sample" not in exported.signatures and "action" in exported.signatures
    assert result.metadata["signatures"] == ["action", "metadata"]
    with pytest.raises(UsageError, match="^act_with_noise: a gSDE policy"):
        agent.act_with_noise(np.zeros((1, 2), np.float32), np.zeros((1, 1), np.float32))


@pytest.mark.slow
def test_a_sampled_evaluation_leaves_the_rollouts_held_matrices_and_generator_alone():
    """``act(..., rng=)`` under gSDE (sampled evaluation) draws matrices of its own from the
    evaluation generator: the next exploring act is what it would have been without it."""
    env = gym.make("MountainCarContinuous-v0")

    def make():
        return rlkit.agents.PPO.from_env(env, seed=3, hidden_sizes=(8,), value_hidden_sizes=(8,),
                                         use_sde=True, sde_sample_freq=-1)  # fmt: skip

    obs = np.array([[-0.5, 0.01]], np.float32)
    plain, evaluated = make(), make()
    want = [plain.acting.act(obs) for _ in range(3)]
    got = [evaluated.acting.act(obs)]
    sampled = [evaluated.acting.act(obs, rng=np.random.default_rng(s)) for s in (1, 2)]
    got += [evaluated.acting.act(obs) for _ in range(2)]
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert not np.array_equal(sampled[0], sampled[1])  # (each a draw of its own)
    assert not np.allclose(sampled[0], want[0])
