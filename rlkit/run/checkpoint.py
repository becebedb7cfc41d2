"""Full checkpoints for exact resume: weights, optimizer slots, replay, RNGs, loop state.

A checkpoint is a folder the run folder names (:class:`~rlkit.run.folder.RunFolder`
keeps the index: which exist, which is the latest, which are pruned), written under a
temporary name and renamed into place, so a crash never leaves a half-written one.
Older checkpoints beyond ``keep`` are removed only after the new one is complete.
This module owns what is inside one: the agent's model, ``state.json``, ``state.npz``,
the pickled environment. Large arrays (a replay's
frames) are saved as blocks the checkpoints share, each written once
(:mod:`rlkit.run.checkpoint_blocks`): a checkpoint writes what changed since the last one.
"""

from __future__ import annotations

import errno
import json
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from rlkit.agents.base import Agent
from rlkit.core.errors import UsageError
from rlkit.core.files import make_temp_folder
from rlkit.run.checkpoint_blocks import (
    BLOCKS_DIR,
    MANIFEST_FILE,
    load_blocks,
    remove_unlisted_blocks,
    save_blocks,
    split_large,
)
from rlkit.run.folder import RunFolder
from rlkit.run.migrate import RUN_FORMAT, load_pickle, migrate

MODEL_DIR = "model"
STATE_FILE = "state.json"
ARRAYS_FILE = "state.npz"
ENV_FILE = "env.pkl"


def flatten_state(tree: dict[str, dict[str, Any]]) -> tuple[dict[str, np.ndarray], dict]:
    """Split an agent's :meth:`~rlkit.agents.base.Agent.state` into ``state.npz`` arrays
    (``optimizer/<name>/<i>``, ``memory/<name>/<key>``) and a JSON-able dict (``counters``,
    ``rngs``: generator states, ``extra``)."""
    arrays: dict[str, np.ndarray] = {}
    for name, optimizer in tree["optimizer"].items():
        for i, v in enumerate(optimizer.variables):
            arrays[f"optimizer/{name}/{i}"] = np.asarray(v.numpy())
    for name, memory in tree["memory"].items():
        for key, value in memory.state_dict().items():
            arrays[f"memory/{name}/{key}"] = value
    scalars = {
        "counters": {k: int(v) for k, v in tree["counters"].items()},
        "rngs": {k: rng.bit_generator.state for k, rng in tree["rngs"].items()},
        "extra": tree["extra"],
    }
    return arrays, scalars


def unflatten_state(arrays: dict[str, np.ndarray], scalars: dict) -> dict[str, dict[str, Any]]:
    """The saved values of :func:`flatten_state`'s output, as the tree ``load_state`` takes."""
    tree: dict[str, dict[str, Any]] = {"optimizer": {}, "memory": {}}
    for key, value in arrays.items():
        kind, name, rest = key.split("/", 2)
        if kind == "optimizer":
            tree["optimizer"].setdefault(name, {})[int(rest)] = value
        elif kind == "memory":
            tree["memory"].setdefault(name, {})[rest] = value
    tree["optimizer"] = {
        name: [slots[i] for i in range(len(slots))] for name, slots in tree["optimizer"].items()
    }
    tree["counters"] = scalars["counters"]
    tree["rngs"] = scalars["rngs"]
    tree["extra"] = scalars.get("extra", {})
    return tree


class CheckpointWriteError(RuntimeError):
    """A checkpoint could not be written (no space left, a file-size limit, a quota): the
    run stops; the checkpoints already complete are untouched."""


#: errors of a full disk, a file-size limit (RLIMIT_FSIZE) and a quota
NO_SPACE = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def save_checkpoint(
    folder: RunFolder,
    agent: Agent,
    loop_state: dict[str, Any],
    env: Any = None,
    keep: int = 2,
) -> Path:
    """Write a checkpoint of ``agent`` and the training ``loop_state`` into run ``folder``.

    ``loop_state`` must be JSON-serialisable. ``env`` is pickled when possible so
    that an episode in progress continues exactly on resume. Returns the checkpoint.
    """
    root = folder.checkpoints_dir
    root.mkdir(parents=True, exist_ok=True)
    name = folder.checkpoint_name(agent.num_steps)
    arrays, scalars = flatten_state(agent.state())
    tmp = make_temp_folder(f".{name}.", root)
    try:
        agent.save(tmp / MODEL_DIR)
        small, large = split_large(arrays)
        # (mypy fears **small fills newer numpy's allow_pickle keyword: no state key has that
        # name; passing allow_pickle=True instead would save an array of it on older numpy)
        np.savez(tmp / ARRAYS_FILE, **small)  # type: ignore[arg-type]
        if large:
            manifest = save_blocks(large, root / BLOCKS_DIR)
            (tmp / MANIFEST_FILE).write_text(json.dumps(manifest))
        state = {"format": RUN_FORMAT, "agent": agent.name, **scalars, "loop": loop_state}
        (tmp / STATE_FILE).write_text(json.dumps(state))
        if env is not None and state_survives_pickling(env):
            try:
                (tmp / ENV_FILE).write_bytes(pickle.dumps(_picklable_env(env)))
            except Exception:  # an env that cannot be pickled restarts its episode on resume
                pass
        final = root / name
        if final.exists():  # the same step saved again: the old one goes only once replaced
            trash = make_temp_folder(f".{name}.old.", root)
            final.rename(trash / name)
            tmp.rename(final)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            tmp.rename(final)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in NO_SPACE:
            raise _no_space(folder, exc, arrays, agent) from None
        raise
    folder.mark_latest(final)
    complete = [p for p in folder.checkpoint_dirs() if (p / STATE_FILE).is_file()]
    remove_unlisted_blocks(root, folder.prune_checkpoints(keep, complete))
    return final


def _no_space(folder: RunFolder, exc: OSError, arrays: dict, agent: Agent) -> CheckpointWriteError:
    """One line: which folder, how much a checkpoint takes, what is still there."""
    weights = sum(int(np.prod(v.shape)) * 4 for vs in agent.checkpoint_variables().values()
                  for v in vs)  # fmt: skip
    need = weights + sum(a.nbytes for a in arrays.values())
    size = next(f"{need / scale:.1f} {unit}" for scale, unit in ((1e9, "GB"), (1e6, "MB"),
                (1e3, "kB"), (1, "bytes")) if need >= scale or unit == "bytes")  # fmt: skip
    try:
        kept = f"the last checkpoint ({latest_checkpoint(folder).name}) is intact"
    except UsageError:
        kept = "no checkpoint was complete before it"
    return CheckpointWriteError(
        f"cannot write a checkpoint in {folder.checkpoints_dir}: {exc.strerror} (a checkpoint "
        f"takes up to {size}); {kept}: free space, then rlkit resume {folder.path}"
    )


def _returning(env: gym.Env) -> Callable[[], gym.Env]:
    """An env maker that gives back ``env`` itself (a sub-environment kept whole)."""
    return lambda: env


class _VectorEnvState:
    """A SyncVectorEnv's sub-environments (the vector env itself holds unpicklable closures)."""

    def __init__(self, envs: list) -> None:
        self.envs = envs

    def rebuild(self):
        return gym.vector.SyncVectorEnv(
            [_returning(e) for e in self.envs],
            autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
        )


def state_survives_pickling(env) -> bool:
    """Does a pickle of ``env`` (a vector env: of each sub-environment) keep its state?

    Yes for most environments, and for any that rlkit's
    :class:`~rlkit.envs.resumable.ResumableEnv` wraps (ALE, Box2D: ``rlkit.make_env``
    does it for training). Not for other envs pickled through gymnasium's ``EzPickle``: their
    pickle holds only the constructor's arguments. Such an env is not saved with the
    checkpoint; on resume the episode in progress restarts (from a seeded reset), every
    other piece of state is still restored exactly.
    """
    from gymnasium.utils import EzPickle

    from rlkit.envs.resumable import ResumableEnv, layers

    envs = list(env.envs) if isinstance(env, gym.vector.SyncVectorEnv) else [env]
    for sub_env in envs:
        for layer in layers(sub_env):
            if isinstance(layer, ResumableEnv):
                break  # it keeps everything below it
            if isinstance(layer, EzPickle):
                return False
    return True


def resume_notice(env) -> str | None:
    """One line when a resume of a run on ``env`` cannot continue its episode exactly
    (None when it can): said at the run's start and at each resume."""
    name = env.spec.id if env.spec is not None else type(env).__name__
    try:
        if state_survives_pickling(env):
            pickle.dumps(_picklable_env(env))
            return None
    except Exception:
        pass
    return (
        f"{name} resumes at an episode boundary: its state cannot be saved with a checkpoint "
        "(a resumed run starts a fresh episode)"
    )


def _picklable_env(env):
    if isinstance(env, gym.vector.SyncVectorEnv):
        return _VectorEnvState(list(env.envs))
    return env


def checkpoints_newest_first(folder: RunFolder) -> list[Path]:
    """The run's complete checkpoints, the latest first, then the others newest first;
    UsageError when there is none."""
    complete = [p for p in folder.checkpoint_dirs() if (p / STATE_FILE).is_file()]
    return folder.checkpoints_newest_first(complete)


def latest_checkpoint(folder: RunFolder) -> Path:
    """The run's newest complete checkpoint; UsageError when there is none."""
    return checkpoints_newest_first(folder)[0]


def load_newest_checkpoint_model(folder: RunFolder, tries: int = 5) -> tuple[Agent, Path]:
    """The agent of the run's newest complete checkpoint, and its model folder, read while
    the run may still be training: a checkpoint pruned between choosing and loading it is
    passed over for the newest again (a corrupt one that stays is an error)."""
    from rlkit.agents.base import load

    for attempt in range(tries):
        model_dir = checkpoint_model_dir(latest_checkpoint(folder))
        try:
            return load(model_dir), model_dir
        except UsageError:
            if model_dir.parent.is_dir() or attempt == tries - 1:
                raise
    raise AssertionError("unreachable")


def checkpoint_model_dir(checkpoint: Path) -> Path:
    """The agent folder inside a checkpoint (``rlkit.load`` reads it)."""
    return Path(checkpoint) / MODEL_DIR


def load_newest_usable(
    candidates: list[Path],
) -> tuple[Path, tuple[Agent, dict[str, Any], Any], list[tuple[Path, str]]]:
    """Load the first of ``candidates`` (newest first) that loads, falling back to older ones.

    Returns ``(folder, (agent, loop_state, env), skipped)`` where ``skipped`` holds a
    ``(checkpoint, why)`` for each newer one that did not load. UsageError when none loads.
    """
    skipped: list[tuple[Path, str]] = []
    first_error = None
    for path in candidates:
        try:
            return path, load_checkpoint(path), skipped
        except UsageError as exc:
            first_error = first_error or exc
            skipped.append((path, str(exc)))
    if first_error is None:
        raise UsageError("no checkpoint to load")
    raise first_error


def read_checkpoint_summary(path: Path) -> dict[str, Any]:
    """``{"agent", "step", "episodes"}`` of a checkpoint, read without loading it."""
    path = Path(path)
    try:
        state = migrate(json.loads((path / STATE_FILE).read_text()))
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
    """Rebuild ``(agent, loop_state, env or None)`` from a checkpoint folder (of any
    format: :func:`~rlkit.run.migrate.migrate` upgrades an older one).

    Missing, empty or corrupt files raise UsageError naming the folder.
    """
    path = Path(path)
    try:
        state = migrate(json.loads((path / STATE_FILE).read_text()))
        loop = state["loop"]
    except FileNotFoundError:
        raise UsageError(f"no checkpoint in {path}: {STATE_FILE} is missing") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"corrupt checkpoint {path}: {STATE_FILE}: {exc!r}") from None
    from rlkit.agents.base import load

    agent = load(path / MODEL_DIR)
    try:
        with np.load(path / ARRAYS_FILE) as data:
            arrays = dict(data)
        arrays.update(load_blocks(path))
        agent.load_state(unflatten_state(arrays, state))
        env = None
        if (path / ENV_FILE).is_file():
            env = load_pickle((path / ENV_FILE).read_bytes())  # (moved classes too)
            if isinstance(env, _VectorEnvState):
                env = env.rebuild()
            if not state_survives_pickling(env):  # written by an older rlkit: unusable
                env = None
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"corrupt checkpoint {path}: {type(exc).__name__}: {exc}") from None
    return agent, loop, env
