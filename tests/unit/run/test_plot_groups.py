"""`rlkit plot` groups runs by agent variant, environment and configuration (issue 29)."""

from pathlib import Path

import matplotlib.figure

from rlkit.agents.ddpg.config import DDPGConfig
from rlkit.agents.dqn.config import DQNConfig
from rlkit.cli.main import main
from rlkit.config.options import make_config
from rlkit.config.run import RunConfig
from rlkit.run.folder import RunFolder
from rlkit.run.plotting import group_runs, plot_groups

HEADER = "kind,step,episode,return,length,return_std\n"


def fake_run(out: Path, name: str, agent: str = "dqn", env: str = "CartPole-v1", seed: int = 0,
             steps: int = 400, agent_table: dict | None = None, **run) -> Path:  # fmt: skip
    """A finished-looking run folder: config.toml as rlkit writes it, and a few episodes."""
    config_class = {"dqn": DQNConfig, "ddpg": DDPGConfig}[agent]
    folder = RunFolder.create_at(out / name)
    settings = RunConfig(agent=agent, env=env, seed=seed, steps=steps, **run)
    folder.write_config(settings, make_config(config_class, agent_table or {}))
    rows = "".join(f"episode,{40 * i},{i},{10 * i + seed},40,\n" for i in range(1, 9))
    folder.metrics_path.write_text(HEADER + rows + f"eval,{steps},8,50.0,,1.0\n")
    return folder.path


def labelled(groups) -> dict[str, list[str]]:
    return {g.label: sorted(p.name for p in g.runs) for g in groups}


def test_seeds_of_one_configuration_form_one_group_labelled_by_what_differs(tmp_path):
    runs = [
        fake_run(tmp_path, "a", seed=0, agent_table={"learning_rate": 1e-3}),
        fake_run(tmp_path, "b", seed=1, agent_table={"learning_rate": 1e-3}, steps=800),
        fake_run(tmp_path, "c", seed=0, agent_table={"learning_rate": 3e-4}, eval_every=100),
        fake_run(tmp_path, "d", seed=2, agent_table={"learning_rate": 3e-4, "gamma": 0.9}),
    ]
    # seed, steps and eval_every make no other configuration; learning_rate and gamma do
    assert labelled(group_runs(runs)) == {
        "dqn CartPole-v1 gamma=0.99 learning_rate=0.001": ["a", "b"],
        "dqn CartPole-v1 gamma=0.99 learning_rate=0.0003": ["c"],
        "dqn CartPole-v1 gamma=0.9 learning_rate=0.0003": ["d"],
    }
    two = group_runs(runs[:3])
    assert labelled(two) == {
        "dqn CartPole-v1 learning_rate=0.001": ["a", "b"],
        "dqn CartPole-v1 learning_rate=0.0003": ["c"],
    }
    (group,) = [g for g in two if len(g.runs) == 2]
    assert group.variant == "dqn" and group.env == "CartPole-v1"
    assert dict(group.config)["learning_rate"] == "0.001"


def test_variants_and_environments_are_groups_of_their_own(tmp_path):
    runs = [
        fake_run(tmp_path, "ddpg-Pendulum-v1-0-20240101-000000", "ddpg", "Pendulum-v1"),
        # a TD3 run from before TD3 runs were named td3: its config says what it is
        fake_run(
            tmp_path,
            "ddpg-Pendulum-v1-1-20240101-000000",
            "ddpg",
            "Pendulum-v1",
            seed=1,
            agent_table={"td3": True},
        ),  # fmt: skip
        fake_run(
            tmp_path,
            "td3-Pendulum-v1-2-20240101-000000",
            "ddpg",
            "Pendulum-v1",
            seed=2,
            agent_table={"td3": True},
        ),  # fmt: skip
        fake_run(tmp_path, "dqn", agent_table={"learning_rate": 3e-4}),
        fake_run(tmp_path, "dqn-4", num_envs=4, agent_table={"learning_rate": 3e-4}),
    ]
    groups = group_runs(runs)
    assert labelled(groups) == {
        "dqn CartPole-v1 num_envs=1": ["dqn"],
        "dqn CartPole-v1 num_envs=4": ["dqn-4"],
        "ddpg Pendulum-v1": ["ddpg-Pendulum-v1-0-20240101-000000"],
        "td3 Pendulum-v1": ["ddpg-Pendulum-v1-1-20240101-000000",
                            "td3-Pendulum-v1-2-20240101-000000"],
    }  # fmt: skip
    assert [g.env for g in groups] == ["CartPole-v1", "CartPole-v1", "Pendulum-v1", "Pendulum-v1"]


def test_a_config_written_before_a_key_existed_groups_with_todays_defaults(tmp_path):
    new = fake_run(tmp_path, "new")
    old = fake_run(tmp_path, "old", seed=1)
    text = old.joinpath("config.toml").read_text()
    old.joinpath("config.toml").write_text(text.replace("gamma = 0.99\n", ""))
    assert labelled(group_runs([new, old])) == {"dqn CartPole-v1": ["new", "old"]}


def test_given_labels_name_their_groups(tmp_path):
    a = fake_run(tmp_path, "a", "ddpg", "Pendulum-v1")
    b = fake_run(tmp_path, "b", "ddpg", "Pendulum-v1", agent_table={"td3": True})
    c = fake_run(tmp_path, "c", "ddpg", "Pendulum-v1", seed=1, agent_table={"td3": True})
    labels = {a: "ddpg/Pendulum-v1", b: "ddpg/Pendulum-v1-td3", c: "ddpg/Pendulum-v1-td3"}
    assert labelled(group_runs([a, b, c], labels)) == {
        "ddpg/Pendulum-v1": ["a"],
        "ddpg/Pendulum-v1-td3": ["b", "c"],
    }


def test_each_group_is_one_legend_entry_with_the_mean_of_its_seeds(tmp_path, monkeypatch):
    runs = [
        fake_run(tmp_path, "a", seed=0, agent_table={"learning_rate": 1e-3}),
        fake_run(tmp_path, "b", seed=1, agent_table={"learning_rate": 1e-3}),
        fake_run(tmp_path, "c", seed=0, agent_table={"learning_rate": 3e-4}),
    ]
    legends = []
    real = matplotlib.figure.Figure.savefig

    def savefig(fig, *args, **kwargs):
        legends.extend(fig.axes[0].get_legend_handles_labels()[1])
        return real(fig, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    png = plot_groups(group_runs(runs), tmp_path / "groups.png", window=2)
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert sorted(legends) == [
        "dqn CartPole-v1 learning_rate=0.0003",
        "dqn CartPole-v1 learning_rate=0.0003: greedy evaluations",
        "dqn CartPole-v1 learning_rate=0.001 (mean of 2)",
        "dqn CartPole-v1 learning_rate=0.001: greedy evaluations",
    ]


def test_plot_command_groups_the_runs_of_a_folder(capsys, tmp_path):
    runs = tmp_path / "runs"
    for name, seed, rate in (("a", 0, 1e-3), ("b", 1, 1e-3), ("c", 0, 3e-4)):
        fake_run(runs, name, seed=seed, agent_table={"learning_rate": rate})
    png = tmp_path / "curves.png"
    status = main(["plot", str(runs), "-o", str(png), "--smooth", "2"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"wrote {png}" in out
    assert err.splitlines() == [
        "dqn CartPole-v1 learning_rate=0.0003: 1 run",
        "dqn CartPole-v1 learning_rate=0.001: 2 runs",
    ]


def test_environment_arguments_make_another_configuration(tmp_path):
    runs = [
        fake_run(tmp_path, "plain", env="LunarLander-v3"),
        fake_run(tmp_path, "windy", env="LunarLander-v3", env_kwargs={"enable_wind": True}),
        fake_run(
            tmp_path, "windy-1", env="LunarLander-v3", seed=1, env_kwargs={"enable_wind": True}
        ),  # fmt: skip
    ]
    assert labelled(group_runs(runs)) == {
        "dqn LunarLander-v3 env_kwargs.enable_wind=-": ["plain"],
        "dqn LunarLander-v3 env_kwargs.enable_wind=true": ["windy", "windy-1"],
    }


def test_runs_group_by_the_schedule_they_ran_not_how_it_was_given(tmp_path):
    """A run from before fractions existed (steps only) and a new one whose fraction came
    to the same steps are one configuration; a fraction that came to other steps is not."""
    schedule = {"eps_anneal_steps": 12_000, "lr_anneal_steps": 100_000}
    fractions = {"eps_anneal_fraction": 0.12, "lr_anneal_fraction": 1.0}
    new = fake_run(tmp_path, "new", steps=100_000, agent_table={**schedule, **fractions})
    old = fake_run(tmp_path, "old", seed=1, steps=100_000, agent_table=schedule)
    text = old.joinpath("config.toml").read_text()  # as written before the fraction keys
    for key in fractions:
        text = "".join(line for line in text.splitlines(True) if not line.startswith(key))
    old.joinpath("config.toml").write_text(text)
    short = fake_run(tmp_path, "short", seed=2, steps=20_000,
                     agent_table={"eps_anneal_steps": 2_400, "lr_anneal_steps": 20_000,
                                  **fractions})  # fmt: skip
    assert labelled(group_runs([new, old, short])) == {
        "dqn CartPole-v1 eps_anneal_steps=12000 lr_anneal_steps=100000": ["new", "old"],
        "dqn CartPole-v1 eps_anneal_steps=2400 lr_anneal_steps=20000": ["short"],
    }
    # a hand-written config with a fraction and no steps: the steps it comes to
    hand = fake_run(tmp_path, "hand", seed=3, steps=100_000, agent_table=schedule)
    text = hand.joinpath("config.toml").read_text()
    lines = [line for line in text.splitlines(True) if not line.startswith("eps_anneal")]
    hand.joinpath("config.toml").write_text("".join(lines) + "eps_anneal_fraction = 0.12\n")
    (group,) = [g for g in group_runs([new, hand]) if len(g.runs) == 2]
    assert dict(group.config)["eps_anneal_steps"] == "12000"


def test_an_rlkit_tensorflow_twin_is_drawn_in_the_panel_of_the_id_it_equals(tmp_path, monkeypatch):
    runs = [fake_run(tmp_path, "gym", env="CartPole-v1"),
            fake_run(tmp_path, "tf", env="rlkit/CartPole-v1"),
            fake_run(tmp_path, "other", env="Acrobot-v1")]  # fmt: skip
    panels = {}
    real = matplotlib.figure.Figure.savefig

    def savefig(fig, *args, **kwargs):
        for ax in fig.axes:
            if ax.get_visible():
                labels = ax.get_legend_handles_labels()[1]
                panels[ax.get_title()] = sorted(x for x in labels if "greedy" not in x)
        return real(fig, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    plot_groups(group_runs(runs), tmp_path / "twins.png", window=2)
    assert panels == {
        "CartPole-v1": ["dqn CartPole-v1", "dqn rlkit/CartPole-v1"],
        "Acrobot-v1": ["dqn Acrobot-v1"],
    }


def test_until_draws_each_run_up_to_that_step(tmp_path, monkeypatch, capsys):
    import rlkit.run.plotting as plotting

    drawn = {}
    monkeypatch.setattr(plotting, "_draw_panel", lambda ax, lines, points: drawn.update(lines))
    long_run, other = fake_run(tmp_path, "a", steps=320), fake_run(tmp_path, "b", seed=1)
    png = tmp_path / "cut.png"
    assert main(["plot", str(long_run), str(other), "-o", str(png), "--until", "200",
                 "--smooth", "2"]) == 0  # fmt: skip
    ((curves, evaluations),) = drawn.values()
    for steps, _ in curves:  # episodes end every 40 steps: 40 ... 200
        assert list(steps) == [40, 80, 120, 160, 200]
    # run a's returns 10, 20, 30 ...: smoothed over the whole run, then cut
    assert list(curves[0][1]) == [10.0, 15.0, 25.0, 35.0, 45.0]
    assert all(len(steps) == 0 for steps, _ in evaluations)  # evaluated at 320 and 400: cut
    assert png.is_file()
    capsys.readouterr()
    assert main(["plot", str(long_run), "-o", str(png), "--until", "10"]) == 2
    assert "no episode ended by step 10 to plot" in capsys.readouterr().err
    assert main(["plot", str(long_run), "-o", str(png), "--until", "-1"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--until must be a step count >= 0" in line


def test_by_preset_draws_one_line_per_preset_whatever_else_the_runs_set(tmp_path, capsys):
    from rlkit.cli.plot import groups_to_plot

    runs = [
        fake_run(tmp_path, "a0", preset="dqn/CartPole-v1"),
        fake_run(
            tmp_path, "a1", seed=1, preset="dqn/CartPole-v1", agent_table={"learning_rate": 0.01}
        ),  # fmt: skip
        fake_run(tmp_path, "b", preset="dqn/minatar"),
        fake_run(tmp_path, "c", agent_table={"learning_rate": 0.02}),  # no preset
        fake_run(tmp_path, "d", agent_table={"learning_rate": 0.03}),
    ]
    by_preset = labelled(groups_to_plot(runs, "preset"))
    assert by_preset == {
        "dqn CartPole-v1 (dqn/CartPole-v1)": ["a0", "a1"],
        "dqn CartPole-v1 (dqn/minatar)": ["b"],
        "dqn CartPole-v1 learning_rate=0.02": ["c"],
        "dqn CartPole-v1 learning_rate=0.03": ["d"],
    }
    # by configuration: a0 and b set the same values (the preset's name makes none)
    assert sorted(map(len, labelled(groups_to_plot(runs)).values())) == [1, 1, 1, 2]
    png = tmp_path / "by.png"
    assert main(["plot", *map(str, runs), "--by", "preset", "-o", str(png)]) == 0
    assert "dqn CartPole-v1 (dqn/CartPole-v1): 2 runs" in capsys.readouterr().err
