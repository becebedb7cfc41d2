"""Option checks the commands share."""

from __future__ import annotations

import click


def non_empty(ctx: click.Context, param: click.Parameter, value):
    """Refuse ``--opt ''`` (an empty id, folder or file name is never what was meant)."""
    if value is not None and str(value).strip() == "":
        raise click.BadParameter("must not be empty", ctx=ctx, param=param)
    return value
