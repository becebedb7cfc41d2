"""``IQN.td_errors(batch)`` (docs/api.md): each example's IQN loss, nothing updated.

On a tiny IQN built from CartPole-v1, fed by the experience protocol, against the loss
computed directly: the networks' values at the same fractions, the bootstrap action and
target by hand, and Dopamine's IQN loss transcribed to numpy
(tests/fixtures/dopamine_reference.py).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents import IQN
from rlkit.replay.memory import Batch
from tests.fixtures.dopamine_reference import dopamine_iqn_loss

SMALL = dict(hidden_sizes=(16,), quantile_embedding_dim=8, num_tau_samples=4,
             num_tau_prime_samples=5, num_quantile_samples=3, buffer_size=200,
             learning_starts=10**6, jit_compile=False, gamma=0.9)  # fmt: skip


def fed_agent(double_dqn: bool) -> IQN:
    """An IQN on CartPole-v1 whose replay holds 60 steps of random play (no update)."""
    env = gym.make("CartPole-v1")
    agent = IQN.from_env(env, seed=3, double_dqn=double_dqn, **SMALL)
    env.action_space.seed(3)
    obs, _ = env.reset(seed=3)
    agent.observe_first(obs)
    for _ in range(60):
        action = env.action_space.sample()
        next_obs, reward, terminated, truncated, _ = env.step(action)
        agent.observe(action, reward, next_obs, terminated, truncated)
        if terminated or truncated:
            obs, _ = env.reset()
            agent.observe_first(obs)
    assert agent.num_updates == 0
    return agent


def batch_with_ends(agent: IQN, size: int = 8) -> Batch:
    """``size`` of the replay's transitions, two of them terminal (by hand: no discount
    given, so the learner's ``gamma`` where not terminated)."""
    held = agent.replay.sample(60)
    ends = np.flatnonzero(held.terminated & ~held.truncated)
    goes_on = np.flatnonzero(~held.terminated & ~held.truncated)
    assert len(ends) >= 2 and len(goes_on) >= size - 2
    rows = np.concatenate([ends[:2], goes_on[: size - 2]])
    return Batch(held.obs[rows], held.actions[rows], held.rewards[rows], held.next_obs[rows],
                 held.terminated[rows], held.truncated[rows])  # fmt: skip


def loss_directly(agent: IQN, batch: Batch, taus, tau_primes, tau_k) -> np.ndarray:
    """``sum_i mean_j rho_tau_i(r + pcont Z'_{tau'_j}(s', a*) - Z_{tau_i}(s, a))`` per example,
    with ``a* = argmax_a mean_k Z_{tau_k}(s', a)`` (the online network's with Double DQN,
    else the target's), through Dopamine's transcribed loss."""
    learner = agent.learner
    obs, next_obs = tf.constant(batch.obs), tf.constant(batch.next_obs)
    z = learner.q.values(obs, tf.constant(taus)).numpy()  # [B, N, A]
    target = learner.q_target.values(next_obs, tf.constant(tau_primes)).numpy()  # [B, N', A]
    chooser = learner.q if agent.config.double_dqn else learner.q_target
    choice = chooser.values(next_obs, tf.constant(tau_k)).numpy()  # [B, K, A]
    a_star = np.argmax(choice.mean(axis=1), axis=1)
    rows = np.arange(len(batch.actions))
    pcont = agent.config.gamma * (1.0 - np.asarray(batch.terminated, np.float32))
    targets = batch.rewards[:, None] + pcont[:, None] * target[rows, :, a_star]  # [B, N']
    chosen = z[rows, :, np.asarray(batch.actions)]  # [B, N]
    return dopamine_iqn_loss(chosen[..., None], taus[..., None], targets[..., None],
                             agent.config.kappa)  # fmt: skip


@pytest.mark.parametrize("double_dqn", [False, True])
def test_td_errors_is_each_examples_loss_at_fractions_of_its_own(double_dqn, monkeypatch):
    agent = fed_agent(double_dqn)
    learner = agent.learner
    batch = batch_with_ends(agent)
    rng = np.random.default_rng(0)
    fixed = tuple(rng.random((8, n)).astype(np.float32) for n in (4, 5, 3))
    generators = []

    def draw_fractions(batch_size, generator=None):
        generators.append(generator)
        return tuple(tf.constant(f) for f in fixed)

    learn_state = learner.fractions["learn"].state.numpy()
    monkeypatch.setattr(learner, "draw_fractions", draw_fractions)
    td = agent.td_errors(batch)
    assert td.shape == (8,) and td.dtype == np.float32
    np.testing.assert_allclose(td, loss_directly(agent, batch, *fixed), rtol=1e-5, atol=1e-6)
    # drawn from a generator of its own: no training draw spent, nothing learnt
    assert generators[0] is not None and generators[0] is not learner.fractions["learn"]
    np.testing.assert_array_equal(learner.fractions["learn"].state.numpy(), learn_state)
    assert agent.num_updates == 0


def test_td_errors_draws_fresh_fractions_each_call():
    agent = fed_agent(double_dqn=False)
    batch = batch_with_ends(agent)
    first, second = agent.td_errors(batch), agent.td_errors(batch)
    assert np.isfinite(first).all() and (first >= 0).all()  # a loss (kappa 1): not negative
    assert not np.array_equal(first, second)
