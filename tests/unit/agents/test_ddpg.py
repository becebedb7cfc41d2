"""DDPG / TD3: EMA target networks by closed form, targets by hand, gradients' reach, CLI."""

import json

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

import rlkit
from rlkit.agents import DDPG
from rlkit.agents.ddpg.agent import bootstrap_target, squared_error
from rlkit.cli.main import main
from rlkit.core.errors import UsageError
from rlkit.learn.noise import GaussianNoise, OrnsteinUhlenbeckNoise
from rlkit.networks.actor_critic import ActionBounds, Actor, Critic
from rlkit.replay.memory import Batch

OBS = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
ACTIONS = gym.spaces.Box(np.array([-1, 0], np.float32), np.array([3, 0.5], np.float32))
SMALL = dict(
    actor_hidden_sizes=(8, 8),
    critic_hidden_sizes=(8, 8),
    jit_compile=False,
    batch_size=6,
    learning_starts=0,
    gradient_steps=1,
    train_freq=1,
)


def make_agent(seed=0, **overrides):
    return DDPG(OBS, ACTIONS, seed=seed, **{**SMALL, **overrides})


def make_batch(seed=0, terminated=None, truncated=None, n=6):
    rng = np.random.default_rng(seed)
    return Batch(
        obs=rng.normal(size=(n, 3)).astype(np.float32),
        actions=rng.uniform(ACTIONS.low, ACTIONS.high, size=(n, 2)).astype(np.float32),
        rewards=rng.normal(size=n).astype(np.float32),
        next_obs=rng.normal(size=(n, 3)).astype(np.float32),
        terminated=np.zeros(n, bool) if terminated is None else terminated,
        truncated=np.zeros(n, bool) if truncated is None else truncated,
    )


def values(variables):
    return [v.numpy().copy() for v in variables]


def perturb(variables, seed=1, scale=0.3):
    for i, v in enumerate(variables):
        v.assign(v + scale * tf.random.stateless_normal(v.shape, seed=[seed, i]))


def fill(agent, n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        agent.observe(
            rng.normal(size=3),
            rng.uniform(ACTIONS.low, ACTIONS.high),
            rng.normal(),
            rng.normal(size=3),
            False,
            False,
        )


# -- EMA target networks -------------------------------------------------------------------


@pytest.mark.slow
def test_initial_shadows_equal_the_online_weights():
    agent = make_agent(td3=True)
    for online, shadow in zip(agent.actor.variables, agent.actor_target_variables, strict=True):
        np.testing.assert_array_equal(online.numpy(), shadow.numpy())
    for k, critic in enumerate(agent.critics):
        for online, shadow in zip(critic.variables, agent.critic_target_variables(k), strict=True):
            np.testing.assert_array_equal(online.numpy(), shadow.numpy())


def test_ema_shadow_after_n_updates_is_the_closed_form():
    """shadow_n = d^n w0 + (1 - d) sum_{i=1..n} d^(n-i) w_i, with d = 1 - tau."""
    tau, n = 0.2, 4
    agent = make_agent(tau=tau)
    d = 1.0 - tau
    variables = agent.actor.variables + agent.critics[0].variables
    shadows = agent.actor_target_variables + agent.critic_target_variables(0)
    w0 = values(variables)
    expected = [d**n * w.astype(np.float64) for w in w0]
    for i in range(1, n + 1):
        for j, v in enumerate(variables):  # known weights w_i = w0 + i * c_j
            v.assign(w0[j] + i * (j + 1) * 0.01)
            expected[j] += (1 - d) * d ** (n - i) * (w0[j] + i * (j + 1) * 0.01)
        agent.learner.update_targets()
    for shadow, e in zip(shadows, expected, strict=True):
        np.testing.assert_allclose(shadow.numpy(), e, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_ema_runs_after_each_gradient_step_inside_the_compiled_update():
    tau = 0.1
    agent = make_agent(tau=tau)
    fill(agent, 5)
    w0 = values(agent.actor.variables + agent.critics[0].variables)
    fill(agent, 1, seed=1)  # step 6: batch_size reached, one update runs
    assert agent.update() is not None and agent.num_updates == 1
    w1 = values(agent.actor.variables + agent.critics[0].variables)
    shadows = agent.actor_target_variables + agent.critic_target_variables(0)
    for a, b, shadow in zip(w0, w1, shadows, strict=True):
        assert not np.allclose(a, b)
        np.testing.assert_allclose(shadow.numpy(), (1 - tau) * a + tau * b, atol=1e-6)


@pytest.mark.slow
def test_target_forward_pass_is_the_model_on_the_shadow_weights():
    agent = make_agent(seed=2, tau=0.5)
    perturb(agent.actor.variables + agent.critics[0].variables)
    agent.learner.update_targets()  # shadows now differ from both the old and the new weights
    obs = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    actions = np.random.default_rng(1).uniform(ACTIONS.low, ACTIONS.high, (5, 2)).astype("f4")
    bounds = ActionBounds(ACTIONS.low, ACTIONS.high)
    actor = Actor(3, bounds, (8, 8), seed=9)
    actor.model.set_weights([s.numpy() for s in agent.actor_target_variables])
    critic = Critic(3, bounds, (8, 8), seed=9)
    critic.model.set_weights([s.numpy() for s in agent.critic_target_variables(0)])
    target_action = agent.learner.target_action(tf.constant(obs)).numpy()
    np.testing.assert_allclose(target_action, actor.model(obs).numpy(), atol=1e-6)
    assert not np.allclose(target_action, agent.actor.model(obs).numpy(), atol=1e-4)
    np.testing.assert_allclose(
        agent.learner.target_q(tf.constant(obs), tf.constant(actions)).numpy(),
        critic.model([obs, actions]).numpy(),
        atol=1e-6,
    )


@pytest.mark.slow
def test_td3_delays_actor_and_target_updates():
    agent = make_agent(td3=True, policy_delay=2)
    fill(agent, 5)
    actor0 = values(agent.actor.variables)
    shadow0 = values(agent.actor_target_variables + agent.critic_target_variables(1))
    for seed, expected_actor_updates in ((1, 0), (2, 1)):  # steps 6 and 7: one block each
        fill(agent, 1, seed=seed)
        agent.update()
        assert agent.learner.num_actor_updates == expected_actor_updates
        changed = any(
            not np.array_equal(a, v.numpy())
            for a, v in zip(actor0, agent.actor.variables, strict=True)
        )
        moved = any(
            not np.array_equal(a, v.numpy())
            for a, v in zip(
                shadow0,
                agent.actor_target_variables + agent.critic_target_variables(1),
                strict=True,
            )
        )
        assert changed == moved == bool(expected_actor_updates)
    assert agent.num_updates == 2


# -- what each gradient reaches ------------------------------------------------------------


@pytest.mark.slow
def test_critic_gradient_reaches_neither_actor_nor_targets():
    agent = make_agent(td3=True)
    perturb(agent.critics[0].variables)
    agent.learner.update_targets()
    batch = make_batch()
    targets = agent.actor_target_variables + [
        v for k in range(2) for v in agent.critic_target_variables(k)
    ]
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(targets)
        loss = agent.learner.critic_loss(batch)
    assert all(g is None for g in tape.gradient(loss, agent.actor.variables))
    assert all(g is None for g in tape.gradient(loss, targets))
    critic_vars = agent.critic_pipeline.variables
    assert len(critic_vars) == len(agent.critics[0].variables) * 2
    assert all(g is not None for g in tape.gradient(loss, critic_vars))


def test_critic_step_changes_critics_only():
    agent = make_agent(td3=True)
    batch = make_batch()
    others = agent.actor.variables + agent.actor_target_variables
    others += agent.critic_target_variables(0) + agent.critic_target_variables(1)
    before, critics_before = values(others), values(agent.critic_pipeline.variables)
    agent.learner.critic_step(*agent.learner._tensors(batch), tf.zeros((6, 2)))
    for a, v in zip(before, others, strict=True):
        np.testing.assert_array_equal(a, v.numpy())
    assert all(
        not np.array_equal(a, v.numpy())
        for a, v in zip(critics_before, agent.critic_pipeline.variables, strict=True)
    )


def test_actor_step_changes_actor_not_critic():
    agent = make_agent()
    obs = make_batch().obs
    with tf.GradientTape() as tape:
        loss = agent.learner.actor_loss(obs)
    grads = agent.actor_pipeline.gradients(tape, loss)
    assert len(grads) == len(agent.actor.variables) and all(g is not None for g in grads)
    critic0, actor0 = values(agent.critics[0].variables), values(agent.actor.variables)
    agent.learner.actor_step(tf.constant(obs))
    for a, v in zip(critic0, agent.critics[0].variables, strict=True):
        np.testing.assert_array_equal(a, v.numpy())
    assert all(
        not np.array_equal(a, v.numpy()) for a, v in zip(actor0, agent.actor.variables, strict=True)
    )


def test_actor_gradient_ascends_q():
    """One small SGD step on the actor loss raises Q(s, mu(s))."""
    agent = make_agent(seed=3, actor_optimizer="sgd", actor_learning_rate=1e-2)
    perturb(agent.critics[0].variables, scale=1.0)
    obs = make_batch(n=32).obs
    before = -float(agent.learner.actor_loss(obs))
    agent.learner.actor_step(tf.constant(obs))
    assert -float(agent.learner.actor_loss(obs)) > before


# -- targets by hand -----------------------------------------------------------------------


def test_bootstrap_target_formula_by_hand():
    y = bootstrap_target(
        tf.constant([1.0, -2.0, 0.5]),
        tf.constant([0.9, 0.0, 0.9]),  # pcont: gamma 0.9, the second terminated
        tf.constant([10.0, 7.0, -4.0]),
    )
    np.testing.assert_allclose(y.numpy(), [1 + 9.0, -2.0, 0.5 - 3.6], rtol=1e-6)
    np.testing.assert_allclose(
        squared_error(tf.constant([1.0, 2.0]), tf.constant([3.0, 0.5])).numpy(), [4.0, 2.25]
    )


def test_terminated_cuts_the_bootstrap_truncated_does_not():
    agent = make_agent(seed=4, gamma=0.9)
    perturb(agent.actor.variables + agent.critics[0].variables)
    agent.learner.update_targets()
    batch = make_batch(
        seed=5,
        terminated=np.array([1, 0, 0, 0, 0, 0], bool),
        truncated=np.array([0, 1, 0, 0, 0, 1], bool),
    )
    next_obs = tf.constant(batch.next_obs)
    next_q = agent.learner.target_q(next_obs, agent.learner.target_action(next_obs)).numpy()
    y = agent.learner.td_targets(batch)
    np.testing.assert_allclose(y[0], batch.rewards[0], rtol=1e-6)
    np.testing.assert_allclose(y[1:], batch.rewards[1:] + 0.9 * next_q[1:], rtol=1e-5)


def test_td3_target_is_the_smaller_twin_with_smoothed_action():
    agent = make_agent(seed=6, td3=True, gamma=0.95, tau=1.0)
    perturb(agent.critics[0].variables, seed=2, scale=1.0)
    perturb(agent.critics[1].variables, seed=3, scale=1.0)
    agent.learner.update_targets()  # tau = 1: the targets take the perturbed weights
    batch = make_batch(seed=7, terminated=np.array([0, 0, 1, 0, 0, 0], bool))
    smoothing = np.full((6, 2), [0.5, -0.1], np.float32)
    next_obs = tf.constant(batch.next_obs)
    action = agent.learner.target_action(next_obs).numpy() + smoothing
    action = np.clip(action, ACTIONS.low, ACTIONS.high)
    q0 = agent.learner.target_q(next_obs, tf.constant(action), 0).numpy()
    q1 = agent.learner.target_q(next_obs, tf.constant(action), 1).numpy()
    assert (q0 < q1).any() and (q1 < q0).any()  # the minimum is taken per example
    expected = batch.rewards + 0.95 * (1 - batch.terminated) * np.minimum(q0, q1)
    np.testing.assert_allclose(agent.learner.td_targets(batch, smoothing), expected, rtol=1e-5)


def test_td3_smoothing_noise_is_clipped_and_scaled_to_the_bounds():
    agent = make_agent(td3=True, target_noise=10.0, target_noise_clip=0.5)
    half = (ACTIONS.high - ACTIONS.low) / 2
    noise = agent.learner.terms.smoothing_noise(agent.rng, (50, 6, 2), half)
    assert noise.shape == (50, 6, 2) and noise.dtype == np.float32
    np.testing.assert_allclose(np.abs(noise).max(axis=(0, 1)), 0.5 * half)
    ddpg = make_agent()
    state = ddpg.rng.bit_generator.state
    # plain DDPG: no smoothing noise
    assert not ddpg.learner.terms.smoothing_noise(ddpg.rng, (2, 6, 2), half).any()
    assert ddpg.rng.bit_generator.state == state  # ... and no draw


@pytest.mark.slow
def test_td3_is_ddpgs_learner_with_three_numbers():
    from rlkit.agents.ddpg.td3 import LearnerTerms

    assert make_agent().learner.terms == LearnerTerms(critics=1, policy_delay=1, target_noise=0.0)
    td3 = make_agent(td3=True, policy_delay=3, target_noise=0.1, target_noise_clip=0.3)
    assert td3.learner.terms == LearnerTerms(critics=2, policy_delay=3, target_noise=0.1,
                                     target_noise_clip=0.3)  # fmt: skip
    assert len(td3.critics) == 2 and len(make_agent().critics) == 1


@pytest.mark.parametrize("key, value", [("policy_delay", 3), ("target_noise", 0.1),
                                        ("target_noise_clip", 0.2)])  # fmt: skip
def test_td3_settings_without_td3_are_refused_not_ignored(key, value):
    from rlkit.core.errors import RlkitWarning, UsageError
    from rlkit.run.plan import plan

    with pytest.raises(UsageError, match=f"{key} is TD3's.*td3=true"):  # a new run
        plan("ddpg", "Pendulum-v1", overrides={key: value})
    with pytest.warns(RlkitWarning, match=f"{key} is TD3's"):  # in Python (an old run loads)
        agent = make_agent(**{key: value})
    assert agent.learner.terms.policy_delay == 1 and agent.learner.terms.target_noise == 0
    assert plan("ddpg", "Pendulum-v1", overrides={key: value, "td3": "true"}).agent_config.td3


# -- actions, bounds and noise -------------------------------------------------------------


def test_action_scaling_honours_asymmetric_bounds():
    bounds = ActionBounds(np.array([-1.0, 0.0, 10.0]), np.array([3.0, 0.5, 20.0]))
    np.testing.assert_allclose(bounds.from_unit(-np.ones(3)), bounds.low)
    np.testing.assert_allclose(bounds.from_unit(np.ones(3)), bounds.high)
    np.testing.assert_allclose(bounds.from_unit(np.zeros(3)), [1.0, 0.25, 15.0])
    u = np.array([0.3, -0.7, 0.9])
    np.testing.assert_allclose(bounds.to_unit(bounds.from_unit(u)), u, rtol=1e-6)
    space = gym.spaces.Box(bounds.low, bounds.high)
    agent = DDPG(OBS, space, seed=0, **{**SMALL, "actor_hidden_sizes": (16,)})
    for v in agent.actor.variables:  # large weights saturate tanh at both ends
        v.assign(30 * tf.random.stateless_normal(v.shape, seed=[3, 4]))
    agent.after_restore()
    obs = np.random.default_rng(0).normal(size=(200, 3)).astype(np.float32)
    actions = agent.actor.model(obs).numpy()
    assert (actions >= bounds.low - 1e-6).all() and (actions <= bounds.high + 1e-6).all()
    assert np.isclose(actions, bounds.low, atol=1e-3).any(axis=0).all()
    assert np.isclose(actions, bounds.high, atol=1e-3).any(axis=0).all()


def test_numpy_acting_copy_equals_the_keras_actor():
    agent = make_agent(seed=7)
    perturb(agent.actor.variables, scale=1.0)
    agent.after_restore()
    obs = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    policy = agent.acting.policy  # the numpy copy acting reads
    np.testing.assert_allclose(policy(obs), agent.actor.model(obs).numpy(), atol=1e-5)
    greedy = agent.act(obs[0], explore=False)
    assert greedy.shape == (2,) and greedy.dtype == np.float32
    np.testing.assert_allclose(greedy, agent.actor.model(obs[:1]).numpy()[0], atol=1e-5)
    assert agent.act(obs, explore=False).shape == (5, 2)


@pytest.mark.parametrize("noise", ["gaussian", "ou"])
def test_noisy_and_random_actions_stay_in_bounds(noise):
    agent = make_agent(noise=noise, noise_scale=3.0, learning_starts=50)
    obs = np.random.default_rng(0).normal(size=3)
    random = np.array([agent.act(obs) for _ in range(200)])  # before learning_starts: uniform
    assert (random >= ACTIONS.low).all() and (random <= ACTIONS.high).all()
    np.testing.assert_allclose(random.mean(axis=0), (ACTIONS.low + ACTIONS.high) / 2, atol=0.2)
    agent.num_steps = 50
    noisy = np.array([agent.act(obs) for _ in range(300)])
    assert (noisy >= ACTIONS.low).all() and (noisy <= ACTIONS.high).all()
    assert (noisy == ACTIONS.low).any() and (noisy == ACTIONS.high).any()  # clipped, not squashed
    batch = agent.act(np.zeros((4, 3)))
    assert batch.shape == (4, 2) and (batch >= ACTIONS.low).all() and (batch <= ACTIONS.high).all()


def test_ou_noise_follows_its_recursion_and_resets_at_episode_end():
    rng = np.random.default_rng(0)
    ou = OrnsteinUhlenbeckNoise((2,), sigma=0.3, rng=np.random.default_rng(0), theta=0.15, dt=0.1)
    x = np.zeros(2)
    for _ in range(3):
        x = x - 0.15 * x * 0.1 + 0.3 * np.sqrt(0.1) * rng.standard_normal(2)
        np.testing.assert_allclose(ou(), x, rtol=1e-6)
    agent = make_agent(noise="ou", noise_scale=0.5)
    obs = np.zeros(3)
    agent.act(obs)
    assert agent.acting.noise.state.any()
    agent.observe(obs, agent.act(obs), 0.0, obs, False, True)  # truncated: episode over
    assert not agent.acting.noise.state.any()


def test_gaussian_noise_scale():
    sample = GaussianNoise((3,), 0.2, np.random.default_rng(0))(10_000)
    assert sample.shape == (10_000, 3)
    np.testing.assert_allclose(sample.std(axis=0), 0.2, rtol=0.05)


# -- the fused block, persistence, spaces --------------------------------------------------


@pytest.mark.slow
def test_fused_xla_block_matches_plain_graph():
    agents = [make_agent(seed=11, td3=True, jit_compile=jit) for jit in (False, True)]
    for agent in agents:
        agent.replay.rng = np.random.default_rng(2)
        fill(agent, 20)
        batch = agent.replay.sample(6, 4)
        block, tensors = agent.learner._train_block, agent.learner._tensors(batch)
        block(*tensors, tf.zeros((4, 6, 2)), tf.constant(0, tf.int64))
    plain, xla = agents
    xla_groups = xla.checkpoint_variables()
    for group, variables in plain.checkpoint_variables().items():
        for u, v in zip(variables, xla_groups[group], strict=True):
            np.testing.assert_allclose(u.numpy(), v.numpy(), atol=1e-5)


def test_save_and_load_round_trip(tmp_path):
    agent = make_agent(seed=12, td3=True)
    fill(agent, 12)
    agent.num_steps = 0
    for _ in range(3):
        agent.update()
        agent.num_steps += 1
    agent.save(tmp_path / "model")
    loaded = rlkit.load(tmp_path / "model")
    assert isinstance(loaded, DDPG) and loaded.config == agent.config
    for group, variables in agent.checkpoint_variables().items():
        for u, v in zip(variables, loaded.checkpoint_variables()[group], strict=True):
            np.testing.assert_array_equal(u.numpy(), v.numpy())
    assert set(agent.checkpoint_variables()) == {
        "actor", "actor_target", "critic0", "critic0_target", "critic1", "critic1_target"
    }  # fmt: skip
    obs = np.random.default_rng(0).normal(size=(7, 3)).astype(np.float32)
    np.testing.assert_array_equal(agent.act(obs, explore=False), loaded.act(obs, explore=False))
    state = agent.state()
    assert set(state["optimizer"]) == {"actor", "critic"}
    assert set(state["rngs"]) == {"explore", "noise"} and set(state["memory"]) == {"replay"}


def test_rejects_discrete_and_unbounded_actions():
    with pytest.raises(UsageError, match="use dqn or reinforce"):
        DDPG.from_env(gym.make("CartPole-v1"))
    with pytest.raises(UsageError, match="finite action bounds"):
        DDPG(OBS, gym.spaces.Box(-np.inf, np.inf, (2,), np.float32))
    with pytest.raises(UsageError, match="low < high"):
        DDPG(OBS, gym.spaces.Box(np.zeros(2, np.float32), np.array([1, 0], np.float32)))


def test_config_checks():
    with pytest.raises(UsageError, match="tau"):
        make_agent(tau=0.0)
    with pytest.raises(UsageError, match="noise"):
        make_agent(noise="pink")
    with pytest.raises(UsageError, match="lr_end_fraction"):
        make_agent(lr_end_fraction=1.5, lr_anneal_steps=10)
    with pytest.raises(UsageError, match="needs lr_anneal_steps"):
        make_agent(lr_end_fraction=0.5)
    with pytest.raises(UsageError, match="init"):
        make_agent(init="xavier")
    with pytest.raises(UsageError, match="output_init_scale"):
        make_agent(output_init_scale=-1.0)


# -- initialisation ------------------------------------------------------------------------


def layers_with_fan_in(agent):
    """``(name, kernel, bias, fan_in)`` of every layer of the actor and the critics."""
    for net in [agent.actor, *agent.critics]:
        for layer in [*net.hidden, net.head]:
            kernel, bias = layer.get_weights()
            yield layer.name, kernel, bias, kernel.shape[0]


def test_default_init_is_glorot_hidden_layers_and_the_ddpg_papers_output_layers():
    agent = make_agent(actor_hidden_sizes=(64, 48), critic_hidden_sizes=(64, 48), td3=True)
    for name, kernel, bias, fan_in in layers_with_fan_in(agent):
        if name.endswith("_out"):
            assert np.abs(kernel).max() <= 3e-3 and np.abs(bias).max() <= 3e-3, name
            assert np.abs(bias).max() > 0, name
        else:
            glorot = np.sqrt(6.0 / (fan_in + kernel.shape[1]))
            assert np.abs(kernel).max() <= glorot and np.abs(kernel).max() > 0.9 * glorot, name
            assert not bias.any(), name


@pytest.mark.parametrize("output_scale", [0.0, 3e-3])
def test_torch_init_draws_layers_as_pytorch_linear(output_scale):
    """SB3's networks: kernel and bias U(+-1/sqrt(fan_in)) (PyTorch's nn.Linear default)."""
    agent = make_agent(
        actor_hidden_sizes=(64, 48),
        critic_hidden_sizes=(64, 48),
        td3=True,
        init="torch",
        output_init_scale=output_scale,
    )
    layers = list(layers_with_fan_in(agent))
    assert [fan_in for *_, fan_in in layers] == [3, 64, 48, 5, 64, 48, 5, 64, 48]
    for name, kernel, bias, fan_in in layers:
        bound = output_scale if name.endswith("_out") and output_scale else fan_in**-0.5
        for values in (kernel, bias):
            assert np.abs(values).max() <= bound, name
        assert np.abs(kernel).max() > 0.9 * bound, name
        if kernel.size >= 1000:  # uniform: std = bound / sqrt(3)
            assert kernel.std() == pytest.approx(bound / np.sqrt(3), rel=0.05), name
        assert np.abs(bias).max() > 0 and not np.allclose(bias, kernel.ravel()[: bias.size])
    critic0, critic1 = agent.critics
    assert not np.allclose(critic0.head.get_weights()[0], critic1.head.get_weights()[0])


# -- learning-rate schedule ----------------------------------------------------------------


@pytest.mark.slow
def test_learning_rates_fall_linearly_to_their_fraction_after_learning_starts():
    agent = make_agent(actor_learning_rate=1e-3, critic_learning_rate=2e-3, learning_starts=20,
                       lr_end_fraction=0.25, lr_anneal_steps=100)  # fmt: skip
    rates = []
    for steps in (10, 70, 200):  # before learning_starts, half-way, past the end
        fill(agent, steps - agent.num_steps)
        agent.learn(agent.replay.sample(6, 1))  # a block of one update
        rates.append((float(agent.actor_pipeline.optimizer.learning_rate),
                      float(agent.critic_pipeline.optimizer.learning_rate)))  # fmt: skip
    # by hand: 0.25 + 0.75 * (100 - max(0, steps - 20)) / 100, floored at 0.25
    np.testing.assert_allclose(rates, [(1e-3, 2e-3), (6.25e-4, 1.25e-3), (2.5e-4, 5e-4)])
    assert agent.diagnostics()["learning_rate_scale"] == 0.25
    assert "learning_rate_scale" not in make_agent().diagnostics()  # off by default


@pytest.mark.slow
def test_a_learning_rate_fallen_to_zero_leaves_actor_and_critics_as_they_are():
    agent = make_agent(td3=True, policy_delay=1, lr_end_fraction=0.0, lr_anneal_steps=5)
    fill(agent, 10)
    online = agent.actor.variables + agent.critic_pipeline.variables
    before = values(online)
    agent.learn(agent.replay.sample(6, 4))
    for a, v in zip(before, online, strict=True):
        np.testing.assert_array_equal(a, v.numpy())


# -- learning ------------------------------------------------------------------------------


@pytest.mark.slow
def test_pendulum_short_run_beats_random_clearly():
    env = gym.make("Pendulum-v1")
    agent = DDPG.from_env(env, seed=0)
    history = rlkit.train(agent, env, steps=6_000)
    mean, _ = rlkit.evaluate(agent, gym.make("Pendulum-v1"), episodes=5, seed=123)
    assert history.steps == 6_000 and agent.num_updates > 4_000
    assert mean > -600, mean  # a random policy scores about -1200 to -1500


# -- CLI -----------------------------------------------------------------------------------

TINY = [
    "--steps", "300", "--eval-episodes", "1", "--quiet",
    "--set", "learning_starts=100", "--set", "train_freq=50", "--set", "gradient_steps=4",
    "--set", "actor_hidden_sizes=16,16", "--set", "critic_hidden_sizes=16,16",
    "--set", "batch_size=32", "--set", "jit_compile=false",
]  # fmt: skip


def run_cli(capsys, *args):
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.slow
def test_cli_tiny_train_run_writes_its_run_directory(capsys, tmp_path):
    status, out, err = run_cli(capsys, "train", "ddpg", "--seed", "2", "--out", str(tmp_path),
                               *TINY)  # fmt: skip
    assert status == 0, err
    (run_dir,) = tmp_path.iterdir()
    assert run_dir.name.startswith("ddpg-Pendulum-v1-2-")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["steps"] == 300 and summary["agent"] == "ddpg"
    assert "eval return" in out
    agent = rlkit.load(run_dir / "model")
    assert isinstance(agent, DDPG) and agent.config.actor_hidden_sizes == (16, 16)
    assert agent.num_steps == 300


def test_cli_discrete_env_is_one_line_and_exit_2(capsys, tmp_path):
    status, _, err = run_cli(
        capsys, "train", "ddpg", "--env", "CartPole-v1", "--out", str(tmp_path)
    )
    assert status == 2
    assert "use dqn or reinforce" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not any(tmp_path.iterdir())


def test_cli_bad_config_value_and_config_listing(capsys, tmp_path):
    status, _, err = run_cli(capsys, "train", "ddpg", "--set", "noise=pink", "--out", str(tmp_path))
    assert status == 2 and "must be one of gaussian, ou" in err
    for bad, message in [("gradient_steps=0", "must be > 0, or -1 (one per step collected)"),
                         ("train_freq_unit=epoch", "must be one of step, episode")]:  # fmt: skip
        status, _, err = run_cli(capsys, "train", "ddpg", "--set", bad, "--out", str(tmp_path))
        assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    status, out, _ = run_cli(capsys, "config", "ddpg")
    assert status == 0 and "tau = 0.005" in out and "policy_delay = 2" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    "schedule",
    [
        [],
        ["--set", "train_freq_unit=episode", "--set", "train_freq=1", "--set", "gradient_steps=-1"],
        ["--set", "lr_end_fraction=0.1", "--set", "lr_anneal_steps=500"],
    ],
    ids=["steps", "episodes", "lr-schedule"],
)
def test_cli_interrupted_and_resumed_run_equals_uninterrupted_run(capsys, tmp_path, schedule):
    """Exact resume: weights, EMA shadows, optimizers, replay, RNGs and the OU state (and,
    per episode, the episodes and steps counted towards the next block)."""
    args = [*TINY, "--set", "noise=ou", "--set", "td3=true", "--seed", "4",
            "--checkpoint-every", "0", *schedule]  # fmt: skip
    args[1] = "600"  # --steps
    status, _, err = run_cli(capsys, "train", "ddpg", "--out", str(tmp_path / "whole"), *args)
    assert status == 0, err
    args[1] = "330"  # stop mid-episode, with the OU process away from 0
    status, _, err = run_cli(capsys, "train", "ddpg", "--out", str(tmp_path / "split"), *args)
    assert status == 0, err
    (split,) = (tmp_path / "split").iterdir()
    status, _, err = run_cli(capsys, "resume", str(split), "--steps", "600", "--quiet")
    assert status == 0, err
    (whole,) = (tmp_path / "whole").iterdir()
    with (
        np.load(whole / "model" / "weights.npz") as a,
        np.load(split / "model" / "weights.npz") as b,
    ):
        assert a.files == b.files and any("target" in k for k in a.files)
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key])


def _feed(agent, lengths):
    """Store episodes of the given lengths (random transitions), calling update() after
    each step as the trainer does; returns num_updates after each episode."""
    rng = np.random.default_rng(0)
    counts = []
    for length in lengths:
        for t in range(length):
            obs = rng.normal(size=3).astype(np.float32)
            agent.observe(obs, agent.act(obs), -1.0, obs, False, t == length - 1)
            agent.update()
        counts.append(agent.num_updates)
    return counts


@pytest.mark.slow
def test_episode_unit_runs_one_update_per_step_collected_at_each_episode_end():
    """rl-zoo's train_freq [1, "episode"], gradient_steps -1 (SB3): after each episode,
    as many updates as steps that episode took; none before learning_starts."""
    env = gym.make("Pendulum-v1")
    config = {**SMALL, "learning_starts": 30, "train_freq_unit": "episode", "train_freq": 1,
              "gradient_steps": -1}  # fmt: skip
    agent = DDPG.from_env(env, seed=0, **config)
    assert _feed(agent, [20, 150, 7]) == [0, 150, 157]  # 150 = 2 blocks of 64 + 22 single
    # the graph is traced for blocks of 64 and of 1 only, whatever the episode lengths
    assert agent.learner._train_block.tracing_count == 2
    agent = DDPG.from_env(env, seed=0, **{**config, "train_freq": 2, "gradient_steps": 5})
    assert _feed(agent, [20, 15, 10, 10, 3]) == [0, 5, 5, 10, 10]  # every 2nd episode: 5


@pytest.mark.slow
def test_gradient_steps_minus_one_per_step_is_train_freq_updates_a_block():
    env = gym.make("Pendulum-v1")
    agent = DDPG.from_env(env, seed=0, **{**SMALL, "learning_starts": 0, "train_freq": 10,
                                          "gradient_steps": -1})  # fmt: skip
    assert _feed(agent, [25]) == [20]


@pytest.mark.slow
def test_trains_on_vector_envs_with_batched_acting():
    from rlkit.envs.make import make_vector_env
    from rlkit.run.loop import Trainer

    env = make_vector_env("Pendulum-v1", 4)
    agent = DDPG.from_env(env, seed=0, **{**SMALL, "noise": "ou", "train_freq": 8,
                                          "gradient_steps": 2})  # fmt: skip
    history = Trainer(agent, env, tensorboard=False).run(1_000)
    assert agent.num_steps == 1_000 and len(history.episode_returns) == 4
    assert agent.num_updates == 2 * (1_000 // 8)  # the update ratio of one env is kept
    actions = agent.act(np.zeros((4, 3), np.float32))
    assert actions.shape == (4, 1) and np.all(np.abs(actions) <= 2.0)


@pytest.mark.slow
@pytest.mark.parametrize("jit_compile", [False, True])
def test_acting_copy_follows_each_update(jit_compile):
    agent = make_agent(seed=5, jit_compile=jit_compile, gradient_steps=3, train_freq=1)
    fill(agent, 20)
    obs = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    before = agent.act(obs, explore=False)
    for i in range(2):
        fill(agent, 1, seed=i)
        assert agent.update() is not None
        np.testing.assert_allclose(
            agent.act(obs, explore=False), agent.actor.model(obs).numpy(), atol=1e-5
        )
    assert not np.allclose(agent.act(obs, explore=False), before)
    assert agent.learner._train_block.tracing_count == 1
