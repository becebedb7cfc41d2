"""Edges a new user met, each answered as click and gymnasium users expect: one line, exit 2,
nothing written."""

from __future__ import annotations

import pytest

from rlkit.cli.main import main

SMALL = ["--set", "hidden_sizes=8", "--set", "learning_starts=100", "--set", "jit_compile=false",
         "--eval-every", "0", "--eval-episodes", "1", "--quiet"]  # fmt: skip


def cli(capsys, *args) -> tuple[int, str]:
    status = main([str(a) for a in args])
    _, err = capsys.readouterr()
    return status, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    assert main(["train", "dqn", "--env", "CartPole-v1", "--steps", "300", *SMALL, "--out",
                 str(out)]) == 0  # fmt: skip
    (path,) = out.iterdir()
    return path


@pytest.mark.slow
def test_resume_below_the_runs_step_is_refused_not_finished(capsys, run_dir):
    before = (run_dir / "summary.json").read_text()
    status, err = cli(capsys, "resume", run_dir, "--steps", "100")
    assert status == 2
    assert one_line(err) == (
        f"rlkit: error: {run_dir} is already at step 300; --steps is the total to train to: "
        "pass more than 300 to go on"
    )
    assert (run_dir / "summary.json").read_text() == before


@pytest.mark.parametrize("command", ["resume", "evaluate"])
def test_an_empty_run_dir_is_refused_not_taken_as_the_current_folder(capsys, command):
    status, err = cli(capsys, command, "")
    assert status == 2 and "Invalid value for 'RUN_DIR': must not be empty" in one_line(err)


def test_a_negative_checkpoint_interval_says_zero_is_allowed(capsys, tmp_path):
    status, err = cli(capsys, "train", "dqn", "--checkpoint-every", "-1", "--out", tmp_path)
    assert (
        status == 2
        and one_line(err) == "rlkit: error: --checkpoint-every must be 0 or more, got -1"
    )
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("text", ["1e3", "64.0", "sixty"])
def test_whole_number_keys_take_digits_as_steps_does(capsys, tmp_path, text):
    status, err = cli(capsys, "train", "dqn", "--set", f"batch_size={text}", "--out", tmp_path)
    assert status == 2
    assert one_line(err) == (
        f"rlkit: error: bad value {text!r} for batch_size: expected a whole number such as 1000"
    )
    assert cli(capsys, "train", "dqn", "--steps", "1e5", "--out", tmp_path)[0] == 2  # click's


def test_an_agent_name_in_capitals_gets_a_suggestion(capsys):
    status, err = cli(capsys, "train", "DQN")
    assert status == 2 and one_line(err) == (
        "rlkit: error: unknown agent 'DQN'; did you mean 'dqn'? choose one of dqn, ddpg, sac, "
        "c51, qrdqn, rainbow, iqn, mdqn, reinforce, ppo, a2c, td3"
    )


@pytest.mark.slow
def test_a_video_into_a_missing_folder_is_refused_and_nothing_is_made(capsys, tmp_path, run_dir):
    target = tmp_path / "missing" / "deeper" / "x.mp4"
    status, err = cli(capsys, "evaluate", run_dir, "--video", target)
    assert status == 2 and "the folder" in one_line(err) and "does not exist" in err
    assert not (tmp_path / "missing").exists()


def test_seeds_given_twice_are_refused_by_name(capsys):
    status, err = cli(capsys, "sweep", "dqn", "--seeds", "0,3,0")
    assert status == 2 and one_line(err) == (
        "rlkit: error: --seeds '0,3,0' gives seed 0 twice: two trials would share a run folder"
    )


@pytest.mark.slow
def test_evaluations_say_what_they_played(capsys, run_dir):
    from rlkit.run.evaluation import episodes_phrase

    assert episodes_phrase(10) == "10 greedy episodes" and episodes_phrase(1) == "1 greedy episode"
    assert episodes_phrase(20, 0.05) == "20 ε-greedy (ε 0.05) episodes"
    status = main(["evaluate", str(run_dir), "--episodes", "1"])
    assert status == 0 and "over 1 greedy episode, seed " in capsys.readouterr().out


def test_two_settings_after_one_set_say_each_needs_its_own(capsys, tmp_path):
    status, err = cli(capsys, "train", "c51", "--env", "CartPole-v1", "--set", "n_step=3",
                      "prioritized=true", "--out", tmp_path)  # fmt: skip
    assert status == 2 and not any(tmp_path.iterdir())
    line = one_line(err)
    assert "(prioritized=true)" in line and "each key=value needs its own --set" in line
    status, err = cli(capsys, "train", "c51", "--env", "CartPole-v1", "stray", "--out", tmp_path)
    assert status == 2 and "--set" not in one_line(err)
