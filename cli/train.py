"""``rlkit train`` and ``rlkit resume``."""

from __future__ import annotations

import click

from rlkit.agents.registry import AGENTS, ALIASES
from rlkit.core.errors import UsageError

from .options import non_empty, non_empty_path

INTERRUPTED = 130
FAILED = 1


def _agent_list() -> str:
    return "\n".join(
        f"  {s.name:<10} {s.summary}\n"
        f"             default --env {s.default_env}, --steps {s.default_steps}"
        + (f", --episodes {s.default_episodes}" if s.default_episodes else "")
        for s in AGENTS.values()
    ) + "".join(
        f"\n  {name:<10} {alias.summary}\n             default --env "
        f"{AGENTS[alias.agent].default_env}, --steps {AGENTS[alias.agent].default_steps}"
        for name, alias in ALIASES.items()
    )


def run_options(command):
    """The options that describe a run: ``rlkit train``'s, shared by ``rlkit sweep``."""
    options = [
        click.option("--env", "env_id", metavar="ID", callback=non_empty,
                     help="gymnasium environment id, or module:ID to import the module that "
                     "registers it first [default: the agent's own]"),
        click.option("--env-kwargs", "env_kwargs", multiple=True, metavar="KEY=VALUE",
                     help="an argument of the environment's constructor (repeatable; values "
                     "as TOML reads them, e.g. continuous=true)"),
        click.option("--steps", type=int,
                     help="environment steps to train for [default: the agent's own]"),
        click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                     help="override an agent config key (repeatable); 'rlkit config AGENT' "
                     "lists them"),
        click.option("--config", "config_file", type=click.Path(dir_okay=False),
                     metavar="FILE", callback=non_empty,
                     help="TOML or YAML file with [run] and [agent] tables (e.g. a run's "
                     "config.toml)"),
        click.option("--num-envs", type=int, metavar="N",
                     help="step N environments together with batched acting (off-policy "
                     "agents) [default: 1]"),
        click.option("--episodes", type=int, help="also stop after this many training episodes"),
        click.option("--eval-every", type=int, metavar="N",
                     help="evaluate greedily every N steps, keeping the best model in best/ "
                     "(0: only at the end) [default: the agent's own]"),
        click.option("--eval-episodes", type=int, metavar="K",
                     help="episodes per evaluation [default: 10]"),
        click.option("--checkpoint-every", type=int, metavar="N",
                     help="steps between checkpoints (0: only at the end and on stop) "
                     "[default: 10000]"),
        click.option("--preset", metavar="NAME", callback=non_empty,
                     help="a shipped preset ('rlkit presets' lists them), or 'none' for the "
                     "generic defaults [default: the preset for --env, if there is one]"),
    ]  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


def check_counts(**counts) -> None:
    """Refuse negative counts (and zero where a run needs at least one)."""
    for name, value in counts.items():
        positive_only = name in ("steps", "eval_episodes", "num_envs")
        if value is not None and (value < 0 or (value == 0 and positive_only)):
            flag = "--" + name.replace("_", "-")
            least = "a positive number" if positive_only else "0 or more"
            raise UsageError(f"{flag} must be {least}, got {value}")


def check_config_agent(agent: str | None, config_file: str | None) -> None:
    """``AGENT --config FILE`` where FILE is for another agent: say so (not "unknown
    preset" or "unknown config key" further on)."""
    if agent is not None and config_file:
        from rlkit.config.run import check_config_agent as check

        check(config_file, agent)


@click.command(epilog="\b\nAgents:\n" + _agent_list())
@click.argument("agent", metavar="[AGENT]", required=False)
@run_options
@click.option(
    "--seed",
    type=click.IntRange(0, 2**32 - 1),
    help="seeds weights, sampling, exploration and the env [default: 0]",
)
@click.option(
    "--out",
    default="runs",
    show_default=True,
    type=click.Path(file_okay=False),
    callback=non_empty,
    help="folder the run folder is created in",
)
@click.option("--quiet", is_flag=True, help="no progress bar")
@click.option(
    "--loop",
    type=click.Choice(["auto", "compiled", "python"]),
    default="auto",
    show_default=True,
    help="compiled: the whole loop in one XLA program (dqn, ddpg on rlkit/* environments); "
    "python: the usual loop; auto: compiled where it can run",
)
def train(agent, env_id, env_kwargs, steps, overrides, config_file, num_envs, episodes,
          eval_every, eval_episodes, checkpoint_every, preset, seed, out,
          quiet, loop) -> int:  # fmt: skip
    """Train AGENT on an environment and save the run.

    Creates OUT/<agent>-<env>-<seed>-<time>/ (td3-... for 'rlkit train td3', i.e. ddpg
    with td3=true)
    with config.toml (pass it back with --config), metrics.csv, tensorboard/,
    checkpoints/, best/ (with --eval-every), model/ and summary.json, then prints the
    greedy evaluation return.
    Ctrl-C stops cleanly with a checkpoint: continue with 'rlkit resume RUN_DIR'.
    """
    from rlkit.run import experiment

    check_counts(steps=steps, num_envs=num_envs, episodes=episodes, eval_every=eval_every,
                 eval_episodes=eval_episodes, checkpoint_every=checkpoint_every)  # fmt: skip
    check_config_agent(agent, config_file)
    plan = experiment.plan(
        agent, env_id, steps=steps, seed=seed, num_envs=num_envs, episodes=episodes,
        eval_every=eval_every, eval_episodes=eval_episodes, checkpoint_every=checkpoint_every,
        config_file=config_file, overrides=overrides, preset=preset, env_kwargs=env_kwargs,
    )  # fmt: skip
    trainer = experiment.start(plan, out, loop=loop)  # checks env and agent: errors first
    if plan.preset is not None:
        how = "; --preset none for the generic defaults" if plan.preset_picked else ""
        click.echo(f"using preset {plan.preset.name}{how}", err=True)
    run = plan.settings
    click.echo(
        f"training {plan.variant} on {run.env} for {run.steps} steps"
        + (f" or {run.episodes} episodes" if run.episodes else "")
        + f" (seed {run.seed}) -> {trainer.run_dir}",
        err=True,
    )
    if getattr(trainer, "loop_note", None):
        click.echo(trainer.loop_note, err=True)
    # what a fraction of the run came to (and, with an episode cap, what it is of)
    for line in plan.spec.describe_schedules(plan.agent_config, run.steps, run.episodes):
        click.echo(f"schedule: {line}{_outlasting(line, run.steps)}", err=True)
    program = getattr(
        trainer, "program", None
    )  # the compiled loop keeps its own replay (PPO: a rollout)
    replay = trainer.agent.replay_memory() if program is None else getattr(program, "replay", None)
    if replay is not None:  # what it will take in memory, and in every checkpoint
        size = replay.nbytes
        size = f"{size / 1e9:.2f} GB" if size >= 1e9 else f"{size / 1e6:.1f} MB"
        click.echo(f"replay: {replay.capacity:,} transitions, {size} at capacity "
                   f"({type(replay).__name__})", err=True)  # fmt: skip
        if replay.nbytes >= CHECKPOINT_WARN_BYTES and run.checkpoint_every != 0:
            # blocks the ring did not touch since the last checkpoint are not written again
            # (rlkit.run.checkpoint_blocks); a full one stalls a run (docs/performance.md)
            changed = replay.nbytes * min(1.0, run.checkpoint_every / replay.capacity)
            click.echo(f"a checkpoint every {run.checkpoint_every:,} steps writes what the "
                       f"replay took in since the last one (~{changed / 1e9:.2f} GB; the first "
                       f"up to {size}); --checkpoint-every sets how often, "
                       "0 only at the end", err=True)  # fmt: skip
    return _drive(trainer, run, quiet)


#: a schedule line's subject -> its config keys' prefix (``lr_anneal_steps`` ...)
SCHEDULE_KEYS = {"learning rate": "lr_anneal", "epsilon": "eps_anneal"}


def _outlasting(line: str, steps: int) -> str:
    """A word when a schedule given in steps (e.g. a generic default's 49,000) is longer
    than the run: it never reaches its end value."""
    import re

    found = re.search(r"over ([\d,]+) steps$", line)
    if found is None or int(found.group(1).replace(",", "")) <= steps:
        return ""
    key = next((k for name, k in SCHEDULE_KEYS.items() if line.startswith(name)), None)
    fix = f"; --set {key}_fraction=F fits it to the run" if key else ""
    return f" (longer than this {steps:,}-step run: it stops part-way{fix})"


#: replays at least this large get a line saying what each checkpoint will write
CHECKPOINT_WARN_BYTES = 1e9


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False), callback=non_empty_path)
@click.option(
    "--steps", type=int, help="train until this total step count [default: the run's own]"
)
@click.option(
    "--episodes",
    type=int,
    help="train until this total episode count (0: no limit) [default: the run's own]",
)
@click.option("--quiet", is_flag=True, help="no progress bar")
def resume(run_dir, steps, episodes, quiet) -> int:
    """Continue the run in RUN_DIR from its last checkpoint.

    Network, target networks, optimizer state, replay memory, random-number
    generators, counters and the environment are restored, so the run goes on
    exactly as if it had never stopped. --steps / --episodes raise the run's limits.
    """
    from rlkit.run import experiment

    trainer, run = experiment.resume(run_dir, steps, episodes)
    for line in trainer.skipped_checkpoints:
        click.echo(f"rlkit: {line}", err=True)
    trained = trainer.step >= run.steps or 0 < run.episodes <= trainer.state.episodes
    name = experiment.variant_name(run.agent, trainer.agent.config)  # e.g. td3
    click.echo(
        f"finishing {name} on {run.env}: training reached its limit (step {trainer.step}) "
        f"before the run stopped; evaluating the final model -> {run_dir}"
        if trained
        else f"resuming {name} on {run.env} at step {trainer.step} of {run.steps} "
        f"({trainer.resumed_from.name}) -> {run_dir}",
        err=True,
    )
    return _drive(trainer, run, quiet)


def _say_stopping(signum: int) -> None:
    """Said at once on Ctrl-C / SIGTERM, even while an update block is compiling."""
    click.echo(
        "\nstopping: the step in progress finishes first (the first update block compiles "
        "for up to ~10 s), then a checkpoint is saved; Ctrl-C again to quit at once",
        err=True,
    )


def _say_stopping_compile(signum: int) -> None:
    """Said at once on Ctrl-C / SIGTERM while the compiled loop compiles."""
    click.echo(
        "\nstopping: the loop finishes compiling first (seconds), then a checkpoint is saved "
        "before the first step; Ctrl-C again to quit without one",
        err=True,
    )


def _compile(trainer) -> float | None:
    """Compile the compiled loop's program, Ctrl-C answered as in training: the first says at
    once that the run stops and lets the compile end; the run then stops before its first
    step with a checkpoint and a 'Continue with' line (:func:`experiment.drive` sees the
    stop request). A second one quits at once (from the signal watcher's thread, since the
    compile holds the main thread: the process exits 130): a run folder with no checkpoint
    yet is removed, and one line says so. None when it quit from the main thread."""
    import os
    import threading

    from rlkit.run.signals import stop_on_signals

    quitting = threading.Lock()  # the watcher's thread or the main thread says it, once

    def quit_now() -> None:
        if quitting.acquire(blocking=False):
            _quit_compiling(trainer, close=False)  # (the main thread holds the files)
            os._exit(INTERRUPTED)

    try:
        with stop_on_signals(trainer, _say_stopping_compile, on_again=quit_now):
            return trainer.compile()
    except KeyboardInterrupt:
        if not quitting.acquire(blocking=False):  # the watcher is quitting the process
            threading.Event().wait()
        _quit_compiling(trainer, close=True)
        return None


def _quit_compiling(trainer, close: bool) -> None:
    """A second Ctrl-C while the loop compiled: remove a run folder that holds no
    checkpoint yet (a resumed run's stays as it was) and say so in one line."""
    import sys

    folder = trainer.folder
    if close:
        trainer.close()
    if folder.has_checkpoints():
        left = f"its checkpoints are as they were: rlkit resume {folder.path}"
    else:
        folder.remove()
        left = f"nothing to keep, the run folder {folder.path} was removed"
    click.echo(f"\nstopped while the loop compiled, before its first step: {left}", err=True)
    sys.stderr.flush()


def _drive(trainer, run, quiet: bool) -> int:
    """Drive the run to its end with a progress bar; print how it ended; return the exit
    status (0 finished, 1 diverged, 130 interrupted)."""
    from rlkit.run import experiment
    from rlkit.run.progress import TrainingProgress

    if hasattr(trainer, "compile"):  # the compiled loop: its compile time, said apart
        seconds = _compile(trainer)
        if seconds is None:
            return INTERRUPTED
        click.echo(f"compiled the loop in {seconds:.1f} s", err=True)
    progress = None
    if not quiet:
        label = f"{experiment.variant_name(run.agent, trainer.agent.config)} {run.env}"
        progress = TrainingProgress(
            run.steps,
            label,
            start=trainer.step,
            total_episodes=run.episodes,
            start_episodes=trainer.state.episodes,
        )
    result = experiment.drive(trainer, run, progress, on_stop=_say_stopping)
    if result.status in (experiment.DIVERGED, experiment.FAILED):
        click.echo(f"rlkit: {result.message}", err=True)
        return FAILED
    if result.status == experiment.INTERRUPTED:
        click.echo(f"\n{result.message}", err=True)
        return INTERRUPTED
    try:
        if result.report:
            click.echo(result.report)
        click.echo(result.message)
    except KeyboardInterrupt:  # the run is complete and saved: Ctrl-C now changes nothing
        pass
    return 0
