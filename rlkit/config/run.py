"""Run settings and config files: the ``[run]`` table, reading a TOML or YAML file with
``[run]`` and ``[agent]``, and writing flat tables as TOML. Nothing here touches a run
folder (:class:`rlkit.run.folder.RunFolder` does) or imports TensorFlow.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlkit.config.options import (
    Check,
    make_config,
    non_negative,
    option,
    positive,
    seed_range,
)
from rlkit.core.errors import UsageError

#: the most a run may ask for: far beyond any run that ends (1e12 steps at 100,000 steps/s
#: is 4 months), below where a typo of a few digits lands
MAX_STEPS = 10**12
#: episodes one evaluation plays (every --eval-every and at the end), environments at once
MAX_EVAL_EPISODES = 10_000
MAX_NUM_ENVS = 1_024


def at_most(limit: int, why: str) -> Check:
    """A count that is >= 0 and at most ``limit`` (``why``: what a larger one would do)."""

    def check(value: Any) -> str | None:
        problem = non_negative(value)
        if problem is None and value > limit:
            return f"must be at most {limit:,} ({why})"
        return problem

    return check


def positive_at_most(limit: int, why: str) -> Check:
    within = at_most(limit, why)
    return lambda value: positive(value) or within(value)


@dataclass(frozen=True)
class RunConfig:
    """How a run is driven (the ``[run]`` table of ``config.toml``)."""

    agent: str = option("dqn", "agent name: dqn, ddpg or reinforce")
    env: str = option("", "gymnasium environment id (empty: the agent's default)")
    steps: int = option(
        0,
        "environment steps to train for (0: the agent's default)",
        at_most(MAX_STEPS, "a run that long never ends"),
    )
    seed: int = option(0, "seeds weights, sampling, exploration and the environment", seed_range)
    num_envs: int = option(
        1,
        "environments stepped together (vector env, batched acting)",
        positive_at_most(MAX_NUM_ENVS, "each is a copy of the environment in memory"),
    )
    episodes: int = option(
        0,
        "also stop after this many episodes (0: no limit)",
        at_most(MAX_STEPS, "a run that long never ends"),
    )
    eval_every: int = option(
        0, "greedy evaluation every this many steps (0: only at the end)", non_negative
    )
    eval_episodes: int = option(
        10,
        "episodes per evaluation",
        positive_at_most(MAX_EVAL_EPISODES, "every evaluation plays them all"),
    )
    checkpoint_every: int = option(
        10_000, "steps between checkpoints (0: only at stop and end)", non_negative
    )
    preset: str = option(
        "", "the shipped preset under this config (rlkit presets; none: generic defaults)"
    )
    env_kwargs: dict[str, Any] = dataclasses.field(
        default_factory=dict,
        metadata={"help": "keyword arguments of the environment's constructor (gymnasium.make)",
                  "check": None},
    )  # fmt: skip

    def cross_check(self) -> str | None:
        """Values that are fine alone but not together."""
        if self.steps and self.num_envs > self.steps:
            return (
                f"num_envs ({self.num_envs:,}) is more than steps ({self.steps:,}): each step of "
                "the environments together takes num_envs steps; use fewer environments"
            )
        return None


def parse_env_kwargs(pairs: Iterable[str]) -> dict[str, Any]:
    """``["continuous=true", "gravity=-9.8", "name=moon"]`` -> ``{"continuous": True,
    "gravity": -9.8, "name": "moon"}``: each value as TOML reads it, else as text."""
    kwargs: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise UsageError(
                f"malformed --env-kwargs {pair!r}: expected KEY=VALUE, e.g. --env-kwargs "
                "continuous=true"
            )
        try:
            value = tomllib.loads(f"value = {text.strip()}")["value"]
        except tomllib.TOMLDecodeError:
            value = text.strip()
        kwargs[key.strip()] = value
    return kwargs


def load_config_file(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read a TOML or YAML config file into ``(run_table, agent_table)``.

    The file has up to two tables, ``run`` and ``agent``; anything else is an error.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise UsageError(f"config file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = tomllib.loads(text)
    except Exception as exc:  # tomllib.TOMLDecodeError, yaml.YAMLError
        raise UsageError(f"cannot parse config file {path}: {exc}".splitlines()[0]) from None
    if not isinstance(data, dict):
        raise UsageError(f"config file {path} must hold the tables [run] and [agent]")
    unknown = sorted(set(data) - {"run", "agent"})
    if unknown:
        raise UsageError(
            f"unknown table {unknown[0]!r} in {path}; a config file has [run] and [agent]"
        )
    run, agent = data.get("run", {}), data.get("agent", {})
    if not isinstance(run, dict) or not isinstance(agent, dict):
        raise UsageError(f"config file {path}: [run] and [agent] must be tables")
    return run, agent


def check_config_agent(path: str | os.PathLike, agent: str) -> None:
    """UsageError when the config file at ``path`` is for another agent than ``agent`` (its
    ``[agent]`` table and preset would be read as ``agent``'s)."""
    run, _ = load_config_file(path)
    own = run.get("agent")
    if isinstance(own, str) and own.strip().lower() != agent.strip().lower():
        raise UsageError(
            f"{path} is a config for {own}, not {agent}: drop AGENT (the file names its "
            f"agent), or start from 'rlkit config {agent}'"
        )


def resolve_run_config(file_values: dict[str, Any], cli_values: dict[str, Any]) -> RunConfig:
    """Defaults < config file ``[run]`` < command-line options (those not None)."""
    merged = dict(file_values)
    merged.update({k: v for k, v in cli_values.items() if v is not None})
    try:
        return make_config(RunConfig, merged)
    except UsageError as exc:
        raise UsageError(str(exc).replace("config key", "run setting")) from None


def toml_value(value: Any) -> str:
    """One value as TOML writes it (bool, int, float, str, a list or a table of those)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table
        return (
            "{"
            + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items())
            + "}"
        )
    raise TypeError(f"cannot write {value!r} to TOML")


def to_toml(tables: dict[str, dict[str, Any]]) -> str:
    """Flat ``{table: {key: value}}`` as TOML (values: bool, int, float, str, lists of those)."""
    lines = []
    for table, values in tables.items():
        lines.append(f"[{table}]")
        lines.extend(f"{key} = {toml_value(value)}" for key, value in values.items())
        lines.append("")
    return "\n".join(lines)
