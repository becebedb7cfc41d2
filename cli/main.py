"""``rlkit``: train, resume, evaluate and plot reinforcement-learning agents from the shell.

No module of this package imports TensorFlow or gymnasium at import time:
``--help`` and usage errors answer at once; heavy imports happen when work starts.
"""

from __future__ import annotations

import signal
import sys
import warnings

import click

from rlkit.core.errors import RlkitWarning, UsageError

from . import export as export_commands
from . import inspect as inspect_commands
from . import sweep as sweep_commands
from . import train as train_commands
from . import tune as tune_commands

USAGE_ERROR = 2
INTERRUPTED = 130


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(package_name="rlkit", prog_name="rlkit")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Train reinforcement-learning agents on gymnasium environments.

    \b
    Examples:
      rlkit train dqn --env CartPole-v1
      rlkit resume runs/dqn-CartPole-v1-0-20261122-101500 --steps 80000
      rlkit evaluate runs/dqn-CartPole-v1-0-20261122-101500 --episodes 20
      rlkit export runs/dqn-CartPole-v1-0-20261122-101500 --out policy/1
      rlkit plot runs/dqn-CartPole-v1-* -o curves.png
    """
    if ctx.invoked_subcommand is None:  # bare `rlkit`: the help, as --help shows it
        click.echo(ctx.get_help())


cli.add_command(train_commands.train)
cli.add_command(train_commands.resume)
cli.add_command(inspect_commands.evaluate)
cli.add_command(export_commands.export)
cli.add_command(inspect_commands.plot)
cli.add_command(inspect_commands.show_config)
cli.add_command(inspect_commands.list_presets)
cli.add_command(sweep_commands.sweep)
cli.add_command(tune_commands.tune)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rlkit`` console script; returns the exit status. rlkit's own
    warnings (:class:`RlkitWarning`) are printed as one ``rlkit: ...`` line meanwhile."""
    shown_before = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if issubclass(category, RlkitWarning):
            click.echo(f"rlkit: {message}", err=True)
        else:
            shown_before(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():  # (puts showwarning and the filters back on exit)
        warnings.simplefilter("always", RlkitWarning)
        warnings.showwarning = show
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    try:
        status = cli.main(args=argv, prog_name="rlkit", standalone_mode=False)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "rlkit"
        message = exc.format_message() + _one_pair_per_set(exc.format_message())
        click.echo(f"rlkit: error: {message} (see '{command} --help')", err=True)
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


def _one_pair_per_set(message: str) -> str:
    """A hint when a ``key=value`` was left over: ``--set a=1 b=2`` gives ``a=1`` only."""
    if message.startswith("Got unexpected extra argument") and "=" in message:
        return ": each key=value needs its own --set (--set a=1 --set b=2)"
    return ""


def run() -> None:
    status = main()
    # the command is done (its last line printed): a Ctrl-C while the interpreter shuts
    # down must not turn a finished run's status into 130
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(status)


if __name__ == "__main__":
    run()
