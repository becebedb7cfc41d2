"""What a new user met (issue 55), the items tests/integration/test_new_user_wave5.py left:
1, 2, 3, 5, 6, 8, 11 and 12, and the hooks and ``from_env(None)`` left from item 4. Each
test here failed before its fix. Helpers: tests/integration/test_new_user_promises.py.

The promise (docs/cli.md): bad input gets one line on stderr, exit 2, nothing written;
from Python, :class:`rlkit.core.errors.UsageError` with one clear line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlkit.core.errors import UsageError
from tests.integration.test_new_user_promises import cli, refused

REPO = Path(__file__).resolve().parents[2]


def one_line(exc: pytest.ExceptionInfo) -> str:
    """The error's message, which must be one line."""
    text = str(exc.value)
    assert "\n" not in text, text
    return text


# -- 12: an agent that ships no presets ------------------------------------------------------------
def test_12_a_preset_of_an_agent_with_none_says_so_and_names_those_with_some(capsys):
    line = refused(capsys, "config", "mdqn", "--preset", "minatar")
    assert "mdqn ships no presets" in line
    assert "dqn" in line.split("mdqn ships no presets", 1)[1] and "(none)" not in line


def test_12_presets_of_an_agent_with_none_is_one_line(capsys):
    status, out, err = cli(capsys, "presets", "mdqn")
    assert status == 0, err
    assert out.strip().splitlines() == [out.strip()]
    assert out.startswith("mdqn ships no presets; agents with presets: ") and "dqn" in out
    assert "Traceback" not in err


def test_12_the_preset_table_of_no_rows_is_its_header():
    from rlkit.config.presets.results import COLUMNS, format_table

    assert format_table([], 200) == ["  ".join(COLUMNS)]


@pytest.mark.parametrize("agent", ["mdqn", "dqn"])
def test_12_config_preset_none_prints_the_generic_defaults(capsys, agent):
    status, plain, err = cli(capsys, "config", agent)
    assert status == 0, err
    status, out, err = cli(capsys, "config", agent, "--preset", "none")
    assert status == 0, err
    assert out == plain


# -- 5: a loss rlkit does not know: the list, and how to pass one's own ----------------------------
def test_5_an_unknown_loss_lists_the_names_and_says_how_to_pass_ones_own(capsys, tmp_path):
    line = refused(capsys, "train", "dqn", "--set", "loss=l1", "--out", tmp_path / "r")
    assert "must be one of dqn3, huber, mse;" in line
    assert "<python object>" not in line
    assert "DQN.from_env(env, loss=" in line and "docs/api.md" in line
    assert not (tmp_path / "r").exists()


def test_5_a_config_that_records_a_python_loss_still_loads():
    from rlkit.agents.dqn_config import DQNConfig
    from rlkit.config.options import make_config

    assert make_config(DQNConfig, {"loss": "<python object>"}).loss == "<python object>"


# -- 4 (left over): hooks that are not hooks at the Trainer's door, from_env(None) -----------------
@pytest.fixture(scope="module", name="small_agent")
def _small_agent():
    import rlkit

    return rlkit.agents.DQN.from_env("CartPole-v1", hidden_sizes=(8,), learning_starts=10,
                                     jit_compile=False)  # fmt: skip


@pytest.mark.parametrize(
    ("hooks", "message"),
    [
        (5, "hooks must be a list of rlkit.run.hooks.Hook objects, got an int"),
        ([object()], "hooks[0] is an object, not an rlkit.run.hooks.Hook"),
    ],
)
def test_4_train_and_the_trainer_refuse_hooks_that_are_not_hooks(small_agent, hooks, message):
    import gymnasium as gym

    import rlkit
    from rlkit.run.loop import Trainer

    env = gym.make("CartPole-v1")
    with pytest.raises(UsageError) as exc:
        rlkit.train(small_agent, env, steps=10, hooks=hooks)
    assert message in one_line(exc)
    with pytest.raises(UsageError) as exc:
        Trainer(small_agent, env, hooks=hooks)
    assert message in one_line(exc)
    trainer = Trainer(small_agent, env)
    with pytest.raises(UsageError) as exc:
        trainer.run(small_agent.num_steps + 5, hooks=hooks)
    assert message in one_line(exc)
    trainer.close()


def test_4_the_trainer_refuses_a_callback_that_is_no_function(small_agent):
    import gymnasium as gym

    from rlkit.run.loop import Trainer

    with pytest.raises(UsageError) as exc:
        Trainer(small_agent, gym.make("CartPole-v1"), callbacks=[5])
    assert "callbacks[0] is an int, not a function of (step, info, history)" in one_line(exc)


def test_4_check_hooks_lives_with_the_hooks():
    from rlkit.run import experiment
    from rlkit.run.hooks.base import Hook, check_hooks

    assert experiment.check_hooks is check_hooks
    mine = [Hook()]
    assert check_hooks(mine) == mine


@pytest.mark.parametrize("env", [None, 5, object()])
def test_4_from_env_refuses_what_is_no_environment(env):
    import rlkit

    with pytest.raises(UsageError) as exc:
        rlkit.agents.DQN.from_env(env)
    assert "env must be a gymnasium environment or its id" in one_line(exc)
