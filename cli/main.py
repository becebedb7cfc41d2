"""``rlkit``: train reinforcement-learning agents from the shell.

This module imports neither TensorFlow nor gymnasium at import time: ``--help``
and usage errors answer at once; the heavy imports happen when work starts.
"""

from __future__ import annotations

import os
import sys

import click

from rlkit.agents.registry import AGENTS, agent_spec
from rlkit.errors import UsageError

USAGE_ERROR = 2
INTERRUPTED = 130


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="rlkit", prog_name="rlkit")
def cli() -> None:
    """Train reinforcement-learning agents on gymnasium environments.

    \b
    Example:
      rlkit train dqn --env CartPole-v1
    """


def _agent_list() -> str:
    return "\n".join(
        f"  {s.name:<10} {s.summary} (default --env {s.default_env}, --steps {s.default_steps})"
        for s in AGENTS.values()
    )


@cli.command(
    epilog="\b\nAgents:\n" + _agent_list(),
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("agent", metavar="AGENT")
@click.option(
    "--env",
    "env_id",
    metavar="ID",
    help="gymnasium environment id [default: the agent's own, see below]",
)
@click.option(
    "--steps", type=int, help="environment steps to train for [default: the agent's own, see below]"
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="seeds weights, replay sampling, exploration and the environment",
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="override a config key (repeatable); 'rlkit config AGENT' lists the keys",
)
@click.option(
    "--out",
    default="runs",
    show_default=True,
    type=click.Path(file_okay=False),
    help="folder the run directory is created in",
)
@click.option("--episodes", type=int, help="also stop after this many training episodes")
@click.option(
    "--eval-episodes",
    type=int,
    default=10,
    show_default=True,
    help="greedy episodes evaluated at the end",
)
@click.option("--quiet", is_flag=True, help="no progress bar")
def train(agent, env_id, steps, seed, overrides, out, episodes, eval_episodes, quiet) -> None:
    """Train AGENT (dqn) on an environment and save the run.

    Writes OUT/<agent>-<env>-<seed>-<time>/ holding config.toml (the resolved
    config), metrics.csv (one row per episode), summary.json and model/ (the
    trained weights), then prints the greedy evaluation return.
    """
    from rlkit.config import make_config, parse_overrides

    spec = agent_spec(agent)
    env_id = env_id or spec.default_env
    steps = spec.default_steps if steps is None else steps
    if steps <= 0:
        raise UsageError(f"--steps must be a positive number of environment steps, got {steps}")
    if episodes is not None and episodes <= 0:
        raise UsageError(f"--episodes must be positive, got {episodes}")
    if eval_episodes <= 0:
        raise UsageError(f"--eval-episodes must be positive, got {eval_episodes}")
    config = make_config(spec.config_class(), parse_overrides(overrides))

    from rlkit.envs import make_env

    env = make_env(env_id)
    spec.check_spaces(env.observation_space, env.action_space, env_id)

    from rlkit import runs

    run_dir = runs.create_run_dir(out, spec.name, env_id, seed)
    from rlkit.config import to_dict

    runs.write_config(
        run_dir,
        {"agent": spec.name, "env": env_id, "steps": steps, "seed": seed},
        to_dict(config),
    )
    _run_training(spec, config, env, env_id, steps, episodes, seed, run_dir, eval_episodes, quiet)


def _run_training(
    spec, config, env, env_id, steps, episodes, seed, run_dir, eval_episodes, quiet
) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import rlkit
    from rlkit import runs
    from rlkit.envs import make_env

    from .progress import TrainingProgress

    agent = spec.load_class().from_env(env, seed=seed, config=config)
    click.echo(
        f"training {spec.name} on {env_id} for {steps} steps (seed {seed}) -> {run_dir}", err=True
    )
    progress = None if quiet else TrainingProgress(steps, f"{spec.name} {env_id}")
    try:
        if progress is None:
            history = rlkit.train(agent, env, steps=steps, seed=seed, max_episodes=episodes)
        else:
            with progress:
                history = rlkit.train(
                    agent, env, steps=steps, seed=seed, callback=progress, max_episodes=episodes
                )
    except KeyboardInterrupt:
        agent.save(run_dir / runs.MODEL_DIR)
        click.echo(
            f"\ninterrupted at step {agent.num_steps}; model saved to {run_dir / runs.MODEL_DIR}",
            err=True,
        )
        sys.exit(INTERRUPTED)
    agent.save(run_dir / runs.MODEL_DIR)
    runs.write_episode_metrics(run_dir, history)
    mean, std = rlkit.evaluate(
        agent, make_env(env_id), episodes=eval_episodes, seed=seed + 1_000_000
    )
    runs.write_summary(
        run_dir,
        {
            "agent": spec.name,
            "env": env_id,
            "seed": seed,
            "steps": history.steps,
            "episodes": len(history.episode_returns),
            "seconds": round(history.seconds, 3),
            "steps_per_second": round(history.steps_per_second, 1),
            "eval_episodes": eval_episodes,
            "eval_return_mean": mean,
            "eval_return_std": std,
        },
    )
    report = agent.report(env)
    if report:
        click.echo(report)
    click.echo(
        f"{spec.name} {env_id}: eval return {mean:.1f} ± {std:.1f} over {eval_episodes} greedy "
        f"episodes after {history.steps} steps ({history.steps_per_second:.0f} steps/s); "
        f"saved to {run_dir}"
    )


@cli.command("config")
@click.argument("agent", metavar="AGENT")
def show_config(agent) -> None:
    """Print AGENT's config keys with their defaults and meaning."""
    import dataclasses

    from rlkit.config import field_help

    config_class = agent_spec(agent).config_class()
    helps = field_help(config_class)
    defaults = config_class()
    for f in dataclasses.fields(config_class):
        value = getattr(defaults, f.name)
        if isinstance(value, tuple):
            value = ",".join(str(v) for v in value)
        click.echo(f"{f.name} = {value}\n    {helps[f.name]}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rlkit`` console script; returns the exit status."""
    try:
        status = cli.main(args=argv, prog_name="rlkit", standalone_mode=False)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "rlkit"
        click.echo(f"rlkit: error: {exc.format_message()} (see '{command} --help')", err=True)
        return USAGE_ERROR
    except UsageError as exc:
        click.echo(f"rlkit: error: {exc}", err=True)
        return USAGE_ERROR
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        return INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    return status if isinstance(status, int) else 0


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run()
