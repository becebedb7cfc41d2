"""The one shallow base class agents share: construction, seeding, save and load."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from rlkit.config import options as configs
from rlkit.core.errors import UsageError
from rlkit.core.files import atomic_write_bytes
from rlkit.core.spaces import space_from_dict, space_to_dict

AGENT_FILE = "agent.json"
WEIGHTS_FILE = "weights.npz"


class Agent:
    """Base of every rlkit agent.

    Subclasses set ``name`` and ``config_class``, check their spaces in
    ``check_spaces`` and implement ``act``, ``observe``, ``update`` and
    ``checkpoint_variables``.

    ``config`` is the agent's config dataclass (e.g. :class:`~rlkit.agents.dqn_config.
    DQNConfig`) or a mapping of its keys (``{"gamma": 0.9}``); keyword arguments override
    single keys. Anything else, an unknown key or a bad value raises ``UsageError``.
    """

    name: ClassVar[str] = "agent"
    config_class: ClassVar[type]
    #: whether it learns from a gymnasium VectorEnv (``observe_batch``: N steps at once)
    vector_envs: ClassVar[bool] = False

    def __init__(self, observation_space, action_space, config=None, seed: int = 0, **overrides):
        self.check_spaces(observation_space, action_space)
        self.observation_space = observation_space
        self.action_space = action_space
        self.config = configs.make_config(self.config_class, overrides, base=config)
        self.seed = int(seed)
        self.num_steps = 0  # environment steps observed

    @classmethod
    def check_spaces(cls, observation_space, action_space, env_id: str = "the environment") -> None:
        """Raise :class:`UsageError` when the agent cannot handle these spaces."""

    @classmethod
    def from_env(cls, env, seed: int = 0, config=None, **overrides):
        """Build an agent for ``env``'s spaces; keyword arguments override config keys."""
        env_id = env.spec.id if getattr(env, "spec", None) is not None else "the environment"
        # a gymnasium VectorEnv describes one sub-environment in single_*_space
        obs_space = getattr(env, "single_observation_space", env.observation_space)
        action_space = getattr(env, "single_action_space", env.action_space)
        cls.check_spaces(obs_space, action_space, env_id)
        return cls(obs_space, action_space, config=config, seed=seed, **overrides)

    # -- the interaction protocol ------------------------------------------------------------
    def act(self, obs, explore: bool = True):
        raise NotImplementedError

    def observe(self, obs, action, reward, next_obs, terminated, truncated) -> None:
        raise NotImplementedError

    def update(self) -> dict[str, float] | None:
        raise NotImplementedError

    def _store(self, memory, obs, action, reward, next_obs, terminated, truncated) -> None:
        """Write one encoded transition to ``memory`` and count the step."""
        memory.add(self.encode(obs), action, reward, self.encode(next_obs), terminated, truncated)
        self.num_steps += 1

    def replay_memory(self):
        """The agent's replay memory (None for an agent without one)."""
        return None

    def checkpoint_variables(self) -> dict[str, list]:
        """``{group: [variables]}`` saved and restored by :meth:`save` / :meth:`load`.

        Every network the agent has, target networks and EMA shadows included.
        """
        raise NotImplementedError

    # -- what a full checkpoint (exact resume) holds besides the weights ---------------------
    def state(self) -> dict[str, dict[str, Any]]:
        """The live state a checkpoint keeps besides the weights, as one tree.

        ``{"counters": {name: int}, "rngs": {name: np.random.Generator},
        "optimizer": {name: Keras optimizer}, "memory": {name: ReplayMemory},
        "extra": {name: JSON value}}``. :mod:`rlkit.run.checkpoint` writes it (arrays to
        ``state.npz``, the rest to ``state.json``) and hands the saved values back to
        :meth:`load_state`.
        """
        return {
            "counters": {"num_steps": self.num_steps},
            "rngs": {},
            "optimizer": {},
            "memory": {},
            "extra": {},
        }

    def load_state(self, saved: dict[str, dict[str, Any]]) -> None:
        """Restore what :meth:`state` described from its saved values, in place.

        ``saved`` has the same keys as :meth:`state` with plain values: counters as ints,
        generator states as dicts, each optimizer's variables as a list of arrays, each
        memory's ``state_dict``, the extra values. Raises ValueError on a mismatch.
        """
        live = self.state()
        for name, optimizer in live["optimizer"].items():
            values = saved["optimizer"][name]
            if len(values) != len(optimizer.variables):
                raise ValueError(f"optimizer {name} has {len(values)} slots")
            for i, (variable, value) in enumerate(zip(optimizer.variables, values, strict=True)):
                if tuple(value.shape) != tuple(variable.shape):
                    raise ValueError(f"optimizer {name} slot {i} has shape {value.shape}")
                variable.assign(value)
        for name, memory in live["memory"].items():
            memory.load_state_dict(saved["memory"][name])
        for name, rng in live["rngs"].items():
            if name in saved["rngs"]:  # (a generator added since the checkpoint starts fresh)
                rng.bit_generator.state = saved["rngs"][name]
        self.load_scalars(saved["counters"], saved.get("extra", {}))
        self.after_restore()

    def load_scalars(self, counters: dict[str, int], extra: dict[str, Any]) -> None:
        """Take back the counters and extra values of :meth:`state`."""
        self.num_steps = int(counters["num_steps"])

    @property
    def evaluation_epsilon(self) -> float:
        """The share of random actions ``act(obs, explore=False)`` takes (0: greedy)."""
        return 0.0

    def diagnostics(self) -> dict[str, float]:
        """Scalars worth logging now (e.g. ``{"epsilon": 0.1}``)."""
        return {}

    def report(self, env) -> str | None:
        """Optional lines the CLI prints after training (e.g. a bandit's arm probabilities)."""
        return None

    # -- persistence -------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write ``agent.json`` (type, config, spaces) and ``weights.npz`` into folder ``path``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        arrays = {
            f"{group}/{i}": np.asarray(v.numpy())
            for group, variables in self.checkpoint_variables().items()
            for i, v in enumerate(variables)
        }
        tmp = path / f".{WEIGHTS_FILE}.tmp.npz"
        np.savez(tmp, **arrays)
        os.replace(tmp, path / WEIGHTS_FILE)
        meta = {
            "agent": self.name,
            "config": configs.to_dict(self.config),
            "observation_space": space_to_dict(self.observation_space),
            "action_space": space_to_dict(self.action_space),
            "seed": self.seed,
            "num_steps": self.num_steps,
        }
        atomic_write_bytes(path / AGENT_FILE, json.dumps(meta, indent=2).encode())
        return path

    @classmethod
    def load(cls, path: str | os.PathLike, **networks):
        """Rebuild an agent saved by :meth:`save`; a UsageError if it is missing or corrupt.

        ``networks``: networks of your own given as Python objects when the agent was made
        (e.g. ``q_network=build``): a builder is not saved, so it is given again here (one
        named in the config as ``"module:function"`` comes back by itself)."""
        path = Path(path)
        meta_path, weights_path = path / AGENT_FILE, path / WEIGHTS_FILE
        if not meta_path.is_file() or not weights_path.is_file():
            raise UsageError(f"no saved agent in {path}: expected {AGENT_FILE} and {WEIGHTS_FILE}")
        try:
            meta = json.loads(meta_path.read_text())
            agent_name = meta["agent"]
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"corrupt agent file {meta_path}: {exc}") from None
        if cls is not Agent and agent_name != cls.name:
            raise UsageError(f"{path} holds a {agent_name} agent, not {cls.name}")
        agent_class = cls if cls is not Agent else _agent_class(agent_name)
        try:
            agent = agent_class(
                space_from_dict(meta["observation_space"]),
                space_from_dict(meta["action_space"]),
                seed=meta["seed"],
                **{**meta["config"], **networks},
            )
            agent.num_steps = int(meta.get("num_steps", 0))
            with np.load(weights_path) as arrays:
                agent._restore(dict(arrays))
        except UsageError:
            raise
        except Exception as exc:  # zip, shape and key errors all mean the same to the user
            raise UsageError(f"corrupt checkpoint in {path}: {type(exc).__name__}: {exc}") from None
        return agent

    def _restore(self, arrays: dict[str, np.ndarray]) -> None:
        for group, variables in self.checkpoint_variables().items():
            for i, v in enumerate(variables):
                value = arrays[f"{group}/{i}"]
                if tuple(value.shape) != tuple(v.shape):
                    raise ValueError(
                        f"{group}/{i} has shape {value.shape}, expected {tuple(v.shape)}"
                    )
                v.assign(value)
        self.after_restore()

    def after_restore(self) -> None:
        """Hook run after weights are loaded (e.g. refresh a numpy acting copy)."""


def _agent_class(name: str) -> type[Agent]:
    from rlkit.agents.registry import agent_spec

    return agent_spec(name).load_class()


def is_saved_agent(path: str | os.PathLike) -> bool:
    """Does ``path`` hold an agent written by :meth:`Agent.save`?"""
    return (Path(path) / AGENT_FILE).is_file()


def load(path: str | os.PathLike, **networks) -> Any:
    """Load any saved rlkit agent, whatever its type (``networks``: see :meth:`Agent.load`)."""
    return Agent.load(path, **networks)
