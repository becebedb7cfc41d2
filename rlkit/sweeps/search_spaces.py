"""Search spaces of ``rlkit tune``: the per-agent defaults (rl-zoo's ``hyperparams_opt.py``)
and the ``--space KEY=DIMENSION`` syntax.

A dimension is one of ``loguniform(a,b)``, ``uniform(a,b)``, ``int(a,b)`` (both ends
included) and ``choice(v1,v2,...)`` (a list value in brackets: ``choice([64,64],[256])``).
A choice of one value fixes the key. Every value a trial gets is handed to the run as the
string ``--set KEY=VALUE`` would give, so a tuned trial is an ordinary ``rlkit train``
run. No Ray here: :mod:`rlkit.sweeps.tune_on_ray` turns a space into Ray Tune's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rlkit.agents.registry import agent_spec
from rlkit.core.errors import UsageError
from rlkit.sweeps.grid import split_values

KINDS = ("loguniform", "uniform", "int", "choice")
FORMS = "loguniform(1e-5,1e-2), uniform(0,0.2), int(1,8) or choice(64,128,256)"


@dataclass(frozen=True)
class Dimension:
    """One key's range: ``kind`` in :data:`KINDS`; ``bounds`` (low, high) for ranges,
    ``values`` (strings as ``--set`` takes them) for a choice."""

    kind: str
    bounds: tuple[float, float] = (0.0, 0.0)
    values: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.kind == "choice":
            return f"choice({','.join(self.values)})"
        low, high = self.bounds
        if self.kind == "int":
            return f"int({int(low)},{int(high)})"
        return f"{self.kind}({_number(low)},{_number(high)})"

    @property
    def fixed(self) -> str | None:
        """The one value of a one-value choice, else None."""
        return self.values[0] if self.kind == "choice" and len(self.values) == 1 else None

    def ends(self) -> list[str]:
        """Values a config check must accept: every choice, or both ends of a range."""
        if self.kind == "choice":
            return list(self.values)
        low, high = self.bounds
        if self.kind == "int":
            return [str(int(low)), str(int(high))]
        return [repr(low), repr(high)]


def _number(value: float) -> str:
    """``1e-05`` -> ``1e-5``; ``0.2`` stays."""
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{value:g}").replace("e+", "e")


def parse_dimension(text: str, key: str = "KEY") -> Dimension:
    """``"loguniform(1e-5,1e-2)"`` -> a :class:`Dimension`; UsageError naming the forms."""
    match = re.fullmatch(r"\s*(\w+)\s*\((.*)\)\s*", text)
    bad = f"malformed --space {key}={text!r}: expected one of {FORMS}"
    if not match or match.group(1) not in KINDS:
        raise UsageError(bad)
    kind, args = match.group(1), split_values(match.group(2))
    if kind == "choice":
        if any(not a for a in args):
            raise UsageError(bad)
        twice = [a for i, a in enumerate(args) if a in args[:i]]
        if twice:
            raise UsageError(f"--space {key} gives {twice[0]} twice")
        return Dimension("choice", values=tuple(args))
    try:
        low, high = (float(a) for a in args)
    except ValueError:
        raise UsageError(bad) from None
    if not (math.isfinite(low) and math.isfinite(high)) or not low < high:
        raise UsageError(f"--space {key}={text}: needs two finite bounds, low < high")
    if kind == "loguniform" and low <= 0:
        raise UsageError(f"--space {key}={text}: a log-uniform range needs bounds > 0")
    if kind == "int" and not (low.is_integer() and high.is_integer()):
        raise UsageError(f"--space {key}={text}: an int range needs whole-number bounds")
    return Dimension(kind, (low, high))


def parse_spaces(pairs: Iterable[str]) -> dict[str, Dimension]:
    """``["learning_rate=loguniform(1e-5,1e-2)", ...]`` -> ``{key: Dimension}``."""
    spaces: dict[str, Dimension] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"malformed --space {pair!r}: expected KEY=DIMENSION, e.g. "
                             "--space learning_rate=loguniform(1e-5,1e-2)")  # fmt: skip
        if key in spaces:
            raise UsageError(f"--space {key} is given twice")
        spaces[key] = parse_dimension(text, key)
    return spaces


#: keys that choose code rather than a learning setting: never searched
NOT_TUNABLE = {"q_network", "actor", "critic", "policy", "baseline", "jit_compile", "preset"}


def default_space(agent: str) -> dict[str, Dimension]:
    """The agent's default space (its registration's ``search_space``; rl-zoo's samplers)."""
    return {k: parse_dimension(v, k) for k, v in agent_spec(agent).search_space.items()}


def resolve_space(
    agent: str,
    config_class: type,
    given: Mapping[str, Dimension],
    fixed: Mapping[str, str],
    only_given: bool = False,
    check=None,
) -> dict[str, Dimension]:
    """The space a tune searches: the agent's default (none with ``only_given``), each key of
    ``given`` replacing its default, minus the keys ``fixed`` (``--set``) sets. ``check``
    (values -> None, or UsageError) plans the run with each end of each range. Unknown and
    untunable keys, and ranges the config refuses at either end, raise UsageError."""
    import dataclasses

    from rlkit.config.options import make_config

    keys = {f.name for f in dataclasses.fields(config_class)}
    for key in given:
        if key not in keys:
            import difflib

            close = difflib.get_close_matches(key, keys, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise UsageError(f"--space {key}: {agent} has no config key {key}{hint}; "
                             f"'rlkit config {agent}' lists them")  # fmt: skip
        if key in NOT_TUNABLE:
            raise UsageError(f"--space {key}: {key} chooses code, not a setting to tune; "
                             f"give it with --set {key}=...")  # fmt: skip
    both = sorted(set(given) & set(fixed))
    if both:
        raise UsageError(f"{both[0]} is given both --space and --set: search it or fix it")
    space = {} if only_given else default_space(agent)
    space = {k: v for k, v in {**space, **given}.items() if k not in fixed}
    for key, dim in space.items():
        for value in dim.ends():
            try:
                if check is not None:  # the whole run: preset, config file, --set
                    check({**fixed, key: value})
                else:
                    make_config(config_class, {**fixed, key: value})
            except UsageError as exc:
                raise UsageError(f"--space {key}={dim}: {exc}") from None
    if not space:
        raise UsageError(f"nothing to search: give --space KEY=DIMENSION ({FORMS})")
    return space


def trial_overrides(agent: str, sampled: Mapping[str, object], fixed: Mapping[str, str]) -> dict:
    """A trial's ``--set`` strings: the sampled values, each tied follower given its
    leader's value (unless the follower is searched or fixed), then the fixed ones."""
    values = {k: format_value(v) for k, v in sampled.items()}
    for follower, leader in ties(agent, values, fixed).items():
        values[follower] = values[leader]
    return {**values, **fixed}


def format_value(value: object) -> str:
    """A sampled value as ``--set`` takes it (floats round-trip exactly)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return repr(value)
    return str(value)


def ties(agent: str, space: Mapping[str, object], fixed: Mapping[str, str]) -> dict[str, str]:
    """The ties a trial applies (follower -> leader): those whose leader is searched and whose
    follower is neither searched nor fixed (:func:`trial_overrides`). A leader fixed with
    ``--set``, or left out of the space, ties nothing: its follower keeps the run's value."""
    return {follower: leader for follower, leader in agent_spec(agent).ties.items()
            if leader in space and follower not in space and follower not in fixed}  # fmt: skip


def describe(agent: str, space: Mapping[str, Dimension], fixed: Mapping[str, str],
             run: Mapping[str, object] | None = None) -> str:  # fmt: skip
    """What ``--show-space`` prints: one key per line, then the ties each trial applies, the
    ties that apply to nothing (their leader is set or not searched: the follower keeps
    the run's value, from ``run``, the agent config of a trial, if given), and the fixed
    keys."""
    width = max((len(k) for k in space), default=0)
    lines = [f"  {k.ljust(width)}  {dim}" for k, dim in space.items()]
    tied = ties(agent, space, fixed)
    if tied:
        lines += ["tied (each trial):", *(f"  {f} = {leader}" for f, leader in tied.items())]
    untied = []
    for follower, leader in agent_spec(agent).ties.items():
        if follower in tied or follower in space or follower in fixed:
            continue
        value = f" = {format_value(run[follower])}" if run and follower in run else ""
        why = "set" if leader in fixed else "not searched"
        untied.append(f"  {follower}{value} (the run's own: {leader} is {why})")
    if untied:
        lines += ["not tied:", *untied]
    if fixed:
        lines += ["fixed (--set):", *(f"  {k} = {v}" for k, v in fixed.items())]
    return "\n".join(lines)
