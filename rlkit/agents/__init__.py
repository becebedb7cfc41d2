"""rlkit's agents. Each is importable by name: ``rlkit.agents.DQN``; so is each name users
type for an agent with some keys set (the registry's ``ALIASES``): ``rlkit.agents.TD3``
makes a ``DDPG`` with ``td3 = true``, as ``rlkit train td3`` trains one."""

from __future__ import annotations

import importlib
from typing import Any

from rlkit.agents.registry import AGENTS, ALIASES, agent_spec
from rlkit.core.errors import UsageError

#: class name -> module: the base class, and each registered agent's class
_CLASSES = {
    "Agent": "rlkit.agents.base",
    **{spec.class_name: spec.agent_path.partition(":")[0] for spec in AGENTS.values()},
}

#: class name -> alias: ``"TD3"`` -> ``"td3"`` (each alias's name in capitals)
_ALIAS_CLASSES = {name.upper(): name for name in ALIASES}

__all__ = ["AGENTS", "agent_spec", *_CLASSES, *_ALIAS_CLASSES]


def __getattr__(name: str) -> Any:
    if name in _ALIAS_CLASSES:
        value: Any = _alias_class(name, _ALIAS_CLASSES[name])
    elif name in _CLASSES:
        value = getattr(importlib.import_module(_CLASSES[name]), name)
    else:
        raise AttributeError(f"module 'rlkit.agents' has no attribute {name!r}")
    globals()[name] = value
    return value


class _AliasType(type):
    """``isinstance(agent, TD3)``: the alias's agent class with the alias's keys set."""

    def __instancecheck__(cls, obj: Any) -> bool:
        settings = getattr(cls, "settings", None)
        if settings is None:  # (the base, _Alias, itself)
            return super().__instancecheck__(obj)
        config = getattr(obj, "config", None)
        agent_class = cls.agent_class()  # type: ignore[attr-defined]  # (_Alias's classmethod)
        return isinstance(obj, agent_class) and all(
            getattr(config, key, None) == value for key, value in settings.items()
        )


class _Alias(metaclass=_AliasType):
    """An alias's class: making one makes its agent with the alias's keys set (an instance
    of the agent's own class, which is what saves, loads and resumes)."""

    alias: str
    agent: str
    settings: dict[str, Any]

    def __new__(cls, observation_space, action_space, config=None, seed: int = 0, **overrides):
        return cls.agent_class()(
            observation_space, action_space, config=config, seed=seed, **cls._set(overrides)
        )

    @classmethod
    def from_env(cls, env, seed: int = 0, config=None, **overrides):
        """The agent's ``from_env`` with the alias's keys set (``TD3.from_env(env)``: a DDPG
        with ``td3 = true``)."""
        return cls.agent_class().from_env(env, seed=seed, config=config, **cls._set(overrides))

    @classmethod
    def agent_class(cls) -> Any:
        """The agent class the alias makes (``DDPG`` for ``TD3``)."""
        return __getattr__(AGENTS[cls.agent].class_name)

    @classmethod
    def _set(cls, overrides: dict[str, Any]) -> dict[str, Any]:
        """``overrides`` with the alias's keys; UsageError where one contradicts them."""
        from rlkit.config.options import parse_value

        agent_name = AGENTS[cls.agent].class_name
        for key, value in cls.settings.items():
            given = overrides.get(key, value)
            if parse_value(str(given).lower(), type(value), key) != value:
                raise UsageError(
                    f"rlkit.agents.{cls.__name__} is {agent_name} with {key} = "
                    f"{str(value).lower()}: for {key}={given} use rlkit.agents.{agent_name}"
                )
        return {**overrides, **cls.settings}


def _alias_class(class_name: str, alias: str) -> type:
    """The class ``rlkit.agents.<class_name>`` of the registry's alias ``alias``."""
    entry = ALIASES[alias]
    return type(
        class_name,
        (_Alias,),
        {"__doc__": f"{entry.summary}: ``{class_name}.from_env(env, ...)`` makes it.",
         "__module__": __name__, "__qualname__": class_name, "alias": alias,
         "agent": entry.agent, "settings": dict(entry.settings)},
    )  # fmt: skip
