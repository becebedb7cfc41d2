"""A run capped by steps and episodes ends its progress line at 100% of the cap it reached."""

from __future__ import annotations

import io

import pytest

from rlkit.cli.main import main
from rlkit.run.progress import TrainingProgress


class History:
    def __init__(self, episodes: int):
        self.episode_returns = [1.0] * episodes

    def recent_return(self):
        return 1.0 if self.episode_returns else None


def last_line(stream: io.StringIO) -> str:
    return stream.getvalue().strip().splitlines()[-1]


def test_a_run_stopped_by_its_step_budget_ends_at_100_percent_of_its_steps():
    stream = io.StringIO()
    with TrainingProgress(3_000, "reinforce CartPole-v1", total_episodes=1_000, stream=stream,
                          line_interval=0.0) as bar:  # fmt: skip
        bar(1_000, {}, History(30))  # 3% of the episodes, a third of the steps
        assert "1,000/3,000 steps" in bar.line(200) and "33%" in bar.line(200)
        bar(3_000, {}, History(83))
    line = last_line(stream)
    assert "100%" in line and "3,000/3,000 steps" in line and "1,000 episodes" not in line


def test_a_run_stopped_by_its_episode_cap_ends_at_100_percent_of_its_episodes():
    stream = io.StringIO()
    with TrainingProgress(1_000_000, "reinforce CartPole-v1", total_episodes=30, stream=stream,
                          line_interval=0.0) as bar:  # fmt: skip
        bar(300, {}, History(11))
        assert "11/30 episodes" in bar.line(200) and "37%" in bar.line(200)
        bar(741, {}, History(30))
    line = last_line(stream)
    assert "100%" in line and "30/30 episodes" in line and "steps/s" in line


@pytest.mark.slow
@pytest.mark.parametrize(
    ("caps", "count"),
    [(["--steps", "300", "--episodes", "1000"], "300/300 steps"),
     (["--steps", "100000", "--episodes", "4"], "4/4 episodes")],
)  # fmt: skip
def test_the_cli_bar_ends_at_100_percent_of_the_cap_that_stopped_the_run(
    capsys, tmp_path, caps, count
):
    status = main(["train", "reinforce", "--env", "CartPole-v1", *caps, "--out", str(tmp_path),
                   "--eval-every", "0", "--eval-episodes", "1",
                   "--set", "hidden_sizes=8"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 0, err
    bars = [line for line in err.splitlines() if "%" in line and "left" in line]
    assert "100%" in bars[-1] and count in bars[-1]
