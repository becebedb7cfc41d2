"""Option checks the commands share."""

from __future__ import annotations

from pathlib import Path

import click


def non_empty(ctx: click.Context, param: click.Parameter, value):
    """Refuse ``--opt ''`` (an empty id, folder or file name is never what was meant)."""
    if value is not None and str(value).strip() == "":
        raise click.BadParameter("must not be empty", ctx=ctx, param=param)
    return value


def non_empty_path(ctx: click.Context, param: click.Parameter, value):
    """A path argument (given to click as text) that is not empty, as a Path: ``Path('')``
    would quietly mean the current folder."""
    if value is None:
        return None
    if str(value).strip() == "":
        raise click.BadParameter("must not be empty", ctx=ctx, param=param)
    return Path(value)
