"""rlkit sweep: grid and seed expansion, aggregation by hand, bad input, and (with Ray) real
trials equal to 'rlkit train' runs, resume after an interruption."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from rlkit.cli.main import main
from rlkit.core.errors import UsageError
from rlkit.sweeps.grid import (
    SweepSpec,
    bootstrap_ci,
    config_label,
    iqm,
    parse_grid,
    parse_seeds,
    summarise,
    trial_dir,
)

HAS_RAY = importlib.util.find_spec("ray") is not None
TINY = ["--set", "hidden_sizes=16,16", "--set", "jit_compile=false", "--set", "train_freq=50",
        "--set", "gradient_steps=4", "--set", "learning_starts=100", "--eval-every", "500",
        "--eval-episodes", "2"]  # fmt: skip


def cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


# -- expansion, validation ----------------------------------------------------------------------
def test_grid_and_seed_expansion():
    assert parse_seeds("0-3") == [0, 1, 2, 3] and parse_seeds("5,1") == [5, 1]
    grid = parse_grid(["learning_rate=1e-3,3e-4", "double_dqn=true,false"])
    assert grid == {"learning_rate": ["1e-3", "3e-4"], "double_dqn": ["true", "false"]}
    spec = SweepSpec("dqn", {"env": "CartPole-v1"}, [0, 1, 2], grid)
    trials = spec.trials()
    assert len(trials) == 2 * 2 * 3
    values = {"learning_rate": "1e-3", "double_dqn": "true"}
    assert trials[0] == {"config": "learning_rate=1e-3,double_dqn=true", "values": values,
                         "seed": 0}  # fmt: skip
    assert {t["config"] for t in trials} == {
        "learning_rate=1e-3,double_dqn=true", "learning_rate=1e-3,double_dqn=false",
        "learning_rate=3e-4,double_dqn=true", "learning_rate=3e-4,double_dqn=false",
    }  # fmt: skip
    assert config_label({}) == "default"
    plan = spec.plan(trials[-1]["values"], 2)
    assert plan.agent_config.learning_rate == 3e-4 and plan.agent_config.double_dqn is False
    assert plan.settings.seed == 2


@pytest.mark.parametrize("bad", ["learning_rate", "learning_rate=", "=1,2", "lr=1,,2"])
def test_malformed_grid(bad):
    with pytest.raises(UsageError, match="malformed --grid"):
        parse_grid([bad])


@pytest.mark.parametrize("bad", ["", "a-b", "3-1", "-1"])
def test_bad_seeds(bad):
    with pytest.raises(UsageError, match="bad --seeds"):
        parse_seeds(bad)
    with pytest.raises(UsageError, match="gives seed 1 twice"):
        parse_seeds("1,1")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--grid", "learning_rate"], "malformed --grid"),
        (["--grid", "gama=0.9,0.99"], "unknown config key 'gama'"),
        (["--grid", "learning_rate=1e-3,fast"], "bad value 'fast' for learning_rate"),
        (["--seeds", "x"], "bad --seeds"),
        (["--env", "NoSuchEnv-v0"], "unknown environment"),
    ],
)
def test_bad_sweep_input_is_one_line_before_any_trial(capsys, tmp_path, args, message):
    status, _, err = cli(capsys, "sweep", "dqn", "--out", tmp_path / "s", *args)
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()


def test_resume_of_something_that_is_not_a_sweep(capsys, tmp_path):
    status, _, err = cli(capsys, "sweep", "--resume", tmp_path)
    assert status == 2 and "is not an rlkit sweep folder" in err


def test_sweep_without_ray_says_how_to_install_it(capsys, tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))  # fmt: skip
    status, _, err = cli(capsys, "sweep", "dqn", "--out", tmp_path / "s")
    assert status == 2 and "pip install '.[ray]'" in err


def test_import_rlkit_and_train_never_import_ray():
    code = "import rlkit, rlkit.run.experiment, rlkit.cli.main, sys; print('ray' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False"


# -- aggregation --------------------------------------------------------------------------------
def test_interquartile_mean_and_bootstrap_interval_by_hand():
    assert iqm([8, 1, 7, 2, 6, 3, 5, 4]) == 4.5  # middle four: 3, 4, 5, 6
    assert iqm([1, 2, 3]) == 2.0  # int(0.75) = 0 cut: the plain mean
    assert iqm([1, 100, 2, 3, 4]) == 3.0  # one cut from each end
    assert bootstrap_ci([7.0, 7.0, 7.0, 7.0]) == (7.0, 7.0)
    sample = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]
    low, high = bootstrap_ci(sample, resamples=4000, seed=1)
    rng = np.random.default_rng(1)
    stats = []
    for _ in range(4000):
        x = np.sort(np.asarray(sample)[rng.integers(0, 8, 8)])
        stats.append(x[2:6].mean())
    assert (low, high) == tuple(np.percentile(stats, [2.5, 97.5]))
    assert low < 45.0 < high


def test_summary_rows_from_trial_folders(tmp_path):
    spec = SweepSpec("dqn", {}, [0, 1, 2, 3], {"gamma": ["0.9"]}, target=100.0)
    finals = [50.0, 150.0, 100.0]  # seed 3 did not finish
    for seed, final in enumerate(finals):
        run_dir = trial_dir(tmp_path, "gamma=0.9", seed)
        run_dir.mkdir(parents=True)
        summary = {"final_model": {"eval_return_mean": final},
                   "best_model": {"eval_return_mean": final + 10}}  # fmt: skip
        (run_dir / "summary.json").write_text(json.dumps(summary))
    (row,) = summarise(tmp_path, spec)
    assert row["seeds_done"] == 3 and row["seeds"] == 4
    assert row["final_mean"] == pytest.approx(100.0)
    assert row["final_std"] == pytest.approx(np.std(finals))
    assert row["best_mean"] == pytest.approx(110.0)
    assert row["reached_target"] == pytest.approx(2 / 3)
    assert row["final_iqm"] == pytest.approx(100.0)


# -- with Ray -------------------------------------------------------------------------------------
@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAY, reason="needs the ray extra")
def test_trial_writes_what_rlkit_train_writes_and_aggregates(capsys, tmp_path):
    common = ["--env", "CartPole-v1", "--steps", "1500", *TINY]
    grid = ["--grid", "gamma=0.9,0.99", "--target", "15"]
    status, sweep_out, sweep_err = cli(capsys, "sweep", "dqn", *common, "--seeds", "3", *grid,
                                       "--out", tmp_path / "s")  # fmt: skip
    assert status == 0, sweep_err
    status, _, err = cli(capsys, "train", "dqn", *common, "--seed", "3", "--set", "gamma=0.9",
                         "--quiet", "--out", tmp_path / "t")  # fmt: skip
    assert status == 0, err
    (run_dir,) = (tmp_path / "t").iterdir()
    trial = trial_dir(tmp_path / "s", "gamma=0.9", 3)
    assert (trial / "metrics.csv").read_text() == (run_dir / "metrics.csv").read_text()
    rows = (tmp_path / "s" / "sweep.csv").read_text().splitlines()
    assert rows[0].startswith("config,seeds_done,seeds,final_mean") and len(rows) == 3
    assert rows[1].startswith("gamma=0.9,1,1,") and "gamma=0.9: final" in sweep_out  # stdout
    assert cli(capsys, "plot", tmp_path / "s", "-o", tmp_path / "s.png")[0] == 0


@pytest.mark.long
@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAY, reason="needs the ray extra")
def test_interrupted_sweep_resumes_without_rerunning_finished_trials(tmp_path):
    out = tmp_path / "s"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "rlkit.cli.main", "sweep", "dqn", "--env", "CartPole-v1",
               "--steps", "4000", "--checkpoint-every", "1000", "--seeds", "0-2",
               "--max-concurrent", "1", "--out", str(out), *TINY]  # fmt: skip
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 240
    # stop once the first trial finished and the second has a checkpoint
    while time.time() < deadline:
        first = (trial_dir(out, "default", 0) / "summary.json").is_file()
        second = list((trial_dir(out, "default", 1) / "checkpoints").glob("step-*"))
        if first and second:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    said = proc.stderr.read().decode()
    assert proc.returncode == 130, said[-2000:]  # interrupted, as `rlkit train` says it
    assert f"continue with: rlkit sweep --resume {out}" in said
    assert (trial_dir(out, "default", 0) / "summary.json").is_file()
    assert not (trial_dir(out, "default", 2) / "summary.json").is_file()
    finished = (trial_dir(out, "default", 0) / "metrics.csv").stat().st_mtime_ns
    # a concurrency other than the saved one: Ray restores its own, and one line says so
    resume = [sys.executable, "-m", "rlkit.cli.main", "sweep", "--resume", str(out),
              "--max-concurrent", "2"]  # fmt: skip
    result = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "rlkit: --max-concurrent 2 does not apply: Ray restores this sweep's trials " \
           "with the concurrency, CPUs and retries it saved (max-concurrent 1" \
           in result.stderr, result.stderr[-2000:]  # fmt: skip
    assert (trial_dir(out, "default", 0) / "metrics.csv").stat().st_mtime_ns == finished
    for seed in (1, 2):
        reference = tmp_path / f"train-{seed}"
        argv = [sys.executable, "-m", "rlkit.cli.main", "train", "dqn", "--env", "CartPole-v1",
                "--steps", "4000", "--seed", str(seed), "--quiet", "--out", str(reference),
                *TINY]  # fmt: skip
        subprocess.run(argv, check=True, capture_output=True, env=env)
        (run_dir,) = reference.iterdir()
        assert (trial_dir(out, "default", seed) / "metrics.csv").read_text() == (
            run_dir / "metrics.csv"
        ).read_text()
    assert "3/3 seeds" in result.stdout, result.stdout[-3000:]  # the table: stdout


@pytest.mark.ray
@pytest.mark.skipif(not HAS_RAY, reason="needs the ray extra")
def test_address_with_no_cluster_there_is_one_line_and_leaves_nothing(capsys, tmp_path):
    status, _, err = cli(capsys, "sweep", "dqn", "--address", "127.0.0.1:9", "--out",
                         tmp_path / "s")  # fmt: skip
    assert status == 2 and "no Ray cluster answers at 127.0.0.1:9" in err
    assert not (tmp_path / "s").exists()
    status, _, err = cli(capsys, "sweep", "dqn", "--address", "nonsense", "--out", tmp_path)
    assert status == 2 and "bad --address" in err


# -- sweeps tell the truth ------------------------------------------------------------------------
def test_list_valued_keys_take_bracketed_values_and_duplicates_are_refused():
    assert parse_grid(["hidden_sizes=[64,64],[256]", "gamma=0.9,0.99"]) == {
        "hidden_sizes": ["[64,64]", "[256]"], "gamma": ["0.9", "0.99"]
    }  # fmt: skip
    with pytest.raises(UsageError, match=r"gives 64 twice; a list-valued key takes each value"):
        parse_grid(["hidden_sizes=64,64"])
    with pytest.raises(UsageError, match="gives 1e-3 twice"):
        parse_grid(["learning_rate=1e-3,1e-3"])


def test_two_grid_values_that_are_one_configuration_are_refused():
    from rlkit.sweeps.grid import SweepSpec

    spec = SweepSpec("dqn", {"env": "CartPole-v1"}, [0], {"learning_rate": ["1e-3", "0.001"]})
    with pytest.raises(UsageError, match=r"same configuration twice \(learning_rate=1e-3 and "):
        spec.validate()
    spec = SweepSpec("dqn", {"env": "CartPole-v1"}, [0], {"hidden_sizes": ["[64,64]", "[256]"]})
    spec.validate()
    labels = [t["config"] for t in spec.trials()]
    assert labels == ["hidden_sizes=[64,64]", "hidden_sizes=[256]"]
    assert spec.plan(spec.configs()[0], 0).agent_config.hidden_sizes == (64, 64)


def test_resume_with_another_grid_or_seeds_is_refused_in_one_line(capsys, tmp_path):
    from rlkit.sweeps.grid import SweepSpec

    out = tmp_path / "s"
    SweepSpec("dqn", {"env": "CartPole-v1", "overrides": []}, [0, 1], {"gamma": ["0.9"]}).save(out)
    status, _, err = cli(capsys, "sweep", "--resume", out, "--seeds", "0-4")
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert f"--resume {out} runs the sweep as it was made; it differs in --seeds" in err
    status, _, err = cli(capsys, "sweep", "--resume", out, "--grid", "gamma=0.8")
    assert status == 2 and "it differs in --grid ({'gamma': ['0.9']} here" in err


@pytest.mark.ray
@pytest.mark.skipif(not HAS_RAY, reason="needs the ray extra")
def test_an_address_where_something_else_listens_is_refused_within_seconds(capsys, tmp_path):
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    def answer_like_a_web_server():
        for _ in range(2):
            connection, _ = server.accept()
            connection.recv(100)
            connection.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            connection.close()

    threading.Thread(target=answer_like_a_web_server, daemon=True).start()
    start = time.monotonic()
    status, _, err = cli(capsys, "sweep", "dqn", "--address", f"127.0.0.1:{port}", "--out",
                         tmp_path / "s")  # fmt: skip
    assert time.monotonic() - start < 30
    assert status == 2 and err.strip().splitlines() == [
        f"rlkit: error: 127.0.0.1:{port} is not a Ray head node (what listens there does not "
        "speak Ray's protocol); give the address 'ray start --head' printed, or drop --address"
    ]
    assert not (tmp_path / "s").exists()
    server.close()


@pytest.mark.long
@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAY, reason="needs the ray extra")
def test_a_trial_that_fails_every_time_is_named_and_the_others_are_kept(capsys, tmp_path):
    out = tmp_path / "s"
    status, _, err = cli(capsys, "sweep", "dqn", "--env", "CartPole-v1", "--steps", "600",
                         "--seeds", "0", "--grid", "learning_rate=1e-3,1e30", "--max-failures",
                         "1", "--out", out, *TINY)  # fmt: skip
    assert status == 1, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("rlkit: trial learning_rate=1e30 seed 0 failed: ")
    assert "training stopped" in line and f"results are in {out / 'sweep.csv'}" in line
    rows = (out / "sweep.csv").read_text().splitlines()
    assert rows[1].startswith("learning_rate=1e-3,1,1,")  # the good trial's result is kept
    assert (trial_dir(out, "learning_rate=1e-3", 0) / "summary.json").is_file()
