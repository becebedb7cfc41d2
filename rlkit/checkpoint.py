"""Full checkpoints for exact resume: weights, optimizer slots, replay, RNGs, loop state.

A checkpoint is a folder ``step-<N>/`` written under a temporary name and renamed
into place, so a crash never leaves a half-written one; ``latest`` (a small text
file, also replaced atomically) names the newest. Older checkpoints beyond
``keep`` are removed only after the new one is complete.
"""

from __future__ import annotations

import json
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from rlkit.agents.base import Agent, atomic_write_bytes
from rlkit.errors import UsageError

LATEST = "latest"
STATE_FILE = "state.json"
ARRAYS_FILE = "state.npz"
ENV_FILE = "env.pkl"


def _rng_state(rng: np.random.Generator) -> dict:
    return rng.bit_generator.state


def save_checkpoint(
    root: Path,
    agent: Agent,
    loop_state: dict[str, Any],
    env: Any = None,
    keep: int = 2,
) -> Path:
    """Write a checkpoint of ``agent`` and the training ``loop_state`` under ``root``.

    ``loop_state`` must be JSON-serialisable. ``env`` is pickled when possible so
    that an episode in progress continues exactly on resume. Returns the folder.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    name = f"step-{agent.num_steps:010d}"
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
    try:
        agent.save(tmp / "model")
        arrays: dict[str, np.ndarray] = {}
        for opt_name, optimizer in agent.optimizers().items():
            for i, v in enumerate(optimizer.variables):
                arrays[f"optimizer/{opt_name}/{i}"] = np.asarray(v.numpy())
        for mem_name, memory in agent.memories().items():
            for key, value in memory.state_dict().items():
                arrays[f"memory/{mem_name}/{key}"] = value
        np.savez(tmp / ARRAYS_FILE, **arrays)
        state = {
            "agent": agent.name,
            "counters": {k: int(getattr(agent, k)) for k in agent.counter_names},
            "rngs": {k: _rng_state(rng) for k, rng in agent.rngs().items()},
            "extra": agent.extra_state(),
            "loop": loop_state,
        }
        (tmp / STATE_FILE).write_text(json.dumps(state))
        if env is not None:
            try:
                (tmp / ENV_FILE).write_bytes(pickle.dumps(_picklable_env(env)))
            except Exception:  # an env that cannot be pickled restarts its episode on resume
                pass
        final = root / name
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    atomic_write_bytes(root / LATEST, name.encode())
    _prune(root, keep)
    return final


class _VectorEnvState:
    """A SyncVectorEnv's sub-environments (the vector env itself holds unpicklable closures)."""

    def __init__(self, envs: list) -> None:
        self.envs = envs

    def rebuild(self):
        import gymnasium as gym

        return gym.vector.SyncVectorEnv(
            [lambda e=e: e for e in self.envs],
            autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
        )


def _picklable_env(env):
    if hasattr(env, "num_envs") and hasattr(env, "envs"):
        return _VectorEnvState(list(env.envs))
    return env


def _prune(root: Path, keep: int) -> None:
    done = sorted(p for p in root.glob("step-*") if p.is_dir())
    for old in done[:-keep] if keep > 0 else []:
        shutil.rmtree(old, ignore_errors=True)


def latest_checkpoint(root: Path) -> Path:
    """The newest complete checkpoint under ``root``; UsageError when there is none."""
    root = Path(root)
    pointer = root / LATEST
    if pointer.is_file():
        try:
            candidate = root / pointer.read_text().strip()
        except (OSError, UnicodeDecodeError, ValueError):
            candidate = None  # a damaged pointer: fall back to the newest folder
        if candidate is not None and (candidate / STATE_FILE).is_file():
            return candidate
    done = sorted(p for p in root.glob("step-*") if (p / STATE_FILE).is_file())
    if not done:
        raise UsageError(f"no checkpoint in {root}; nothing to resume")
    return done[-1]


def read_checkpoint_summary(path: Path) -> dict[str, Any]:
    """``{"agent", "step", "episodes"}`` of a checkpoint, read without loading it."""
    path = Path(path)
    try:
        state = json.loads((path / STATE_FILE).read_text())
        return {
            "agent": str(state["agent"]),
            "step": int(state["loop"]["state"]["step"]),
            "episodes": int(state["loop"]["state"]["episodes"]),
        }
    except FileNotFoundError:
        raise UsageError(f"no checkpoint in {path}: {STATE_FILE} is missing") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"corrupt checkpoint {path}: {STATE_FILE}: {exc!r}") from None


def load_checkpoint(path: Path) -> tuple[Agent, dict[str, Any], Any]:
    """Rebuild ``(agent, loop_state, env or None)`` from a checkpoint folder.

    Missing, empty or corrupt files raise UsageError naming the folder.
    """
    path = Path(path)
    try:
        state = json.loads((path / STATE_FILE).read_text())
        loop = state["loop"]
    except FileNotFoundError:
        raise UsageError(f"no checkpoint in {path}: {STATE_FILE} is missing") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"corrupt checkpoint {path}: {STATE_FILE}: {exc!r}") from None
    from rlkit.agents.base import load

    agent = load(path / "model")
    try:
        with np.load(path / ARRAYS_FILE) as data:
            arrays = dict(data)
        for opt_name, optimizer in agent.optimizers().items():
            for i, v in enumerate(optimizer.variables):
                value = arrays[f"optimizer/{opt_name}/{i}"]
                if tuple(value.shape) != tuple(v.shape):
                    raise ValueError(f"optimizer {opt_name} slot {i} has shape {value.shape}")
                v.assign(value)
        for mem_name, memory in agent.memories().items():
            prefix = f"memory/{mem_name}/"
            memory.load_state_dict(
                {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
            )
        for key, value in state["counters"].items():
            setattr(agent, key, int(value))
        for key, rng in agent.rngs().items():
            rng.bit_generator.state = state["rngs"][key]
        agent.load_extra_state(state.get("extra", {}))
        agent.after_restore()
        env = None
        if (path / ENV_FILE).is_file():
            env = pickle.loads((path / ENV_FILE).read_bytes())
            if isinstance(env, _VectorEnvState):
                env = env.rebuild()
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"corrupt checkpoint {path}: {type(exc).__name__}: {exc}") from None
    return agent, loop, env
