"""The compiled PPO's chunk run as rollout segments (``PPOProgram._chunk_graph``: the steps
up to the rollout's end in an inner loop, the update checked once after it) against the
generic chunk of :class:`~rlkit.run.compiled.program.CompiledProgram` (the update's check
after every vector step): the same episodes, metrics, updates, weights and program state,
bit for bit, over chunks that end mid-rollout, on a rollout's last step, and at an episode
cap (slow: two programs compile)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit.agents
from rlkit.envs.tf import make_tf_env
from rlkit.run.compiled.ppo import PPOProgram
from rlkit.run.compiled.program import CompiledProgram


class PerStepPPO(PPOProgram):
    """PPO's program on the generic chunk: one loop of vector steps, the update's
    ``tf.cond`` in each (the program before segments)."""

    def _chunk_graph(self, vector_steps, episode_cap):
        return CompiledProgram._chunk_graph(self, vector_steps, episode_cap)


def program(kind, env_id: str, gym_id: str, **overrides):
    settings = dict(hidden_sizes=(8,), value_hidden_sizes=(8,), n_steps=5, batch_size=5,
                    n_epochs=2, learning_rate=1e-2, **overrides)  # fmt: skip
    agent = rlkit.agents.PPO.from_env(gym.make(gym_id), seed=3, **settings)
    return kind(agent, make_tf_env(env_id), 2, seed=3, chunk=40)


@pytest.mark.slow
@pytest.mark.parametrize(
    "env_id, gym_id, overrides, capped",
    [("rlkit/CartPole-v1", "CartPole-v1", {}, True),
     ("rlkit/Pendulum-v1", "Pendulum-v1", {"target_kl": 0.01}, False)],
)  # fmt: skip
def test_segments_run_the_per_step_program_bit_for_bit(env_id, gym_id, overrides, capped):
    segments = program(PPOProgram, env_id, gym_id, **overrides)
    per_step = program(PerStepPPO, env_id, gym_id, **overrides)
    # 13 steps (2 rollouts and 3 steps), 2 (to the rollout's end), 7, 40 under an episode cap
    # one episode ahead (a CartPole episode ends within it; Pendulum's 200 steps do not), 13
    calls = [(13, None), (2, None), (7, None), (40, "cap"), (13, None)]
    for steps, cap in calls:
        if cap:
            cap = int(per_step.episodes.numpy()) + 1
        a, b = segments.run_chunk(steps, cap), per_step.run_chunk(steps, cap)
        assert a.steps == b.steps and a.updates == b.updates
        if cap:
            assert (a.steps < steps) == capped
        for got, want in zip(a[1:5], b[1:5], strict=True):
            np.testing.assert_array_equal(got, want)
        segments.after_chunk(a.updates)
        per_step.after_chunk(b.updates)
    assert segments.learner.num_updates == per_step.learner.num_updates > 0
    for name, value in per_step.state_dict().items():
        np.testing.assert_array_equal(segments.state_dict()[name], value, err_msg=name)
    for group, variables in per_step.agent.checkpoint_variables().items():
        theirs = segments.agent.checkpoint_variables()[group]
        for a_, b_ in zip(theirs, variables, strict=True):
            np.testing.assert_array_equal(np.asarray(a_), np.asarray(b_), err_msg=group)
