"""docs/api.md's "Your own experiment" works as printed: its package, its Python loop and
its shell command (with fewer steps)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from rlkit.cli.main import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def blocks(language: str) -> list[str]:
    section = DOC.read_text().split("## Your own experiment", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


@pytest.fixture
def mylab(tmp_path, monkeypatch):
    package = tmp_path / "mylab"
    package.mkdir()
    (package / "__init__.py").write_text(blocks("python")[0])
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    import gymnasium as gym

    gym.registry.pop("mylab/Corridor-v0", None)
    sys.modules.pop("mylab", None)


@pytest.mark.slow
def test_the_python_loop_runs_and_the_agent_comes_back(mylab):
    loop = blocks("python")[1].replace("range(5_000)", "range(400)")
    names: dict = {}
    exec(compile(loop, "docs/api.md", "exec"), names)
    assert (mylab / "corridor-agent" / "agent.json").is_file()
    # the Dict observation: its parts in the replay, as the comment says
    batch = names["batch"]
    assert {k: v.shape for k, v in batch.next_obs.items()} == {"goal": (32, 1), "position": (32, 1)}
    assert names["agent"].num_steps == 400 and not names["agent"].q.fast_path


@pytest.mark.slow
def test_the_shell_command_trains_records_and_resumes(mylab, capsys):
    command = " ".join(blocks("bash")[0].replace("\\\n", " ").split())
    argv = command.split()[1:]  # drop "rlkit"
    argv[argv.index("--steps") + 1] = "300"
    assert main([*argv, "--set", "learning_starts=100", "--quiet", "--out", "runs"]) == 0
    (run_dir,) = (mylab / "runs").iterdir()
    config = (run_dir / "config.toml").read_text()
    assert 'env = "mylab:mylab/Corridor-v0"' in config and '"length" = 6' in config
    assert 'q_network = "mylab:q_network"' in config
    assert main(["resume", str(run_dir), "--steps", "400", "--quiet"]) == 0
    capsys.readouterr()
