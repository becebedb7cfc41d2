"""``rlkit evaluate``, ``rlkit plot`` and ``rlkit config``: looking at agents and runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rlkit.agents.registry import agent_spec
from rlkit.core.errors import UsageError
from rlkit.core.quiet import import_tensorflow_quietly

from .options import non_empty, non_empty_path

#: episodes ``rlkit evaluate`` plays for a model folder (a run folder says its own)
EVALUATE_EPISODES = 10


def _model_and_env(path: Path, env_id: str | None, best: bool) -> tuple[Path, str, dict, int]:
    """The model folder to load, the env id and its constructor's keyword arguments (a run's
    own, when it is the run's env), and the run's evaluation episodes (its config's
    ``eval_episodes``; :data:`EVALUATE_EPISODES` for a model folder), from a run folder or
    a model folder."""
    from rlkit.agents.base import is_saved_agent
    from rlkit.run.folder import RunFolder

    if is_saved_agent(path):  # a model folder itself
        if env_id is None:
            raise UsageError(f"{path} is a model folder: say which environment with --env ID")
        return path, env_id, {}, EVALUATE_EPISODES
    if not RunFolder.is_run(path):
        raise UsageError(f"{path} is neither an rlkit run folder nor a saved model")
    folder = RunFolder(path)
    run, _ = folder.read_config()
    kwargs = run.env_kwargs if env_id in (None, run.env) else {}
    env_id = env_id or run.env
    episodes = run.eval_episodes
    if best:
        if not folder.has_model(best=True):
            raise UsageError(f"{path} has no best model (train with --eval-every N to keep one)")
        return folder.best_dir, env_id, kwargs, episodes
    if folder.has_model():
        return folder.model_dir, env_id, kwargs, episodes
    from rlkit.run.checkpoint import checkpoint_model_dir, latest_checkpoint

    try:
        return checkpoint_model_dir(latest_checkpoint(folder)), env_id, kwargs, episodes
    except UsageError:
        raise UsageError(
            f"{path} has no model to evaluate yet: no model/ folder and no checkpoint "
            "(the run stopped before saving one)"
        ) from None


def _check_video_target(video: Path) -> None:
    """Before playing anything: a file name of a format the video writer knows, in a
    folder that exists and can be written."""
    from rlkit.run.video import VIDEO_SUFFIXES

    if video.suffix.lower() not in VIDEO_SUFFIXES:
        raise UsageError(
            f"--video writes .mp4, .mkv, .mov, .webm, .ogv or .gif files, not {video.name!r}; "
            "e.g. --video out.mp4"
        )
    if not video.parent.is_dir():
        raise UsageError(
            f"--video {video}: the folder {video.parent} does not exist; make it first"
        )
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=video.parent):
            pass
    except OSError as exc:
        raise UsageError(
            f"--video {video}: cannot write to {video.parent}: {exc.strerror}; choose a "
            "folder you can write"
        ) from None


@click.command()
@click.argument("path", metavar="RUN_DIR", type=click.Path(), callback=non_empty_path)
@click.option(
    "--episodes",
    type=int,
    help="evaluation episodes to play (greedy, or the agent's eval_epsilon) [default: the "
    "run's own, its config.toml's eval_episodes (e.g. 100 for the LunarLander-v3 preset); "
    f"{EVALUATE_EPISODES} for a model folder]",
)
@click.option("--seed", type=click.IntRange(0, 2**32 - 1),
              help="seed of the first episode [default: a run's own final-evaluation seed, so "
              "that the figures are the run's own; 0 for a model folder]")  # fmt: skip
@click.option("--best", is_flag=True, help="the best evaluated model instead of the final one")
@click.option("--env", "env_id", metavar="ID", callback=non_empty,
              help="environment [default: the run's]")  # fmt: skip
@click.option(
    "--video",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    callback=non_empty,
    help="also record the episodes to FILE (e.g. out.mp4; from a clone: pip install '.[video]')",
)
@click.option("--render", is_flag=True, help="show the episodes in a window (needs a display)")
@click.option("--env-kwargs", "extra_env_kwargs", multiple=True, metavar="KEY=VALUE",
              help="an argument of the environment's constructor (repeatable) [default: the "
              "run's own]")  # fmt: skip
@click.option("--stochastic/--deterministic", "stochastic", default=None,
              help="ppo and a2c: actions sampled from the policy, or greedy [default: the "
              "agent's deterministic_eval: greedy, but sampled for the ppo Atari preset, as "
              "rl-zoo evaluates Atari]")  # fmt: skip
def evaluate(path, episodes, seed, best, env_id, video, render,
             extra_env_kwargs, stochastic) -> None:  # fmt: skip
    """Play the trained agent of RUN_DIR greedily and print its mean ± std return.

    RUN_DIR is a run folder (its final model, else its latest checkpoint), a
    saved model folder (then give --env) or a policy 'rlkit export' wrote (played
    on its run's environment). It plays as many episodes as the run's own
    evaluations (eval_episodes in its config.toml, what its preset asks for) unless
    --episodes says otherwise.
    """
    from rlkit.config.run import MAX_EVAL_EPISODES

    if episodes is not None and not 0 < episodes <= MAX_EVAL_EPISODES:
        raise UsageError(
            f"--episodes must be a positive number of at most {MAX_EVAL_EPISODES:,}, got {episodes}"
        )
    if not path.exists():
        raise UsageError(f"no run folder or model at {path}")
    if video is not None:
        _check_video_target(video)
    from rlkit.envs.make import has_display
    from rlkit.exporting.exported import is_export

    if render and video is None and not has_display():
        how = ("play the export without --render, or record its run's agent: rlkit evaluate "
               "RUN_DIR --video FILE" if is_export(path) else "use --video FILE")  # fmt: skip
        raise UsageError(f"--render needs a display; on a headless machine {how}")
    if is_export(path):
        if best:
            raise UsageError(f"{path} is an export of one model: --best applies to a run folder")
        if stochastic:
            raise UsageError(f"{path} is an export: it is evaluated greedily (its 'sample' "
                             "signature draws with noise you give); --stochastic applies to a "
                             "run folder")  # fmt: skip
        return _evaluate_export(path, env_id, episodes, seed, extra_env_kwargs, video, render)
    model_dir, env_id, env_kwargs, run_episodes = _model_and_env(path, env_id, best)
    episodes = episodes or run_episodes
    seed, seed_note = _seed(path, model_dir, seed)
    if extra_env_kwargs:
        from rlkit.config.run import parse_env_kwargs

        env_kwargs = {**env_kwargs, **parse_env_kwargs(extra_env_kwargs)}
    import_tensorflow_quietly()
    import rlkit
    from rlkit.core.spaces import space_to_dict
    from rlkit.envs.make import make_env
    from rlkit.run.evaluation import episode_returns, episodes_phrase, evaluation_mode, sampled

    probe = make_env(env_id, training=False, **env_kwargs)  # clear errors before loading
    from rlkit.run.folder import RunFolder

    folder = RunFolder(path)
    if model_dir.parent.parent == folder.checkpoints_dir:  # a run still training: its newest
        from rlkit.run.checkpoint import load_newest_checkpoint_model

        agent, model_dir = load_newest_checkpoint_model(folder)
    else:
        agent = rlkit.load(model_dir)
    evaluation_mode(agent, stochastic)
    for kind in ("observation_space", "action_space"):
        if space_to_dict(getattr(probe, kind)) != space_to_dict(getattr(agent, kind)):
            raise UsageError(
                f"the agent in {model_dir} was trained on another {kind.replace('_', ' ')} "
                f"than {env_id}'s {getattr(probe, kind)}; pass the environment it was trained on"
            )
    if video is not None:
        from rlkit.run.video import record_video

        returns = record_video(agent, env_id, video, episodes=episodes, seed=seed,
                               env_kwargs=env_kwargs)  # fmt: skip
        click.echo(f"recorded {episodes} episode{'s' * (episodes != 1)} to {video}", err=True)
    else:
        shown = {"render_mode": "human"} if render else {}
        env = make_env(env_id, training=False, **env_kwargs, **shown)
        returns = episode_returns(agent, env, episodes, seed=seed)
    import numpy as np

    from rlkit.agents.registry import AGENTS

    spec = AGENTS.get(agent.name)
    name = spec.variant_of(agent.config) if spec is not None else agent.name  # td3: "td3"
    click.echo(
        f"{name} {env_id}: return {np.mean(returns):.1f} ± {np.std(returns):.1f} "
        f"over {episodes_phrase(episodes, agent.evaluation_epsilon, sampled(agent))}, "
        f"{seed_note} "
        f"({_which_model(path, model_dir)}, {model_dir})"
    )


def _evaluate_export(path: Path, env_id, episodes, seed, extra_env_kwargs, video,
                     render: bool) -> None:  # fmt: skip
    """``rlkit evaluate EXPORT_DIR``: the exported policy played with a run's protocol (in a
    window with ``render``)."""
    if video is not None:
        raise UsageError("--video records a run's agent, not an export: give the run folder")
    from rlkit.config.run import parse_env_kwargs

    import_tensorflow_quietly()
    import numpy as np

    from rlkit.run.evaluation import episodes_phrase
    from rlkit.run.export_run import evaluate_export

    env_kwargs = parse_env_kwargs(extra_env_kwargs) if extra_env_kwargs else {}
    if render:
        env_kwargs["render_mode"] = "human"
    returns, policy, env_id, episodes, seed_note = evaluate_export(path, env_id, episodes, seed,
                                                                   env_kwargs)  # fmt: skip
    click.echo(
        f"{policy.metadata.get('variant', policy.name)} {env_id}: return "
        f"{np.mean(returns):.1f} ± {np.std(returns):.1f} "
        f"over {episodes_phrase(episodes)}, {seed_note} ({policy.format} {path})"
    )


def _seed(path: Path, model_dir: Path, seed: int | None) -> tuple[int, str]:
    """The first episode's seed and what it is: a run's final (or best) model is played on
    the run's own final-evaluation episodes unless ``--seed`` says otherwise."""
    from rlkit.core import seeding
    from rlkit.run.folder import RunFolder

    if seed is not None:
        return seed, f"seed {seed}"
    if model_dir != path and RunFolder.is_run(path):
        run, _ = RunFolder(path).read_config()
        own = seeding.final_eval_seed(run.seed)
        return own, f"seed {own} (the run's final evaluation)"
    return 0, "seed 0"


def _which_model(path: Path, model_dir: Path) -> str:
    """``final model``, ``best model, step N`` or ``checkpoint step-N``."""
    from rlkit.run.folder import RunFolder

    folder = RunFolder(path)
    if model_dir == folder.model_dir:
        return "final model"
    if model_dir == folder.best_dir:
        step = (folder.read_summary() or {}).get("best_model", {}).get("step")
        return "best model" + (f", step {step}" if step is not None else "")
    if model_dir.parent.parent == folder.checkpoints_dir:
        return f"checkpoint {model_dir.parent.name}"
    return "model folder"


@click.command()
@click.argument(
    "run_dirs",
    nargs=-1,
    required=True,
    metavar="RUN_DIR...",
    type=click.Path(file_okay=False, path_type=Path),
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default="curves.png",
    show_default=True,
    callback=non_empty_path,  # (as text first: Path('') would be '.')
    help="PNG file to write",
)
@click.option(
    "--smooth",
    "window",
    type=int,
    default=20,
    show_default=True,
    help="moving-average window, in episodes",
)
@click.option(
    "--until",
    type=int,
    default=0,
    metavar="STEPS",
    help="draw each run up to this environment step (runs carried on further compared at "
    "one budget; 0: all)",
)
@click.option(
    "--by",
    type=click.Choice(["config", "preset"]),
    default="config",
    show_default=True,
    help="one line per configuration (labelled by the keys that differ), or per preset",
)
def plot(run_dirs, output, window, until, by) -> None:  # fmt: skip
    """Draw learning curves (episode return vs steps) of one or more runs to a PNG.

    Runs are grouped by agent variant (td3 for ddpg with td3=true), environment and
    configuration (their config.toml): the seeds of one configuration are drawn thin,
    with their mean and a min–max band; different configurations are separate lines,
    labelled by the keys in which they differ. One panel per environment. A sweep
    folder stands for all its trials, a folder of run folders for all its runs. A tune
    folder draws two panels: its search trials (one line each, with its score) and its
    best trials on fresh seeds (TUNE_DIR/search: the search trials only).
    """
    if window <= 0:
        raise UsageError(f"--smooth must be a positive number of episodes, got {window}")
    if until < 0:
        raise UsageError(f"--until must be a step count >= 0 (0: all steps), got {until}")
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            raise UsageError(f"no run folder at {run_dir}")
    from rlkit.run.plotting import plot_groups

    from .plot import groups_to_plot

    groups = groups_to_plot(list(run_dirs), by)
    written = plot_groups(groups, output, window, until=until)
    for group in groups:
        click.echo(f"{group.label}: {len(group.runs)} run{'s' * (len(group.runs) != 1)}", err=True)
    click.echo(f"wrote {written}")


@click.command("config")
@click.argument("agent", metavar="AGENT")
@click.option("--preset", metavar="NAME", callback=non_empty,
              help="print this shipped preset's file ('rlkit presets' lists them); none: the "
              "generic defaults")  # fmt: skip
def show_config(agent, preset) -> None:
    """Print AGENT's config keys with their defaults and meaning (valid TOML)."""
    import dataclasses

    from rlkit.config import presets

    if preset is not None and preset != presets.NONE:  # --preset none: the generic defaults
        click.echo(presets.lookup(agent_spec(agent).name, preset).text, nl=False)
        return

    from rlkit.agents.registry import resolve
    from rlkit.config.options import field_help
    from rlkit.config.run import toml_value

    config_class = agent_spec(agent).config_class
    helps = field_help(config_class)
    defaults = config_class(**resolve(agent)[1])  # an alias's keys set (td3: td3 = true)
    click.echo("[agent]")
    for f in dataclasses.fields(config_class):
        click.echo(f"# {helps[f.name]}\n{f.name} = {toml_value(getattr(defaults, f.name))}")


@click.command("presets")
@click.argument("agent", metavar="[AGENT]", required=False)
@click.option("--long", "long_", is_flag=True,
              help="each preset's name, environment and full source, in prose")  # fmt: skip
def list_presets(agent, long_) -> None:
    """List the shipped presets (of AGENT), one line each: environment, source (shortened),
    steps, what the final models measured and the reference they are measured against
    (rl-zoo's benchmark, or the paper's), and one run's wall-clock.

    'rlkit train AGENT --env ID' uses the preset named after ID by itself; others are
    picked with --preset NAME. 'rlkit config AGENT --preset NAME' prints one.
    """
    import textwrap

    from rlkit.config import presets

    if agent is not None:
        agent = agent_spec(agent).name
        if not presets.presets(agent):
            click.echo(presets.none_shipped(agent))
            return
    if long_:
        for p in presets.presets(agent):
            click.echo(f"{p.name}  (env {p.env or 'any'})")
            lines = textwrap.wrap(p.source, 96, initial_indent="  source: ",
                                  subsequent_indent=" " * 10)  # fmt: skip
            click.echo("\n".join(lines))
        click.echo(
            "what each measured: docs/presets.md and docs/benchmarks.md in rlkit's repository"
        )
        return
    from rlkit.config.presets import results
    from rlkit.run.progress import terminal_width

    width = terminal_width(sys.stdout, fallback=200)
    from rlkit.agents.registry import preset_families

    table = results.rows(agent, preset_families())
    click.echo("\n".join(results.format_table(table, width)))
    notes = [*results.notes(table), "--long: each preset's full source; docs/presets.md: how"
             " each was measured"]  # fmt: skip
    for note in notes:
        click.echo("\n".join(textwrap.wrap(note, max(width - 1, 20), subsequent_indent="  ")))
