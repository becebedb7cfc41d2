"""What ASHA compares at its rungs (``rlkit tune --rung-score``): the better of a trial's
greedy evaluation and its recent training episodes ("shown", the default), or the
evaluation alone ("eval")."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from rlkit.cli.main import main
from rlkit.sweeps import tuning

# MountainCarContinuous-like: the greedy car stands still (evaluation -0.0); training
# episodes that reached the flag (+90) and ones that only paid for moving (-30)
RETURNS = [-30.0, -30.0, 90.0, -30.0, 90.0]
ENDS = [999, 1998, 2600, 3599, 4100]


def test_eval_is_the_evaluation_alone():
    assert tuning.rung_score("eval", -0.5, RETURNS, ENDS, step=5000, window=2500) == -0.5


def test_shown_is_the_better_of_the_evaluation_and_the_episodes_of_the_last_window():
    # episodes ending in (2500, 5000]: 90, -30, 90 -> mean 50, above the evaluation's -0.5
    assert tuning.rung_score("shown", -0.5, RETURNS, ENDS, step=5000, window=2500) == 50.0
    # (1000, 3000]: -30 and 90 -> 30
    assert tuning.rung_score("shown", -0.5, RETURNS, ENDS, step=3000, window=2000) == 30.0
    # an episode ending exactly at step - window is the previous window's
    assert tuning.rung_score("shown", -0.5, RETURNS, ENDS, step=2998, window=1000) == 90.0
    # the greedy policy better than its exploring self: the evaluation
    assert tuning.rung_score("shown", 95.0, RETURNS, ENDS, step=5000, window=2500) == 95.0


def test_shown_falls_back_on_the_newest_episode_then_on_the_evaluation():
    # no episode ended in (4500, 5000]: the newest (90, at 4100)
    assert tuning.rung_score("shown", -0.5, RETURNS, ENDS, step=5000, window=500) == 90.0
    # no episode yet (Acrobot's first steps): the evaluation
    assert tuning.rung_score("shown", -500.0, [], [], step=5000, window=5000) == -500.0
    # episodes that end after the evaluation's step are not counted: (500, 2000] has -30, -30
    assert tuning.rung_score("shown", -50.0, RETURNS, ENDS, step=2000, window=1500) == -30.0
    assert tuning.rung_score("shown", -50.0, RETURNS, ENDS, step=900, window=1500) == -50.0


@pytest.mark.ray
def test_the_reporter_gives_tpe_the_evaluation_and_asha_the_rung_score(monkeypatch):
    pytest.importorskip("ray")
    from ray import tune

    from rlkit.sweeps import tune_on_ray

    reported = []
    monkeypatch.setattr(tune, "report", lambda metrics, **kw: reported.append(metrics))
    history = SimpleNamespace(episode_returns=RETURNS, episode_end_steps=ENDS)

    def report_at(rule: str, step: int) -> None:
        spec = SimpleNamespace(steps=10_000, rung_score=rule, train={"eval_every": 2500})
        loop = SimpleNamespace(step=step, history=history)
        tune_on_ray._EvaluationReporter(spec).on_step(loop, step - 1, {"eval": (-0.5, 0.1)})

    report_at("shown", 5000)
    report_at("eval", 5000)
    report_at("shown", 10_000)  # the last step: the summary's final model is reported later
    assert reported == [
        {"step": 5000, tune_on_ray.METRIC: -0.5, tune_on_ray.RUNG_METRIC: 50.0, "finished": 0},
        {"step": 5000, tune_on_ray.METRIC: -0.5, tune_on_ray.RUNG_METRIC: -0.5, "finished": 0},
    ]


def test_a_tune_made_before_the_choice_keeps_comparing_evaluations(tmp_path):
    spec = tuning.TuneSpec(agent="dqn", train={"env": "CartPole-v1", "steps": 1000},
                           space={}, trials=2, seeds=[1])  # fmt: skip
    assert spec.rung_score == "shown"
    spec.save(tmp_path)
    assert tuning.TuneSpec.load(tmp_path).rung_score == "shown"
    saved = json.loads((tmp_path / tuning.SPEC_FILE).read_text())
    del saved["rung_score"]
    (tmp_path / tuning.SPEC_FILE).write_text(json.dumps(saved))
    assert tuning.TuneSpec.load(tmp_path).rung_score == "eval"


def test_an_unknown_rung_score_is_a_usage_error(capsys):
    assert main(["tune", "dqn", "--rung-score", "best", "--show-space"]) == 2
    err = capsys.readouterr().err
    assert "--rung-score" in err and "'shown'" in err and len(err.strip().splitlines()) == 1


@pytest.mark.ray
def test_asha_reads_the_rung_score_and_tpe_the_evaluation(monkeypatch, tmp_path):
    pytest.importorskip("ray")
    pytest.importorskip("optuna")
    from ray import tune

    from rlkit.sweeps import tune_on_ray

    built = {}

    class Built(Exception):
        pass

    def tuner(trainable, param_space, tune_config, run_config):
        built.update(scheduler=tune_config.scheduler, searcher=tune_config.search_alg)
        raise Built

    monkeypatch.setattr(tune, "Tuner", tuner)
    spec = tuning.TuneSpec(agent="dqn", train={"env": "CartPole-v1", "steps": 1000},
                           space={"gamma": "choice(0.9,0.99)"}, trials=2, seeds=[1],
                           grace=200)  # fmt: skip
    with pytest.raises(Built):
        tune_on_ray._search(spec, tmp_path, resume=False, interval=10.0)
    assert built["scheduler"]._metric == tune_on_ray.RUNG_METRIC == "rung_score"
    assert built["searcher"].metric == tune_on_ray.METRIC == "eval_return"
