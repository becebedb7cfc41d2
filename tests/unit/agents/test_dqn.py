"""DQN against DQN3.0's getQUpdate, by hand-computed values and closed forms."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents import DQN
from rlkit.core.errors import UsageError
from rlkit.core.schedules import dqn3_epsilon
from rlkit.learn import losses
from rlkit.replay.memory import Batch
from rlkit.replay.nstep import graph_pcont

OBS = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
ACTIONS = gym.spaces.Discrete(4)
SMALL = dict(hidden_sizes=(8, 8), jit_compile=False, batch_size=6, learning_starts=0)


def make_batch(seed=0, terminated=None, truncated=None):
    rng = np.random.default_rng(seed)
    n = 6
    return Batch(
        obs=rng.normal(size=(n, 3)).astype(np.float32),
        actions=rng.integers(0, 4, size=n),
        rewards=np.array([0.1, -3.0, 0.4, 2.5, -0.2, 5.0], np.float32)
        + rng.normal(size=n).astype(np.float32) * 0.1,
        next_obs=rng.normal(size=(n, 3)).astype(np.float32),
        terminated=np.array([1, 0, 0, 1, 0, 0], bool) if terminated is None else terminated,
        truncated=np.array([0, 1, 0, 0, 0, 1], bool) if truncated is None else truncated,
    )


def reference_gradients(agent, batch, per_example_loss):
    """Gradient of a scalar loss summed over the batch, computed independently."""
    q_next = agent.q_target.model(batch.next_obs).numpy()
    target = batch.rewards + (1 - batch.terminated) * agent.config.gamma * q_next.max(axis=1)
    with tf.GradientTape() as tape:
        q = agent.q.model(batch.obs)
        q_taken = tf.gather(q, batch.actions, axis=1, batch_dims=1)
        loss = tf.reduce_sum(per_example_loss(tf.constant(target, tf.float32) - q_taken))
    return tape.gradient(loss, agent.q.variables)


def perturb_target(agent):
    for v in agent.q_target.variables:
        v.assign(v + 0.3 * tf.random.stateless_normal(v.shape, seed=[1, 2]))


def test_delta_formula_by_hand():
    q_taken = tf.constant([1.0, 2.0, 3.0])
    rewards = tf.constant([2.0, -4.0, 6.0])
    next_q = tf.constant([[0.5, 1.5], [4.0, -1.0], [2.0, 2.5]])
    terminated = tf.constant([0.0, 1.0, 0.0])
    pcont = graph_pcont(terminated, 0.9)  # 0.9 * (1 - terminated)
    np.testing.assert_allclose(pcont.numpy(), [0.9, 0.0, 0.9])
    delta = losses.q_learning_delta(q_taken, rewards / 2.0, next_q, pcont)
    # r/r_max + (1-term) * 0.9 * max Q' - Q
    expected = [1 + 0.9 * 1.5 - 1, -2 + 0 - 2, 3 + 0.9 * 2.5 - 3]
    np.testing.assert_allclose(delta.numpy(), expected, rtol=1e-6)
    # Double DQN: the online net picks the action, the target net values it
    online = tf.constant([[9.0, 0.0], [0.0, 9.0], [9.0, 0.0]])
    double = losses.q_learning_delta(q_taken, rewards / 2.0, next_q, pcont, online)
    np.testing.assert_allclose(
        double.numpy(), [1 + 0.9 * 0.5 - 1, -4, 3 + 0.9 * 2.0 - 3], rtol=1e-6
    )


def test_output_gradient_is_minus_clipped_delta_at_taken_action_only():
    delta = tf.constant([0.3, -2.5, 4.0])
    grad = losses.dqn3_output_gradient(delta, tf.constant([2, 0, 1]), 3, clip_delta=1.0)
    np.testing.assert_allclose(grad.numpy(), [[0, 0, -0.3], [1.0, 0, 0], [0, -1.0, 0]])


def test_bootstrap_side_carries_no_gradient():
    next_q = tf.Variable([[1.0, 2.0]])
    q_taken = tf.Variable([0.5])
    with tf.GradientTape(persistent=True) as tape:
        delta = losses.q_learning_delta(q_taken, tf.constant([1.0]), next_q, tf.constant([0.99]))
    assert tape.gradient(delta, next_q) is None
    np.testing.assert_allclose(tape.gradient(delta, q_taken).numpy(), [-1.0])


def test_huber_closed_form():
    x = tf.constant([-3.0, -0.5, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(losses.huber(x, 1.0).numpy(), [2.5, 0.125, 0.0, 0.125, 2.5])


@pytest.mark.parametrize("clip_delta", [1.0, 0.5])
def test_injected_gradient_equals_summed_huber_gradient(clip_delta):
    agent = DQN(
        OBS, ACTIONS, seed=3, double_dqn=False, clip_delta=clip_delta, init="glorot", **SMALL
    )
    perturb_target(agent)
    batch = make_batch()
    injected = agent.gradients(batch)
    expected = reference_gradients(agent, batch, lambda d: losses.huber(d, clip_delta))
    # the batch has TD errors both inside and outside the clip
    deltas = np.abs(agent.td_errors(batch))
    assert (deltas > clip_delta).any() and (deltas < clip_delta).any()
    for g, e in zip(injected, expected, strict=True):
        np.testing.assert_allclose(g.numpy(), e.numpy(), atol=1e-6, rtol=1e-5)


def test_unclipped_injected_gradient_equals_half_squared_delta_gradient():
    agent = DQN(OBS, ACTIONS, seed=4, double_dqn=False, clip_delta=0.0, **SMALL)
    perturb_target(agent)
    batch = make_batch(seed=1)
    expected = reference_gradients(agent, batch, lambda d: 0.5 * tf.square(d))
    for g, e in zip(agent.gradients(batch), expected, strict=True):
        np.testing.assert_allclose(g.numpy(), e.numpy(), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("loss", ["huber", "mse"])
def test_scalar_loss_paths_match_the_injected_path(loss):
    clip = 1.0 if loss == "huber" else 0.0
    dqn3 = DQN(OBS, ACTIONS, seed=5, clip_delta=clip, loss="dqn3", **SMALL)
    scalar = DQN(OBS, ACTIONS, seed=5, clip_delta=clip, loss=loss, **SMALL)
    batch = make_batch(seed=2)
    for a, b in zip(dqn3.gradients(batch), scalar.gradients(batch), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6, rtol=1e-5)


def test_mean_reduction_divides_by_batch_size():
    total = DQN(OBS, ACTIONS, seed=6, reduction="sum", **SMALL)
    mean = DQN(OBS, ACTIONS, seed=6, reduction="mean", **SMALL)
    batch = make_batch(seed=3)
    for a, b in zip(total.gradients(batch), mean.gradients(batch), strict=True):
        np.testing.assert_allclose(a.numpy() / 6, b.numpy(), atol=1e-7, rtol=1e-5)


def test_rescale_r_divides_rewards():
    plain = DQN(OBS, ACTIONS, seed=7, **SMALL)
    scaled = DQN(OBS, ACTIONS, seed=7, rescale_r=True, r_max=4.0, **SMALL)
    batch = make_batch(seed=4)
    quarter = Batch(**{**batch.__dict__, "rewards": batch.rewards / 4.0})
    np.testing.assert_allclose(scaled.td_errors(batch), plain.td_errors(quarter), rtol=1e-6)


def test_terminated_cuts_bootstrap_truncated_does_not():
    agent = DQN(OBS, ACTIONS, seed=8, double_dqn=False, **SMALL)
    perturb_target(agent)
    batch = make_batch(
        seed=5,
        terminated=np.array([1, 0, 0, 0, 0, 0], bool),
        truncated=np.array([0, 1, 0, 0, 0, 0], bool),
    )
    q = agent.q.model(batch.obs).numpy()[np.arange(6), batch.actions]
    q_next = agent.q_target.model(batch.next_obs).numpy().max(axis=1)
    delta = agent.td_errors(batch)
    np.testing.assert_allclose(delta[0], batch.rewards[0] - q[0], rtol=1e-5)
    np.testing.assert_allclose(delta[1], batch.rewards[1] + 0.99 * q_next[1] - q[1], rtol=1e-5)


@pytest.mark.slow
def test_updates_change_online_network_only_until_target_copy():
    agent = DQN(OBS, ACTIONS, seed=9, train_freq=6, gradient_steps=3, target_update=12, **SMALL)
    online0 = [v.numpy().copy() for v in agent.q.variables]
    target0 = [v.numpy().copy() for v in agent.q_target.variables]
    rng = np.random.default_rng(0)
    for step in range(1, 7):
        agent.observe(rng.normal(size=3), step % 4, 1.0, rng.normal(size=3), False, False)
        metrics = agent.update()
    assert metrics is not None and agent.num_updates == 3
    assert any(
        not np.allclose(a, v.numpy()) for a, v in zip(online0, agent.q.variables, strict=True)
    )
    for a, v in zip(target0, agent.q_target.variables, strict=True):
        np.testing.assert_array_equal(a, v.numpy())
    for step in range(7, 13):
        agent.observe(rng.normal(size=3), step % 4, 1.0, rng.normal(size=3), False, False)
        agent.update()
    for online, target in zip(agent.q.variables, agent.q_target.variables, strict=True):
        np.testing.assert_array_equal(online.numpy(), target.numpy())
    assert agent.num_updates == 6 and agent.learner.train_block.tracing_count == 1  # no retracing


def test_random_actions_skip_the_network_and_keep_the_rng_stream():
    agent = DQN(OBS, ACTIONS, seed=3, eps_start=1.0, eps_end=1.0, **SMALL)
    calls = []
    policy = agent.acting.policy
    agent.acting.policy = lambda x: calls.append(x) or policy(x)
    actions = [agent.act(np.zeros(3)) for _ in range(50)]
    assert not calls and len(set(actions)) == ACTIONS.n
    rng, expected = np.random.default_rng([3, 1]), []
    for _ in range(50):
        rng.random()  # the epsilon draw (always below epsilon = 1)
        expected.append(int(rng.integers(ACTIONS.n)))
    assert actions == expected
    agent.act(np.zeros(3), explore=False)
    assert len(calls) == 1
    batch = agent.act(np.zeros((8, 3)))  # a vector env's batch, all random
    assert len(calls) == 1 and batch.shape == (8,)
    rng.random(8)  # the batch's epsilon draws
    np.testing.assert_array_equal(batch, rng.integers(ACTIONS.n, size=8))


def test_batched_epsilon_greedy_mixes_random_and_greedy_rows():
    agent = DQN(OBS, ACTIONS, seed=6, eps_start=0.5, eps_end=0.5, **SMALL)
    obs = np.random.default_rng(0).normal(size=(400, 3)).astype(np.float32)
    greedy = np.argmax(agent.q.model(obs).numpy(), axis=1)
    rng = np.random.default_rng([6, 1])  # the agent's exploration stream
    random_rows = rng.random(400) < 0.5
    random_actions = rng.integers(4, size=400)
    actions = agent.act(obs)
    np.testing.assert_array_equal(actions, np.where(random_rows, random_actions, greedy))
    assert 150 < random_rows.sum() < 250


def test_acting_copy_matches_the_keras_network():
    agent = DQN(OBS, ACTIONS, seed=10, dueling=True, **SMALL)
    obs = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    np.testing.assert_allclose(agent.q_values(obs), agent.q.model(obs).numpy(), atol=1e-5)
    assert agent.act(obs[0], explore=False) == int(np.argmax(agent.q.model(obs[:1]).numpy()))


def test_dqn3_epsilon_schedule():
    args = dict(start=1.0, end=0.1, anneal_steps=1000, learn_start=500)
    assert dqn3_epsilon(0, **args) == 1.0
    assert dqn3_epsilon(500, **args) == 1.0
    assert dqn3_epsilon(1000, **args) == pytest.approx(0.55)
    assert dqn3_epsilon(1500, **args) == pytest.approx(0.1)
    assert dqn3_epsilon(10_000, **args) == pytest.approx(0.1)


def test_centred_rmsprop_is_dqn3_update():
    from rlkit.learn.optimizers import make_optimizer

    w = tf.Variable([1.0, -2.0])
    opt = make_optimizer("rmsprop_centered", 0.1)
    g_avg, g2 = np.zeros(2), np.zeros(2)
    expected = w.numpy().astype(np.float64)
    for dw in ([0.5, -1.0], [2.0, 0.25]):
        opt.apply_gradients([(tf.constant(dw), w)])
        dw = np.array(dw)
        g_avg = 0.95 * g_avg + 0.05 * dw
        g2 = 0.95 * g2 + 0.05 * dw**2
        expected -= 0.1 * dw / np.sqrt(g2 - g_avg**2 + 0.01)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5)


def dopamine_update(model, target_model, batch, optimizer, gamma=0.99):
    """Dopamine's DQN step, written independently: Huber loss (delta 1) *averaged* over the
    minibatch, one optimizer step."""
    q_next = target_model(batch.next_obs).numpy().max(axis=1)
    target = batch.rewards + (1 - batch.terminated) * gamma * q_next
    with tf.GradientTape() as tape:
        q = model(batch.obs)
        q_taken = tf.gather(q, batch.actions, axis=1, batch_dims=1)
        loss = tf.reduce_mean(losses.huber(tf.constant(target, tf.float32) - q_taken, 1.0))
    variables = model.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))


@pytest.mark.slow
def test_dqn3_update_is_dopamine_update_with_epsilon_over_batch_squared():
    """DQN3.0 sums the clipped-delta gradient over the minibatch and adds 0.01 inside the
    centred RMSProp's root; Dopamine averages the Huber loss and adds 1e-5. A sum is B times
    the mean and its variance B^2 times, so the two are the same step with Dopamine's
    epsilon = 0.01 / B^2 (9.8e-6 at B = 32: DQN3.0's update is Dopamine's)."""
    cfg = dict(SMALL, double_dqn=False, init="glorot", target_update=10**6, learning_rate=0.01)
    agent = DQN(OBS, ACTIONS, seed=12, loss="dqn3", reduction="sum", clip_delta=1.0,
                optimizer="rmsprop_centered", **cfg)  # fmt: skip
    perturb_target(agent)
    batch_size = SMALL["batch_size"]
    same, other = (DQN(OBS, ACTIONS, seed=12, **cfg).q for _ in range(2))
    same_opt = tf.keras.optimizers.RMSprop(0.01, rho=0.95, epsilon=0.01 / batch_size**2,
                                           centered=True)  # fmt: skip
    other_opt = tf.keras.optimizers.RMSprop(0.01, rho=0.95, epsilon=0.01, centered=True)
    start = [v.numpy().copy() for v in agent.q.variables]
    for seed in range(6):
        batch = make_batch(seed)
        assert (np.abs(agent.td_errors(batch)) > 1).any()  # the clip is exercised
        dopamine_update(same.model, agent.q_target.model, batch, same_opt)
        dopamine_update(other.model, agent.q_target.model, batch, other_opt)
        agent.learn(batch.as_block())
    moved = max(np.abs(v.numpy() - s).max() for v, s in zip(agent.q.variables, start, strict=True))
    assert moved > 0.01
    for a, b in zip(agent.q.variables, same.variables, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5, rtol=1e-4)
    # Dopamine's epsilon without the 1/B^2 is a measurably different step
    pairs = zip(agent.q.variables, other.variables, strict=True)
    assert max(np.abs(a.numpy() - b.numpy()).max() for a, b in pairs) > 1e-3


def test_dqn_rejects_continuous_actions():
    from rlkit.core.errors import UsageError

    with pytest.raises(UsageError, match="ddpg"):
        DQN.from_env(gym.make("Pendulum-v1"))


@pytest.mark.slow
def test_fused_xla_block_matches_plain_graph():
    plain = DQN(OBS, ACTIONS, seed=11, **{**SMALL, "jit_compile": False})
    xla = DQN(OBS, ACTIONS, seed=11, **{**SMALL, "jit_compile": True})
    rng = np.random.default_rng(1)
    for agent in (plain, xla):
        agent.replay.rng = np.random.default_rng(2)
    for _ in range(20):
        transition = (
            rng.normal(size=3),
            int(rng.integers(4)),
            rng.normal(),
            rng.normal(size=3),
            False,
            False,
        )
        plain.observe(*transition)
        xla.observe(*transition)
    for agent in (plain, xla):
        batch = agent.replay.sample(6, 4)
        agent.learner.train_block(*agent.learner.tensors(batch))
    for a, b in zip(plain.q.variables, xla.q.variables, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)


def test_polyak_target_update_closed_form():
    agent = DQN(OBS, ACTIONS, seed=12, target_tau=0.1, train_freq=6, gradient_steps=1, **SMALL)
    perturb_target(agent)
    target0 = [v.numpy().copy() for v in agent.q_target.variables]
    rng = np.random.default_rng(0)
    for step in range(1, 7):
        agent.observe(rng.normal(size=3), step % 4, 1.0, rng.normal(size=3), False, False)
        agent.update()
    for t0, online, target in zip(target0, agent.q.variables, agent.q_target.variables,
                                  strict=True):  # fmt: skip
        np.testing.assert_allclose(target.numpy(), 0.9 * t0 + 0.1 * online.numpy(), atol=1e-6)


def test_blocks_due_counts_train_freq_boundaries_from_start():
    from rlkit.core.schedules import blocks_due

    assert [blocks_due(t - 1, t, 4, 0) for t in range(1, 9)] == [0, 0, 0, 1, 0, 0, 0, 1]
    assert blocks_due(0, 16, 4, 0) == 4  # a vector step (or a rare update call) owes 4
    assert blocks_due(0, 16, 4, 9) == 2  # only the boundaries 12 and 16 are >= start
    assert blocks_due(0, 8, 4, 9) == 0


@pytest.mark.parametrize("dueling", [False, True])
def test_torch_init_is_pytorch_linear_default(dueling):
    agent = DQN(OBS, ACTIONS, seed=4, dueling=dueling, hidden_sizes=(300, 200))  # the default
    layers = agent.q.hidden + agent.q.heads
    for layer, fan_in in zip(layers, [3, 300] + [200] * len(agent.q.heads), strict=True):
        bound = fan_in**-0.5
        for w in (layer.kernel.numpy(), layer.bias.numpy()):
            assert np.abs(w).max() <= bound
            if w.size >= 200:  # uniform on the whole interval, not a narrower one
                assert np.abs(w).max() > 0.95 * bound
                assert abs(w.std() - bound / np.sqrt(3)) < 0.1 * bound
    # every tensor is an independent draw: two tensors drawn with one seed would hold the
    # same numbers in [-1, 1] once divided by their bounds
    fan_ins = [3, 300] + [200] * len(agent.q.heads)
    unit = [
        w.numpy().ravel() * np.sqrt(fan_in)
        for layer, fan_in in zip(layers, fan_ins, strict=True)
        for w in (layer.kernel, layer.bias)
    ]
    for i, a in enumerate(unit):
        for b in unit[i + 1 :]:
            n = min(len(a), len(b))
            assert not np.allclose(a[:n], b[:n], atol=1e-6)
    glorot = DQN(OBS, ACTIONS, seed=4, init="glorot", hidden_sizes=(300, 200))
    assert not glorot.q.hidden[0].bias.numpy().any()
    for online, target in zip(agent.q.variables, agent.q_target.variables, strict=True):
        np.testing.assert_array_equal(online.numpy(), target.numpy())


def test_unknown_init_is_a_usage_error():
    with pytest.raises(UsageError, match="init"):
        DQN(OBS, ACTIONS, init="he")
