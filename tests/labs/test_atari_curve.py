"""benchmarks/atari_curve.py: whole games grouped into Dopamine iterations (the numbers
docs/atari.md prints next to Dopamine's)."""

import importlib
import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.labs]

CONFIG = """[run]
agent = "dqn"
env = "ALE/Breakout-v5"

[agent]
eps_end = 0.01
eps_anneal_steps = 250000
learning_starts = 20000
target_update = 8000
"""


@pytest.fixture(scope="module")
def curve():
    return importlib.import_module("benchmarks.atari_curve")


def write_run(path: Path, rows: list[str]) -> Path:
    path.mkdir()
    (path / "config.toml").write_text(CONFIG)
    (path / "metrics.csv").write_text(
        "kind,step,episode,return,length,return_std\n" + "\n".join(rows) + "\n"
    )
    return path


def test_game_rows_fall_in_the_iteration_where_the_game_ended(curve, tmp_path):
    run = write_run(tmp_path / "run", [
        "episode,100,1,1,100,", "game,1000,1,3,1000,",  # episodes (lives) are not games
        "game,250000,2,5,900,",  # the last step of iteration 0
        "game,250001,3,10,900,", "game,400000,4,20,900,",
        "eval,250000,,4.5,1200,1.5",
        "game,520000,5,7,900,",
    ])  # fmt: skip
    lines, how = curve.table(run, lives=5)
    assert how == "game rows"
    assert [line["games"] for line in lines] == [2, 2, 1]
    assert [line["train_score"] for line in lines] == [4.0, 15.0, 7.0]
    assert [line["complete"] for line in lines] == [True, True, False]
    assert lines[0]["eval"] == (4.5, 1.5, 1200) and lines[1]["eval"] is None
    assert lines[0]["dopamine"][0] == 1.6 and lines[2]["dopamine"][0] == 3.9
    assert curve.schedule(run) == "ε 1 → 0.01 over 250k, learning from 20k, target every 8k"
    assert curve._steps(1_000_000) == "1M" and curve._steps(12_500) == "12.5k"


def test_runs_without_game_rows_group_lives_into_games(curve, tmp_path):
    lives = [f"episode,{10 * (i + 1)},{i + 1},{i % 3},10," for i in range(12)]  # 0 1 2 0 1 2 ...
    run = write_run(tmp_path / "old", lives)
    ends, scores, how = curve.whole_games(curve.read_rows(run), lives=5)
    assert how == "5 lives to a game"
    np.testing.assert_array_equal(ends, [50, 100])  # the 2 unfinished lives are left out
    np.testing.assert_array_equal(scores, [0 + 1 + 2 + 0 + 1, 2 + 0 + 1 + 2 + 0])


def test_a_reference_run_of_another_library_reads_from_its_reference_json(curve, tmp_path):
    """labs/atari_sb3_reference.py writes game rows and reference.json, no config."""
    run = tmp_path / "sb3"
    run.mkdir()
    (run / "metrics.csv").write_text(
        "kind,step,episode,return,length,return_std\ngame,900,1,2.0,900,\ngame,251000,2,6.0,800,\n"
    )
    (run / "reference.json").write_text(json.dumps({
        "library": "stable-baselines3", "env": "ALE/Pong-v5",
        "schedule": {"eps_end": 0.01, "eps_anneal_steps": 250000, "learning_starts": 20000,
                     "target_update": 8000},
    }))  # fmt: skip
    lines, _ = curve.table(run, lives=1)
    assert [line["train_score"] for line in lines] == [2.0, 6.0]
    assert lines[0]["dopamine"][0] == -20.3  # Pong's reference, from the env in the json
    assert curve.library(run) == "stable-baselines3"
    assert curve.schedule(run) == "ε 1 → 0.01 over 250k, learning from 20k, target every 8k"
    assert curve.library(write_run(tmp_path / "rlkit", ["game,10,1,1,10,"])) == "rlkit"


def test_a_folder_that_is_no_run_is_refused_in_one_line(curve, tmp_path, monkeypatch, capsys):
    (tmp_path / "notes").mkdir()
    monkeypatch.setattr("sys.argv", ["atari_curve.py", str(tmp_path / "notes")])
    with pytest.raises(SystemExit) as stop:
        curve.main()
    assert stop.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith("is not an rlkit run folder: config.toml is missing"), last
