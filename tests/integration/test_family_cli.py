"""The DQN family's runs where users look at runs (issue 36, item 4): each member's run folder
is named after it, `rlkit evaluate` plays its model, `rlkit plot` draws them together, one
line per member, labelled by name."""

from __future__ import annotations

import json

import pytest

from rlkit.cli.main import main
from rlkit.run.plotting import group_runs

MEMBERS = ("c51", "qrdqn", "rainbow", "iqn", "mdqn")
TINY = ["--env", "CartPole-v1", "--steps", "300", "--eval-every", "0", "--eval-episodes", "1",
        "--quiet", "--set", "hidden_sizes=16", "--set", "learning_starts=100",
        "--set", "train_freq=50", "--set", "jit_compile=false"]  # fmt: skip


@pytest.fixture(scope="module")
def family_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("family")
    runs = {}
    for member in MEMBERS:
        extra = ["--set", "num_quantiles=8"] if member == "qrdqn" else []
        if member == "iqn":
            extra = ["--set", "num_tau_samples=4", "--set", "num_tau_prime_samples=4",
                     "--set", "num_quantile_samples=4"]  # fmt: skip
        assert main(["train", member, *TINY, *extra, "--out", str(out / member)]) == 0
        (runs[member],) = (out / member).iterdir()
    return runs


@pytest.mark.slow
def test_each_members_run_is_named_after_it_and_evaluates(family_runs, capsys):
    for member, run_dir in family_runs.items():
        assert run_dir.name.startswith(f"{member}-CartPole-v1-0-")
        assert json.loads((run_dir / "summary.json").read_text())["agent"] == member
        capsys.readouterr()
        assert main(["evaluate", str(run_dir), "--episodes", "2"]) == 0
        out = capsys.readouterr().out
        assert "return" in out and member in out, out


@pytest.mark.slow
def test_plot_draws_the_family_together_one_line_each(family_runs, tmp_path):
    import matplotlib.pyplot as plt

    runs = list(family_runs.values())
    labels = sorted(group.label for group in group_runs(runs))
    assert labels == sorted(f"{member} CartPole-v1" for member in MEMBERS)
    png = tmp_path / "family.png"
    assert main(["plot", *map(str, runs), "-o", str(png), "--smooth", "2"]) == 0
    image = plt.imread(png)
    assert image.ndim == 3 and image.shape[0] > 100
