"""labs/atari_dopamine.py: a resumed run goes on in Dopamine's environment, not
DQN3.0's (the run folder's config does not say which protocol it was made with): the
checkpoint brings the training env back as it was, mid-game."""

import importlib
import pickle
import sys

import pytest

pytestmark = [pytest.mark.labs, pytest.mark.atari]

pytest.importorskip("ale_py")
pytest.importorskip("cv2")


def run_script(monkeypatch, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", ["atari_dopamine.py", *args])
    importlib.import_module("labs.atari_dopamine").main()


@pytest.mark.slow
def test_a_resumed_run_continues_with_dopamines_environment(monkeypatch, tmp_path, capsys):
    import rlkit.envs.atari

    made = []
    make_atari = rlkit.envs.atari.make_atari

    def recording_make_atari(env_id, **kwargs):
        made.append((env_id, kwargs))
        return make_atari(env_id, **kwargs)

    monkeypatch.setattr(rlkit.envs.atari, "make_atari", recording_make_atari)
    common = ["--eval-every", "0", "--checkpoint-every", "100"]
    run_script(
        monkeypatch, "--env", "ALE/Pong-v5", "--steps", "150", "--out", str(tmp_path), *common
    )
    (run_dir,) = tmp_path.iterdir()
    made.clear()
    run_script(monkeypatch, "--resume", str(run_dir), "--steps", "250", *common)
    assert f"resuming {run_dir} at step 150" in capsys.readouterr().out
    assert made == []  # the training env came back from the checkpoint, not made anew
    checkpoint = run_dir / "checkpoints" / "step-0000000250"
    env = pickle.loads((checkpoint / "env.pkl").read_bytes())
    ale = env.unwrapped.ale
    assert ale.getFloat("repeat_action_probability") == pytest.approx(0.25)  # Dopamine's


def test_resuming_a_folder_that_is_no_run_is_one_line_and_exit_2(monkeypatch, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_script(monkeypatch, "--resume", str(tmp_path))
    assert exit_info.value.code == 2
    assert "is not an rlkit run folder" in capsys.readouterr().err
