"""Schedules given as fractions of the run, resolved to steps once the run's length is known.

An agent config may give ``eps_anneal_fraction`` / ``lr_anneal_fraction`` (rl-zoo's
``exploration_fraction`` and ``lin_`` schedules) instead of ``eps_anneal_steps`` /
``lr_anneal_steps``. :func:`resolve_fractions` (called by the run's plan, where the
steps are known) writes the steps the fraction comes to; the agent reads only the
steps, and a run folder's config.toml records both, so a resumed run keeps the schedule
it started with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

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


def describe_schedules(config: Any) -> list[str]:
    """One phrase per annealed schedule, as the run's first lines print it:
    ``"epsilon 1 -> 0.1 over 12,000 steps (12% of the run)"``."""
    names = {f.name for f in dataclasses.fields(config)}
    lines = []
    if {"eps_start", "eps_end", "eps_anneal_steps"} <= names:
        lines.append(
            f"epsilon {config.eps_start:g} -> {config.eps_end:g} over "
            f"{config.eps_anneal_steps:,} steps{_share(config, 'eps_anneal_fraction')}"
        )
    if getattr(config, "lr_anneal_steps", 0) > 0:
        if "learning_rate_end" in names and config.learning_rate_end >= 0:  # DQN
            rates = f"{config.learning_rate:g} -> {config.learning_rate_end:g}"
        elif "lr_end_fraction" in names and config.lr_end_fraction >= 0:  # DDPG
            rates = f"x1 -> x{config.lr_end_fraction:g}"
        else:
            return lines  # a constant rate
        lines.append(
            f"learning rate {rates} over {config.lr_anneal_steps:,} steps"
            f"{_share(config, 'lr_anneal_fraction')}"
        )
    return lines


def _share(config: Any, key: str) -> str:
    fraction = getattr(config, key, 0.0)
    return f" ({fraction:.0%} of the run)" if fraction > 0 else ""
