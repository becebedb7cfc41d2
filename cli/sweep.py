"""``rlkit sweep``: many seeds and a grid of config values as Ray Tune trials."""

from __future__ import annotations

import time
from pathlib import Path

import click

from rlkit.core.errors import UsageError

from .options import non_empty
from .train import check_counts, run_options


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
def sweep(agent, env_id, steps, overrides, config_file, num_envs, episodes, eval_every,
          eval_episodes, checkpoint_every, preset, seeds, grid, target, address,
          max_concurrent, cpus_per_trial, max_failures, out, resume_dir) -> int:  # fmt: skip
    """Train AGENT on every combination of --grid values, for every seed, as Ray trials.

    Each trial is an ordinary run folder under SWEEP_DIR/runs/<config>/seed-<S>/ (resume,
    evaluate and plot work on it) with exactly the metrics.csv 'rlkit train' writes for the
    same settings. At the end SWEEP_DIR/sweep.csv holds, per configuration, the final and
    best returns over seeds, their interquartile mean with a bootstrap 95% interval and
    the share of seeds that reached --target. 'rlkit plot SWEEP_DIR' draws them.
    """
    import dataclasses

    from rlkit.sweeps.grid import SweepSpec, is_sweep, parse_grid, parse_seeds

    if resume_dir is not None:
        spec = SweepSpec.load(resume_dir)  # a clear error when it is no sweep
        _ray(address)
        _run(spec, resume_dir, address, True, max_failures)
        return 0
    check_counts(steps=steps, num_envs=num_envs, episodes=episodes, eval_every=eval_every,
                 eval_episodes=eval_episodes, checkpoint_every=checkpoint_every)  # fmt: skip
    train = {k: v for k, v in dict(
        env=env_id, steps=steps, num_envs=num_envs, episodes=episodes, eval_every=eval_every,
        eval_episodes=eval_episodes, checkpoint_every=checkpoint_every, preset=preset,
        config_file=str(Path(config_file).resolve()) if config_file else None,
    ).items() if v is not None}  # fmt: skip
    train["overrides"] = list(overrides)
    if agent is None and not config_file:
        raise UsageError("missing AGENT: e.g. 'rlkit sweep dqn --env CartPole-v1 --seeds 0-9'")
    spec = SweepSpec(agent or "", train, parse_seeds(seeds), parse_grid(list(grid)), target,
                     cpus_per_trial, max_concurrent or 0)  # fmt: skip
    spec.validate()  # every configuration, before any trial starts
    first = spec.plan(spec.configs()[0], spec.seeds[0])
    spec = dataclasses.replace(spec, agent=first.settings.agent)  # it may come from --config
    from rlkit.run.experiment import make_envs

    make_envs(first.settings, first.spec).close()  # an unknown env id fails here, not in a trial
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
    click.echo(f"sweep of {trials} trials ({len(spec.configs())} configurations x "
               f"{len(spec.seeds)} seeds) -> {out}", err=True)  # fmt: skip
    _run(spec, out, address, False, max_failures)
    return 0


def _ray(address: str | None) -> None:
    """Ray is installed, and the cluster at ``address`` (if any) answers."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise UsageError("rlkit sweep needs Ray: from a clone of rlkit, pip install '.[ray]'")
    from rlkit.sweeps.ray_tune import check_address

    check_address(address)


def _run(spec, out: Path, address, resume: bool, max_failures: int) -> None:
    from rlkit.sweeps.ray_tune import run_sweep

    run_sweep(spec, out, address=address, resume=resume, max_failures=max_failures)
    click.echo(f"results in {out / 'sweep.csv'}; plot them with: rlkit plot {out}", err=True)
