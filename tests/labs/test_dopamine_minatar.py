"""labs/dopamine_minatar/to_metrics.py: Dopamine's Runner log -> rlkit's metrics.csv.

Hand-made logs (Dopamine's pickled ``{iteration_K: {...}}`` dicts); no Dopamine needed.
"""

from __future__ import annotations

import csv
import pickle
from pathlib import Path

import pytest

from labs.dopamine_minatar import to_metrics

pytestmark = pytest.mark.labs

LOG = {
    "iteration_0": {
        "train_episode_returns": [1.0, 0.0, 3.0],
        "train_episode_lengths": [10, 6, 20],
        "train_average_return": [4 / 3],
    },
    "iteration_1": {
        "train_episode_returns": [2.0, 5.0],
        "train_episode_lengths": [7, 30],
    },
}


def _read(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_rows_count_steps_across_iterations():
    rows = to_metrics.rows_from_log(LOG)
    # cumulative steps: 10, 16, 36, then iteration 1 continues: 43, 73
    assert [r["step"] for r in rows] == [10, 16, 36, 43, 73]
    assert [r["episode"] for r in rows] == [1, 2, 3, 4, 5]
    assert [r["return"] for r in rows] == [1.0, 0.0, 3.0, 2.0, 5.0]
    assert [r["iteration"] for r in rows] == [0, 0, 0, 1, 1]
    assert {r["kind"] for r in rows} == {"episode"}


def test_iterations_sorted_numerically():
    # iteration_10 must come after iteration_2 (a string sort would put it first)
    log = {
        f"iteration_{k}": {"train_episode_returns": [k], "train_episode_lengths": [1]}
        for k in (10, 2, 0, 1, 3, 4, 5, 6, 7, 8, 9)
    }
    rows = to_metrics.rows_from_log(log)
    assert [r["return"] for r in rows] == [float(k) for k in range(11)]
    assert [r["step"] for r in rows] == list(range(1, 12))


def test_convert_keeps_live_rows_of_iteration_in_progress(tmp_path):
    (tmp_path / "logs").mkdir()
    with open(tmp_path / "logs" / "log_1", "wb") as f:
        pickle.dump(LOG, f)
    with open(tmp_path / "logs" / "log_0", "wb") as f:  # older: must not be the one read
        pickle.dump({"iteration_0": LOG["iteration_0"]}, f)
    # live file: rows of iterations 0-1 (logged) with stale numbering, and two of iteration 2
    live = [
        to_metrics.episode_row(0, 999, 99, 9.0, 10),
        to_metrics.episode_row(2, 0, 0, 4.0, 12),
        to_metrics.episode_row(2, 0, 0, 6.0, 8),
    ]
    to_metrics.write_rows(tmp_path / "metrics.csv", live)
    done, n = to_metrics.convert(tmp_path)
    rows = _read(tmp_path / "metrics.csv")
    assert (done, n) == (2, 7)
    assert [int(r["step"]) for r in rows] == [10, 16, 36, 43, 73, 85, 93]
    assert [int(r["episode"]) for r in rows] == list(range(1, 8))
    assert [float(r["return"]) for r in rows[-2:]] == [4.0, 6.0]
    assert list(rows[0]) == to_metrics.COLUMNS


def test_convert_drop_partial_and_empty_log(tmp_path):
    to_metrics.write_rows(tmp_path / "metrics.csv", [to_metrics.episode_row(0, 5, 1, 1.0, 5)])
    # no log yet: iteration 0 is in progress, its live row is kept unless dropped
    assert to_metrics.convert(tmp_path) == (0, 1)
    assert to_metrics.convert(tmp_path, keep_partial=False) == (0, 0)
    assert _read(tmp_path / "metrics.csv") == []


def test_config_names_the_game_for_rlkit_plot(tmp_path):
    to_metrics.write_config(tmp_path, "space_invaders", 0, 2_000_000)
    text = (tmp_path / "config.toml").read_text()
    assert 'env = "MinAtar/SpaceInvaders-v0"' in text
    assert 'agent = "dopamine_rainbow"' in text
    to_metrics.write_config(tmp_path, "breakout", 1, 5)  # written once, never overwritten
    assert (tmp_path / "config.toml").read_text() == text


def test_rlkit_plot_reads_it(tmp_path):
    from rlkit.run.plotting import describe_run, read_episodes

    to_metrics.write_rows(tmp_path / "metrics.csv", to_metrics.rows_from_log(LOG))
    to_metrics.write_config(tmp_path, "breakout", 0, 2_000_000)
    steps, returns = read_episodes(tmp_path)
    assert steps.tolist() == [10, 16, 36, 43, 73]
    assert returns.tolist() == [1.0, 0.0, 3.0, 2.0, 5.0]
    variant, env, _ = describe_run(tmp_path)
    assert (variant, env) == ("dopamine_rainbow", "MinAtar/Breakout-v0")


def test_speed_benchmark_reads_the_last_complete_episode_row(tmp_path):
    from benchmarks.dopamine_rainbow_speed import last_step

    path = tmp_path / "metrics.csv"
    assert last_step(path) == 0  # not written yet
    path.write_text("kind,step,episode,return,length,return_std\n")
    assert last_step(path) == 0
    path.write_text(
        "kind,step,episode,return,length,return_std\n"
        "episode,16,1,1,16,\n"
        "episode,22,2,0,6,\n"
        "eval,22,,3.5,,0.5\n"  # an evaluation row is no episode's end
        "episode,40"  # a row being written: not complete
    )
    assert last_step(path) == 22


def test_compare_runs_averages_the_last_episodes_ended_by_each_step(tmp_path, capsys):
    from labs.dopamine_minatar import compare_runs

    a, b = tmp_path / "a", tmp_path / "b"
    for folder, rows in (
        (a, ["episode,10,1,1,10,", "episode,20,2,3,10,", "episode,30,3,8,10,"]),
        (b, ["episode,15,1,2,15,", "eval,20,1,4,10,0.5", "episode,40,2,6,25,"]),
    ):
        folder.mkdir()
        (folder / "metrics.csv").write_text(
            "kind,step,episode,return,length,return_std\n" + "\n".join(rows) + "\n"
        )
    run = compare_runs.read_run(a)
    assert run.training_mean(25, window=2) == (2.0, 2)  # episodes ended at 10 and 20
    assert run.training_mean(30, window=2) == (5.5, 2)  # the last two: 3 and 8
    assert run.training_mean(9, window=2) is None
    compare_runs.main([str(a), str(b), "--every", "10", "--window", "2"])
    out = capsys.readouterr().out.splitlines()
    # rows up to the step both reached (30); b's evaluation only at 20
    assert out[-3:] == [
        "| 10 | 1.00 | - | - |",
        "| 20 | 2.00 | 2.00 | 4.00 ± 0.50 |",
        "| 30 | 5.50 | 2.00 | - |",
    ]


def test_compare_runs_leaves_a_run_out_past_its_end(tmp_path, capsys):
    """A row past a run's end shows "-" for it, not its last figures carried on; one episode
    short of the row (the run's longest) still counts as reached."""
    from labs.dopamine_minatar import compare_runs

    a, b = tmp_path / "a", tmp_path / "b"
    for folder, rows in (
        (a, ["episode,10,1,1,10,", "episode,20,2,3,10,", "episode,30,3,8,10,"]),
        (b, ["episode,90,1,2,90,", "episode,100,2,6,10,"]),
    ):
        folder.mkdir()
        (folder / "metrics.csv").write_text(
            "kind,step,episode,return,length,return_std\n" + "\n".join(rows) + "\n"
        )
    run = compare_runs.read_run(a)
    assert run.reached(40) and not run.reached(41)  # last episode at 30, longest 10
    compare_runs.main([str(a), str(b), "--at", "40", "100", "--window", "2"])
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["| 40 | 5.50 | - |", "| 100 | - | 4.00 |"]
