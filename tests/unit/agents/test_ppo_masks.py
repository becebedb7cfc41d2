"""PPO's and A2C's invalid-action masks (``action_masks``, issue 53): the masked
log-probability and entropy by hand, masked actions never drawn nor greedy, the masks read
from ``info["action_mask"]`` and from an ``action_masks()`` method, the one-line refusals,
the rollout keeping them; a few updates on an environment that raises on an invalid action,
a resume, and (slow) learning it."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf
from gymnasium import spaces

import rlkit
import rlkit.agents
from rlkit.agents.ppo.acting import PPOActing
from rlkit.agents.ppo.distributions import ActionHead
from rlkit.agents.ppo.learner import PolicySnapshot
from rlkit.core.errors import UsageError
from rlkit.envs.action_masks import check_action_masks, read_action_masks
from rlkit.envs.make import make_vector_env
from rlkit.replay.rollout import Rollout

STATES, ACTIONS, LENGTH = 4, 6, 8


class Gate(gym.Env):
    """State ``s`` of 4 (one-hot); of 6 actions only ``s, s + 1, s + 2`` are valid (its
    ``info["action_mask"]``), and ``s + 2`` scores 1. An invalid action raises: without
    masks an agent cannot even play. 8 steps an episode; random valid play scores 8/3."""

    observation_space = spaces.Box(0.0, 1.0, (STATES,), np.float32)
    action_space = spaces.Discrete(ACTIONS)

    def _mask(self) -> np.ndarray:
        mask = np.zeros(ACTIONS, np.int8)
        mask[self.state : self.state + 3] = 1
        return mask

    def _obs(self):
        return np.eye(STATES, dtype=np.float32)[self.state], {"action_mask": self._mask()}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.state, self.t = int(self.np_random.integers(STATES)), 0
        return self._obs()

    def step(self, action):
        if not self._mask()[int(action)]:
            raise ValueError(f"invalid action {action} in state {self.state}")
        reward = float(int(action) == self.state + 2)
        self.state, self.t = int(self.np_random.integers(STATES)), self.t + 1
        obs, info = self._obs()
        return obs, reward, False, self.t >= LENGTH, info


class GateWithMethod(Gate):
    """The same game giving its mask by sb3-contrib's ``action_masks()`` only."""

    def action_masks(self) -> np.ndarray:
        return self._mask().astype(bool)

    def _obs(self):
        return np.eye(STATES, dtype=np.float32)[self.state], {}


gym.register("rlkit-tests/Gate-v0", entry_point=Gate)
gym.register("rlkit-tests/GateMethod-v0", entry_point=GateWithMethod)


def test_masked_log_prob_and_entropy_by_hand():
    head = ActionHead(spaces.Discrete(3))
    logits = tf.constant([[1.0, 2.0, 3.0], [0.0, 0.0, 5.0]])
    masks = tf.constant([[True, False, True], [True, True, False]])
    log_prob, entropy = head.log_prob_entropy(logits, tf.constant([2, 1]), None, masks)
    # row 0 over actions {0, 2}: p = e^1 / (e^1 + e^3) = 1 / (1 + e^2); row 1 over {0, 1}: 1/2
    p0 = 1.0 / (1.0 + math.e**2)
    want_log_prob = [math.log(1.0 - p0), math.log(0.5)]
    want_entropy = [-(p0 * math.log(p0) + (1 - p0) * math.log(1 - p0)), math.log(2.0)]
    np.testing.assert_allclose(log_prob.numpy(), want_log_prob, rtol=1e-6)
    np.testing.assert_allclose(entropy.numpy(), want_entropy, rtol=1e-6)
    # without masks: the softmax over all three
    unmasked, _ = head.log_prob_entropy(logits, tf.constant([2, 1]), None)
    whole = 3.0 - math.log(sum(math.e**k for k in (1, 2, 3)))
    np.testing.assert_allclose(unmasked.numpy()[0], whole, rtol=1e-6)


def test_masked_multidiscrete_log_prob_by_hand():
    head = ActionHead(spaces.MultiDiscrete([2, 3]))
    logits = tf.constant([[0.0, 1.0, 2.0, 2.0, 9.0]])
    masks = tf.constant([[True, True, True, True, False]])  # dimension 1: its last action out
    log_prob, entropy = head.log_prob_entropy(logits, tf.constant([[1, 0]]), None, masks)
    # dimension 0: log(e / (1 + e)); dimension 1 over {0, 1} of logits (2, 2): log(1/2)
    p = math.e / (1 + math.e)
    np.testing.assert_allclose(log_prob.numpy(), [math.log(p) + math.log(0.5)], rtol=1e-6)
    h0 = -(p * math.log(p) + (1 - p) * math.log(1 - p))
    np.testing.assert_allclose(entropy.numpy(), [h0 + math.log(2.0)], rtol=1e-6)


def acting_on(action_space, logits) -> PPOActing:
    logits = np.asarray(logits, np.float64)
    acting = PPOActing(action_space, lambda obs: np.asarray(obs, np.float32),
                       np.random.default_rng(0))  # fmt: skip
    acting.follow(PolicySnapshot(lambda x: np.tile(logits, (len(x), 1)), None))
    return acting


def test_a_masked_action_is_never_drawn_nor_greedy():
    acting = acting_on(spaces.Discrete(4), [0.0, 5.0, 0.0, 1.0])  # action 1 near certain
    masks = np.tile([True, False, True, True], (5_000, 1))
    drawn = acting.act(np.zeros((5_000, 2)), True, masks=masks)
    assert not np.any(drawn == 1)
    counts = np.bincount(drawn, minlength=4) / 5_000  # softmax over {0, 2, 3}: e^0, e^0, e^1
    np.testing.assert_allclose(counts[[0, 2, 3]], np.array([1, 1, math.e]) / (2 + math.e),
                               atol=0.02)  # fmt: skip
    assert set(acting.act(np.zeros((5, 2)), False, masks=masks[:5]).tolist()) == {3}
    multi = acting_on(spaces.MultiDiscrete([2, 2]), [9.0, 0.0, 0.0, 9.0])
    got = multi.act(np.zeros((200, 2)), True, masks=np.tile([False, True, True, False], (200, 1)))
    assert np.all(got == [1, 0])


def test_masks_are_read_from_info_or_from_the_method():
    env = Gate()
    _, info = env.reset(seed=0)
    mask = read_action_masks(env, info, ACTIONS)
    assert mask.dtype == bool and mask.tolist() == env._mask().astype(bool).tolist()
    method = gym.make("rlkit-tests/GateMethod-v0")  # under gymnasium's wrappers
    _, info = method.reset(seed=0)
    assert info == {}
    assert read_action_masks(method, info, ACTIONS).sum() == 3
    vector = gym.make_vec("rlkit-tests/GateMethod-v0", 3, vectorization_mode="sync")
    vector.reset(seed=0)
    assert read_action_masks(vector, {}, ACTIONS, vector=True).shape == (3, ACTIONS)


@pytest.mark.parametrize(
    "masks, message",
    [
        (np.ones(5, bool), r"has shape \(5,\), expected \(6,\)"),
        (np.zeros(6, bool), "allows no action"),
        (np.ones((2, 6), bool), r"has shape \(2, 6\), expected \(6,\)"),
    ],
    ids=["wrong-shape", "all-false", "a-batch-for-one"],
)
def test_bad_masks_are_refused_in_one_line(masks, message):
    with pytest.raises(UsageError, match=message) as caught:
        check_action_masks(masks, ACTIONS)
    assert "\n" not in str(caught.value)


def test_a_multidiscrete_dimension_with_no_valid_action_is_refused():
    with pytest.raises(UsageError, match="mask of dimension 1 allows no action"):
        check_action_masks([1, 1, 0, 0, 0], 5, nvec=(2, 3))


def test_no_mask_from_the_environment_is_refused_in_one_line():
    with pytest.raises(UsageError, match="gives no action mask: give it an action_masks"):
        read_action_masks(gym.make("CartPole-v1"), {}, 2, name="CartPole-v1")


def test_masks_on_a_box_space_are_refused():
    env = gym.make("Pendulum-v1")
    with pytest.raises(UsageError, match="action_masks mask the logits of Discrete or Multi"):
        rlkit.agents.PPO.from_env(env, action_masks=True)


def test_the_rollout_keeps_the_masks_of_each_step_and_resumes_them():
    rollout = Rollout(2, (3,), mask_width=4)
    rollout.start_batch(np.zeros((2, 3)), [0, 1])
    rollout.put_masks([[1, 0, 1, 1], [0, 1, 1, 1]])
    rollout.append_batch([0, 1], [0.0, 0.0], np.ones((2, 3)), [False, False], [False, False])
    rollout.put_masks([[1, 1, 1, 0], [1, 1, 0, 1]])
    state = rollout.state_dict()
    again = Rollout(2, (3,), mask_width=4)
    again.load_state_dict(state)
    again.append_batch([2, 3], [1.0, 1.0], np.ones((2, 3)), [False, False], [False, False])
    masks = again.action_masks
    assert masks.shape == (2, 2, 4)
    assert masks[:, 0].tolist() == [[True, False, True, True], [True, True, True, False]]
    assert masks[:, 1].tolist() == [[False, True, True, True], [True, True, False, True]]
    assert Rollout(2, (3,)).action_masks is None  # (a store without masks)


def gate_agent(cls: str = "PPO", env=None, **overrides):
    settings = dict(hidden_sizes=(16,), value_hidden_sizes=(16,), n_steps=16)
    if cls == "PPO":
        settings.update(batch_size=32, n_epochs=2)
    env = env if env is not None else make_vector_env("rlkit-tests/Gate-v0", 2)
    return getattr(rlkit.agents, cls).from_env(env, seed=0, action_masks=True,
                                               **{**settings, **overrides})  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("cls, env_id", [("PPO", "rlkit-tests/Gate-v0"),
                                         ("A2C", "rlkit-tests/GateMethod-v0")])  # fmt: skip
def test_a_few_updates_with_masks_on_an_env_that_refuses_invalid_actions(cls, env_id):
    env = make_vector_env(env_id, 2)
    agent = gate_agent(cls, env)
    rlkit.train(agent, env, steps=96)  # 3 updates: no invalid action reached the env
    assert agent.num_updates == 3
    assert agent.rollout.action_masks.sum(axis=-1).min() == 3  # the masks of the states acted in
    mean, _ = rlkit.evaluate(agent, env_id, episodes=2)  # masks read in evaluation too
    assert 0 <= mean <= LENGTH
    with pytest.raises(ValueError, match="invalid action"):  # without masks it cannot play
        plain = rlkit.agents.PPO.from_env(env, seed=1, n_steps=16, batch_size=32)
        rlkit.train(plain, env, steps=64)


@pytest.mark.slow
def test_the_update_uses_the_stored_masks():
    """The learner's log-probabilities are those of the masked policy: with every action but
    the taken one masked, log pi(a|s) = 0."""
    agent = gate_agent()
    T, N = 16, 2
    rng = np.random.default_rng(0)
    obs = np.eye(STATES, dtype=np.float32)[rng.integers(STATES, size=(T, N))]
    actions = rng.integers(ACTIONS, size=(T, N))
    masks = np.zeros((T, N, ACTIONS), bool)
    np.put_along_axis(masks, actions[..., None], True, axis=-1)
    from rlkit.replay.rollout import RolloutBatch

    flags = np.zeros((T, N), bool)
    batch = RolloutBatch(obs, actions, np.zeros((T, N), np.float32), obs, flags, flags)
    _, _, log_probs = agent.learner.evaluate(batch, masks)
    np.testing.assert_allclose(log_probs, 0.0, atol=1e-6)
    _, _, unmasked = agent.learner.evaluate(batch, np.ones_like(masks))
    assert np.all(unmasked < -0.1)


@pytest.mark.slow
def test_the_compiled_loop_refuses_masks_in_one_line():
    from rlkit.agents.spec import load
    from rlkit.envs.tf import register_envs

    program = load(rlkit.agents.AGENTS["ppo"].compiled_program)  # (PPOProgram, where it is)
    register_envs()
    env = gym.make("rlkit/CartPole-v1")
    agent = rlkit.agents.PPO.from_env(env, action_masks=True, n_steps=8, batch_size=8)
    with pytest.raises(UsageError, match="compiled loop takes no invalid-action masks") as caught:
        program(agent, None, 2, 0, 8)
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_learns_the_gate_with_masks():
    """Random valid play scores 8/3 = 2.67 an episode; after 6,000 steps the greedy policy
    scores at least 7 of 8."""
    env = make_vector_env("rlkit-tests/Gate-v0", 4)
    agent = gate_agent(env=env, learning_rate=3e-3, n_epochs=4, batch_size=64)
    rlkit.train(agent, env, steps=6_000)
    mean, _ = rlkit.evaluate(agent, "rlkit-tests/Gate-v0", episodes=10, seed=100)
    assert mean >= 7, mean


@pytest.mark.slow
def test_a_masked_run_stopped_mid_rollout_resumes_to_the_uninterrupted_metrics(tmp_path):
    """The masks of the observation acted on next are in the checkpoint (the loop's state)
    and the half-filled rollout's (its masks); sampled evaluation's generator too."""
    from rlkit.cli.main import main
    from rlkit.run.folder import RunFolder

    argv = ["ppo", "--env", "rlkit-tests/Gate-v0", "--preset", "none", "--num-envs", "2",
            "--set", "n_steps=50", "--set", "batch_size=20", "--set", "hidden_sizes=[16]",
            "--set", "value_hidden_sizes=[16]", "--set", "action_masks=true", "--set",
            "deterministic_eval=false", "--eval-every", "250", "--eval-episodes", "2",
            "--checkpoint-every", "250", "--quiet"]  # fmt: skip
    runs = {}
    for name, steps in (("whole", "500"), ("stopped", "250")):
        assert main(["train", *argv, "--steps", steps, "--out", str(tmp_path / name)]) == 0
        (runs[name],) = (RunFolder(p) for p in (tmp_path / name).iterdir())
    assert main(["resume", str(runs["stopped"].path), "--steps", "500", "--quiet"]) == 0
    whole, resumed = (runs[k].metrics_path.read_text() for k in ("whole", "stopped"))
    assert resumed == whole
