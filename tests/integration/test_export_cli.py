"""rlkit export and rlkit evaluate on the command line and rlkit.export from Python, on a
run folder: checked on the environment and the run's replay, the same returns as the run's
model, bad input one line with exit 2 and nothing written."""

from __future__ import annotations

import json

import pytest

from rlkit.cli.main import main
from rlkit.exporting.exported import ExportedPolicy

FEW = 300  # observations the check draws from the environment where a test says so


def no_leftovers(parent, name: str) -> bool:
    """Nothing of an export called ``name`` in ``parent``: no folder, no temporary one."""
    return not any(p.name == name or p.name.startswith(f".{name}.") for p in parent.iterdir())


# -- the command line: a run folder in, an export out; bad input is one line, exit 2 ------------
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from rlkit.run import experiment

    plan = experiment.plan(
        "dqn", "CartPole-v1", steps=800, eval_every=400, eval_episodes=3, checkpoint_every=400,
        overrides={"hidden_sizes": "32,32", "buffer_size": 2000, "learning_starts": 200},
    )  # fmt: skip
    return experiment.run(plan, tmp_path_factory.mktemp("runs"), handle_signals=False).run_dir


@pytest.mark.slow
def test_cli_exports_a_run_checked_on_env_and_replay_and_evaluates_the_same(
    run_dir, tmp_path, capsys
):
    out = tmp_path / "policy" / "1"
    assert main(["export", str(run_dir), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "2000 from the environment and 800 from the run's replay" in captured.err
    assert "equal the agent's greedy act on 2800 of 2800 (100.00%)" in captured.err
    assert "exported dqn (saved_model" in captured.out and (out / "saved_model.pb").is_file()
    meta = ExportedPolicy(out).metadata
    assert meta["env_id"] == "CartPole-v1" and meta["model"] == "best"
    strict = json.loads((out / "rlkit_export.json").read_text(), parse_constant=_not_json)
    assert strict["observation_space"]["high"][1] == "inf"  # any JSON parser reads it
    assert meta["training_step"] > 0
    assert meta["evaluation"] == {"episodes": 3, "seed": 2_000_000}  # the run's final evaluation
    assert main(["export", str(run_dir), "--out", str(tmp_path / "lite"), "--format", "tflite",
                 "--model", "final"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["evaluate", str(run_dir), "--best"]) == 0
    run_line = capsys.readouterr().out
    for export in (out, tmp_path / "lite"):
        assert main(["evaluate", str(export)]) == 0
        line = capsys.readouterr().out
        assert "over 3 greedy episodes" in line
        if export == out:  # the best model's export plays the run's best model's episodes
            assert line.split("(")[0] == run_line.split("(")[0]
    assert main(["evaluate", str(run_dir)]) == 0
    final_line = capsys.readouterr().out
    assert main(["evaluate", str(tmp_path / "lite"), "--env", "CartPole-v1"]) == 0
    assert capsys.readouterr().out.split("(")[0] == final_line.split("(")[0]
    assert "exported for another observation space than Pendulum-v1" in _refused(
        ["evaluate", str(out), "--env", "Pendulum-v1"], capsys)  # fmt: skip


def _not_json(constant: str):
    raise ValueError(f"{constant} is not JSON")


def _refused(argv, capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("rlkit: error:")
    return err


@pytest.mark.slow
def test_cli_bad_input_is_one_line_exit_2_and_nothing_written(run_dir, tmp_path, capsys):
    import shutil

    out = str(tmp_path / "out")
    assert "unknown --format 'onnx'" in _refused(
        ["export", str(run_dir), "--out", out, "--format", "onnx"], capsys)  # fmt: skip
    assert "unknown --quantize 'int4'" in _refused(
        ["export", str(run_dir), "--out", out, "--format", "tflite", "--quantize", "int4"],
        capsys)  # fmt: skip
    assert "--quantize applies to --format tflite only" in _refused(
        ["export", str(run_dir), "--out", out, "--quantize", "float16"], capsys)  # fmt: skip
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    assert "not an empty folder" in _refused(
        ["export", str(run_dir), "--out", str(tmp_path / "full")], capsys)  # fmt: skip
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"
    empty_run = tmp_path / "empty-run"
    empty_run.mkdir()
    shutil.copy(run_dir / "config.toml", empty_run)
    assert "has no best model" in _refused(["export", str(empty_run), "--out", out], capsys)
    broken = tmp_path / "broken-run"
    shutil.copytree(run_dir, broken)
    for model in ("best", "model"):
        (broken / model / "weights.npz").write_bytes(b"not a zip")
    assert "corrupt checkpoint" in _refused(["export", str(broken), "--out", out], capsys)
    assert "neither an rlkit run folder" in _refused(
        ["export", str(tmp_path / "full"), "--out", out], capsys)  # fmt: skip
    assert no_leftovers(tmp_path, "out")


@pytest.mark.slow
def test_rlkit_export_from_python_and_a_replay_too_large_to_load(run_dir, tmp_path, monkeypatch,
                                                                 capsys):  # fmt: skip
    import rlkit
    from rlkit.run import export_run as run_export

    monkeypatch.setattr(run_export, "REPLAY_LOAD_LIMIT", 0)
    result = rlkit.export(run_dir, tmp_path / "py", model="final", check_observations=FEW)
    assert result.lines[0].startswith("the run's replay was not used: its checkpoints hold")
    assert "(300 from the environment)" in result.lines[1] and "(100.00%)" in result.lines[1]
    assert result.metadata["model"] == "final" and result.size_bytes > 10_000
    assert "--best applies to a run folder" in _refused(
        ["evaluate", str(tmp_path / "py"), "--best"], capsys)  # fmt: skip


@pytest.mark.slow
def test_td3_run_and_its_exports_evaluate_to_the_same_returns(tmp_path, capsys):
    from rlkit.run import experiment

    plan = experiment.plan("ddpg", "Pendulum-v1", steps=1200, eval_every=600, eval_episodes=2,
                           checkpoint_every=600, overrides={"td3": True})  # fmt: skip
    run_dir = experiment.run(plan, tmp_path, handle_signals=False).run_dir
    assert main(["evaluate", str(run_dir), "--best"]) == 0
    want = capsys.readouterr().out.split("(")[0]
    for format in ("saved_model", "tflite"):
        out = tmp_path / format
        assert main(["export", str(run_dir), "--out", str(out), "--format", format]) == 0
        assert "bit for bit" in capsys.readouterr().err
        assert main(["evaluate", str(out)]) == 0
        assert capsys.readouterr().out.split("(")[0] == want
