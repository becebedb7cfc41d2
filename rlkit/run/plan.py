"""A run resolved before it starts: every "which value wins" rule applied, every value
checked, before TensorFlow is imported (the environment made once to check it: an unknown
id, or spaces the agent cannot handle, are refused here as ``rlkit train`` refuses them).

Precedence: the agent's defaults < the preset < the config file < arguments <
``overrides`` (``--set``); the agent's own defaults for steps, episodes and evaluation
fill in what none of them sets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlkit.agents.registry import AGENTS, AgentSpec, agent_spec, resolve
from rlkit.config.presets import Preset
from rlkit.config.run import RunConfig
from rlkit.core.errors import UsageError


@dataclass(frozen=True)
class RunPlan:
    """A resolved, validated run: its ``settings`` (the ``[run]`` table) and the agent config.

    ``preset``: the shipped preset under the config file and options (None: the agent's
    generic defaults); ``preset_picked``: True when it was chosen by the environment
    rather than named with ``preset=``.
    """

    settings: RunConfig
    agent_config: Any
    preset: Preset | None = None
    preset_picked: bool = False

    @property
    def spec(self) -> AgentSpec:
        return agent_spec(self.settings.agent)

    @property
    def variant(self) -> str:
        """What the run is called: :func:`variant_name` of its agent and config."""
        return variant_name(self.settings.agent, self.agent_config)


def variant_name(agent: str, config: Any = None) -> str:
    """What a run of ``agent`` with agent ``config`` is called in its run folder's name,
    its summary and its plots: ``"td3"`` for DDPG with ``td3 = true``, else ``agent``.

    ``config``: the agent's config (a dataclass), or its table as ``config.toml`` holds it
    (a mapping), or None (the defaults). The agent family (``[run] agent``) stays what
    rebuilds the agent: this is a name only.
    """
    spec = AGENTS.get(agent)
    return spec.variant_of(config) if spec is not None else agent


def plan(
    agent: str | None = None,
    env: str | None = None,
    *,
    steps: int | None = None,
    seed: int | None = None,
    num_envs: int | None = None,
    episodes: int | None = None,
    eval_every: int | None = None,
    eval_episodes: int | None = None,
    checkpoint_every: int | None = None,
    config_file: str | Path | None = None,
    overrides: Mapping[str, Any] | Iterable[str] = (),
    preset: str | None = None,
    env_kwargs: Mapping[str, Any] | Iterable[str] = (),
) -> RunPlan:
    """Resolve a run as ``rlkit train`` would; raises UsageError naming what is wrong (the
    environment too: :func:`check_env`).

    Precedence: the agent's defaults < the preset < the config file < arguments <
    ``overrides``. ``preset``: a shipped preset's name (``"dqn3"``, ``"dqn/dqn3"``),
    ``"none"`` for the generic defaults, or None: the config file's ``[run] preset``,
    else the preset shipped for this agent and environment, if any (``rlkit presets``).
    ``overrides`` are agent config keys: a mapping or ``"key=value"`` strings (``--set``).
    ``env_kwargs``: the environment constructor's keyword arguments, a mapping or
    ``"key=value"`` strings (``--env-kwargs``), each over the config file's.
    Arguments left None take the config file's value, else the preset's, else the
    agent's default.
    """
    from rlkit.config import presets
    from rlkit.config.memory import check_network_memory
    from rlkit.config.options import make_config, parse_overrides
    from rlkit.config.run import load_config_file, resolve_run_config
    from rlkit.config.schedule_fractions import (
        check_fraction_base,
        resolve_fractions,
        steps_over_fractions,
    )

    file_run, file_agent = load_config_file(config_file) if config_file else ({}, {})
    own_agent = dict(file_agent)  # the config file's own [agent] table, above the preset
    alias = agent
    alias_settings: dict[str, Any] = {}
    if agent is not None:  # an alias ("td3"): its agent, with the keys it sets
        agent, alias_settings = resolve(agent)
    agent_name = agent if agent is not None else file_run.get("agent")
    chosen = preset if preset is not None else (file_run.get("preset") or None)
    picked = None
    if agent_name is not None and chosen != presets.NONE:
        spec = agent_spec(str(agent_name))
        if chosen:
            picked = presets.lookup(spec.name, str(chosen))
        else:
            env_id = env or file_run.get("env") or spec.default_env
            picked = presets.for_env(
                spec.name,
                env_id,
                variant=alias if alias != agent else None,
                families=spec.preset_families,
            )
    if picked is not None:  # under the config file: a run's own config.toml wins
        file_run = {**{k: v for k, v in picked.run.items() if k != "agent"}, **file_run}
        file_agent = {**picked.agent_config, **file_agent}
    file_run["preset"] = picked.name if picked is not None else presets.NONE
    given: dict[str, Any] = {
        "agent": agent, "env": env, "steps": steps, "seed": seed, "episodes": episodes,
        "num_envs": num_envs, "eval_every": eval_every, "eval_episodes": eval_episodes,
        "checkpoint_every": checkpoint_every,
    }  # fmt: skip
    if env_kwargs:
        from rlkit.config.run import parse_env_kwargs

        asked = env_kwargs if isinstance(env_kwargs, Mapping) else parse_env_kwargs(env_kwargs)
        file_kwargs = file_run.get("env_kwargs", {})
        given["env_kwargs"] = {**(file_kwargs if isinstance(file_kwargs, dict) else {}), **asked}
    if agent is None and "agent" not in file_run:
        raise UsageError(
            "missing AGENT: e.g. 'rlkit train dqn --env CartPole-v1' (or --config FILE)"
        )
    settings = resolve_run_config(file_run, given)
    spec = agent_spec(settings.agent)
    env_id = settings.env or spec.default_env
    env_defaults = spec.env_defaults.get(env_id, {})
    steps_given = bool(settings.steps) or "steps" in env_defaults  # (not the agent's default)
    steps = settings.steps or env_defaults.get("steps", spec.default_steps)
    defaults = {"agent": spec.name, "env": env_id, "steps": steps}
    if eval_every is None and "eval_every" not in file_run:
        defaults["eval_every"] = spec.default_eval_every
    if episodes is None and "episodes" not in file_run:
        defaults["episodes"] = env_defaults.get("episodes", spec.default_episodes)
    settings = resolve_run_config(file_run, given | defaults)
    if not isinstance(overrides, Mapping):
        overrides = parse_overrides(overrides)
    if agent is not None and alias != agent:
        overrides = alias_overrides(str(alias), agent, alias_settings, overrides)
    layers = [picked.agent_config if picked is not None else {}, own_agent, overrides]
    pinned = steps_over_fractions(layers, spec.config_class)  # "--set eps_anneal_steps" wins
    agent_config = make_config(spec.config_class, {**file_agent, **overrides, **pinned})
    # a fraction is of the step budget, even where episodes may end the run sooner (as
    # rl-zoo's are of n_timesteps); with episodes and no step count given, it is refused
    check_fraction_base(agent_config, settings.episodes, steps_given)
    agent_config = resolve_fractions(agent_config, settings.steps)
    unused = getattr(agent_config, "unused_settings", lambda: None)()
    if unused:  # a new run that sets what its agent never reads
        raise UsageError(unused)
    fits = getattr(agent_config, "check_num_envs", None)  # (PPO: whole minibatches)
    if fits is not None and (problem := fits(settings.num_envs)):
        raise UsageError(problem)
    check_env(settings, spec)  # last: the only checks that make something
    check_network_memory(agent_config, *_spaces(settings.env, settings.env_kwargs), spec.name)
    return RunPlan(settings, agent_config, picked, picked is not None and not chosen)


def alias_overrides(alias: str, agent: str, settings: Mapping[str, Any],
                    overrides: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
    """``overrides`` with the keys an alias sets; UsageError where ``--set`` contradicts one
    (``rlkit train td3 --set td3=false``)."""
    from rlkit.config.options import parse_value

    for key, value in settings.items():
        if key in overrides and parse_value(str(overrides[key]).lower(), type(value), key) != value:
            raise UsageError(
                f"rlkit train {alias} is {agent} with {key} = {str(value).lower()}: for "
                f"{key}={overrides[key]} use rlkit train {agent}"
            )
    return {**overrides, **settings}


#: (env id, its arguments, its registration) -> (observation space, action space): what
#: :func:`check_env` found, so that a sweep's or a tune's many plans make an env once
_SPACES: dict[tuple[str, str, int | None], tuple[Any, Any]] = {}


def check_env(settings: RunConfig, spec: AgentSpec) -> None:
    """What :func:`make_envs` checks of a run's environment, for :func:`plan` (one check,
    whichever door a run comes in by: ``rlkit train``, sweeps, tunes, Python): UsageError
    for an unknown id, an id whose package is missing, arguments its constructor refuses,
    spaces the agent cannot handle (``spec.check_spaces``), or ``num_envs`` for an agent
    that learns from whole episodes.

    The environment is made (and closed) once per id, arguments and registration in a
    process. (gymnasium is imported here; TensorFlow only for rlkit's TensorFlow
    environments, ``rlkit/...``, whose making needs it.)"""
    spec.check_spaces(*_spaces(settings.env, settings.env_kwargs), settings.env)
    _check_num_envs(settings, spec)


def _check_num_envs(settings: RunConfig, spec: AgentSpec) -> None:
    """UsageError for ``num_envs > 1`` with an agent that cannot train on a vector env."""
    if settings.num_envs > 1 and not spec.vector_envs:
        raise UsageError(f"{spec.name} learns on-policy from whole episodes: drop --num-envs")


def _spaces(env_id: str, env_kwargs: Mapping[str, Any]) -> tuple[Any, Any]:
    """``(observation space, action space)`` of ``env_id`` made with ``env_kwargs``."""
    import gymnasium as gym

    from rlkit.envs.make import make_env

    registered = gym.registry.get(env_id.rpartition(":")[2])
    key = (env_id, repr(sorted(env_kwargs.items())), None if registered is None else id(registered))
    if key not in _SPACES:
        env = make_env(env_id, **env_kwargs)
        try:
            _SPACES[key] = (env.observation_space, env.action_space)
        finally:
            env.close()
    return _SPACES[key]


def make_envs(settings: RunConfig, spec: AgentSpec):
    """The training env of a run's ``settings`` (a vector env with ``num_envs > 1``), checked
    against the agent; UsageError for an unknown id or spaces the agent cannot handle."""
    from rlkit.envs.make import make_env, make_vector_env

    env = make_env(settings.env, **settings.env_kwargs)
    spec.check_spaces(env.observation_space, env.action_space, settings.env)
    if settings.num_envs == 1:
        return env
    env.close()
    _check_num_envs(settings, spec)
    return make_vector_env(settings.env, settings.num_envs, **settings.env_kwargs)
