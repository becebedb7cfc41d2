"""The life of a run: run folders, exact resume, determinism, signals, bad input, plots."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import rlkit
from rlkit.cli.main import main
from rlkit.run.checkpoint import latest_checkpoint, load_checkpoint
from rlkit.run.folder import RunFolder
from rlkit.run.loop import Trainer, TrainingDiverged

TINY_AGENT = [
    "--set", "learning_starts=100", "--set", "train_freq=50", "--set", "gradient_steps=4",
    "--set", "hidden_sizes=16,16", "--set", "jit_compile=false",
]  # fmt: skip
TINY = ["--quiet", "--eval-episodes", "2", *TINY_AGENT]


#: CartPole's schedules in absolute steps (the preset gives them as fractions of the run)
ABSOLUTE = ["--set", "eps_anneal_fraction=0", "--set", "lr_anneal_fraction=0"]


def cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def only_run(folder: Path) -> Path:
    (run_dir,) = [p for p in folder.iterdir() if p.is_dir()]
    return run_dir


def train_run(capsys, out: Path, *extra) -> Path:
    status, _, err = cli(capsys, "train", "dqn", "--out", out, *TINY, *extra)
    assert status == 0, err
    return only_run(out)


def weights(model_dir: Path) -> dict:
    with np.load(model_dir / "weights.npz") as data:
        return dict(data)


@pytest.mark.slow
def test_interrupted_and_resumed_run_equals_uninterrupted_run(capsys, tmp_path):
    # (a run extended by resume keeps the schedule of the length it started with: absolute
    # schedules make the 430-step start and the 900-step run the same run)
    common = ["--seed", "5", "--eval-every", "250", "--checkpoint-every", "0", *ABSOLUTE]
    whole = train_run(capsys, tmp_path / "whole", "--steps", "900", *common)
    split = train_run(capsys, tmp_path / "split", "--steps", "430", *common)  # mid-episode
    status, _, err = cli(capsys, "resume", split, "--steps", "900", "--quiet")
    assert status == 0, err
    whole_rows = (whole / "metrics.csv").read_text()
    assert whole_rows.count("\neval,") == 3 and whole_rows.count("\nepisode,") > 20
    assert (split / "metrics.csv").read_text() == whole_rows
    a, b = weights(whole / "model"), weights(split / "model")
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.slow
def test_resume_restores_every_piece_of_state(tmp_path):
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.DQN.from_env(
        env,
        seed=1,
        hidden_sizes=(8,),
        learning_starts=50,
        train_freq=25,
        gradient_steps=2,
        jit_compile=False,
    )
    trainer = Trainer(agent, env, run_dir=tmp_path, tensorboard=False)
    trainer.run(333)
    trainer.close()
    restored, loop, env2 = load_checkpoint(latest_checkpoint(RunFolder(tmp_path)))
    assert restored.num_steps == 333 and restored.num_updates == agent.num_updates
    assert loop["state"]["step"] == 333
    assert restored.rng.bit_generator.state == agent.rng.bit_generator.state
    assert restored.replay.rng.bit_generator.state == agent.replay.rng.bit_generator.state
    assert len(restored.replay) == 333
    np.testing.assert_array_equal(restored.replay.obs[:333], agent.replay.obs[:333])
    for a, b in zip(agent.pipeline.optimizer.variables, restored.pipeline.optimizer.variables,
                    strict=True):  # fmt: skip
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in zip(agent.q_target.variables, restored.q_target.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(env2.unwrapped.state, env.unwrapped.state)


@pytest.mark.slow
def test_same_seed_twice_gives_identical_metrics(capsys, tmp_path):
    a = train_run(capsys, tmp_path / "a", "--steps", "600", "--seed", "3", "--eval-every", "300")
    b = train_run(capsys, tmp_path / "b", "--steps", "600", "--seed", "3", "--eval-every", "300")
    assert (a / "metrics.csv").read_text() == (b / "metrics.csv").read_text()
    c = train_run(capsys, tmp_path / "c", "--steps", "600", "--seed", "4", "--eval-every", "300")
    assert (a / "metrics.csv").read_text() != (c / "metrics.csv").read_text()


@pytest.mark.slow
def test_written_config_reproduces_the_run(capsys, tmp_path):
    first = train_run(capsys, tmp_path / "first", "--steps", "500", "--seed", "2")
    status, _, err = cli(capsys, "train", "--config", first / "config.toml", "--quiet",
                         "--out", tmp_path / "again")  # fmt: skip
    assert status == 0, err
    again = only_run(tmp_path / "again")
    assert (again / "config.toml").read_text() == (first / "config.toml").read_text()
    assert (again / "metrics.csv").read_text() == (first / "metrics.csv").read_text()


def test_yaml_config_and_set_on_top(capsys, tmp_path):
    config = tmp_path / "my.yaml"
    config.write_text(
        "run:\n  agent: dqn\n  env: CartPole-v1\n  steps: 300\n  seed: 9\n"
        "agent:\n  hidden_sizes: [8]\n  gamma: 0.9\n  jit_compile: false\n"
    )
    status, _, err = cli(capsys, "train", "--config", config, "--set", "gamma=0.95", "--quiet",
                         "--eval-episodes", "1", "--out", tmp_path / "runs")  # fmt: skip
    assert status == 0, err
    text = (only_run(tmp_path / "runs") / "config.toml").read_text()
    assert "gamma = 0.95" in text and "hidden_sizes = [8]" in text and "seed = 9" in text


@pytest.mark.slow
def test_metrics_csv_and_tensorboard_tags(capsys, tmp_path):
    run_dir = train_run(capsys, tmp_path, "--steps", "1200", "--eval-every", "600")
    rows = (run_dir / "metrics.csv").read_text().splitlines()
    assert rows[0] == "kind,step,episode,return,length,return_std"
    assert {r.split(",")[0] for r in rows[1:]} == {"episode", "eval"}
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir / "tensorboard"), size_guidance={"scalars": 0})
    events.Reload()
    tags = set(events.Tags()["scalars"])
    expected = {"episode/return", "episode/length", "train/loss", "train/q", "train/epsilon",
                "perf/steps_per_second", "eval/return_mean"}  # fmt: skip
    assert expected <= tags, tags
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["best_model"]["step"] in (600, 1200)
    assert (run_dir / "best" / "agent.json").is_file()


@pytest.mark.slow
def test_sigint_writes_a_loadable_checkpoint_and_exits_130(tmp_path):
    cmd = [sys.executable, "-m", "rlkit.cli.main", "train", "dqn", "--steps", "10000000",
           "--checkpoint-every", "0", "--out", str(tmp_path), *TINY]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        runs = list(tmp_path.glob("*/metrics.csv"))
        if runs and runs[0].read_text().count("\n") > 5:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "rlkit resume" in err and "Traceback" not in err
    run_dir = only_run(tmp_path)
    agent, loop, _ = load_checkpoint(latest_checkpoint(RunFolder(run_dir)))
    assert agent.num_steps == loop["state"]["step"] > 0
    assert not list((run_dir / "checkpoints").glob(".*"))  # no temporary leftovers


@pytest.mark.slow
def test_sigterm_also_stops_cleanly(tmp_path):
    cmd = [sys.executable, "-m", "rlkit.cli.main", "train", "dqn", "--steps", "10000000",
           "--checkpoint-every", "0", "--out", str(tmp_path), *TINY]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list(tmp_path.glob("*/metrics.csv")):
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    latest_checkpoint(RunFolder(only_run(tmp_path)))


@pytest.mark.slow
def test_nan_loss_stops_with_a_clear_error_and_keeps_last_good_checkpoint(tmp_path):
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.DQN.from_env(env, hidden_sizes=(8,), learning_starts=50, train_freq=25,
                                      gradient_steps=2, jit_compile=False)  # fmt: skip
    trainer = Trainer(agent, env, run_dir=tmp_path, checkpoint_every=100, tensorboard=False)
    trainer.run(200)
    good = weights(latest_checkpoint(RunFolder(tmp_path)) / "model")
    real_update = agent.update

    def poisoned_update():
        metrics = real_update()
        return None if metrics is None else {**metrics, "loss": float("nan")}

    agent.update = poisoned_update
    with pytest.raises(TrainingDiverged, match="loss became nan"):
        trainer.run(400)
    kept = latest_checkpoint(RunFolder(tmp_path))
    assert kept.name == "step-0000000200"
    for key, value in weights(kept / "model").items():
        np.testing.assert_array_equal(value, good[key])


@pytest.mark.slow
def test_run_stopped_before_its_summary_is_finished_by_resume(capsys, tmp_path):
    # Stopped after its last checkpoint, during the final evaluation: resume only finishes
    # it (nothing more is trained, the metrics stay as they were, the summary is the same).
    run_dir = train_run(capsys, tmp_path / "runs", "--steps", "300", "--seed", "3")
    summary = json.loads((run_dir / "summary.json").read_text())
    metrics = (run_dir / "metrics.csv").read_text()
    (run_dir / "summary.json").unlink()
    status, _, err = cli(capsys, "resume", run_dir, "--quiet")
    assert status == 0, err
    assert "finishing dqn on CartPole-v1: training reached its limit (step 300)" in err
    assert (run_dir / "metrics.csv").read_text() == metrics
    again = json.loads((run_dir / "summary.json").read_text())
    assert again["steps"] == 300 and again["final_model"] == summary["final_model"]
    status, _, err = cli(capsys, "resume", run_dir)
    assert status == 2 and "already at step 300" in err


@pytest.mark.slow
def test_corrupt_missing_and_mismatched_checkpoints_are_usage_errors(capsys, tmp_path):
    run_dir = train_run(capsys, tmp_path / "runs", "--steps", "300")
    (checkpoint,) = (run_dir / "checkpoints").glob("step-*")
    config_text = (run_dir / "config.toml").read_text()
    (run_dir / "config.toml").write_text(config_text.replace('agent = "dqn"', 'agent = "ddpg"'))
    status, _, err = cli(capsys, "resume", run_dir, "--steps", "400")
    assert status == 2 and "holds a dqn agent" in err
    (run_dir / "config.toml").write_text(config_text)
    status, _, err = cli(capsys, "resume", run_dir)
    assert status == 2 and "already at step 300" in err
    (checkpoint / "state.npz").write_bytes(b"not a zip file")
    status, _, err = cli(capsys, "resume", run_dir, "--steps", "400")
    assert status == 2 and "corrupt checkpoint" in err and len(err.strip().splitlines()) == 1
    (checkpoint / "model" / "weights.npz").write_bytes(b"")
    status, _, err = cli(capsys, "evaluate", checkpoint / "model", "--env", "CartPole-v1")
    assert status == 2 and "corrupt checkpoint" in err
    for path in (tmp_path / "nowhere", tmp_path / "runs"):
        status, _, err = cli(capsys, "resume", path)
        assert status == 2 and len(err.strip().splitlines()) == 1
    empty = tmp_path / "empty"
    (empty / "checkpoints").mkdir(parents=True)
    (empty / "config.toml").write_text(config_text)
    status, _, err = cli(capsys, "resume", empty)
    assert status == 2 and "no checkpoint" in err


@pytest.mark.parametrize(
    "content, message",
    [
        ("[agent]\nlearning_rat = 0.1\n", "unknown config key 'learning_rat'"),
        ("[agent]\nlearning_rate = -0.1\n", "learning_rate: must be > 0"),
        ("[agent]\nbatch_size = 'big'\n", "bad value 'big' for batch_size"),
        ("[run]\nagent = 'dqn'\nstep = 5\n", "unknown run setting 'step'"),
        ("[runn]\n", "unknown table 'runn'"),
        ("[agent\n", "cannot parse config file"),
    ],
)
def test_bad_config_files(capsys, tmp_path, content, message):
    path = tmp_path / "bad.toml"
    path.write_text(content)
    status, _, err = cli(capsys, "train", "dqn", "--config", path, "--out", tmp_path / "runs")
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_evaluate_and_plot_commands(capsys, tmp_path):
    a = train_run(capsys, tmp_path / "runs", "--steps", "400", "--seed", "1")
    b = train_run(capsys, tmp_path / "more", "--steps", "400", "--seed", "2")
    status, out, err = cli(capsys, "evaluate", a, "--episodes", "3")
    assert status == 0, err
    assert "over 3 greedy episodes" in out and "±" in out
    status, _, err = cli(capsys, "evaluate", a, "--best")
    assert status == 2 and "--eval-every" in err
    png = tmp_path / "curves.png"
    status, out, err = cli(capsys, "plot", a, b, "-o", png)
    assert status == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    status, _, err = cli(capsys, "plot", tmp_path / "missing", "-o", png)
    assert status == 2


@pytest.mark.slow
def test_video_without_moviepy_is_a_clear_error(capsys, tmp_path, monkeypatch):
    run_dir = train_run(capsys, tmp_path, "--steps", "200")
    # moviepy as if not installed (the test extra installs it): not found, not importable
    import importlib.util

    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "moviepy" else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setitem(sys.modules, "moviepy", None)
    status, _, err = cli(capsys, "evaluate", run_dir, "--video", tmp_path / "out.mp4")
    assert status == 2 and "moviepy" in err
    assert not (tmp_path / "out.mp4").exists()


def test_callbacks_can_stop_early_and_log_custom_scalars(tmp_path):
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.DQN.from_env(env, hidden_sizes=(8,), jit_compile=False)
    seen = []

    def callback(step, info, history):
        info["logger"].scalars(step, {"custom/step_squared": float(step**2)})
        seen.append(step)
        return step < 50

    trainer = Trainer(agent, env, run_dir=tmp_path, callbacks=[callback])
    history = trainer.run(1000)
    trainer.close()
    assert history.steps == 50 and seen[-1] == 50
    assert os.listdir(tmp_path / "tensorboard")


@pytest.mark.slow
def test_vector_envs_train_and_resume_exactly(capsys, tmp_path):
    common = ["--seed", "1", "--num-envs", "4", "--eval-every", "400", "--checkpoint-every", "0",
              *ABSOLUTE]  # fmt: skip
    whole = train_run(capsys, tmp_path / "whole", "--steps", "1200", *common)
    split = train_run(capsys, tmp_path / "split", "--steps", "600", *common)
    status, _, err = cli(capsys, "resume", split, "--steps", "1200", "--quiet")
    assert status == 0, err
    rows = (whole / "metrics.csv").read_text()
    assert rows.count("\nepisode,") > 40 and rows.count("\neval,") == 3
    assert (split / "metrics.csv").read_text() == rows
    summary = json.loads((whole / "summary.json").read_text())
    assert summary["steps"] == 1200


def test_dqn_batched_observe_matches_one_by_one():
    env = gym.make("CartPole-v1")
    one = rlkit.agents.DQN.from_env(env, hidden_sizes=(8,), jit_compile=False)
    many = rlkit.agents.DQN.from_env(env, hidden_sizes=(8,), jit_compile=False)
    rng = np.random.default_rng(0)
    obs, next_obs = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    actions, rewards = np.array([0, 1, 1, 0, 1]), rng.normal(size=5)
    term, trunc = np.array([0, 1, 0, 0, 0], bool), np.array([0, 0, 1, 0, 0], bool)
    for i in range(5):
        one.observe(obs[i], actions[i], rewards[i], next_obs[i], term[i], trunc[i])
    many.observe_batch(obs, actions, rewards, next_obs, term, trunc)
    assert one.num_steps == many.num_steps == 5
    for name in ("obs", "actions", "rewards", "next_obs", "terminated", "truncated"):
        np.testing.assert_array_equal(getattr(one.replay, name), getattr(many.replay, name))
    assert many.act(obs).shape == (5,)


def test_on_policy_agent_rejects_num_envs(capsys, tmp_path):
    status, _, err = cli(capsys, "train", "reinforce", "--num-envs", "4", "--out", tmp_path)
    assert status == 2 and "--num-envs" in err


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("moviepy") is None, reason="needs the video extra"
)
@pytest.mark.slow
def test_video_is_recorded(capsys, tmp_path):
    run_dir = train_run(capsys, tmp_path, "--steps", "200")
    video = tmp_path / "out.mp4"  # (a missing folder is refused: integration/test_cli_edges.py)
    status, out, err = cli(capsys, "evaluate", run_dir, "--episodes", "1", "--video", video)
    assert status == 0, err
    assert video.stat().st_size > 1000


@pytest.mark.slow
def test_evaluate_command_in_a_fresh_process(tmp_path, capsys):
    run_dir = train_run(capsys, tmp_path, "--steps", "200")
    result = subprocess.run(
        [sys.executable, "-m", "rlkit.cli.main", "evaluate", str(run_dir), "--episodes", "2"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "over 2 greedy episodes" in result.stdout


@pytest.mark.slow
def test_evaluate_on_an_env_with_other_spaces_is_a_usage_error(capsys, tmp_path):
    run_dir = train_run(capsys, tmp_path, "--steps", "200")
    status, _, err = cli(capsys, "evaluate", run_dir / "model", "--env", "Acrobot-v1")
    assert status == 2 and "another observation space" in err


@pytest.mark.slow
def test_resume_respects_the_episode_cap(capsys, tmp_path):
    run_dir = train_run(capsys, tmp_path, "--steps", "5000", "--episodes", "5")
    status, _, err = cli(capsys, "resume", run_dir, "--steps", "6000")
    assert status == 2 and "already has 5 episodes" in err
    before = sorted(p.name for p in (run_dir / "tensorboard").iterdir())
    status, _, err = cli(capsys, "resume", run_dir, "--episodes", "8", "--quiet")
    assert status == 0, err
    rows = (run_dir / "metrics.csv").read_text().count("\nepisode,")
    assert rows == 8
    assert len(list((run_dir / "tensorboard").iterdir())) == len(before) + 1


@pytest.mark.slow
def test_vector_run_resumes_on_a_vector_env_without_its_pickle(capsys, tmp_path):
    run_dir = train_run(capsys, tmp_path, "--steps", "300", "--num-envs", "3")
    for pickled in (run_dir / "checkpoints").glob("step-*/env.pkl"):
        pickled.unlink()
    status, _, err = cli(capsys, "resume", run_dir, "--steps", "600", "--quiet")
    assert status == 0, err
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["steps"] == 600


@pytest.mark.parametrize(
    "args, message",
    [
        (["--seed", "-1"], "--seed"),
        (["--set", "learning_rate=inf"], "must be a finite number"),
        (["--num-envs", "8", "--set", "buffer_size=4", "--set", "batch_size=4"], "buffer_size"),
    ],
)
def test_more_bad_train_input(capsys, tmp_path, args, message):
    status, _, err = cli(capsys, "train", "dqn", "--out", tmp_path, *args)
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_non_utf8_config_and_non_png_plot(capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"\xff\xfe\x00")
    status, _, err = cli(capsys, "train", "--config", bad, "--out", tmp_path / "runs")
    assert status == 2 and "not UTF-8" in err
    run_dir = train_run(capsys, tmp_path / "runs", "--steps", "200")
    status, _, err = cli(capsys, "plot", run_dir, "-o", tmp_path / "curves.txt")
    assert status == 2 and "*.png" in err


def test_registration_survives_a_find_spec_probe():
    code = (
        "import importlib.util, rlkit; importlib.util.find_spec('gymnasium');"
        "import gymnasium as gym; gym.make('rlkit/MultiArmedBandit-v0')"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_summary_scores_give_the_standard_error_of_the_mean():
    from rlkit.run.experiment import _score

    assert _score(10.0, 3.0, 9) == "10.0 ± 3.0 (s.e. 1.0)"  # 3 / sqrt(9)
    assert _score(-152.25, 94.3, 100) == "-152.2 ± 94.3 (s.e. 9.4)"


@pytest.mark.slow
def test_plot_names_the_axis_game_score_for_runs_with_whole_games(monkeypatch, tmp_path):
    import matplotlib.axes

    from rlkit.run.plotting import plot_runs

    header = "kind,step,episode,return,length,return_std\n"
    for name, env, rows in (
        ("atari", "ALE/Breakout-v5", "episode,30,1,0,30,\nepisode,60,2,1,30,\ngame,60,1,1,60,\n"),
        ("cartpole", "CartPole-v1", "episode,30,1,30,30,\nepisode,80,2,50,50,\n"),
    ):
        run = tmp_path / name
        run.mkdir()
        (run / "config.toml").write_text(f'[run]\nagent = "dqn"\nenv = "{env}"\n')
        (run / "metrics.csv").write_text(header + rows)
    labels = []
    real = matplotlib.axes.Axes.set_ylabel

    def set_ylabel(ax, text, **kwargs):
        labels.append(text)
        return real(ax, text, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "set_ylabel", set_ylabel)
    plot_runs([tmp_path / "atari", tmp_path / "cartpole"], tmp_path / "both.png", window=2)
    assert labels == ["game score, all lives (moving average of 2)",
                      "episode return (moving average of 2)"]  # fmt: skip
