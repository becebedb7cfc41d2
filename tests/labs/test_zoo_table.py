"""benchmarks/zoo_table.py: --report's rows and figures per preset; stopped runs resumed."""

import importlib
import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.labs]


def test_report_groups_ddpg_and_td3_runs_by_preset_though_their_folders_look_alike(
    tmp_path, monkeypatch
):
    zoo_table = importlib.import_module("benchmarks.zoo_table")
    out, docs = tmp_path / "zoo-runs", tmp_path / "docs"
    out.mkdir()
    for preset, finals in (("ddpg/Pendulum-v1", (-150.0, -170.0)),
                           ("ddpg/Pendulum-v1-td3", (-140.0, -160.0))):  # fmt: skip
        for seed, final in enumerate(finals):
            # DDPG and TD3 runs share their folder names: ddpg-ENV-SEED-...
            run_dir = out / "runs" / f"ddpg-Pendulum-v1-{seed}-{preset.endswith('td3'):d}"
            run_dir.mkdir(parents=True)
            row = {"preset": preset, "variant": "", "seed": seed, "budget": "zoo",
                   "steps": 20000, "seconds": 10.0, "run_dir": str(run_dir),
                   "steps_per_second": 2000.0, "model": {"mean": final, "std": 1.0}}  # fmt: skip
            zoo_table.result_path(out, preset, seed, "zoo").write_text(json.dumps(row))
    drawn = {}

    def fake_plot_runs(run_dirs, output, labels=None):
        drawn[Path(output).name] = {Path(d).name: labels[d] for d in run_dirs}

    monkeypatch.setattr("rlkit.run.plotting.plot_runs", fake_plot_runs)
    text = zoo_table.report(out, docs)
    assert drawn == {"Pendulum-v1.png": {
        "ddpg-Pendulum-v1-0-0": "ddpg/Pendulum-v1", "ddpg-Pendulum-v1-1-0": "ddpg/Pendulum-v1",
        "ddpg-Pendulum-v1-0-1": "ddpg/Pendulum-v1-td3",
        "ddpg-Pendulum-v1-1-1": "ddpg/Pendulum-v1-td3",
    }}  # fmt: skip
    assert (
        "| ddpg/Pendulum-v1 | ddpg, 20,000 | -152.1 ± 94.3 | -160.0 (-150.0, -170.0) | 2/2 |"
        in text
    )
    assert "| ddpg/Pendulum-v1-td3 | td3, 20,000 |" in text and "-150.0 (-140.0, -160.0)" in text


@pytest.mark.slow
def test_a_stopped_run_of_the_same_plan_is_found_to_resume_and_no_other(tmp_path):
    from rlkit.run import experiment

    zoo_table = importlib.import_module("benchmarks.zoo_table")
    runs = tmp_path / "runs"

    def plan(seed=0, **overrides):
        return experiment.plan("dqn", "CartPole-v1", steps=400, seed=seed, eval_every=0,
                               checkpoint_every=100, overrides={"learning_starts": 50, **overrides},
                               preset="none")  # fmt: skip

    trainer = experiment.start(plan(), runs, tensorboard=False)
    trainer.run(200)  # stopped half-way: checkpoints at 100 and 200, no summary.json
    trainer.close()
    stopped = trainer.run_dir
    assert zoo_table.unfinished_run(runs, plan()) == stopped
    assert zoo_table.unfinished_run(runs, plan(seed=1)) is None
    assert zoo_table.unfinished_run(runs, plan(gamma=0.9)) is None  # a variant is another run

    trainer, run = experiment.resume(stopped)
    assert trainer.step == 200
    result = experiment.drive(trainer, run, handle_signals=False)
    assert result.status == experiment.FINISHED and result.history.steps == 400
    assert zoo_table.unfinished_run(runs, plan()) is None  # finished: summary.json


def test_a_result_measured_with_other_settings_than_todays_preset_is_not_reused(tmp_path):
    from rlkit.run import experiment

    zoo_table = importlib.import_module("benchmarks.zoo_table")
    preset = "ddpg/BipedalWalker-v3"
    today = experiment.plan("ddpg", preset=preset).agent_config
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"agent_config": zoo_table.agent_config_record(today)}))
    assert zoo_table.made_with_todays_preset(path, preset)
    assert not zoo_table.made_with_todays_preset(path, preset, ("batch_size=256",))
    older = {**zoo_table.agent_config_record(today), "actor_learning_rate": 1e-3}
    path.write_text(json.dumps({"agent_config": older}))  # before the preset changed
    assert not zoo_table.made_with_todays_preset(path, preset)
    path.write_text(json.dumps({"preset": preset}))  # from before configs were recorded
    assert zoo_table.made_with_todays_preset(path, preset)
