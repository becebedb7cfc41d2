"""FireReset (SB3's FireResetEnv, issue 53): FIRE then action 2 after each reset, a reset
again where either ends the episode, games without FIRE refused; on a fake game (no ROM
needed), and on ALE's Breakout where ale-py is installed (marked atari)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from rlkit.envs.atari import FireReset, has_fire


class FakeGame(gym.Env):
    """Records the actions and resets it is given; its observation is the number of calls
    so far; ``end_on``: the step numbers (counted from 1 over its life) that end an episode."""

    observation_space = gym.spaces.Box(0, 100, (1,), np.int64)
    action_space = gym.spaces.Discrete(4)

    def __init__(self, meanings=("NOOP", "FIRE", "RIGHT", "LEFT"), end_on=()) -> None:
        self.meanings, self.end_on = list(meanings), set(end_on)
        self.calls: list[str] = []

    def get_action_meanings(self) -> list[str]:
        return self.meanings

    def reset(self, *, seed=None, options=None):
        self.calls.append(f"reset(seed={seed})")
        return np.array([len(self.calls)]), {"reset": True}

    def step(self, action):
        self.calls.append(f"step({action})")
        steps = sum(c.startswith("step") for c in self.calls)
        return np.array([len(self.calls)]), 1.0, steps in self.end_on, False, {}


def test_reset_presses_fire_then_action_2():
    game = FakeGame()
    obs, info = FireReset(game).reset(seed=5)
    assert game.calls == ["reset(seed=5)", "step(1)", "step(2)"]
    assert obs.tolist() == [3] and info == {}  # the observation after action 2


def test_an_episode_ended_by_the_fire_steps_is_reset_again():
    game = FakeGame(end_on={1})
    obs, _ = FireReset(game).reset(seed=5)
    # FIRE ended it: reset (unseeded, not replaying the seed), then action 2
    assert game.calls == ["reset(seed=5)", "step(1)", "reset(seed=None)", "step(2)"]
    assert obs.tolist() == [4]
    game = FakeGame(end_on={2})
    obs, _ = FireReset(game).reset()
    assert game.calls == ["reset(seed=None)", "step(1)", "step(2)", "reset(seed=None)"]
    assert obs.tolist() == [4]  # the new episode's first observation


def test_steps_pass_through():
    game = FakeGame()
    env = FireReset(game)
    env.reset()
    assert env.step(3)[1:3] == (1.0, False) and game.calls[-1] == "step(3)"


def test_games_without_fire_as_action_1_are_refused():
    assert has_fire(FakeGame()) and not has_fire(FakeGame(("NOOP", "RIGHT", "LEFT")))
    assert not has_fire(FakeGame(("NOOP", "UP", "FIRE")))  # (SB3 asserts action 1)
    with pytest.raises(ValueError, match="FireReset needs FIRE as action 1"):
        FireReset(FakeGame(("NOOP", "RIGHT", "LEFT")))


@pytest.mark.atari
@pytest.mark.slow
def test_breakout_launches_the_ball_after_each_reset():
    pytest.importorskip("ale_py")
    pytest.importorskip("cv2")
    from rlkit.envs.atari import make_atari

    fired = make_atari("ALE/Breakout-v5", training=True, fire_reset=True)
    plain = make_atari("ALE/Breakout-v5", training=True)
    assert any(isinstance(e, FireReset) for e in _layers(fired))
    assert not any(isinstance(e, FireReset) for e in _layers(plain))
    pong = make_atari("ALE/Pong-v5", fire_reset=True)  # Pong: FIRE is action 1 too
    assert any(isinstance(e, FireReset) for e in _layers(pong))
    for fire, env in ((True, fired), (False, plain)):
        env.reset(seed=0)
        ended = next((t for t in range(200) if env.step(0)[2]), None)  # NOOPs only
        # launched, the ball is missed and a life lost (terminated in training); not launched,
        # nothing happens in 200 steps
        assert (ended is not None) == fire, (fire, ended)
        if fire:
            env.reset()  # after the lost life: FIRE again, the next life lost as well
            assert any(env.step(0)[2] for _ in range(200))


def _layers(env):
    while True:
        yield env
        if not hasattr(env, "env"):
            return
        env = env.env
