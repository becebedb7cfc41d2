"""``rlkit sweep``: many seeds and a grid of config values as Ray Tune trials."""

from __future__ import annotations

import time
from pathlib import Path

import click

from rlkit.core.errors import UsageError

from .options import non_empty
from .train import FAILED, INTERRUPTED, check_config_agent, check_counts, run_options


@click.command()
@click.argument("agent", metavar="[AGENT]", required=False)
@run_options
@click.option(
    "--seeds",
    default="0-4",
    show_default=True,
    metavar="SEEDS",
    help="seeds of every configuration, e.g. 0-9 or 0,3,7",
)
@click.option(
    "--grid",
    multiple=True,
    metavar="KEY=V1,V2",
    help="a config key and its values (repeatable: the cross product)",
)
@click.option(
    "--target",
    type=float,
    metavar="RETURN",
    help="count the seeds whose final model reaches this return",
)
@click.option(
    "--address",
    metavar="ADDR",
    callback=non_empty,
    help="join this Ray cluster ('auto': the one running here) instead of starting a local one",
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
    help="CPUs Ray reserves for a trial; its TensorFlow uses that many threads",
)
@click.option(
    "--max-failures",
    type=click.IntRange(0),
    default=3,
    show_default=True,
    help="retries of a failed trial, each from its last checkpoint",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    callback=non_empty,
    help="the sweep folder [default: sweeps/<agent>-<env>-<time>]",
)
@click.option(
    "--resume",
    "resume_dir",
    type=click.Path(file_okay=False, path_type=Path),
    callback=non_empty,
    metavar="SWEEP_DIR",
    help="continue the sweep in SWEEP_DIR (finished trials are not run again)",
)
def sweep(agent, env_id, env_kwargs, steps, overrides, config_file, num_envs, episodes,
          eval_every, eval_episodes, checkpoint_every, preset, seeds, grid, target, address,
          max_concurrent, cpus_per_trial, max_failures, out, resume_dir) -> int:  # fmt: skip
    """Train AGENT on every combination of --grid values, for every seed, as Ray trials.

    Each trial is an ordinary run folder under SWEEP_DIR/runs/<config>/seed-<S>/ (resume,
    evaluate and plot work on it) with exactly the metrics.csv 'rlkit train' writes for the
    same settings. At the end SWEEP_DIR/sweep.csv holds, per configuration, the final and
    best returns over seeds, their interquartile mean with a bootstrap 95% interval and
    the share of seeds that reached --target. 'rlkit plot SWEEP_DIR' draws them.
    """
    import dataclasses

    from rlkit.sweeps.grid import SweepSpec, is_sweep

    if resume_dir is not None:
        spec = SweepSpec.load(resume_dir)  # a clear error when it is no sweep
        _refuse_other_settings(click.get_current_context(), spec, resume_dir)
        _ray(address)
        return _run(spec, resume_dir, address, True, max_failures,
                    asked=_operational(click.get_current_context()))  # fmt: skip
    check_counts(steps=steps, num_envs=num_envs, episodes=episodes, eval_every=eval_every,
                 eval_episodes=eval_episodes, checkpoint_every=checkpoint_every)  # fmt: skip
    check_config_agent(agent, config_file)
    from rlkit.sweeps.grid import check_cpus

    check_cpus(cpus_per_trial, address)
    if agent is None and not config_file:
        raise UsageError("missing AGENT: e.g. 'rlkit sweep dqn --env CartPole-v1 --seeds 0-9'")
    spec = _spec_from_options(click.get_current_context().params)
    spec.validate()  # every configuration, before any trial starts
    first = spec.plan(spec.configs()[0], spec.seeds[0])
    spec = dataclasses.replace(spec, agent=first.settings.agent)  # it may come from --config
    from rlkit.run import experiment

    # what `rlkit train` checks (the env, its spaces, the agent's networks), for every
    # configuration: here in one line, not in every trial inside Ray
    for values in spec.configs():
        experiment.check(spec.plan(values, spec.seeds[0]))
    _ray(address)
    if out is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        out = (
            Path("sweeps")
            / f"{first.settings.agent}-{first.settings.env.replace('/', '_')}-{stamp}"
        )
    if is_sweep(out):
        raise UsageError(f"{out} already holds a sweep: continue it with --resume {out}")
    trials = len(spec.trials())
    configs, seeds = len(spec.configs()), len(spec.seeds)
    click.echo(f"sweep of {_count(trials, 'trial')} ({_count(configs, 'configuration')} x "
               f"{_count(seeds, 'seed')}) -> {out}", err=True)  # fmt: skip
    return _run(spec, out, address, False, max_failures)


def _count(n: int, noun: str) -> str:
    """``1 seed``, ``3 seeds``."""
    return f"{n} {noun}{'s' * (n != 1)}"


#: what may change when a sweep is resumed (where and how its trials run, not what they are)
RESUMABLE_WITH = {"resume_dir", "address", "max_concurrent", "cpus_per_trial", "max_failures"}


def _refuse_other_settings(ctx: click.Context, spec, resume_dir: Path) -> None:
    """``--resume`` runs the sweep as it was made: a grid, seeds or run options given with
    it that differ from the saved ones are refused in one line."""
    from click.core import ParameterSource

    given = {name for name in ctx.params if name not in RESUMABLE_WITH
             and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE}  # fmt: skip
    if not given:
        return
    params = ctx.params
    asked = _spec_from_options(params | {"agent": params["agent"] or spec.agent})
    fields = {"agent": "agent" in given, "seeds": "seeds" in given, "grid": "grid" in given,
              "target": "target" in given,
              "train": bool(given - {"agent", "seeds", "grid", "target"})}  # fmt: skip
    differ = spec.differences(asked, [name for name, asked_for in fields.items() if asked_for])
    if differ:
        raise UsageError(
            f"--resume {resume_dir} runs the sweep as it was made; it differs in "
            f"{'; '.join(differ)}: drop those options, or start a new sweep with --out"
        )


def _operational(ctx: click.Context) -> dict:
    """``--max-concurrent``, ``--cpus-per-trial`` and ``--max-failures`` given with
    ``--resume``: the sweep goes on with them where Ray can take them, else one line says
    which values go on instead (:func:`rlkit.sweeps.sweep_on_ray.run_sweep`)."""
    from click.core import ParameterSource

    return {name: ctx.params[name] for name in ("max_concurrent", "cpus_per_trial", "max_failures")
            if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE}  # fmt: skip


def _spec_from_options(params: dict):
    """The :class:`SweepSpec` the options describe (as for a new sweep)."""
    from rlkit.sweeps.grid import SweepSpec, parse_grid, parse_seeds

    train = plan_options(params)
    train["overrides"] = list(params["overrides"])
    return SweepSpec(params["agent"] or "", train, parse_seeds(params["seeds"]),
                     parse_grid(list(params["grid"])), params["target"],
                     params["cpus_per_trial"], params["max_concurrent"] or 0)  # fmt: skip


def plan_options(params: dict) -> dict:
    """The run options given (``--env``, ``--steps``, ...) as :func:`rlkit.run.plan.plan`'s
    keyword arguments (a config file's path made absolute), ``--set`` left out."""
    train = {k: v for k, v in dict(
        env=params["env_id"], steps=params["steps"], num_envs=params["num_envs"],
        episodes=params["episodes"], eval_every=params["eval_every"],
        eval_episodes=params["eval_episodes"], checkpoint_every=params["checkpoint_every"],
        preset=params["preset"], config_file=str(Path(params["config_file"]).resolve())
        if params["config_file"] else None,
    ).items() if v is not None}  # fmt: skip
    if params["env_kwargs"]:
        train["env_kwargs"] = list(params["env_kwargs"])
    return train


def _ray(address: str | None) -> None:
    """Ray is installed, and the cluster at ``address`` (if any) answers."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise UsageError("rlkit sweep needs Ray: from a clone of rlkit, pip install '.[ray]'")
    from rlkit.sweeps.ray_connect import check_address

    check_address(address)


def _run(spec, out: Path, address, resume: bool, max_failures: int, asked=None) -> int:
    """Run the sweep; its exit status: 0, 1 (a trial failed every try) or 130 (stopped)."""
    from rlkit.sweeps.sweep_on_ray import SweepFailed, SweepInterrupted, run_sweep

    try:
        run_sweep(spec, out, address=address, resume=resume, max_failures=max_failures,
                  asked=asked)  # fmt: skip
    except SweepInterrupted as exc:
        click.echo(f"\n{exc}", err=True)
        return INTERRUPTED
    except SweepFailed as exc:
        click.echo(f"rlkit: {exc}", err=True)
        return FAILED
    click.echo(f"results in {out / 'sweep.csv'}; plot them with: rlkit plot {out}", err=True)
    return 0
