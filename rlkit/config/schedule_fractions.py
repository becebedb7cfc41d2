"""Schedules given as fractions of the run, resolved to steps once the run's length is known.

An agent config may give ``eps_anneal_fraction`` / ``lr_anneal_fraction`` (rl-zoo's
``exploration_fraction`` and ``lin_`` schedules) instead of ``eps_anneal_steps`` /
``lr_anneal_steps``. :func:`resolve_fractions` (called by the run's plan, where the
steps are known) writes the steps the fraction comes to; the agent reads only the
steps, and a run folder's config.toml records both, so a resumed run keeps the schedule
it started with.

The fraction's base is the run's step budget (``[run] steps``), as rl-zoo's schedules are of
its ``n_timesteps``, even where ``episodes`` may end the run sooner: the ``schedule:`` line
says so then. A run capped by episodes with no step count given (only the agent's
default) has no base to speak of: :func:`check_fraction_base` refuses its fractions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

from rlkit.core.errors import UsageError

#: fraction key -> the steps key it sets
FRACTIONS = {"eps_anneal_fraction": "eps_anneal_steps", "lr_anneal_fraction": "lr_anneal_steps"}


def resolve_fractions(config: Any, steps: int) -> Any:
    """``config`` with each ``*_fraction`` > 0 turned into its ``*_steps``:
    ``round(fraction * steps)``. A config without fraction keys is returned as it is."""
    names = {f.name for f in dataclasses.fields(config)}
    changes = {
        steps_key: round(getattr(config, key) * steps)
        for key, steps_key in FRACTIONS.items()
        if key in names and steps_key in names and getattr(config, key) > 0
    }
    return dataclasses.replace(config, **changes) if changes else config


def steps_over_fractions(layers: list[Mapping[str, Any]], config_class: type) -> dict[str, float]:
    """Fractions a higher layer overrules by giving steps: ``layers`` lowest first (preset,
    config file, ``--set``). For each fraction key, the highest layer that names it or its
    steps key decides; where that layer names only the steps, the fraction is set to 0, so
    ``--set eps_anneal_steps=5000`` on a preset with ``eps_anneal_fraction`` means 5,000
    steps, and an old run's config.toml (steps, no fractions) plans as it ran."""
    names = {f.name for f in dataclasses.fields(config_class)}
    pinned = {}
    for fraction_key, steps_key in FRACTIONS.items():
        if fraction_key not in names:
            continue
        for layer in reversed(layers):
            if fraction_key in layer:
                break
            if steps_key in layer:
                pinned[fraction_key] = 0.0
                break
    return pinned


def check_fraction_base(config: Any, episodes: int, steps_given: bool) -> None:
    """UsageError, in one line, for a fraction (> 0) of a run that ``episodes`` caps and whose
    steps nobody gave (``steps_given``: the options, a config file or the preset set them):
    its base would be the agent's default budget, which the run may never come near."""
    if episodes <= 0 or steps_given:
        return
    names = {f.name for f in dataclasses.fields(config)}
    for key, steps_key in FRACTIONS.items():
        if key in names and getattr(config, key) > 0:
            raise UsageError(
                f"{key}={getattr(config, key):g} is a share of the run's steps, and this run "
                f"is capped at {episodes:,} episodes with no step count given: give --steps N "
                f"(the budget the fraction is of) or --set {steps_key}=N"
            )


def resolved_table(table: Mapping[str, Any], written: Collection[str], steps: int) -> dict:
    """An agent table (defaults filled in) as the schedule it runs, to compare runs by: each
    ``*_fraction`` key dropped, its ``*_steps`` key as written (what the run used: a run
    folder's config.toml records both, and a resumed run keeps its steps), or resolved
    against ``steps`` where the keys ``written`` lack it. So a run made before fractions
    existed and one with a fraction that comes to the same steps compare equal."""
    resolved = dict(table)
    for key, steps_key in FRACTIONS.items():
        fraction = resolved.pop(key, 0)
        if steps_key not in written and isinstance(fraction, int | float) and fraction > 0:
            resolved[steps_key] = round(fraction * steps)
    return resolved


def epsilon_phrase(config: Any, steps: int = 0, episodes: int = 0) -> str:
    """``"epsilon 1 -> 0.1 over 12,000 steps (12% of the run)"``: a linear epsilon schedule
    (``eps_start``, ``eps_end``, ``eps_anneal_steps``, ``eps_anneal_fraction``), as the
    run's first lines print it; with ``episodes`` (a cap that may end the run before its
    ``steps``) the fraction says what it is of."""
    return (
        f"epsilon {config.eps_start:g} -> {config.eps_end:g} over {config.eps_anneal_steps:,} "
        f"steps{_share(config, 'eps_anneal_fraction', steps, episodes)}"
    )


def learning_rate_phrase(rates: str, config: Any, steps: int = 0, episodes: int = 0) -> str:
    """``"learning rate 0.001 -> 0.0001 over 5,000 steps"``: the learning rate going
    ``rates`` over ``lr_anneal_steps`` (``lr_anneal_fraction`` said as for epsilon)."""
    return (
        f"learning rate {rates} over {config.lr_anneal_steps:,} steps"
        f"{_share(config, 'lr_anneal_fraction', steps, episodes)}"
    )


def _share(config: Any, key: str, steps: int, episodes: int) -> str:
    fraction = getattr(config, key, 0.0)
    if fraction <= 0:
        return ""
    if episodes > 0 and steps > 0:
        return (f" ({fraction:.0%} of the {steps:,}-step budget; the {episodes:,}-episode cap "
                "may end the run sooner)")  # fmt: skip
    return f" ({fraction:.0%} of the run)"
