"""rlkit's environments written in TensorFlow (rlkit/envs/tf) against gymnasium's own.

The step-for-step tests play 10,000 random-action transitions in gymnasium (its own
``gym.make`` env, time limit included), record the exact state each one starts from (the
base env's ``state`` and the ``TimeLimit``'s step count), then replay all of them at once
as 10,000 copies of one compiled TensorFlow ``transition``. One transition in ten first
moves gymnasium's env to a state drawn from a wide box (walls, goals, clipping, wrapping
and terminations are reached that random play rarely reaches) and one in fifty to the last
step before its time limit (truncation). Continuous actions go beyond the action bounds one
time in ten (gymnasium clips them). float64 values agree within 1e-12 (relative; most of
them exactly: XLA fuses some multiply-adds into FMAs, a last-bit difference), float32
observations within one float32 rounding, terminations and truncations exactly.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from rlkit.envs.tf import ENV_IDS, make_tf_env
from rlkit.envs.tf.base import EnvState

N_TRANSITIONS = 10_000


def _wide_state(gym_id: str, rng: np.random.Generator) -> np.ndarray:
    """A state anywhere in the region an episode can reach (and beyond its walls)."""
    if gym_id == "CartPole-v1":
        return rng.uniform([-2.5, -3, -0.25, -3.5], [2.5, 3, 0.25, 3.5])
    if gym_id == "Acrobot-v1":
        return rng.uniform([-math.pi, -math.pi, -4 * math.pi, -9 * math.pi],
                           [math.pi, math.pi, 4 * math.pi, 9 * math.pi])  # fmt: skip
    if gym_id in ("MountainCar-v0", "MountainCarContinuous-v0"):
        return rng.uniform([-1.2, -0.07], [0.6, 0.07])
    if gym_id == "Pendulum-v1":
        return rng.uniform([-12.0, -8.0], [12.0, 8.0])
    raise AssertionError(gym_id)


def _time_limit(env: gym.Env) -> gym.wrappers.TimeLimit:
    while not isinstance(env, gym.wrappers.TimeLimit):
        env = env.env
    return env


def gym_trace(gym_id: str, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """``n`` transitions of gymnasium's ``gym_id``: the state and step count each starts
    from, the action, and what gymnasium returned."""
    env = gym.make(gym_id, disable_env_checker=True)
    limit, base = _time_limit(env), env.unwrapped
    rng = np.random.default_rng(seed)
    env.action_space.seed(seed)
    env.reset(seed=seed)
    rec: dict[str, list] = {k: [] for k in
                            ("physics", "time", "action", "obs", "reward", "terminated",
                             "truncated", "after")}  # fmt: skip
    for _ in range(n):
        if rng.random() < 0.1:  # a wide state; MCC keeps float32 states after a first step
            state = _wide_state(gym_id, rng)
            if gym_id == "MountainCarContinuous-v0":
                state = state.astype(np.float32)
                limit._elapsed_steps = max(limit._elapsed_steps, 1)
            base.state = state
        if rng.random() < 0.02 and limit._elapsed_steps > 0:  # (MCC: a float32 state)
            limit._elapsed_steps = limit._max_episode_steps - 1
        action = env.action_space.sample()
        if isinstance(env.action_space, gym.spaces.Box) and rng.random() < 0.1:
            action = (action * 3).astype(np.float32)  # beyond the bounds: gymnasium clips
        rec["physics"].append(np.array(base.state, dtype=np.float64))
        rec["time"].append(limit._elapsed_steps)
        rec["action"].append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        rec["obs"].append(obs)
        rec["reward"].append(float(reward))
        rec["terminated"].append(terminated)
        rec["truncated"].append(truncated)
        rec["after"].append(np.array(base.state, dtype=np.float64))
        if terminated or truncated:
            env.reset()
    return {k: np.array(v) for k, v in rec.items()}


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_step_for_step_equal_to_gymnasium(env_id):
    env = make_tf_env(env_id)
    trace = gym_trace(env.gym_id, N_TRANSITIONS)
    transition = tf.function(env.transition, jit_compile=True)
    state = EnvState(tf.constant(trace["physics"]), tf.constant(trace["time"], tf.int32))
    after, obs, reward, terminated, truncated = transition(
        state, tf.constant(trace["action"], env.action_dtype)
    )
    np.testing.assert_array_equal(terminated.numpy(), trace["terminated"])
    np.testing.assert_array_equal(truncated.numpy(), trace["truncated"])
    # XLA fuses a multiply and an add into one FMA where it can: a last bit, rarely more
    np.testing.assert_allclose(after.physics.numpy(), trace["after"], rtol=1e-12, atol=1e-12)
    if env_id == "rlkit/Pendulum-v1":
        # gymnasium's torque cost 0.001 * u ** 2 is float32 and numpy's float32 ``u ** 2`` is
        # libm's powf, which is not always correctly rounded (ours is u * u): one float32
        # rounding of that term apart, in about 0.1% of transitions
        u = np.clip(trace["action"][:, 0], -2, 2)
        slack = np.spacing(np.float32(0.001) * u * u).astype(np.float64)
        assert np.all(np.abs(reward.numpy() - trace["reward"]) <= 1e-12 * 20 + slack)
        assert np.mean(np.isclose(reward.numpy(), trace["reward"], rtol=1e-12, atol=0)) > 0.99
    else:
        np.testing.assert_allclose(reward.numpy(), trace["reward"], rtol=1e-12, atol=1e-12)
    # a float32 observation: the same, or one rounding apart where float64 differs by ~1e-16
    ours, theirs = obs.numpy(), trace["obs"]
    assert ours.dtype == theirs.dtype == np.float32
    assert np.all(np.abs(ours - theirs) <= np.spacing(np.abs(theirs)))
    # the test reaches what it claims to reach
    assert trace["terminated"].sum() >= 20 or env_id == "rlkit/Pendulum-v1"
    assert trace["truncated"].sum() >= 20
