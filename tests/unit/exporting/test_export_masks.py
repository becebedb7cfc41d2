"""Invalid-action masks as an input of an export (issue 53): a PPO or A2C made with
``action_masks`` exports ``action`` and ``sample`` taking ``action_mask`` bool ``[B, width]``
too, checked against the agent with masks that change its choices (SavedModel and TFLite);
``rlkit evaluate`` of such an export reads the environment's masks; an export without masks
refuses them in one line."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit
from rlkit.core.errors import UsageError
from rlkit.exporting.check import random_masks
from tests.unit.agents.test_ppo_masks import ACTIONS, STATES, gate_agent


def spread(agent):
    """The policy's weights moved away from their near-uniform start."""
    rng = np.random.default_rng(0)
    for v in agent.learner.variables()["policy"]:
        v.assign(rng.normal(0.0, 1.0, v.shape).astype(np.float32))
    agent.refresh_policy()
    return agent


def test_random_masks_leave_each_row_and_each_dimension_a_valid_action():
    class Agent:
        action_mask_width = 7
        action_space = type("Space", (), {"nvec": np.array([3, 4])})()

    masks = random_masks(Agent(), 500)
    assert masks.shape == (500, 7) and masks[:, :3].any(axis=1).all()
    assert masks[:, 3:].any(axis=1).all() and 0.4 < masks.mean() < 0.7
    assert random_masks(object(), 5) is None


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["saved_model", "tflite"])
def test_a_masked_export_takes_masks_and_acts_as_the_agent(tmp_path, fmt):
    from rlkit.exporting.exported import ExportedPolicy

    agent = spread(gate_agent("PPO"))
    result = agent.export(tmp_path / "export", env="rlkit-tests/Gate-v0", format=fmt,
                          check_observations=300)  # fmt: skip
    assert "equal the agent's greedy act" in result.lines[0]
    assert "sample equals the agent's draw" in result.lines[1]
    assert result.metadata["action_mask"]["shape"] == [None, ACTIONS]
    exported = ExportedPolicy(tmp_path / "export")
    assert exported.action_mask_width == ACTIONS
    obs = np.eye(STATES, dtype=np.float32)[np.arange(200) % STATES]
    masks = random_masks(agent, 200, seed=5)
    got = exported.act(obs, action_masks=masks)
    np.testing.assert_array_equal(got, agent.greedy_actions(obs, masks))
    assert masks[np.arange(200), got].all()  # (never a masked action)
    assert (got != exported.act(obs)).any()  # (the masks changed choices: not vacuous)
    noise = np.random.default_rng(2).random((200, ACTIONS)).astype(np.float32)
    drawn = exported.run("sample", obs, noise=noise, action_mask=masks)["action"]
    assert masks[np.arange(200), drawn].all()
    np.testing.assert_array_equal(drawn, agent.act_with_noise(obs, noise, masks))


@pytest.mark.slow
def test_an_export_evaluates_with_the_environments_masks(tmp_path):
    """Gate raises on an invalid action: the export plays its episodes only if it reads the
    environment's masks."""
    from rlkit.exporting.exported import ExportedPolicy

    agent = spread(gate_agent("A2C"))
    agent.export(tmp_path / "export", env="rlkit-tests/Gate-v0", check_observations=100)
    exported = ExportedPolicy(tmp_path / "export")
    mean, _ = rlkit.evaluate(exported, "rlkit-tests/Gate-v0", episodes=5, seed=3)
    want, _ = rlkit.evaluate(agent, "rlkit-tests/Gate-v0", episodes=5, seed=3)
    assert mean == want


@pytest.mark.slow
def test_an_export_without_masks_refuses_them_in_one_line(tmp_path):
    import gymnasium as gym

    from rlkit.exporting.exported import ExportedPolicy

    plain = rlkit.agents.PPO.from_env(gym.make("CartPole-v1"), seed=0, hidden_sizes=(8,),
                                      value_hidden_sizes=(8,))  # fmt: skip
    plain.export(tmp_path / "plain", env="CartPole-v1", check_observations=50)
    exported = ExportedPolicy(tmp_path / "plain")
    assert exported.action_mask_width == 0 and "action_mask" not in exported.metadata
    with pytest.raises(UsageError, match="^this export takes no action masks") as error:
        exported.act(np.zeros((1, 4), np.float32), action_masks=np.ones((1, 2), bool))
    assert "\n" not in str(error.value)
