"""labs/dopamine_minatar/epsilon_eval.py: a model played at several evaluation epsilons.

A hand-made agent and environment: the greedy action (0) never scores, the other one (1)
scores every step, so each figure the lab prints is known in closed form.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from labs.dopamine_minatar.epsilon_eval import longest_stretch, play

pytestmark = pytest.mark.labs


def test_longest_stretch_counts_consecutive_zero_rewards():
    assert longest_stretch([]) == 0
    assert longest_stretch([1.0, 1.0]) == 0
    assert longest_stretch([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0]) == 3
    assert longest_stretch([0.0] * 7) == 7


class StuckAgent:
    """Greedy action 0; at ``acting.eval_epsilon`` a random one of 2 from ``acting.eval_rng``."""

    def __init__(self):
        self.acting = SimpleNamespace(eval_epsilon=0.0, eval_rng=None)

    def stored_action(self, action):
        return int(action)

    def act(self, obs, explore=False):
        assert not explore
        epsilon = self.acting.eval_epsilon
        if epsilon > 0 and self.acting.eval_rng.random() < epsilon:
            return int(self.acting.eval_rng.integers(2))
        return 0


class ScoreOnOne:
    """Episodes of ``length`` steps; reward 1 for action 1, 0 for action 0."""

    def __init__(self, length: int):
        self.length, self.t, self.seeds = length, 0, []

    def reset(self, seed=None):
        self.t = 0
        self.seeds.append(seed)
        return np.zeros(1), {}

    def step(self, action):
        self.t += 1
        return np.zeros(1), float(action == 1), False, self.t >= self.length, {}


def test_a_stuck_greedy_policy_scores_nothing_for_the_whole_episode():
    env = ScoreOnOne(length=50)
    result = play(StuckAgent(), env, epsilon=0.0, episodes=3, seed=7, num_actions=2)
    assert result.returns == [0.0, 0.0, 0.0]
    assert result.action_counts.tolist() == [150, 0]
    assert result.longest_without_reward == 50
    assert env.seeds == [7, 8, 9]  # episode i reset with seed + i


def test_epsilon_is_the_agents_own_evaluation_rule_and_counted_per_action():
    env = ScoreOnOne(length=2000)
    agent = StuckAgent()
    result = play(agent, env, epsilon=0.5, episodes=2, seed=0, num_actions=2)
    assert agent.acting.eval_epsilon == 0.5
    # action 1 on a quarter of the steps (epsilon 0.5, then one of two actions)
    assert result.action_counts.sum() == 4000
    assert result.action_counts[1] / 4000 == pytest.approx(0.25, abs=0.03)
    assert sum(result.returns) == result.action_counts[1]
    assert "| 0.5 |" in result.row()
