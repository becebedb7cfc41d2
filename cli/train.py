"""``rlkit train`` and ``rlkit resume``."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from rlkit.agents.registry import AGENTS, agent_spec
from rlkit.errors import UsageError

from .quiet import import_tensorflow_quietly

INTERRUPTED = 130
FAILED = 1


def _agent_list() -> str:
    return "\n".join(
        f"  {s.name:<10} {s.summary}\n"
        f"             default --env {s.default_env}, --steps {s.default_steps}"
        + (f", --episodes {s.default_episodes}" if s.default_episodes else "")
        for s in AGENTS.values()
    )


@click.command(epilog="\b\nAgents:\n" + _agent_list())
@click.argument("agent", metavar="AGENT", required=False)
@click.option(
    "--env", "env_id", metavar="ID", help="gymnasium environment id [default: the agent's own]"
)
@click.option("--steps", type=int, help="environment steps to train for [default: the agent's own]")
@click.option(
    "--seed",
    type=click.IntRange(0, 2**32 - 1),
    help="seeds weights, sampling, exploration and the env [default: 0]",
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="override an agent config key (repeatable); 'rlkit config AGENT' lists them",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="TOML or YAML file with [run] and [agent] tables (e.g. a run's config.toml)",
)
@click.option(
    "--out",
    default="runs",
    show_default=True,
    type=click.Path(file_okay=False),
    help="folder the run folder is created in",
)
@click.option("--num-envs", type=int, metavar="N",
              help="step N environments together with batched acting (off-policy agents) "
                   "[default: 1]")  # fmt: skip
@click.option("--episodes", type=int, help="also stop after this many training episodes")
@click.option(
    "--eval-every",
    type=int,
    metavar="N",
    help="evaluate greedily every N steps, keeping the best model in best/ "
    "(0: only at the end) [default: the agent's own]",
)
@click.option(
    "--eval-episodes", type=int, metavar="K", help="episodes per evaluation [default: 10]"
)
@click.option(
    "--checkpoint-every", type=int, metavar="N", help="steps between checkpoints [default: 10000]"
)
@click.option("--quiet", is_flag=True, help="no progress bar")
def train(agent, env_id, steps, seed, overrides, config_file, out, num_envs, episodes, eval_every,
          eval_episodes, checkpoint_every, quiet) -> None:  # fmt: skip
    """Train AGENT on an environment and save the run.

    Creates OUT/<agent>-<env>-<seed>-<time>/ with config.toml (pass it back with
    --config), metrics.csv, tensorboard/, checkpoints/, best/ (with --eval-every),
    model/ and summary.json, then prints the greedy evaluation return.
    Ctrl-C stops cleanly with a checkpoint: continue with 'rlkit resume RUN_DIR'.
    """
    from rlkit.config import make_config, parse_overrides
    from rlkit.runs import load_config_file, resolve_run_config

    file_run, file_agent = load_config_file(config_file) if config_file else ({}, {})
    cli_values = {
        "agent": agent, "env": env_id, "steps": steps, "seed": seed, "episodes": episodes,
        "num_envs": num_envs,
        "eval_every": eval_every, "eval_episodes": eval_episodes,
        "checkpoint_every": checkpoint_every,
    }  # fmt: skip
    positive_only = ("steps", "eval_episodes", "num_envs")
    for name in (
        "steps",
        "num_envs",
        "episodes",
        "eval_every",
        "eval_episodes",
        "checkpoint_every",
    ):
        value = cli_values[name]
        if value is not None and (value < 0 or (value == 0 and name in positive_only)):
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} must be a positive number, got {value}")
    if agent is None and "agent" not in file_run:
        raise UsageError(
            "missing AGENT: e.g. 'rlkit train dqn --env CartPole-v1' (or --config FILE)"
        )
    run = resolve_run_config(file_run, cli_values)
    spec = agent_spec(run.agent)
    env_id = run.env or spec.default_env
    env_run = spec.env_defaults.get(env_id, {})
    defaults = {"agent": spec.name, "env": env_id,
                "steps": run.steps or env_run.get("steps", spec.default_steps)}  # fmt: skip
    if eval_every is None and "eval_every" not in file_run:
        defaults["eval_every"] = spec.default_eval_every
    if episodes is None and "episodes" not in file_run:
        defaults["episodes"] = env_run.get("episodes", spec.default_episodes)
    run = resolve_run_config(file_run, cli_values | defaults)
    config = make_config(spec.config_class(), {**file_agent, **parse_overrides(overrides)})

    from rlkit.envs import make_env, make_vector_env

    env = make_env(run.env)
    spec.check_spaces(env.observation_space, env.action_space, run.env)
    if run.num_envs > 1:
        if not spec.vector_envs:
            raise UsageError(f"{spec.name} learns on-policy from whole episodes: drop --num-envs")
        if config.buffer_size < run.num_envs:
            raise UsageError(
                f"buffer_size ({config.buffer_size}) must hold one step of all "
                f"{run.num_envs} environments"
            )
        env = make_vector_env(run.env, run.num_envs)

    from rlkit import runs

    run_dir = runs.create_run_dir(out, spec.name, run.env, run.seed)
    try:
        import_tensorflow_quietly()
        agent_obj = spec.load_class().from_env(env, seed=run.seed, config=config)
    except MemoryError:
        shutil.rmtree(run_dir, ignore_errors=True)  # it holds nothing yet
        raise UsageError("not enough memory for this agent (is buffer_size too large?)") from None
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)  # it holds nothing yet
        raise
    runs.write_config(run_dir, run, agent_obj.config)  # as resolved by the agent (presets)
    from rlkit.training import Trainer

    trainer = Trainer(
        agent_obj,
        env,
        seed=run.seed,
        run_dir=run_dir,
        eval_env=make_env(run.env) if run.eval_every else None,
        eval_every=run.eval_every,
        eval_episodes=run.eval_episodes,
        checkpoint_every=run.checkpoint_every,
    )
    click.echo(
        f"training {spec.name} on {run.env} for {run.steps} steps"
        + (f" or {run.episodes} episodes" if run.episodes else "")
        + f" (seed {run.seed}) -> {run_dir}",
        err=True,
    )
    _drive(trainer, run, run_dir, quiet)


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--steps", type=int, help="train until this total step count [default: the run's own]"
)
@click.option(
    "--episodes",
    type=int,
    help="train until this total episode count (0: no limit) [default: the run's own]",
)
@click.option("--quiet", is_flag=True, help="no progress bar")
def resume(run_dir, steps, episodes, quiet) -> None:
    """Continue the run in RUN_DIR from its last checkpoint.

    Network, target networks, optimizer state, replay memory, random-number
    generators, counters and the environment are restored, so the run goes on
    exactly as if it had never stopped. --steps / --episodes raise the run's limits.
    """
    from dataclasses import replace

    from rlkit.checkpoint import latest_checkpoint, read_checkpoint_summary
    from rlkit.runs import read_run_config

    if not run_dir.is_dir():
        raise UsageError(f"no run folder at {run_dir}")
    run, _ = read_run_config(run_dir)
    checkpoint = latest_checkpoint(run_dir / "checkpoints")
    saved = read_checkpoint_summary(checkpoint)
    if saved["agent"] != run.agent:
        raise UsageError(
            f"{checkpoint} holds a {saved['agent']} agent but {run_dir} is a {run.agent} run"
        )
    for name, value in (("steps", steps), ("episodes", episodes)):
        if value is not None and value < (1 if name == "steps" else 0):
            raise UsageError(f"--{name} must be a positive number, got {value}")
    run = replace(
        run,
        steps=run.steps if steps is None else steps,
        episodes=run.episodes if episodes is None else episodes,
    )
    if saved["step"] >= run.steps:
        raise UsageError(
            f"{run_dir} is already at step {saved['step']}; pass --steps above that to go on"
        )
    if run.episodes and saved["episodes"] >= run.episodes:
        raise UsageError(
            f"{run_dir} already has {saved['episodes']} episodes; "
            "pass --episodes above that (or 0 for no limit) to go on"
        )
    import_tensorflow_quietly()
    from rlkit.envs import make_env, make_vector_env
    from rlkit.training import Trainer

    trainer = Trainer.resume(
        run_dir,
        lambda: make_env(run.env),
        train_env_factory=(lambda: make_vector_env(run.env, run.num_envs))
        if run.num_envs > 1
        else None,
        eval_every=run.eval_every,
        eval_episodes=run.eval_episodes,
        checkpoint_every=run.checkpoint_every,
    )
    click.echo(
        f"resuming {run.agent} on {run.env} at step {trainer.state.step} of {run.steps} "
        f"-> {run_dir}",
        err=True,
    )
    _drive(trainer, run, run_dir, quiet)


def _drive(trainer, run, run_dir: Path, quiet: bool) -> None:
    """Run the trainer with a progress bar; on stop checkpoint, on the end evaluate and save."""
    import sys

    from rlkit import runs
    from rlkit.envs import make_env
    from rlkit.training import TrainingDiverged, evaluate, save_model, stop_on_signals

    from .progress import TrainingProgress

    agent = trainer.agent
    max_episodes = run.episodes or None
    if not quiet:
        trainer.callbacks.append(
            TrainingProgress(run.steps, f"{agent.name} {run.env}", start=trainer.state.step)
        )
    try:
        with stop_on_signals(trainer):
            if quiet:
                history = trainer.run(run.steps, max_episodes=max_episodes)
            else:
                with trainer.callbacks[-1]:
                    history = trainer.run(run.steps, max_episodes=max_episodes)
    except TrainingDiverged as exc:
        trainer.close()
        click.echo(
            f"rlkit: training stopped: {exc}; checkpoints in {run_dir / 'checkpoints'}", err=True
        )
        sys.exit(FAILED)
    trainer.close()
    if history.interrupted:
        click.echo(
            f"\nstopped at step {history.steps}; checkpoint saved. "
            f"Continue with: rlkit resume {run_dir}",
            err=True,
        )
        sys.exit(INTERRUPTED)
    save_model(agent, run_dir / runs.MODEL_DIR)
    final_env = make_env(run.env)
    eval_seed = run.seed + 2_000_000
    mean, std = evaluate(agent, final_env, episodes=run.eval_episodes, seed=eval_seed)
    summary = {
        "agent": agent.name, "env": run.env, "seed": run.seed, "steps": history.steps,
        "episodes": len(history.episode_returns),
        "seconds": round(history.seconds, 3),
        "steps_per_second": round(history.steps_per_second, 1),
        "eval_episodes": run.eval_episodes,
        "final_model": {"eval_return_mean": mean, "eval_return_std": std},
    }  # fmt: skip
    headline = f"eval return {mean:.1f} ± {std:.1f} over {run.eval_episodes} greedy episodes"
    if trainer.state.best_step is not None:
        from rlkit.agents.base import load

        best = load(run_dir / "best")
        best_mean, best_std = evaluate(best, final_env, episodes=run.eval_episodes, seed=eval_seed)
        summary["best_model"] = {
            "step": trainer.state.best_step,
            "training_eval_return_mean": trainer.state.best_eval,
            "eval_return_mean": best_mean,
            "eval_return_std": best_std,
        }
        headline = (
            f"eval return {best_mean:.1f} ± {best_std:.1f} over {run.eval_episodes} greedy "
            f"episodes (best model, step {trainer.state.best_step}, in best/; final model "
            f"{mean:.1f} ± {std:.1f}, in model/)"
        )
    runs.write_summary(run_dir, summary)
    if history.episode_returns:  # the learning curve, as `rlkit plot RUN_DIR` draws it
        from rlkit.plotting import plot_runs

        plot_runs([run_dir], run_dir / "curves.png")
    report = agent.report(trainer.env)
    if report:
        click.echo(report)
    click.echo(
        f"{agent.name} {run.env}: {headline} after {history.steps} steps "
        f"({history.steps_per_second:.0f} steps/s); saved to {run_dir}"
    )
