"""`rlkit plot TUNE_DIR`: the search trials (one line each) and the ranking on fresh seeds
(each trial's seeds one line), as a tune folder holds them; `TUNE_DIR/search` alone."""

from __future__ import annotations

import json
from pathlib import Path

from rlkit.agents.dqn.config import DQNConfig
from rlkit.cli.main import main
from rlkit.cli.plot import groups_to_plot
from rlkit.config.options import make_config
from rlkit.config.run import RunConfig
from rlkit.run.folder import RunFolder
from rlkit.sweeps import tuning
from rlkit.sweeps.grid import trial_dir

HEADER = "kind,step,episode,return,length,return_std\n"


def fake_run(path: Path, seed: int, lr: str, score: float, steps: int, finished: bool) -> None:
    """A run folder as a trial leaves it: config.toml, episodes, an evaluation, and a
    summary if it ran to the end."""
    folder = RunFolder.create_at(path)
    settings = RunConfig(agent="dqn", env="CartPole-v1", seed=seed, steps=1000, eval_every=500)
    folder.write_config(settings, make_config(DQNConfig, {"learning_rate": lr}))
    rows = "".join(f"episode,{steps * i // 4},{i},{10 * i},20,\n" for i in range(1, 5))
    folder.metrics_path.write_text(HEADER + rows + f"eval,{steps},4,{score},,0.0\n")
    if finished:
        folder.write_summary({"steps": steps, "final_model": {"eval_return_mean": score}})


def fake_tune(out: Path, ranked: bool = True) -> tuning.TuneSpec:
    """Three search trials (one stopped early by ASHA), the best two on fresh seeds 1, 2."""
    spec = tuning.TuneSpec(
        agent="dqn", train={"env": "CartPole-v1", "steps": 1000, "eval_every": 500,
                            "eval_episodes": 2}, space={"learning_rate": "loguniform(1e-4,1e-2)"},
        trials=3, seeds=[1, 2], top=2, grace=500,
    )  # fmt: skip
    spec.save(out)
    trials = {"trial-a": ("0.001", 50.0, 1000, True), "trial-b": ("0.01", 9.0, 500, False),
              "trial-c": ("0.0003", 80.0, 1000, True)}  # fmt: skip
    for label, (lr, score, steps, finished) in trials.items():
        tuning.write_values(out, label, {"learning_rate": lr})
        fake_run(tuning.search_run(out, label, spec), 0, lr, score, steps, finished)
    if not ranked:
        return spec
    picked = {"trial-c": {"learning_rate": "0.0003"}, "trial-a": {"learning_rate": "0.001"}}
    (out / tuning.SEARCH_FILE).write_text(json.dumps({"picked": picked}))
    spec.sweep(picked).save(out / tuning.FINAL_DIR)
    finals = {"trial-c": [60.0, 70.0], "trial-a": [95.0, 85.0]}
    for label, scores in finals.items():
        for seed, score in zip(spec.seeds, scores, strict=True):
            run = trial_dir(out / tuning.FINAL_DIR, label, seed)
            fake_run(run, seed, picked[label]["learning_rate"], score, 1000, True)
    return spec


def panels(groups) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for group in groups:
        found.setdefault(group.env, {})[group.label] = len(group.runs)
    return found


def test_a_tune_folder_plots_its_search_and_its_ranking(capsys, tmp_path):
    out = tmp_path / "tune"
    fake_tune(out)
    assert panels(groups_to_plot([out])) == {
        "CartPole-v1: search, 3 of 3 trials on seed 0": {
            "trial-a (50.0)": 1,
            "trial-b (9.0 at 500 steps)": 1,  # stopped early: where it stopped
            "trial-c (80.0)": 1,
        },
        "CartPole-v1: the best 2 on fresh seeds 1, 2": {  # in the ranking's order
            "1. trial-a (final 90.0)": 2,
            "2. trial-c (final 65.0)": 2,
        },
    }
    png = tmp_path / "tune.png"
    status = main(["plot", str(out), "-o", str(png), "--smooth", "2"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert png.read_bytes()[:4] == b"\x89PNG" and f"wrote {png}" in captured.out
    assert "1. trial-a (final 90.0): 2 runs" in captured.err.splitlines()


def test_the_search_folder_plots_the_search_and_an_unranked_tune_its_search(tmp_path):
    out = tmp_path / "tune"
    fake_tune(out)
    (search,) = panels(groups_to_plot([out / tuning.SEARCH_DIR])).values()
    assert sorted(search) == ["trial-a (50.0)", "trial-b (9.0 at 500 steps)", "trial-c (80.0)"]
    early = tmp_path / "early"  # stopped before the search ended: no ranking yet
    fake_tune(early, ranked=False)
    assert list(panels(groups_to_plot([early]))) == ["CartPole-v1: search, 3 of 3 trials on seed 0"]


def test_a_tune_with_nothing_to_draw_yet_is_one_line(capsys, tmp_path):
    out = tmp_path / "tune"
    tuning.TuneSpec(agent="dqn", train={"env": "CartPole-v1", "steps": 1000}, space={},
                    trials=2, seeds=[1]).save(out)  # fmt: skip
    assert main(["plot", str(out), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "no trial of the tune" in err and len(err.strip().splitlines()) == 1


def test_a_sweep_folder_still_plots_its_trials_by_configuration(capsys, tmp_path):
    """The ranking is a sweep: 'rlkit plot TUNE_DIR/final' groups it as any sweep."""
    out = tmp_path / "tune"
    fake_tune(out)
    groups = groups_to_plot([out / tuning.FINAL_DIR])
    assert sorted((g.label, len(g.runs)) for g in groups) == [
        ("dqn CartPole-v1 learning_rate=0.0003", 2),
        ("dqn CartPole-v1 learning_rate=0.001", 2),
    ]
