"""DDPG's exploring action in the compiled loop (:func:`rlkit.agents.ddpg.acting.
graph_noisy_action`) against the Python loop's (:meth:`rlkit.agents.ddpg.acting.NoisyActing.act`
with :class:`~rlkit.learn.noise.GaussianNoise`), fed the same actor output, step and random
numbers (the graph's uniforms and normals, :func:`~rlkit.agents.ddpg.acting.
graph_exploration_draws` of a seed, handed to the Python rule in place of its generators):
the same actions to float32's rounding, ``atol = 1e-6 * half_range`` (the graph computes
in float32 throughout; numpy rounds the scaled noise once and draws the warm-up in float64),
eagerly and compiled with XLA. The random streams differ by design (stateless seeds against
numpy's generators): the draws are checked against their contract (uniform in [0, 1), standard
normal) within stated tolerances."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from rlkit.agents.ddpg.acting import NoisyActing, graph_exploration_draws, graph_noisy_action
from rlkit.core.spaces import observation_format
from rlkit.learn.noise import GaussianNoise
from rlkit.networks.actor_critic import ActionBounds

BOXES = [([-2.0], [2.0]), ([-1.0, 0.0, -5.0], [1.0, 3.0, 5.0])]


class Numbers:
    """A generator that hands out given numbers: ``uniform(low, high, size)`` as numpy's
    (``low + (high - low) * u``) of the given ``u``, ``standard_normal(shape)`` the given
    normals."""

    def __init__(self, uniform: np.ndarray, normal: np.ndarray | None) -> None:
        self.u, self.z = uniform.astype(np.float64), normal

    def uniform(self, low, high, size):
        assert self.u.shape == tuple(size)
        return low + (high - low) * self.u

    def standard_normal(self, shape):
        assert self.z is not None and self.z.shape == tuple(shape)
        return self.z.astype(np.float64)


def python_action(bounds, mu, step, noise_scale, learning_starts, uniform, normal):
    numbers = Numbers(uniform, normal)
    space = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    noise = GaussianNoise((bounds.dim,), noise_scale, numbers)  # type: ignore[arg-type]
    acting = NoisyActing(observation_format(space), bounds, (bounds.dim,), np.float32, noise,
                         noise_scale, learning_starts, numbers)  # type: ignore[arg-type]  # fmt: skip
    acting.follow(lambda x: mu)
    return acting.act(np.zeros((len(mu), 4), np.float32), explore=True, step=step)


EAGER = [(box, scale) for box in BOXES for scale in (0.1, 0.0, 1.5)]


@pytest.mark.slow
@pytest.mark.parametrize(("jit", "cases"), [(False, EAGER), (True, EAGER[3:4])],
                         ids=["eager", "xla"])  # fmt: skip
def test_the_same_numbers_make_the_same_actions(jit, cases):
    """Eagerly for every box and noise scale; compiled with XLA (as the loop acts) for one (a
    compilation each)."""
    rng = np.random.default_rng(0)
    learning_starts = 100
    checked = 0
    for box, noise_scale in cases:
        bounds = ActionBounds(np.float32(box[0]), np.float32(box[1]))

        def act(mu, step, seed, bounds=bounds, noise_scale=noise_scale):
            uniform, normal = graph_exploration_draws(seed, [mu.shape[0], bounds.dim])
            action = graph_noisy_action(mu, step, seed, bounds, noise_scale, learning_starts)
            return action, uniform, normal

        run = tf.function(act, jit_compile=True) if jit else act
        for k, step in enumerate([0, 99, 100, 5000]):
            # the actor's actions: in the box mostly, some at or past its edges
            mu = bounds.middle + bounds.half_range * rng.uniform(-1.2, 1.2, (32, bounds.dim))
            mu = mu.astype(np.float32)
            seed = tf.constant([k, int(noise_scale * 10)], tf.int32)
            got, uniform, normal = (x.numpy() for x in run(mu, tf.constant(step, tf.int64), seed))
            want = python_action(bounds, mu, step, noise_scale, learning_starts, uniform, normal)
            assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * bounds.half_range.max(),
                                       err_msg=f"{box} {noise_scale} step {step}")  # fmt: skip
            assert np.all(got >= bounds.low) and np.all(got <= bounds.high)
            checked += 1
    assert checked == 4 * len(cases)


def test_the_graphs_draws_are_uniform_and_standard_normal():
    """Over 100 seeds of ``[64, 3]``: uniforms in [0, 1) with mean 1/2, normals with mean 0
    and standard deviation 1 (each within 5 standard errors)."""
    draws = [graph_exploration_draws(tf.constant([3, k], tf.int32), [64, 3]) for k in range(100)]
    uniform = np.concatenate([u.numpy().ravel() for u, _ in draws])
    normal = np.concatenate([z.numpy().ravel() for _, z in draws])
    n = uniform.size
    assert uniform.min() >= 0.0 and uniform.max() < 1.0
    assert abs(uniform.mean() - 0.5) < 5 * np.sqrt(1 / 12 / n)
    assert abs(normal.mean()) < 5 / np.sqrt(n)
    assert abs(normal.std() - 1.0) < 5 / np.sqrt(2 * n)
    assert graph_exploration_draws(tf.constant([3, 0], tf.int32), [2, 1], noise=False)[1] is None
