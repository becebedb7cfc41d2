"""labs/zoo_reference_curves.py: how often a zoo run (or an rlkit run) was at the zoo
row's level late in training, and the chance of 2 of 3 final models there."""

import importlib

import numpy as np
import pytest

pytestmark = [pytest.mark.labs]


@pytest.fixture(scope="module")
def curves():
    return importlib.import_module("labs.zoo_reference_curves")


def test_at_least_is_the_binomial_tail(curves):
    assert curves.at_least(2, 3, 0.5) == pytest.approx(0.5)  # (3 + 1) / 8
    assert curves.at_least(2, 3, 0.43) == pytest.approx(3 * 0.43**2 * 0.57 + 0.43**3)
    assert curves.at_least(0, 3, 0.1) == pytest.approx(1.0)


def test_zoo_and_rlkit_evaluations_are_read_and_summarised(curves, tmp_path, capsys):
    # an EvalCallback file: 4 evaluations of 2 episodes each
    np.savez(tmp_path / "evaluations.npz", timesteps=np.array([250_000, 500_000, 750_000,
             1_000_000]), results=np.array([[0.0, 100.0], [300.0, 200.0], [-50.0, -30.0],
             [100.0, 60.0]]), ep_lengths=np.ones((4, 2)))  # fmt: skip
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.csv").write_text(
        "kind,step,episode,return,length,return_std\n"
        "episode,400000,9,12.0,1600,\neval,500000,10,40.0,50,3.0\n"
        "eval,1000000,20,260.0,50,1.0\n"
    )
    zoo = curves.zoo_evaluations(tmp_path / "evaluations.npz")
    assert zoo == [(250_000, 50.0), (500_000, 250.0), (750_000, -40.0), (1_000_000, 80.0)]
    assert curves.rlkit_evaluations(run) == [(500_000, 40.0), (1_000_000, 260.0)]
    # the BipedalWalker DDPG row: 197.5 ± 141.6, zoo level 55.9; from 500k on
    s = curves.summary(zoo, 500_000, 197.486, 141.580)
    assert s["count"] == 3 and s["above_mean"] == pytest.approx(1 / 3)
    assert s["at_level"] == pytest.approx(2 / 3)  # 250 and 80, not -40
    assert s["last"] == (1_000_000, 80.0) and s["best"] == (500_000, 250.0)
    assert s["two_of_three"] == pytest.approx(curves.at_least(2, 3, 2 / 3))
    status = curves.main(["--preset", "ddpg/BipedalWalker-v3", "--zoo",
                          str(tmp_path / "evaluations.npz"), "--runs", str(run)])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0
    assert "rl-zoo's run: 3 evaluations, 33% ≥ the zoo's mean, 67% at zoo level" in out
    assert "run: 2 evaluations, 50% ≥ the zoo's mean, 50% at zoo level; last 260.0" in out


def test_a_missing_file_or_no_late_evaluation_is_one_line_exit_2(curves, tmp_path, capsys):
    status = curves.main(["--preset", "ddpg/BipedalWalker-v3", "--zoo", str(tmp_path / "no")])
    assert status == 2 and capsys.readouterr().err.count("\n") == 1
    np.savez(tmp_path / "e.npz", timesteps=np.array([10_000]), results=np.zeros((1, 2)))
    status = curves.main(["--preset", "ddpg/BipedalWalker-v3", "--zoo", str(tmp_path / "e.npz")])
    err = capsys.readouterr().err
    assert status == 2 and "no evaluation at or after step 500000" in err
