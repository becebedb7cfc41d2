"""``rlkit tune``: search an agent's hyperparameters on an environment (Optuna's TPE and ASHA
on Ray Tune, as rl-zoo's ``--optimize``), then rank the best on fresh seeds."""

from __future__ import annotations

import time
from pathlib import Path

import click

from rlkit.core.errors import UsageError

from .options import non_empty
from .sweep import plan_options
from .train import FAILED, INTERRUPTED, check_config_agent, check_counts, run_options

DEFAULT_EVAL_EPISODES = 10
EVALUATIONS_PER_TRIAL = 10
GRACE_SHARE = 5  # ASHA's first rung: a fifth of the run


@click.command()
@click.argument("agent", metavar="[AGENT]", required=False)
@run_options
@click.option(
    "--trials",
    type=click.IntRange(1, 10_000),
    default=16,
    show_default=True,
    metavar="N",
    help="search trials (each --steps long unless ASHA stops it)",
)
@click.option(
    "--seeds",
    "fresh_seeds",
    type=click.IntRange(1, 1_000),
    default=3,
    show_default=True,
    metavar="K",
    help="fresh seeds each of the --top best runs on for the ranking",
)
@click.option(
    "--top",
    type=click.IntRange(1, 1_000),
    default=3,
    show_default=True,
    metavar="N",
    help="how many of the best search trials are ranked on fresh seeds",
)
@click.option(
    "--seed",
    "search_seed",
    type=click.IntRange(0, 2**32 - 1),
    default=0,
    show_default=True,
    help="seed of every search trial and of the TPE sampler",
)
@click.option(
    "--space",
    "spaces",
    multiple=True,
    metavar="KEY=DIM",
    help="search KEY over DIM: loguniform(a,b), uniform(a,b), int(a,b) or "
    "choice(v1,v2,..); replaces the default's range (repeatable)",
)
@click.option(
    "--only-space",
    is_flag=True,
    help="search only the --space keys (the agent's default space is dropped)",
)
@click.option("--show-space", is_flag=True, help="print the space this tune would search and exit")
@click.option(
    "--no-early-stop", is_flag=True, help="run every trial to the end (no ASHA): for comparison"
)
@click.option(
    "--rung-score",
    type=click.Choice(["shown", "eval"]),
    default="shown",
    show_default=True,
    help="what ASHA compares: 'shown' the better of the greedy evaluation and the mean "
    "return of the training episodes since the evaluation before (explorers that found "
    "reward the greedy policy does not yet show go on); 'eval' the evaluation alone",
)
@click.option(
    "--address",
    metavar="ADDR",
    callback=non_empty,
    help="join this Ray cluster ('auto': the one running here)",
)
@click.option(
    "--max-concurrent",
    type=click.IntRange(1),
    metavar="N",
    help="at most N trials at once [default: as many as the CPUs allow]",
)
@click.option(
    "--cpus-per-trial",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    metavar="C",
    help="CPUs Ray reserves for a trial",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    callback=non_empty,
    help="the tune folder [default: tunes/<agent>-<env>-<time>]",
)
@click.option(
    "--resume",
    "resume_dir",
    type=click.Path(file_okay=False, path_type=Path),
    callback=non_empty,
    metavar="TUNE_DIR",
    help="continue the tune in TUNE_DIR as it was made (options that would change the "
    "search are refused; --address, --max-concurrent and --cpus-per-trial may change)",
)
def tune(agent, env_id, env_kwargs, steps, overrides, config_file, num_envs, episodes, eval_every,
         eval_episodes, checkpoint_every, preset, trials, fresh_seeds, top, search_seed, spaces,
         only_space, show_space, no_early_stop, rung_score, address, max_concurrent,
         cpus_per_trial, out, resume_dir) -> int:  # fmt: skip
    """Search AGENT's hyperparameters on --env with Optuna's TPE, stopping the laggards early
    with ASHA (Ray Tune), then run the --top best on --seeds fresh seeds.

    The objective is the mean return of the run's greedy evaluations (every --steps/10
    steps, 10 episodes unless --eval-every/--eval-episodes say otherwise). Every trial is
    an ordinary run folder (TUNE_DIR/search/runs/, TUNE_DIR/final/runs/; 'rlkit plot
    TUNE_DIR' draws them). At the end:
    a table of the best trials, TUNE_DIR/tune.csv (every trial) and TUNE_DIR/best.toml,
    which 'rlkit train --config TUNE_DIR/best.toml' runs as it is.

    \b
    Examples:
      rlkit tune dqn --env Acrobot-v1 --preset none --steps 50000 --show-space
      rlkit tune dqn --env Acrobot-v1 --preset none --steps 50000 --trials 16
      rlkit tune ddpg --env Pendulum-v1 --space tau=choice(0.005,0.01) --set gamma=0.98
    """
    from rlkit.sweeps.tuning import TuneSpec

    ctx = click.get_current_context()
    if resume_dir is not None:
        spec = TuneSpec.load(resume_dir)  # a clear error when it is no tune
        _refuse_other_settings(ctx, spec, resume_dir)
        if show_space:
            return _show_space(spec)
        ranking = _operational(ctx, spec, resume_dir)
        _check_ray(address)
        return _run(spec, resume_dir, address, resume=True, ranking=ranking)
    check_counts(steps=steps, num_envs=num_envs, episodes=episodes, eval_every=eval_every,
                 eval_episodes=eval_episodes, checkpoint_every=checkpoint_every)  # fmt: skip
    check_config_agent(agent, config_file)
    from rlkit.sweeps.grid import check_cpus

    check_cpus(cpus_per_trial, address)
    if agent is None and not config_file:
        raise UsageError("missing AGENT: e.g. 'rlkit tune dqn --env Acrobot-v1 --trials 16'")
    spec = _spec(ctx.params)
    if show_space:
        return _show_space(spec)
    first = spec.plan(spec.fixed, spec.search_seed)
    from rlkit.run import experiment

    experiment.check(first)  # what `rlkit train` checks (env, spaces, networks): not in trials
    _check_ray(address)
    if out is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        out = Path("tunes") / f"{spec.agent}-{spec.train['env'].replace('/', '_')}-{stamp}"
    from rlkit.sweeps.tuning import is_tune

    if is_tune(out):
        raise UsageError(f"{out} already holds a tune: continue it with --resume {out}")
    click.echo(f"tune of {spec.agent} on {spec.train['env']}: {spec.trials} trials of "
               f"{spec.steps:,} steps, the best {spec.top} then on {len(spec.seeds)} fresh "
               f"seeds -> {out}", err=True)  # fmt: skip
    return _run(spec, out, address, resume=False)


def _show_space(spec) -> int:
    """``--show-space``: the space, the ties a trial applies and the fixed keys."""
    from rlkit.config.options import to_dict
    from rlkit.config.run import toml_value
    from rlkit.sweeps.search_spaces import describe

    run = to_dict(spec.plan(spec.fixed, spec.search_seed).agent_config)
    click.echo(f"{spec.agent} on {spec.train['env']} searches:")
    click.echo(describe(spec.agent, spec.dimensions(), spec.fixed,
                        {k: toml_value(v) for k, v in run.items()}))  # fmt: skip
    return 0


#: what may change when a tune is resumed: where and how its trials run, not what they are
RESUMABLE_WITH = {"resume_dir", "address", "max_concurrent", "cpus_per_trial", "show_space"}
#: the options of the tune itself: parameter -> (flag, the TuneSpec's value of it)
TUNE_OPTIONS = {
    "trials": ("--trials", lambda spec: spec.trials),
    "top": ("--top", lambda spec: spec.top),
    "search_seed": ("--seed", lambda spec: spec.search_seed),
    "fresh_seeds": ("--seeds", lambda spec: len(spec.seeds)),
    "no_early_stop": ("--no-early-stop", lambda spec: not spec.asha),
    "rung_score": ("--rung-score", lambda spec: spec.rung_score),
}  # fmt: skip
#: run options: parameter -> (flag, the [run] setting it sets)
RUN_OPTIONS = {
    "env_id": ("--env", "env"), "env_kwargs": ("--env-kwargs", "env_kwargs"),
    "steps": ("--steps", "steps"), "num_envs": ("--num-envs", "num_envs"),
    "episodes": ("--episodes", "episodes"), "eval_every": ("--eval-every", "eval_every"),
    "eval_episodes": ("--eval-episodes", "eval_episodes"),
    "checkpoint_every": ("--checkpoint-every", "checkpoint_every"),
    "preset": ("--preset", "preset"), "config_file": ("--config", "config_file"),
}  # fmt: skip


def _refuse_other_settings(ctx: click.Context, spec, resume_dir: Path) -> None:
    """``--resume`` runs the tune as it was made: an option given with it that would change
    the search (a run option, --set, --space, --trials, ...) and differs from the saved
    tune is refused in one line naming each difference."""
    from click.core import ParameterSource

    given = {name for name in ctx.params if name not in RESUMABLE_WITH
             and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE}  # fmt: skip
    differ = _differences(spec, ctx.params, given, resume_dir)
    if differ:
        raise UsageError(
            f"--resume {resume_dir} runs the tune as it was made; it differs in "
            f"{'; '.join(differ)}: drop those options, or start a new tune with --out"
        )


def _differences(spec, params: dict, given: set[str], resume_dir: Path) -> list[str]:
    """One phrase per option in ``given`` whose value differs from the tune ``spec``'s (run
    options compared as the runs they plan: a preset's short name is its full one)."""
    from rlkit.agents.registry import agent_spec
    from rlkit.config.options import parse_overrides
    from rlkit.sweeps.search_spaces import parse_spaces

    phrases = []

    def differ(flag: str, here, asked) -> None:
        if here == asked:
            return
        if isinstance(here, dict) and isinstance(asked, dict):  # only the keys that differ
            keys = [k for k in {**here, **asked} if here.get(k) != asked.get(k)]
            here = {k: here.get(k, "-") for k in keys}
            asked = {k: asked.get(k, "-") for k in keys}
        phrases.append(f"{flag} ({_shown(here)} here, {_shown(asked)} asked)")

    if "out" in given and Path(params["out"]).resolve() != Path(resume_dir).resolve():
        differ("--out", str(resume_dir), str(params["out"]))
    if "agent" in given:
        differ("AGENT", spec.agent, agent_spec(params["agent"]).name)
    for name, (flag, saved) in TUNE_OPTIONS.items():
        if name in given:
            differ(flag, saved(spec), params[name])
    if "overrides" in given:
        differ("--set", dict(spec.fixed), parse_overrides(params["overrides"]))
    if given & {"spaces", "only_space"}:
        asked = {} if params["only_space"] else dict(spec.space)
        asked |= {key: str(dim) for key, dim in parse_spaces(params["spaces"]).items()}
        differ("--space", dict(spec.space), asked)
    run_given = [name for name in RUN_OPTIONS if name in given]
    if run_given:
        import dataclasses

        options = plan_options(params)
        asked_train = spec.train | {RUN_OPTIONS[name][1]: options.get(RUN_OPTIONS[name][1])
                                    for name in run_given}  # fmt: skip
        saved = spec.plan(spec.fixed, spec.search_seed).settings
        asked = dataclasses.replace(spec, train=asked_train).plan(spec.fixed, spec.search_seed)
        for name in run_given:
            flag, key = RUN_OPTIONS[name]
            if key == "config_file":
                differ(flag, spec.train.get(key), asked_train.get(key))
            else:
                differ(flag, getattr(saved, key), getattr(asked.settings, key))
    return phrases


def _shown(value) -> str:
    if value is None or value == {}:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, dict):
        pairs = [f"{k}={v}" for k, v in value.items()]
        more = f" +{len(pairs) - 3} more" if len(pairs) > 3 else ""
        return " ".join(pairs[:3]) + more
    return str(value)


def _operational(ctx: click.Context, spec, resume_dir: Path) -> dict:
    """``--max-concurrent`` / ``--cpus-per-trial`` given with ``--resume`` and differing from
    the tune's: they apply to what it has not started (the ranking on fresh seeds); Ray
    restores a search or ranking it started as it saved it, which one line says."""
    from click.core import ParameterSource

    from rlkit.sweeps import tuning

    changed = {name: ctx.params[name] for name in ("max_concurrent", "cpus_per_trial")
               if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE
               and ctx.params[name] != getattr(spec, name)}  # fmt: skip
    if not changed:
        return {}
    flags = " and ".join(f"--{name.replace('_', '-')}" for name in changed)
    saved = ", ".join(f"{getattr(spec, name) or 'as many as the CPUs allow'}" for name in changed)
    one = len(changed) == 1
    if not (Path(resume_dir) / tuning.SEARCH_FILE).is_file():
        click.echo(f"rlkit: {flags} {'applies' if one else 'apply'} to the ranking on fresh "
                   f"seeds; the search goes on as Ray saved it ({saved})", err=True)  # fmt: skip
    elif (Path(resume_dir) / tuning.FINAL_DIR / "sweep.json").is_file():
        click.echo(f"rlkit: {flags} {'does' if one else 'do'} not apply: the ranking goes on "
                   f"as Ray saved it ({saved})", err=True)  # fmt: skip
    return changed


def _spec(params: dict):
    """The :class:`TuneSpec` the options describe; UsageError for a bad space or key."""
    from rlkit.config.options import parse_overrides
    from rlkit.sweeps.search_spaces import parse_spaces, resolve_space
    from rlkit.sweeps.tuning import TuneSpec

    train = plan_options(params)
    fixed = parse_overrides(params["overrides"])
    from rlkit.run.plan import plan

    base = plan(params["agent"], **train, overrides=fixed)  # the run every trial varies
    if base.settings.episodes and params["episodes"] is None:
        raise UsageError(f"{base.settings.agent} runs are capped at {base.settings.episodes} "
                         "episodes, and a tune compares trials by steps: give --steps S and "
                         "--episodes 0")  # fmt: skip
    train |= {"env": base.settings.env, "steps": base.settings.steps}
    if "eval_every" in train and not 0 < train["eval_every"] < train["steps"]:
        raise UsageError(f"a tune compares trials on their evaluations: --eval-every must be "
                         f"between 1 and the steps ({train['steps']:,}) less one")  # fmt: skip
    train.setdefault("eval_every", max(1, base.settings.steps // EVALUATIONS_PER_TRIAL))
    train.setdefault("eval_episodes", DEFAULT_EVAL_EPISODES)
    given = parse_spaces(params["spaces"])
    space = resolve_space(base.settings.agent, base.spec.config_class, given, fixed,
                          only_given=params["only_space"],
                          check=lambda values: plan(params["agent"], **train,
                                                    overrides=values))  # fmt: skip
    seed = params["search_seed"]
    return TuneSpec(
        agent=base.settings.agent, train=train, space={k: str(d) for k, d in space.items()},
        trials=params["trials"], seeds=[seed + 1 + i for i in range(params["fresh_seeds"])],
        top=params["top"], search_seed=seed, grace=_grace(train["steps"], train["eval_every"]),
        asha=not params["no_early_stop"], rung_score=params["rung_score"],
        cpus_per_trial=params["cpus_per_trial"],
        max_concurrent=params["max_concurrent"] or 0, fixed=fixed,
    )  # fmt: skip


def _grace(steps: int, eval_every: int) -> int:
    """ASHA's first rung: the first evaluation at or after a fifth of the run (a trial is
    not judged on its first steps; rl-zoo's median pruner waits a third of its
    evaluations); later rungs at 3x that."""
    return eval_every * max(1, -(-steps // (GRACE_SHARE * eval_every)))


def _check_ray(address: str | None) -> None:
    import importlib.util

    for module in ("ray", "optuna"):
        if importlib.util.find_spec(module) is None:
            raise UsageError(f"rlkit tune needs Ray and Optuna: from a clone of rlkit, "
                             f"pip install '.[ray]' ({module} is missing)")  # fmt: skip
    from rlkit.sweeps.ray_connect import check_address

    check_address(address)


def _run(spec, out: Path, address, resume: bool, ranking: dict | None = None) -> int:
    """Run the tune; exit status 0, 1 (trials failed) or 130 (stopped: --resume goes on)."""
    from rlkit.sweeps.sweep_on_ray import SweepFailed, SweepInterrupted
    from rlkit.sweeps.tune_on_ray import run_tune

    try:
        run_tune(spec, out, address=address, resume=resume, ranking=ranking)
    except SweepInterrupted as exc:
        click.echo(f"\n{exc}", err=True)
        return INTERRUPTED
    except SweepFailed as exc:
        click.echo(f"rlkit: {exc}", err=True)
        return FAILED
    click.echo(f"every trial in {out / 'tune.csv'} (curves: rlkit plot {out}); the best: "
               f"rlkit train --config {out / 'best.toml'}", err=True)  # fmt: skip
    return 0
