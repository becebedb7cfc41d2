"""rlkit tune: spaces, the spec, the ranking and the best configuration (fast), and one small
tune on Ray end to end (slow)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlkit.agents.ddpg.config import DDPGConfig
from rlkit.agents.dqn.config import DQNConfig
from rlkit.cli.main import main
from rlkit.core.errors import UsageError
from rlkit.run.folder import RunFolder
from rlkit.sweeps import tuning
from rlkit.sweeps.search_spaces import (
    Dimension,
    default_space,
    format_value,
    parse_dimension,
    parse_spaces,
    resolve_space,
    trial_overrides,
)


# -- spaces ---------------------------------------------------------------------------------------
def test_dimensions_parse_and_print_back():
    assert parse_dimension("loguniform(1e-5,1e-2)") == Dimension("loguniform", (1e-5, 1e-2))
    assert parse_dimension(" int(1, 8) ") == Dimension("int", (1.0, 8.0))
    lists = parse_dimension("choice([64,64],[256])")
    assert lists.values == ("[64,64]", "[256]") and lists.fixed is None
    assert parse_dimension("choice(-1)").fixed == "-1"
    for text in ["loguniform(1e-5,1e-2)", "uniform(0,0.2)", "int(1,8)", "choice(a,b)"]:
        dim = parse_dimension(text)
        assert parse_dimension(str(dim)) == dim
    assert str(parse_dimension("loguniform(1e-5,1e-2)")) == "loguniform(1e-5,0.01)"


@pytest.mark.parametrize(
    "text, says",
    [
        ("normal(0,1)", "expected one of"),
        ("uniform(1,0)", "low < high"),
        ("uniform(0,inf)", "finite"),
        ("loguniform(0,1)", "bounds > 0"),
        ("int(1.5,3)", "whole-number"),
        ("choice(1,,2)", "expected one of"),
        ("choice(1,2,1)", "gives 1 twice"),
        ("uniform(a,b)", "expected one of"),
    ],
)
def test_malformed_dimensions_are_one_line(text, says):
    with pytest.raises(UsageError, match=says):
        parse_dimension(text, "k")


def test_the_space_replaces_drops_and_checks_keys():
    given = parse_spaces(["learning_rate=loguniform(1e-4,1e-3)"])
    space = resolve_space("dqn", DQNConfig, given, {"gamma": "0.98"})
    assert space["learning_rate"] == Dimension("loguniform", (1e-4, 1e-3))
    assert "gamma" not in space and "batch_size" in space  # fixed keys are not searched
    only = resolve_space("dqn", DQNConfig, given, {}, only_given=True)
    assert list(only) == ["learning_rate"]
    with pytest.raises(UsageError, match="no config key lr"):
        resolve_space("dqn", DQNConfig, parse_spaces(["lr=uniform(0,1)"]), {})
    with pytest.raises(UsageError, match="chooses code"):
        resolve_space("dqn", DQNConfig, parse_spaces(["q_network=choice(a:b)"]), {})
    with pytest.raises(UsageError, match="both --space and --set"):
        resolve_space("dqn", DQNConfig, given, {"learning_rate": "1e-3"})
    with pytest.raises(UsageError, match="batch_size=choice.*must be > 0"):
        resolve_space("dqn", DQNConfig, parse_spaces(["batch_size=choice(0,32)"]), {})
    with pytest.raises(UsageError, match="twice"):
        parse_spaces(["gamma=choice(0.9)", "gamma=choice(0.99)"])


def test_every_default_space_is_valid_for_its_agent():
    from rlkit.agents.reinforce.config import ReinforceConfig

    for agent, config in [("dqn", DQNConfig), ("ddpg", DDPGConfig), ("reinforce", ReinforceConfig)]:
        assert resolve_space(agent, config, {}, {}) == default_space(agent)


def test_trial_values_round_trip_and_ties_follow_their_leader():
    values = trial_overrides("ddpg", {"actor_learning_rate": 0.1 + 0.2, "tau": "0.005"}, {})
    assert values["critic_learning_rate"] == values["actor_learning_rate"] == repr(0.1 + 0.2)
    assert float(values["actor_learning_rate"]) == 0.1 + 0.2
    fixed = trial_overrides("ddpg", {"actor_learning_rate": 1e-3}, {"critic_learning_rate": "1"})
    assert fixed["critic_learning_rate"] == "1"  # a set follower keeps its value
    assert format_value(True) == "true" and format_value(64) == "64"


# -- the spec, the ranking, the best configuration ------------------------------------------------
def spec(**changes) -> tuning.TuneSpec:
    base = dict(agent="dqn", train={"env": "CartPole-v1", "steps": 1000, "eval_every": 500,
                                    "eval_episodes": 2, "overrides": []},
                space={"learning_rate": "loguniform(1e-4,1e-2)"}, trials=4, seeds=[1, 2],
                top=2, grace=500, fixed={"hidden_sizes": "[16]"})  # fmt: skip
    return tuning.TuneSpec(**{**base, **changes})


def fake_trial(out: Path, s: tuning.TuneSpec, label: str, lr: str, score: float, steps: int,
               finished: bool) -> None:  # fmt: skip
    tuning.write_values(out, label, s.overrides({"learning_rate": lr}))
    folder = tuning.search_run(out, label, s)
    folder.mkdir(parents=True)
    (folder / "metrics.csv").write_text(
        f"kind,step,episode,return,length,return_std\neval,{steps},3,{score},2,0.0\n"
    )
    if finished:
        RunFolder(folder).write_summary(
            {"steps": steps, "final_model": {"eval_return_mean": score + 1}}
        )


def test_spec_round_trips_and_ranks_what_ran_to_the_end(tmp_path):
    s = spec()
    s.save(tmp_path)
    assert tuning.TuneSpec.load(tmp_path) == s and tuning.is_tune(tmp_path)
    fake_trial(tmp_path, s, "trial-a", "0.001", 50.0, 1000, True)
    fake_trial(tmp_path, s, "trial-b", "0.01", 90.0, 500, False)  # stopped early
    fake_trial(tmp_path, s, "trial-c", "0.0003", 70.0, 1000, True)
    rows = tuning.search_trials(tmp_path, s)
    assert [(r["trial"], r["score"], r["finished"]) for r in rows] == [
        ("trial-a", 51.0, True), ("trial-b", 90.0, False), ("trial-c", 71.0, True)
    ]  # fmt: skip
    picked = tuning.pick(rows, 2)
    assert list(picked) == ["trial-c", "trial-a"]  # a stopped trial is never picked
    assert picked["trial-c"] == {"learning_rate": "0.0003", "hidden_sizes": "[16]"}
    for label, finals in {"trial-c": [60.0, 80.0], "trial-a": [90.0, 100.0]}.items():
        for seed, final in zip(s.seeds, finals, strict=True):
            run = tuning.trial_dir(tmp_path / tuning.FINAL_DIR, label, seed)
            run.mkdir(parents=True)
            RunFolder(run).write_summary({"final_model": {"eval_return_mean": final}})
    ranking = tuning.rank(tmp_path, s, picked)
    assert [(r["trial"], r["final_mean"]) for r in ranking] == [
        ("trial-a", 95.0),
        ("trial-c", 70.0),
    ]
    tuning.write_results(tmp_path, s, rows, ranking)
    lines = (tmp_path / "tune.csv").read_text().splitlines()
    assert lines[0].startswith("trial,score,steps,stopped_early,fresh_seed_mean")
    assert lines[2].startswith("trial-b,90,500,true,,")
    assert lines[1].startswith("trial-a,51,1000,false,95,90 100")
    table = tuning.format_table(rows, ranking, s)
    assert "1. trial-a: final 95.0 (90.0, 100.0)" in table and "1 stopped early" in table


def test_the_best_config_file_trains_the_trial_it_came_from(tmp_path):
    from rlkit.run.plan import plan

    s = spec(train={"env": "Acrobot-v1", "steps": 20_000, "eval_every": 2_000,
                    "eval_episodes": 5, "preset": "none", "overrides": []})  # fmt: skip
    values = s.overrides({"learning_rate": 0.00123, "eps_anneal_fraction": 0.25})
    path = tmp_path / "best.toml"
    path.write_text(tuning.best_config_text(s, "trial-x", values, "final 1.0"))
    from_file = plan(config_file=path)
    trial = s.plan(values, s.search_seed)
    assert from_file.settings == trial.settings
    assert from_file.agent_config == trial.agent_config
    assert from_file.agent_config.eps_anneal_steps == 5_000  # 0.25 of the 20,000 steps
    # a tune on a config file of one's own: its [agent] keys are in best.toml too
    own = tmp_path / "own.toml"
    own.write_text("[agent]\nlearning_starts = 777\ndouble_dqn = false\n")
    s = spec(train={"env": "CartPole-v1", "steps": 3_000, "eval_every": 1_000,
                    "eval_episodes": 2, "episodes": 0, "config_file": str(own),
                    "overrides": []})  # fmt: skip
    path.write_text(tuning.best_config_text(s, "trial-y", values, "final 2.0"))
    again, trial = plan(config_file=path), s.plan(values, s.search_seed)
    assert again.agent_config == trial.agent_config
    import dataclasses  # best.toml names no preset: all its values are written out

    assert dataclasses.replace(again.settings, preset=trial.settings.preset) == trial.settings
    assert again.agent_config.learning_starts == 777 and not again.agent_config.double_dqn


def test_with_no_trial_run_to_the_end_the_best_stopped_ones_are_ranked():
    rows = [{"trial": "a", "values": {}, "score": -500.0, "finished": False},
            {"trial": "b", "values": {}, "score": -200.0, "finished": False},
            {"trial": "c", "values": {}, "score": float("-inf"), "finished": False}]  # fmt: skip
    assert list(tuning.pick(rows, 3)) == ["b", "a"]  # a diverged trial is never ranked


# -- the command ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv, says",
    [
        (["--trials", "0"], "--trials"),
        (["--space", "learning_rate=normal(0,1)"], "malformed --space"),
        (["--space", "lr=uniform(0,1)"], "no config key lr"),
        (["--space", "jit_compile=choice(true,false)"], "chooses code"),
        (["--env", "NoSuchEnv-v0"], "unknown environment"),
        (["--set", "gamma=2"], "gamma"),
        (["--steps", "1000", "--eval-every", "0"], "--eval-every must be between"),
        (["--steps", "1000", "--eval-every", "1000"], "--eval-every must be between"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_any_trial(capsys, tmp_path, argv, says):
    status = main(["tune", "dqn", "--out", str(tmp_path / "t"), *argv])
    err = capsys.readouterr().err
    assert status == 2 and says in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()


def test_an_episode_capped_agent_needs_steps_and_no_cap(capsys):
    assert main(["tune", "reinforce", "--env", "CartPole-v1"]) == 2
    assert "--episodes 0" in capsys.readouterr().err
    argv = ["tune", "reinforce", "--env", "CartPole-v1", "--steps", "20000", "--episodes", "0"]
    assert main([*argv, "--show-space"]) == 0


def test_the_space_is_checked_against_the_whole_run(capsys):
    argv = ["tune", "ddpg", "--env", "Pendulum-v1", "--only-space", "--show-space",
            "--space", "policy_delay=int(1,4)"]  # fmt: skip
    assert main([*argv, "--preset", "Pendulum-v1-td3"]) == 0  # the preset turns TD3 on
    assert main([*argv, "--preset", "Pendulum-v1"]) == 2
    assert "policy_delay is TD3's" in capsys.readouterr().err


def test_show_space_prints_the_space_with_ties_and_fixed_keys(capsys):
    status = main(["tune", "ddpg", "--env", "Pendulum-v1", "--set", "gamma=0.98", "--show-space"])
    out = capsys.readouterr().out
    assert status == 0
    assert "actor_learning_rate  loguniform(1e-5,0.01)" in out
    assert "critic_learning_rate = actor_learning_rate" in out
    assert "fixed (--set):\n  gamma = 0.98" in out and "  gamma  " not in out


def test_show_space_names_only_the_ties_a_trial_applies(capsys):
    """A tie applies only where its leader is searched (trial_overrides): a leader fixed
    with --set, or left out of the space, leaves the follower at the run's own value."""
    argv = ["tune", "ddpg", "--env", "Pendulum-v1", "--show-space"]
    assert main([*argv, "--set", "actor_learning_rate=3e-4"]) == 0
    out = capsys.readouterr().out
    assert "tied (each trial):\n  critic_hidden_sizes = actor_hidden_sizes\nnot tied:" in out
    assert "critic_learning_rate = actor_learning_rate" not in out
    # the critic's own rate (the default, 1e-3) is what every trial runs with
    assert "  critic_learning_rate = 0.001 (the run's own: actor_learning_rate is set)" in out
    assert main([*argv, "--only-space", "--space", "tau=choice(0.01,0.02)"]) == 0
    out = capsys.readouterr().out
    assert "tied" not in out.replace("not tied", "") and " = actor_" not in out
    assert (
        "critic_hidden_sizes = [64, 64] (the run's own: actor_hidden_sizes is not searched)" in out
    )
    fixed = {"actor_hidden_sizes": "[64]"}  # what the trials do: the same
    assert trial_overrides("ddpg", {"tau": "0.01"}, fixed) == {"tau": "0.01", **fixed}
    tied = trial_overrides("ddpg", {"actor_learning_rate": "1e-3"}, fixed)
    assert tied["critic_learning_rate"] == "1e-3" and "critic_hidden_sizes" not in tied


def test_an_interrupted_tune_exits_130_with_the_resume_command(capsys, monkeypatch, tmp_path):
    from rlkit.sweeps import tune_on_ray
    from rlkit.sweeps.sweep_on_ray import SweepInterrupted

    def interrupted(spec, out, **kwargs):
        raise SweepInterrupted(f"tune stopped; continue with: rlkit tune --resume {out}")

    monkeypatch.setattr(tune_on_ray, "run_tune", interrupted)
    status = main(["tune", "dqn", "--steps", "1000", "--out", str(tmp_path / "t")])
    assert status == 130
    assert f"rlkit tune --resume {tmp_path / 't'}" in capsys.readouterr().err


@pytest.mark.long
@pytest.mark.ray
@pytest.mark.slow
def test_a_small_tune_end_to_end(tmp_path):
    """4 trials of 1,200 CartPole steps (ASHA at 400 and 1,200), the best 2 on one fresh
    seed: tune.csv, best.toml, and a search trial equal to 'rlkit train' bit for bit."""
    out = tmp_path / "tune"
    command = [sys.executable, "-m", "rlkit.cli.main", "tune", "dqn", "--env", "CartPole-v1",
               "--steps", "1200", "--eval-every", "400", "--eval-episodes", "2", "--trials", "4",
               "--top", "2", "--seeds", "1", "--max-concurrent", "2", "--only-space",
               "--space", "learning_rate=loguniform(1e-4,1e-2)", "--set", "hidden_sizes=[16]",
               "--set", "learning_starts=100", "--out", str(out)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "best trials on fresh seeds 1" in done.stdout
    rows = (out / "tune.csv").read_text().splitlines()
    assert len(rows) == 5 and rows[0].startswith("trial,score")
    spec = tuning.TuneSpec.load(out)
    trial = next(r for r in tuning.search_trials(out, spec) if r["finished"])
    again = tmp_path / "again"
    sets = [f"--set={k}={v}" for k, v in trial["values"].items()]
    train = [sys.executable, "-m", "rlkit.cli.main", "train", "dqn", "--env", "CartPole-v1",
             "--steps", "1200", "--eval-every", "400", "--eval-episodes", "2", "--seed", "0",
             *sets, "--quiet", "--out", str(again)]  # fmt: skip
    assert subprocess.run(train, capture_output=True, timeout=300).returncode == 0
    (run,) = again.iterdir()
    searched = tuning.search_run(out, trial["trial"], spec)
    assert (run / "metrics.csv").read_text() == (searched / "metrics.csv").read_text()
    best = out / "best.toml"
    assert best.is_file() and json.loads((out / "search.json").read_text())["picked"]
    rerun = [sys.executable, "-m", "rlkit.cli.main", "train", "--config", str(best), "--steps",
             "200", "--quiet", "--out", str(tmp_path / "best")]  # fmt: skip
    assert subprocess.run(rerun, capture_output=True, timeout=300).returncode == 0


@pytest.mark.ray
def test_asha_also_stops_a_trial_tied_with_the_floor_of_its_rung():
    pytest.importorskip("ray")
    from ray.tune.schedulers import ASHAScheduler, TrialScheduler

    from rlkit.sweeps.asha import FloorStoppingASHA

    class Trial:
        def __init__(self, trial_id: str) -> None:
            self.trial_id = trial_id

    def decisions(scheduler_class) -> list[str]:
        scheduler = scheduler_class(time_attr="step", metric="r", mode="max", max_t=100,
                                    grace_period=10, reduction_factor=3)  # fmt: skip
        trials = [Trial(str(i)) for i in range(4)]
        for trial in trials:
            scheduler.on_trial_add(None, trial)
        # rungs at 10 and 30 steps: at the first, -500 ties go on under both rules
        results = [(0, 10, -500.0), (1, 10, -500.0), (2, 10, -400.0), (3, 10, -480.0),
                   (0, 30, -500.0), (1, 30, -500.0), (2, 35, -300.0)]  # fmt: skip
        return [scheduler.on_trial_result(None, trials[i], {"step": step, "r": r})
                for i, step, r in results]  # fmt: skip

    go, stop = TrialScheduler.CONTINUE, TrialScheduler.STOP
    # first rung: -480 is below the cutoff; ties with it go on
    assert decisions(ASHAScheduler) == [go, go, go, stop, go, go, go]
    # second rung: trial 1's -500 ties the floor trial 0 set there, and stops
    assert decisions(FloorStoppingASHA) == [go, go, go, stop, go, stop, go]
