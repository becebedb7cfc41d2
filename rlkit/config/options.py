"""Agent configurations: dataclasses with documented, validated fields.

Every agent has a frozen dataclass of hyper-parameters. Each field carries a
one-line ``help`` and an optional ``check`` in its metadata, so that the CLI can
list, parse and validate keys without importing TensorFlow. The sizes a config sets are
held against the memory available here (:func:`check_network_memory`), before anything is
built.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Callable, Mapping
from typing import Any

from rlkit.core.errors import UsageError

Check = Callable[[Any], "str | None"]


def option(default: Any, help: str, check: Check | None = None) -> Any:
    """A config field with a default, a one-line description and a validity check.

    ``check(value)`` returns None when the value is fine, else what is wrong with it
    (e.g. ``"must be > 0"``).
    """
    return dataclasses.field(default=default, metadata={"help": help, "check": check})


def positive(value: Any) -> str | None:
    if not math.isfinite(value):
        return "must be a finite number"
    return None if value > 0 else "must be > 0"


def non_negative(value: Any) -> str | None:
    if not math.isfinite(value):
        return "must be a finite number"
    return None if value >= 0 else "must be >= 0"


def positive_or_all(value: Any) -> str | None:
    """A positive count, or -1 for "one per environment step collected" (SB3's -1)."""
    return None if value == -1 or value > 0 else "must be > 0, or -1 (one per step collected)"


#: what an off-policy agent's ``train_freq`` counts
TRAIN_FREQ_UNITS = ("step", "episode")


def train_freq_unit_option() -> Any:
    """The ``train_freq_unit`` field of off-policy agents (DQN, DDPG)."""
    return option(
        "step",
        "what train_freq counts: step | episode (a block each time that many episodes "
        "ended: rl-zoo's train_freq [N, episode])",
        one_of(*TRAIN_FREQ_UNITS),
    )


def gradient_steps_option(default: int) -> Any:
    """The ``gradient_steps`` field of off-policy agents (DQN, DDPG)."""
    return option(
        default,
        "gradient updates per block, fused in one compiled call; -1: one per environment "
        "step collected since the last block (rl-zoo's -1)",
        positive_or_all,
    )


def seed_range(value: Any) -> str | None:
    return None if 0 <= value < 2**32 else "must be in [0, 2**32)"


def unit_interval(value: Any) -> str | None:
    return None if 0.0 <= value <= 1.0 else "must be in [0, 1]"


def one_of(*choices: str) -> Check:
    def check(value: Any) -> str | None:
        return None if value in choices else f"must be one of {', '.join(choices)}"

    return check


def positive_sizes(value: Any) -> str | None:
    if len(value) == 0 or any(v <= 0 for v in value):
        return "must be a non-empty list of positive layer sizes, e.g. 64,64"
    return None


def layer_sizes(value: Any) -> str | None:
    """Positive layer sizes, or none at all (the torso straight into the head)."""
    if any(v <= 0 for v in value):
        return "must be a list of positive layer sizes, e.g. 64,64 (or [] for none)"
    return None


def field_help(config_class: type) -> dict[str, str]:
    """``{key: one-line description}`` for every field of a config dataclass."""
    return {f.name: f.metadata.get("help", "") for f in dataclasses.fields(config_class)}


def _field_types(config_class: type) -> dict[str, Any]:
    return typing.get_type_hints(config_class)


def parse_value(text: str, annotation: Any, key: str) -> Any:
    """Turn the text of ``--set key=text`` into a value of the field's type."""
    origin = typing.get_origin(annotation)
    try:
        if annotation is bool:
            lowered = text.strip().lower()
            if lowered in ("true", "1", "yes", "on"):
                return True
            if lowered in ("false", "0", "no", "off"):
                return False
            raise ValueError
        if annotation is int:  # digits, as click's --steps takes them (not 1e3, not 2.0)
            return int(text.strip())
        if annotation is float:
            return float(text.replace("_", ""))
        if annotation is str:
            return text.strip()
        if origin is tuple:
            (item_type, *_rest) = typing.get_args(annotation)
            if not _balanced(text.strip()):
                raise ValueError
            parts = [p for p in text.strip().strip("[]()").split(",") if p.strip()]
            return tuple(parse_value(p.strip(), item_type, key) for p in parts)
    except ValueError:
        pass
    else:
        raise TypeError(f"unsupported config type {annotation!r} for {key}")
    raise UsageError(f"bad value {text!r} for {key}: expected {_type_name(annotation)}")


def _balanced(text: str) -> bool:
    """``64,64``, ``[64,64]`` or ``(64,64)``: a list written whole, brackets closed."""
    if not text or text[0] not in "[(":
        return not any(c in text for c in "[]()")
    closing = {"[": "]", "(": ")"}[text[0]]
    inner = text[1:-1]
    return text[-1] == closing and not any(c in inner for c in "[]()")


def _type_name(annotation: Any) -> str:
    if typing.get_origin(annotation) is tuple:
        return "a comma-separated list of integers"
    names = {bool: "true or false", int: "a whole number such as 1000", float: "a number",
             str: "a string"}  # fmt: skip
    return names.get(annotation, str(annotation))


def _coerce(value: Any, annotation: Any, key: str) -> Any:
    """Accept values that come from Python or a config file (ints for floats, lists)."""
    if typing.get_origin(annotation) is dict:  # a table (env_kwargs), never a string
        if not isinstance(value, Mapping):
            raise UsageError(
                f"bad value {value!r} for {key}: expected a table, e.g. {key} = {{length = 3}}"
            )
        return dict(value)
    if isinstance(value, str) and annotation is not str:
        return parse_value(value, annotation, key)
    if annotation is str and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # a key that takes a word or a number (SAC's ent_coef = 0.1)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if typing.get_origin(annotation) is tuple and isinstance(value, list | tuple):
        (item_type, *_rest) = typing.get_args(annotation)
        return tuple(_coerce(v, item_type, key) for v in value)
    expected = typing.get_origin(annotation) or annotation
    if isinstance(expected, type) and not isinstance(value, expected):
        raise UsageError(f"bad value {value!r} for {key}: expected {_type_name(annotation)}")
    if expected is int and isinstance(value, bool):
        raise UsageError(f"bad value {value!r} for {key}: expected {_type_name(annotation)}")
    return value


def make_config(config_class: type, overrides: Mapping[str, Any] | None = None, base: Any = None):
    """Build a validated config from defaults (or ``base``) plus ``overrides``.

    Overrides may be typed values or the strings of ``--set key=value``. ``base`` may be
    a config of ``config_class`` or a mapping of its keys. Unknown keys, invalid values
    and a ``base`` of another kind raise :class:`UsageError` naming what is valid.
    """
    if isinstance(base, Mapping):
        overrides = {**base, **(overrides or {})}
        base = None
    if base is not None and not isinstance(base, config_class):
        raise UsageError(
            f"config must be a {config_class.__name__} or a mapping of its keys, "
            f"got {type(base).__name__}"
        )
    base = base if base is not None else config_class()
    overrides = dict(overrides or {})
    types_by_key = _field_types(config_class)
    unknown = sorted(set(overrides) - set(types_by_key))
    if unknown:
        valid = ", ".join(sorted(types_by_key))
        raise UsageError(f"unknown config key {unknown[0]!r}; valid keys: {valid}")
    values = {k: _coerce(v, types_by_key[k], k) for k, v in overrides.items()}
    config = dataclasses.replace(base, **values)
    validate(config)
    return config


#: the most transitions a replay memory holds (it indexes them with int32)
MAX_BUFFER_SIZE = 2**31


def validate(config: Any) -> None:
    """Run every field's check and the class's ``cross_check`` (if any).

    Every float (alone or in a tuple) must be finite: no option takes inf or nan.
    """
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        items = value if isinstance(value, tuple) else (value,)
        if any(isinstance(v, float) and not math.isfinite(v) for v in items):
            raise UsageError(f"bad value {value!r} for {f.name}: must be a finite number")
        check = f.metadata.get("check")
        problem = check(getattr(config, f.name)) if check else None
        if problem:
            raise UsageError(f"bad value {getattr(config, f.name)!r} for {f.name}: {problem}")
    buffer_size = getattr(config, "buffer_size", None)
    batch_size = getattr(config, "batch_size", None)
    if buffer_size is not None and buffer_size >= MAX_BUFFER_SIZE:  # what the replay can index
        raise UsageError(
            f"bad value {buffer_size!r} for buffer_size: must be < 2**31 ({MAX_BUFFER_SIZE:,}) "
            "transitions"
        )
    if buffer_size is not None and batch_size is not None and buffer_size < batch_size:
        raise UsageError(f"buffer_size ({buffer_size}) must be at least batch_size ({batch_size})")
    cross_check = getattr(config, "cross_check", None)
    if cross_check is not None:
        problem = cross_check()
        if problem:
            raise UsageError(problem)


def parse_overrides(pairs: typing.Iterable[str]) -> dict[str, str]:
    """Split ``["key=value", ...]`` into a dict; a pair without ``=`` is a UsageError."""
    result: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"malformed --set {pair!r}: expected KEY=VALUE, e.g. --set gamma=0.98")
        result[key.strip()] = value
    return result


def to_dict(config: Any) -> dict[str, Any]:
    """Plain ``{key: value}`` with tuples as lists (JSON/TOML friendly)."""
    return {
        k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(config).items()
    }


def check_python_arguments(config_class: type, seed: Any, overrides: dict[str, Any]) -> None:
    """Python arguments checked as the CLI checks its own: the seed's range, and a switch
    (a bool key) given as a string, which would otherwise read ``"no"`` as true or false."""
    from numpy import integer as np_integer

    if isinstance(seed, bool) or not isinstance(seed, int | np_integer) or not 0 <= seed < 2**32:
        raise UsageError(f"seed must be a whole number in [0, 2**32), got {seed!r}")
    types = typing.get_type_hints(config_class)
    for key, value in overrides.items():
        if types.get(key) is bool and isinstance(value, str):
            raise UsageError(f"bad value {value!r} for {key}: expected true or false (a bool)")
