"""rlkit sweep --resume with --max-concurrent, --cpus-per-trial, --max-failures: applied where
Ray has no experiment to restore, else one line says they do not apply and what goes on
(never silently the saved values). Ray is stubbed: no cluster starts."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import rlkit.cli.sweep as sweep_cli
from rlkit.cli.main import main
from rlkit.sweeps import sweep_on_ray
from rlkit.sweeps.grid import SweepSpec


class FakeTuner:
    restorable = False
    made: list = []

    def __init__(self, trainable, param_space=None, tune_config=None, run_config=None):
        self.trainable, self.tune_config, self.run_config = trainable, tune_config, run_config
        FakeTuner.made.append(self)

    @classmethod
    def can_restore(cls, path):
        return cls.restorable

    @classmethod
    def restore(cls, path, trainable, **kwargs):
        tuner = cls(trainable)  # as Ray restores it: with what it saved
        run_config = SimpleNamespace(failure_config=SimpleNamespace(max_failures=3))
        tuner._local_tuner = SimpleNamespace(get_run_config=lambda: run_config)
        return tuner

    def fit(self):
        return [SimpleNamespace(error=None, metrics={"done": 1}, config={})]


@pytest.fixture
def fake_ray(monkeypatch):
    FakeTuner.made = []
    tune = SimpleNamespace(
        Tuner=FakeTuner,
        with_parameters=lambda fn, **kw: SimpleNamespace(kw=kw),
        with_resources=lambda trainable, resources: SimpleNamespace(
            kw=trainable.kw, resources=resources),
        grid_search=list,
        TuneConfig=lambda **kw: SimpleNamespace(**kw),
        RunConfig=lambda **kw: SimpleNamespace(**kw),
        FailureConfig=lambda **kw: SimpleNamespace(**kw),
        CheckpointConfig=lambda **kw: SimpleNamespace(**kw),
    )  # fmt: skip
    ray = SimpleNamespace(init=lambda **kw: None, shutdown=lambda: None)
    monkeypatch.setattr(sweep_on_ray, "import_ray", lambda: (ray, tune))
    monkeypatch.setattr(sweep_on_ray, "_progress_callback", lambda *args: None)
    monkeypatch.setattr(sweep_cli, "_ray", lambda address: None)
    return FakeTuner


def saved_sweep(tmp_path, **kw):
    out = tmp_path / "s"
    SweepSpec("dqn", {"env": "CartPole-v1", "overrides": []}, [0, 1], **kw).save(out)
    return out


def resume(capsys, out, *args):
    status = main(["sweep", "--resume", str(out), *map(str, args)])
    return status, capsys.readouterr().err


def test_a_restored_sweep_says_in_one_line_which_options_do_not_apply(capsys, tmp_path,
                                                                     fake_ray):  # fmt: skip
    fake_ray.restorable = True
    out = saved_sweep(tmp_path, max_concurrent=1)
    status, err = resume(capsys, out, "--max-concurrent", 4, "--cpus-per-trial", 2,
                         "--max-failures", 5)  # fmt: skip
    assert status == 0, err
    notes = [line for line in err.splitlines() if "not apply" in line]
    assert notes == [
        "rlkit: --max-concurrent 4 and --cpus-per-trial 2 and --max-failures 5 do not apply: "
        "Ray restores this sweep's trials with the concurrency, CPUs and retries it saved "
        "(max-concurrent 1, cpus-per-trial 1, max-failures 3)"
    ]
    (tuner,) = fake_ray.made
    assert tuner.trainable.resources == {"cpu": 1.0}  # what goes on is what the line says
    assert SweepSpec.load(out).max_concurrent == 1  # sweep.json still says how it runs


def test_only_options_that_differ_from_the_saved_ones_are_named(capsys, tmp_path, fake_ray):
    fake_ray.restorable = True
    out = saved_sweep(tmp_path)
    status, err = resume(capsys, out, "--cpus-per-trial", 1, "--max-failures", 3)
    assert status == 0 and "not apply" not in err
    status, err = resume(capsys, out, "--max-concurrent", 2, "--max-failures", 3)
    assert status == 0
    assert "rlkit: --max-concurrent 2 does not apply: Ray restores this sweep's trials with " \
           "the concurrency, CPUs and retries it saved (max-concurrent as many as the CPUs " \
           "allow)" in err  # fmt: skip
    status, err = resume(capsys, out)
    assert status == 0 and "not apply" not in err


def test_without_a_saved_ray_experiment_the_new_options_apply(capsys, tmp_path, fake_ray):
    fake_ray.restorable = False  # stopped before Ray saved anything: Tune starts afresh
    out = saved_sweep(tmp_path, max_concurrent=1)
    status, err = resume(capsys, out, "--max-concurrent", 4, "--cpus-per-trial", 2,
                         "--max-failures", 5)  # fmt: skip
    assert status == 0 and "not apply" not in err
    (tuner,) = fake_ray.made
    assert tuner.tune_config.max_concurrent_trials == 4
    assert tuner.run_config.failure_config.max_failures == 5
    assert tuner.trainable.resources == {"cpu": 2.0}
    assert tuner.trainable.kw["spec"].cpus_per_trial == 2.0  # TensorFlow's threads too
    saved = SweepSpec.load(out)
    assert (saved.max_concurrent, saved.cpus_per_trial) == (4, 2.0)
