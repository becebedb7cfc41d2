"""Schedules given as fractions of the run (issue 29): resolved to steps by the run's plan,
the same steps as before at each preset's own budget, and following a shorter run."""

from __future__ import annotations

import dataclasses

import pytest

from rlkit.agents.ddpg import config as ddpg_config
from rlkit.agents.ddpg.config import DDPGConfig
from rlkit.agents.dqn import config as dqn_config
from rlkit.agents.dqn.config import DQNConfig
from rlkit.config.schedule_fractions import resolve_fractions
from rlkit.run.plan import plan

#: preset -> (eps_anneal_steps, lr_anneal_steps) at its own budget, as its source line
#: states them and as the preset gave them in absolute steps before issue 29
OWN_BUDGET = {
    "CartPole-v1": (50_000, 8_000, 49_000),
    "Acrobot-v1": (100_000, 12_000, 100_000),
    "LunarLander-v3": (100_000, 12_000, 100_000),
    "MountainCar-v0": (120_000, 24_000, None),
}


def test_a_fraction_becomes_steps_of_the_run():
    config = DQNConfig(eps_anneal_fraction=0.12, lr_anneal_fraction=1.0)
    resolved = resolve_fractions(config, 20_000)
    assert (resolved.eps_anneal_steps, resolved.lr_anneal_steps) == (2_400, 20_000)
    assert resolve_fractions(DQNConfig(), 20_000) == DQNConfig()  # no fraction: as given
    ddpg = resolve_fractions(DDPGConfig(lr_anneal_fraction=0.5), 30_001)
    assert ddpg.lr_anneal_steps == 15_000  # round(15000.5) is banker's: 15000


@pytest.mark.parametrize("env", sorted(OWN_BUDGET))
def test_presets_resolve_to_their_old_steps_at_their_own_budget(env):
    steps, eps_steps, lr_steps = OWN_BUDGET[env]
    resolved = plan("dqn", env)
    assert resolved.settings.steps == steps
    assert resolved.agent_config.eps_anneal_steps == eps_steps
    if lr_steps is not None:
        assert resolved.agent_config.lr_anneal_steps == lr_steps


def test_a_shorter_run_anneals_over_its_own_length():
    resolved = plan("dqn", "Acrobot-v1", steps=20_000).agent_config
    assert (resolved.eps_anneal_steps, resolved.lr_anneal_steps) == (2_400, 20_000)


def test_cartpole_preset_is_still_the_generic_defaults_at_50k():
    preset = plan("dqn", "CartPole-v1").agent_config
    fractions = {"eps_anneal_fraction": 0.0, "lr_anneal_fraction": 0.0}
    assert dataclasses.replace(preset, **fractions) == DQNConfig()


def test_the_resolved_schedule_is_described():
    lines = dqn_config.describe_schedules(plan("dqn", "Acrobot-v1", steps=20_000).agent_config)
    assert lines == [
        "epsilon 1 -> 0.1 over 2,400 steps (12% of the run)",
        "learning rate 0.00063 -> 0 over 20,000 steps (100% of the run)",
    ]
    ddpg = DDPGConfig(lr_end_fraction=0.0, lr_anneal_steps=5_000)
    assert ddpg_config.describe_schedules(ddpg) == ["learning rate x1 -> x0 over 5,000 steps"]
    assert ddpg_config.describe_schedules(DDPGConfig()) == []  # constant rates: nothing to say


@pytest.mark.slow
def test_rlkit_train_prints_what_the_schedule_came_to(capsys, tmp_path):
    from rlkit.cli.main import main

    argv = ["train", "dqn", "--env", "Acrobot-v1", "--steps", "300", "--eval-every", "0",
            "--eval-episodes", "1", "--set", "hidden_sizes=8", "--quiet",
            "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "schedule: epsilon 1 -> 0.1 over 36 steps (12% of the run)" in err
    assert "schedule: learning rate 0.00063 -> 0 over 300 steps (100% of the run)" in err


def test_steps_given_above_a_presets_fraction_win(tmp_path):
    assert (
        plan("dqn", "Acrobot-v1", overrides=["eps_anneal_steps=5000"]).agent_config.eps_anneal_steps
        == 5000
    )
    config = tmp_path / "old.toml"  # an old run's config.toml: steps, no fraction keys
    config.write_text('[run]\nagent = "dqn"\nenv = "Acrobot-v1"\nsteps = 50000\n\n'
                      "[agent]\neps_anneal_steps = 12000\nlr_anneal_steps = 100000\n")  # fmt: skip
    old = plan(config_file=config).agent_config
    assert (old.eps_anneal_steps, old.lr_anneal_steps) == (12_000, 100_000)
    # a fraction given at the same level or above still resolves
    both = plan(config_file=config, overrides=["eps_anneal_fraction=0.5"]).agent_config
    assert both.eps_anneal_steps == 25_000 and both.lr_anneal_steps == 100_000


# -- a run that episodes may end sooner ------------------------------------------------------------
def test_with_an_episode_cap_a_fraction_is_of_the_step_budget_and_says_so():
    """As rl-zoo's schedules are of n_timesteps: the step budget, even where --episodes may
    end the run before it; the schedule line says what the fraction is of."""
    capped = plan("dqn", "Acrobot-v1", episodes=300)  # the preset's 100,000 steps
    assert capped.agent_config.eps_anneal_steps == 12_000
    given = plan("dqn", "Acrobot-v1", steps=20_000, episodes=300).agent_config
    assert (given.eps_anneal_steps, given.lr_anneal_steps) == (2_400, 20_000)
    lines = dqn_config.describe_schedules(capped.agent_config, capped.settings.steps, 300)
    assert lines[0] == ("epsilon 1 -> 0.1 over 12,000 steps (12% of the 100,000-step budget; "
                        "the 300-episode cap may end the run sooner)")  # fmt: skip
    assert dqn_config.describe_schedules(capped.agent_config, 100_000, 0)[0].endswith(
        "(12% of the run)"
    )


def test_a_fraction_of_a_run_capped_by_episodes_with_no_steps_given_is_refused():
    import re

    from rlkit.core.errors import UsageError

    fraction = ["eps_anneal_fraction=0.1"]
    says = re.escape("eps_anneal_fraction=0.1 is a share of the run's steps, and this run is "
                     "capped at 300 episodes with no step count given: give --steps N")  # fmt: skip
    with pytest.raises(UsageError, match=says):
        plan("dqn", "CartPole-v1", preset="none", episodes=300, overrides=fraction)
    # steps given, steps instead of the fraction, or no cap: as before
    given = plan(
        "dqn", "CartPole-v1", preset="none", episodes=300, steps=20_000, overrides=fraction
    )
    assert given.agent_config.eps_anneal_steps == 2_000
    steps = plan("dqn", preset="none", episodes=300, overrides=["eps_anneal_steps=5000"])
    assert steps.agent_config.eps_anneal_steps == 5_000
    assert plan("dqn", preset="none", overrides=fraction).agent_config.eps_anneal_steps == 5_000


@pytest.mark.slow
def test_rlkit_train_says_what_a_capped_runs_fraction_is_of(capsys, tmp_path):
    from rlkit.cli.main import main

    argv = ["train", "dqn", "--env", "Acrobot-v1", "--steps", "300", "--episodes", "1",
            "--eval-every", "0", "--eval-episodes", "1", "--set", "hidden_sizes=8", "--quiet",
            "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert ("schedule: epsilon 1 -> 0.1 over 36 steps (12% of the 300-step budget; the "
            "1-episode cap may end the run sooner)") in err  # fmt: skip
    refused = ["train", "dqn", "--preset", "none", "--episodes", "5", "--set",
               "lr_anneal_fraction=0.5", "--set", "learning_rate_end=0",
               "--out", str(tmp_path)]  # fmt: skip
    assert main(refused) == 2
    err = capsys.readouterr().err
    assert "lr_anneal_fraction=0.5 is a share of the run's steps" in err
    assert len(err.strip().splitlines()) == 1
