"""PPO's evaluation, greedy or sampled (``deterministic_eval``, issue 53): sampled evaluation
draws from a generator of its own (the training draws untouched), ``rlkit evaluate
--stochastic/--deterministic`` sets it and refuses agents without the choice, the phrase
says what was played; the ppo/atari preset's settings (rl-zoo's)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from rlkit.agents.ppo.acting import PPOActing
from rlkit.agents.ppo.learner import PolicySnapshot
from rlkit.core.errors import UsageError
from rlkit.run.evaluation import episodes_phrase, evaluation_mode, sampled


def acting_on(logits) -> PPOActing:
    acting = PPOActing(spaces.Discrete(len(logits)), lambda obs: np.asarray(obs, np.float32),
                       np.random.default_rng(0))  # fmt: skip
    acting.follow(PolicySnapshot(lambda x: np.tile(np.asarray(logits), (len(x), 1)), None))
    return acting


def test_a_draw_from_another_generator_leaves_the_agents_untouched():
    acting = acting_on([0.0, 0.0, 0.0])
    before = acting.rng.bit_generator.state
    other = np.random.default_rng(7)
    drawn = acting.act(np.zeros((500, 2)), True, rng=other)
    assert acting.rng.bit_generator.state == before
    assert set(drawn.tolist()) == {0, 1, 2}  # sampled, not the greedy 0
    again = acting.act(np.zeros((500, 2)), True, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(drawn, again)


class Agent:
    name = "dqn"


class PPOLike:
    name = "ppo"
    deterministic_eval = True


def test_evaluate_stochastic_sets_the_choice_and_refuses_agents_without_it():
    agent = PPOLike()
    evaluation_mode(agent, None)
    assert agent.deterministic_eval and not sampled(agent)
    evaluation_mode(agent, True)
    assert not agent.deterministic_eval and sampled(agent)
    evaluation_mode(agent, False)
    assert agent.deterministic_eval
    with pytest.raises(UsageError, match="apply to ppo and a2c; a dqn agent evaluates") as e:
        evaluation_mode(Agent(), True)
    assert "\n" not in str(e.value)
    assert not sampled(Agent())


def test_the_phrase_says_what_was_played():
    assert episodes_phrase(10, 0.0, sampled=True) == "10 sampled episodes"
    assert episodes_phrase(1) == "1 greedy episode"


def test_the_atari_preset_samples_in_evaluation_and_fires_after_reset():
    """rl-zoo: deterministic_eval = not is_atari; SB3's AtariWrapper: FireResetEnv."""
    import tomllib
    from pathlib import Path

    import rlkit.config

    folder = Path(rlkit.config.__file__).parent / "presets" / "ppo"
    atari = tomllib.loads((folder / "atari.toml").read_text())
    assert atari["agent"]["deterministic_eval"] is False
    assert atari["run"]["env_kwargs"] == {"fire_reset": True}
    minatar = tomllib.loads((folder / "minatar.toml").read_text())
    assert minatar["agent"].get("deterministic_eval", True)  # (not Atari for rl-zoo)


@pytest.mark.slow
def test_sampled_evaluation_leaves_training_bit_identical():
    """Two agents trained alike, one evaluated by sampling between its updates: the same
    weights after (the draws of evaluation come from its own generator)."""
    import rlkit
    import rlkit.agents

    def agent():
        return rlkit.agents.PPO.from_env(gym.make("CartPole-v1"), seed=0, n_steps=32,
                                         batch_size=32, hidden_sizes=(8,),
                                         value_hidden_sizes=(8,))  # fmt: skip

    plain, evaluated = agent(), agent()
    evaluated.deterministic_eval = False
    for a in (plain, evaluated):
        rlkit.train(a, gym.make("CartPole-v1"), steps=64, seed=0)
    before = evaluated.rng.bit_generator.state
    obs = np.zeros((200, 4), np.float32)
    drawn = evaluated.act(obs, explore=False)
    assert evaluated.rng.bit_generator.state == before and len(set(drawn.tolist())) == 2
    np.testing.assert_array_equal(evaluated.greedy_actions(obs), plain.act(obs, explore=False))
    assert "evaluate" in evaluated.state()["rngs"] and "evaluate" not in plain.state()["rngs"]
    for a in (plain, evaluated):
        rlkit.train(a, gym.make("CartPole-v1"), steps=64, seed=1)
    for x, y in zip(plain.learner.variables()["policy"],
                    evaluated.learner.variables()["policy"], strict=True):  # fmt: skip
        np.testing.assert_array_equal(x.numpy(), y.numpy())
