"""What a registry entry says of an agent (:class:`AgentSpec`) and of a name users type for
an agent with some keys set (:class:`Alias`); the entries are :mod:`rlkit.agents.registry`'s.
No TensorFlow here: the CLI reads the entries before it loads anything."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


def no_schedules(config: Any, steps: int = 0, episodes: int = 0) -> list[str]:
    """An agent without annealed schedules: nothing to describe."""
    return []


@dataclass(frozen=True)
class AgentSpec:
    """An agent: where it and its config live, and what the CLI, plans and tunes need.

    variants: ``((config key, variant name), ...)``: the first key that is true names a
        run (``rlkit train td3`` is ``ddpg`` with ``td3 = true``), else ``name``.
    search_space: key -> dimension (``"loguniform(1e-5,1e-2)"``): ``rlkit tune``'s default.
    ties: follower -> leader: the follower takes the leader's value unless searched or set.
    describe_schedules: ``(config, steps, episodes) -> [phrase]`` for the run's first lines.
    export_builder: ``"module:function"`` building its export's signatures
        (:mod:`rlkit.exporting.signatures`); ``""``: it cannot be exported.
    compiled_program: ``"module:Class"`` of the compiled loop's program that runs it
        (a :class:`~rlkit.run.compiled.program.CompiledProgram`); ``""``: the Python loop only.
    compiled_on_minatar: the compiled loop runs it on MinAtar's TensorFlow games too.
    preset_families: env id prefix -> the preset every environment of that family takes
        by itself (``{"ALE/": "dqn3"}``).
    compiled_speedups: env id prefix -> what a benchmark measured of the compiled loop
        against the Python loop there, with where it is written: the compiled-loop tip is
        printed only for these (issue 55: at CartPole's defaults the compiled loop is slower).
    """

    name: str
    summary: str
    agent_path: str  # "module:Class"
    config_class: type  # its module imports no TensorFlow
    check_spaces: Callable[..., None]  # (observation_space, action_space, env_id); no TF
    default_env: str
    default_steps: int
    default_eval_every: int = 0  # CLI default of --eval-every (0: evaluate only at the end)
    vector_envs: bool = True  # can train on several environments at once (--num-envs)
    default_episodes: int = 0  # CLI default of --episodes (0: no limit)
    # per environment id: CLI defaults of "steps" / "episodes" that differ from the above
    env_defaults: dict[str, dict[str, int]] = field(default_factory=dict)
    variants: tuple[tuple[str, str], ...] = ()
    search_space: Mapping[str, str] = field(default_factory=dict)
    ties: Mapping[str, str] = field(default_factory=dict)
    describe_schedules: Callable[..., list[str]] = no_schedules
    export_builder: str = ""
    compiled_program: str = ""
    compiled_on_minatar: bool = False
    preset_families: Mapping[str, str] = field(default_factory=dict)
    compiled_speedups: Mapping[str, str] = field(default_factory=dict)

    @property
    def class_name(self) -> str:
        """The agent class's name (``rlkit.agents.<class_name>``)."""
        return self.agent_path.partition(":")[2]

    def load_class(self):
        """The agent class (imports TensorFlow)."""
        return load(self.agent_path)

    def export_function(self) -> Any:
        """The function :attr:`export_builder` names (imports TensorFlow)."""
        return load(self.export_builder)

    def variant_of(self, config: Any = None) -> str:
        """What a run of this agent with ``config`` is called: the first variant whose key
        is true (``"td3"`` for DDPG with ``td3 = true``), else the agent's name.

        ``config``: a config dataclass, its table as ``config.toml`` holds it (a mapping),
        or None (the defaults)."""
        for key, name in self.variants:
            value = config.get(key) if isinstance(config, Mapping) else getattr(config, key, None)
            if value is True:
                return name
        return self.name


def load(path: str) -> Any:
    """The object a ``"module:attribute"`` path names (imports its module)."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Alias:
    """A name users type for an agent with some keys set (``rlkit train td3`` is ``ddpg``
    with ``td3 = true``, as SB3 users expect a TD3 of its own). The run is the agent's
    (``[run] agent``), named after the variant its config switches on."""

    agent: str
    settings: Mapping[str, Any]
    summary: str
