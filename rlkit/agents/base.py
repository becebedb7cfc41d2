"""The one shallow base class agents share: construction, seeding, save and load."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rlkit.agents.keras_files import KERAS_SUFFIX, save_keras_model, saved_keras_models
from rlkit.config import options as configs
from rlkit.config.memory import check_network_memory
from rlkit.core.errors import UsageError
from rlkit.core.files import atomic_write_bytes
from rlkit.core.spaces import space_from_dict, space_to_dict

if TYPE_CHECKING:
    from rlkit.core.spaces import Encoder, ObservationFormat
    from rlkit.replay.memory import ReplayMemory

AGENT_FILE = "agent.json"
WEIGHTS_FILE = "weights.npz"


class Agent:
    """Base of every rlkit agent.

    Subclasses set ``name`` and ``config_class``, check their spaces in
    ``check_spaces`` and implement ``act``, ``update``, ``checkpoint_variables`` and the
    experience protocol's parts (``experience_memory``, ``obs_format``/``encode``, and
    optionally ``stored_step(s)`` and ``record_episode_ends``).

    ``config`` is the agent's config dataclass (e.g. DQN's ``DQNConfig``) or a mapping of
    its keys (``{"gamma": 0.9}``); keyword arguments override single keys. Anything else,
    an unknown key or a bad value raises ``UsageError``.
    """

    name: ClassVar[str] = "agent"
    config_class: ClassVar[type]
    #: whether it learns from a gymnasium VectorEnv (``observe_batch``: N steps at once)
    vector_envs: ClassVar[bool] = False
    #: the experience protocol's observation format and encoder (each subclass sets them)
    obs_format: ObservationFormat
    encode: Encoder

    def __init__(self, observation_space, action_space, config=None, seed: int = 0, **overrides):
        self.check_spaces(observation_space, action_space)
        configs.check_python_arguments(self.config_class, seed, overrides)
        self.observation_space = observation_space
        self.action_space = action_space
        self.config = configs.make_config(self.config_class, overrides, base=config)
        # networks that cannot fit here: one line, not TensorFlow's ResourceExhaustedError
        check_network_memory(self.config, observation_space, action_space, self.name)
        self.seed = int(seed)
        self.num_steps = 0  # environment steps observed

    @classmethod
    def check_spaces(cls, observation_space, action_space, env_id: str = "the environment") -> None:
        """Raise :class:`UsageError` when the agent cannot handle these spaces."""

    @classmethod
    def from_env(cls, env, seed: int = 0, config=None, **overrides):
        """An agent for ``env``'s spaces (an environment or its id); keywords override keys."""
        if isinstance(env, str):
            from rlkit.envs.make import make_env

            env = make_env(env)
        if not any(hasattr(env, f"{kind}observation_space") for kind in ("", "single_")):
            shown = repr(env) if len(repr(env)) <= 40 else f"a {type(env).__name__}"
            raise UsageError(
                f"env must be a gymnasium environment or its id (e.g. 'CartPole-v1'), got {shown}"
            )
        env_id = env.spec.id if getattr(env, "spec", None) is not None else "the environment"
        # a gymnasium VectorEnv describes one sub-environment in single_*_space
        obs_space = getattr(env, "single_observation_space", env.observation_space)
        action_space = getattr(env, "single_action_space", env.action_space)
        cls.check_spaces(obs_space, action_space, env_id)
        return cls(obs_space, action_space, config=config, seed=seed, **overrides)

    # -- the interaction protocol ------------------------------------------------------------
    def act(self, obs, explore: bool = True):
        raise NotImplementedError

    def update(self) -> dict[str, float] | None:
        raise NotImplementedError

    def unfit_observation(self, obs, error: Exception) -> Exception:
        """What ``act`` raises when ``obs`` failed: a UsageError in one line where its shape
        does not fit the observation space (the error itself where the shape fits)."""
        expected = self.observation_space.shape
        if expected is None:  # a Dict or Tuple space
            kind = type(self.observation_space).__name__
            return UsageError(
                f"this observation does not fit the agent's {kind} observation space ({error}): "
                "give one of its structure, or a batch of them"
            )
        expected, shape = tuple(expected), np.shape(obs)
        if shape == expected or shape[1:] == expected:
            return error
        batch = ", ".join(map(str, expected))
        return UsageError(
            f"an observation of shape {shape} does not fit this agent's observation space: "
            f"expected shape {expected} or a batch [N, {batch}]"
        )

    # -- the experience protocol: streams of episodes -----------------------------------------
    # Each environment is a stream of experience. An episode of a stream begins with
    # observe_first(obs); each step then brings observe(action, reward, next_obs, terminated,
    # truncated), whose next_obs is the stream's next observation unless the episode ended.
    # A subclass gives its store (experience_memory: a ReplayMemory), obs_format and encode,
    # and what it keeps of a step (stored_step / stored_steps, record_episode_ends).
    def observe_first(self, obs, streams: Iterable[int] | None = None) -> None:
        """Episodes begin at ``obs``: one observation (the one environment: stream 0), or a
        batch ``[N, ...]``: a vector env's sub-environments (streams ``0..N-1``), or, with
        ``streams``, row ``j`` beginning stream ``streams[j]`` (those a vector env reset)."""
        memory, x = self.experience_memory(), self.encode(obs)
        rows = self.obs_format.batch_rows(x)
        if rows is None:
            memory.start(0, x)
        else:
            self._check_batch()
            memory.start_batch(x, range(rows) if streams is None else list(streams))

    def observe(self, *args, **kwargs) -> None:
        """What came of the action(s), in one of two forms.

        ``observe(action, reward, next_obs, terminated, truncated)`` (:meth:`observe_next`)
        continues the episodes :meth:`observe_first` began: one environment's values, or a
        vector env's ``[N]`` arrays (``next_obs`` of an episode that ended is its last
        observation, a vector env's ``final_obs``). ``observe(obs, action, reward, next_obs,
        terminated, truncated)`` is a transition given whole, for a loop of one's own
        (:meth:`observe_transition`).
        """
        given = len(args) + len(kwargs)
        if given == 6:
            self.observe_transition(*args, **kwargs)
        elif given == 5:
            self.observe_next(*args, **kwargs)
        else:
            raise TypeError(
                f"observe takes (action, reward, next_obs, terminated, truncated) after "
                f"observe_first, or (obs, action, reward, next_obs, terminated, truncated); "
                f"got {given} values"
            )

    def observe_next(self, action, reward, next_obs, terminated, truncated) -> None:
        """One step of each stream: a scalar ``reward`` for the one environment, ``[N]``
        rewards (and actions, next observations, flags) for a vector env's ``N``."""
        memory, next_x = self.experience_memory(), self.encode(next_obs)
        if isinstance(reward, float | int | np.generic) or np.ndim(reward) == 0:
            action, reward = self.stored_step(action, reward)
            memory.append(0, action, reward, next_x, terminated, truncated)
            self.num_steps += 1
            if terminated or truncated:
                self.record_episode_ends(None)
            return
        self._check_batch()
        actions, rewards = self.stored_steps(action, reward)
        memory.append_batch(actions, rewards, next_x, terminated, truncated)
        self.num_steps += len(rewards)
        ended = np.flatnonzero(np.logical_or(terminated, truncated))
        if len(ended):
            self.record_episode_ends(ended)

    def observe_transition(self, obs, action, reward, next_obs, terminated, truncated) -> None:
        """A transition given whole (one, or ``N`` with leading axis ``N``): where ``obs`` is
        bit for bit the stream's current observation the episode goes on, else one begins
        at ``obs``; then :meth:`observe_next`. No need for :meth:`observe_first`."""
        memory, x = self.experience_memory(), self.encode(obs)
        if self.obs_format.batch_rows(x) is None:
            memory.continue_or_start(0, x)
        else:
            self._check_batch()
            memory.continue_or_start_batch(x)
        self.observe_next(action, reward, next_obs, terminated, truncated)

    def observe_batch(self, obs, actions, rewards, next_obs, terminated, truncated) -> None:
        """:meth:`observe_transition` for ``N`` transitions (leading axis ``N``)."""
        self.observe_transition(obs, actions, rewards, next_obs, terminated, truncated)

    def _check_batch(self) -> None:
        if not self.vector_envs:
            raise UsageError(
                f"{self.name} learns from one environment at a time: observe one "
                "observation, action and reward, not a batch"
            )

    def streams_to_start(self, num_streams: int = 1) -> list[int]:
        """Which of streams ``0..num_streams-1`` have no episode in progress: those
        :meth:`observe_first` is owed (all of them at first)."""
        memory = self.experience_memory()
        return [s for s in range(num_streams) if not memory.in_progress(s)]

    def experience_memory(self) -> ReplayMemory:
        """The store the protocol writes to."""
        raise NotImplementedError

    def stored_step(self, action, reward) -> tuple[Any, Any]:
        """One environment's ``(action, reward)`` as the memory stores them."""
        return action, reward

    def stored_steps(self, actions, rewards) -> tuple[np.ndarray, np.ndarray]:
        """``[N]`` actions and rewards as the memory stores them."""
        return np.asarray(actions), np.asarray(rewards, np.float32)

    def record_episode_ends(self, indices: np.ndarray | None) -> None:
        """Streams ``indices`` (None: the one environment) ended an episode."""

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
        arrays: dict[str, Any] = {  # (keyword arguments of np.savez)
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
        for key, model in self.python_networks().items():
            save_keras_model(model, path / f"{key}{KERAS_SUFFIX}")
        atomic_write_bytes(path / AGENT_FILE, json.dumps(meta, indent=2).encode())
        return path

    def python_networks(self) -> dict[str, Any]:
        """``{config key: keras.Model}``: the networks given as Python objects (the config
        records them as ``"<python object>"``); :meth:`save` keeps each in Keras' own format
        where Keras can, so that :meth:`load` needs no builder for them."""
        return {}

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
        networks = {**saved_keras_models(path, meta.get("config", {}), networks), **networks}
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
            if networks and isinstance(exc, ValueError | KeyError):
                given = ", ".join(f"{key}=" for key in networks)
                raise UsageError(
                    f"the network given ({given}) does not fit the weights saved in {path} "
                    f"({exc}): give the one the agent was trained with"
                ) from None
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

    def export(self, path: str | os.PathLike, format: str = "saved_model", **options) -> Any:
        """The greedy policy as a SavedModel (or ``format="tflite"``) in the new folder ``path``,
        checked to act as this agent: :func:`rlkit.exporting.writer.export`, the one entry."""
        from rlkit.exporting.writer import export

        return export(self, path, format, **options)

    @staticmethod
    def registry() -> Any:
        """The registry (``rlkit.agents.AGENTS``), for the rooms below that read it (export)."""
        import rlkit.agents  # (through the package's face, at call time)

        return rlkit.agents.AGENTS


def _agent_class(name: str) -> type[Agent]:
    """The class of the agent called ``name``, through the package's face (the registry lists
    the family folders, which import this module: it names no sibling above it)."""
    import rlkit.agents

    return rlkit.agents.agent_spec(name).load_class()


def is_saved_agent(path: str | os.PathLike) -> bool:
    """Does ``path`` hold an agent written by :meth:`Agent.save`?"""
    return (Path(path) / AGENT_FILE).is_file()


def load(path: str | os.PathLike, **networks) -> Any:
    """Load any saved rlkit agent, whatever its type (``networks``: see :meth:`Agent.load`)."""
    return Agent.load(path, **networks)
