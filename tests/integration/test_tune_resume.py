"""`rlkit tune --resume`: options that would change the search are refused, operational
ones may change; an interrupted search counts the trials that actually ended."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from rlkit.cli.main import main
from rlkit.sweeps import tuning

TUNE = ["tune", "dqn", "--env", "Acrobot-v1", "--steps", "20000", "--trials", "8", "--set",
        "hidden_sizes=[16]", "--space", "learning_rate=loguniform(1e-4,1e-2)"]  # fmt: skip


@pytest.fixture
def tune_dir(tmp_path, monkeypatch, capsys):
    """A tune made with TUNE and stopped at once (no Ray): its tune.json; every later
    run_tune call is recorded in ``calls``."""
    from rlkit.cli import tune as tune_command
    from rlkit.sweeps import tune_on_ray
    from rlkit.sweeps.sweep_on_ray import SweepInterrupted

    calls = []

    def stopped(spec, out, **kwargs):
        calls.append(kwargs)
        if not kwargs["resume"]:
            spec.save(Path(out))
        raise SweepInterrupted(f"tune stopped; continue with: rlkit tune --resume {out}")

    monkeypatch.setattr(tune_on_ray, "run_tune", stopped)
    monkeypatch.setattr(tune_command, "_check_ray", lambda address: None)
    out = tmp_path / "tune"
    assert main([*TUNE, "--out", str(out)]) == 130
    calls.clear()
    capsys.readouterr()
    return SimpleNamespace(path=out, calls=calls)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--trials", "16"], "--trials (8 here, 16 asked)"),
        (["--steps", "1000"], "--steps (20,000 here, 1,000 asked)"),
        (["--space", "learning_rate=loguniform(1e-4,1e-3)"],
         "--space (learning_rate=loguniform(0.0001,0.01) here, "
         "learning_rate=loguniform(0.0001,0.001) asked)"),
        (["--set", "hidden_sizes=[32]"], "--set (hidden_sizes=[16] here, hidden_sizes=[32] asked)"),
        (["--preset", "none"], "--preset (dqn/Acrobot-v1 here, none asked)"),
        (["--seeds", "5", "--env", "CartPole-v1"], "--seeds (3 here, 5 asked); --env"),
        (["--no-early-stop"], "--no-early-stop"),
        (["--rung-score", "eval"], "--rung-score (shown here, eval asked)"),
        (["--seed", "7"], "--seed (0 here, 7 asked)"),
    ],
)  # fmt: skip
def test_resume_refuses_what_would_change_the_search(capsys, tune_dir, argv, says):
    status = main(["tune", *argv, "--resume", str(tune_dir.path)])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert f"--resume {tune_dir.path} runs the tune as it was made; it differs in {says}" in err
    assert not tune_dir.calls  # nothing ran


def test_resume_with_the_same_options_or_operational_ones_goes_on(capsys, tune_dir):
    path = str(tune_dir.path)
    # the command that made it, with --resume: nothing differs (the preset picked by the
    # environment named in full or short, the derived --eval-every given as it came out)
    for argv in ([*TUNE[1:]], ["--preset", "Acrobot-v1", "--eval-every", "2000"], []):
        assert main(["tune", *argv, "--resume", path]) == 130
    assert [call["ranking"] for call in tune_dir.calls] == [{}, {}, {}]
    assert main(["tune", "--resume", path, "--max-concurrent", "2", "--address", "auto"]) == 130
    assert tune_dir.calls[-1] == {
        "address": "auto",
        "resume": True,
        "ranking": {"max_concurrent": 2},
    }
    err = capsys.readouterr().err  # Ray restores a search as it saved it: said in one line
    assert (
        "--max-concurrent applies to the ranking on fresh seeds; the search goes on as Ray" in err
    )


def test_resume_shows_the_tunes_own_space(capsys, tune_dir):
    assert main(["tune", "--resume", str(tune_dir.path), "--show-space"]) == 0
    out = capsys.readouterr().out
    assert "dqn on Acrobot-v1 searches:" in out and "learning_rate        loguniform" in out
    assert "fixed (--set):\n  hidden_sizes = [16]" in out and not tune_dir.calls


# -- counting an interrupted search -------------------------------------------------------------
def fake_trial(status: str, done: bool, finished: int = 0):
    return SimpleNamespace(status=status, last_result={"done": done, "finished": finished,
                                                        "eval_return": 1.0})  # fmt: skip


@pytest.mark.slow
@pytest.mark.ray
def test_the_progress_line_counts_a_trial_as_it_completes(capsys):
    """Tune calls on_trial_complete before it sets the trial TERMINATED: the trial that
    just ended counts as done, not as running."""
    pytest.importorskip("ray")
    from rlkit.sweeps.tune_on_ray import _progress

    progress = _progress(0.0, 4)
    completing = fake_trial("RUNNING", done=True, finished=1)
    trials = [fake_trial("TERMINATED", done=True), completing, fake_trial("RUNNING", False)]
    progress.on_trial_complete(0, trials, completing)
    assert capsys.readouterr().err.startswith(
        "search: 2/4 trials done (1 ran to the end, 1 stopped early), 1 running"
    )


class Results(list):
    """A ResultGrid: the results, and how many trials Tune holds TERMINATED."""

    num_terminated = 0


class FakeTuner:
    """Tune's Tuner as an interrupted search leaves it: ``fit`` returns the trials' results,
    the ones cut off TERMINATED as well (Tune's clean-up stops them) but not done."""

    results = Results()

    def __init__(self, *args, **kwargs) -> None:
        pass

    @staticmethod
    def can_restore(path) -> bool:
        return False

    def fit(self) -> Results:
        return self.results


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.parametrize("cut_off, created", [(2, 4), (1, 3)])
def test_an_interrupted_search_counts_the_trials_that_ended(monkeypatch, tmp_path, cut_off,
                                                            created):  # fmt: skip
    pytest.importorskip("ray")
    from ray import tune

    from rlkit.sweeps import tune_on_ray
    from rlkit.sweeps.sweep_on_ray import SweepInterrupted

    ended = [{"done": True, "finished": 1}, {"done": True, "finished": 0}]  # ran, ASHA-stopped
    results = Results(SimpleNamespace(metrics=m, error=None)
                      for m in ended + [{"done": False}] * cut_off)  # fmt: skip
    results = Results(results[:created])
    results.num_terminated = len(results)  # what Ray says after its clean-up
    monkeypatch.setattr(tune, "Tuner", type("Tuner", (FakeTuner,), {"results": results}))
    monkeypatch.setattr(tune, "with_parameters", lambda trainable, **kwargs: trainable)
    monkeypatch.setattr(tune, "with_resources", lambda trainable, resources: trainable)
    spec = tuning.TuneSpec(agent="dqn", train={"env": "CartPole-v1", "steps": 1000},
                           space={"learning_rate": "loguniform(1e-4,1e-2)"}, trials=4,
                           seeds=[1], grace=100)  # fmt: skip
    with pytest.raises(SweepInterrupted, match="tune stopped with 2 of 4 search trials done"):
        tune_on_ray._search(spec, tmp_path, resume=False, interval=10.0)
