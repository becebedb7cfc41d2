"""The run folder: the one place that knows its layout, every path and file name in it.

A run folder ``<out>/<variant>-<env>-<seed>-<YYYYmmdd-HHMMSS>/`` (the variant: the agent's
name, or what its config makes of it, e.g. ``td3``: :func:`rlkit.run.plan.variant_name`)
holds::

    config.toml      [run] and [agent]: how the run was started (pass it back with --config)
    metrics.csv      one row per episode, game and evaluation (rlkit.run.metrics)
    tensorboard/     TensorBoard event files
    checkpoints/     step-<N>/ folders (exact resume), ``latest`` naming the newest,
                     blocks/ shared by them (rlkit.run.checkpoint writes what is inside)
    best/            the best evaluated model (an agent folder: rlkit.agents.base)
    model/           the final model
    summary.json     how the finished run scored
    curves.png       its learning curve

:class:`RunFolder` reads and writes ``config.toml`` and ``summary.json``, names the model
folders, and keeps the checkpoint index: which ``step-<N>`` folders exist, which one
``latest`` names, which are pruned. Nothing else in rlkit spells these names.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from rlkit.config.options import to_dict
from rlkit.config.run import RunConfig, load_config_file, resolve_run_config, to_toml
from rlkit.core.errors import UsageError
from rlkit.core.files import atomic_write_bytes, make_temp_folder

CONFIG_FILE = "config.toml"
SUMMARY_FILE = "summary.json"
METRICS_FILE = "metrics.csv"
TENSORBOARD_DIR = "tensorboard"
CHECKPOINTS_DIR = "checkpoints"
BEST_DIR = "best"
MODEL_DIR = "model"
CURVES_FILE = "curves.png"
#: inside checkpoints/: the file naming the newest checkpoint, and each checkpoint's prefix
LATEST_FILE = "latest"
CHECKPOINT_PREFIX = "step-"
CHECKPOINT_NAME = re.compile(rf"{CHECKPOINT_PREFIX}\d+")
#: the suffix of a checkpoint that did not load, set aside out of the index (kept to look at)
UNUSABLE_SUFFIX = ".unusable"
#: held (flock) by the process that trains the run; the kernel lets go when it dies
LOCK_FILE = ".lock"


class RunFolder:
    """One run folder on disk (it may not exist yet: see :meth:`create`)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._lock: TextIO | None = None  # the open lock file while this process holds the run
        self._lock_made = False  # whether taking the lock made the file

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    def __fspath__(self) -> str:
        return str(self.path)

    # -- making and opening ------------------------------------------------------------------
    @classmethod
    def create(cls, out: str | os.PathLike, agent: str, env_id: str, seed: int) -> RunFolder:
        """Make ``out/<agent>-<env>-<seed>-<YYYYmmdd-HHMMSS>`` (a suffix keeps names unique).

        ``agent``: what the run is called (its variant, e.g. ``td3``); only the name uses it:
        ``config.toml`` says which agent rebuilds the run.

        UsageError when ``out`` cannot be created or written.
        """
        out = Path(out)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        base = f"{agent}-{env_id.replace('/', '_').replace(':', '_')}-{seed}-{stamp}"
        try:
            out.mkdir(parents=True, exist_ok=True)
            for n in range(1000):
                path = out / (base if n == 0 else f"{base}-{n}")
                try:
                    path.mkdir()
                    return cls(path)
                except FileExistsError:
                    continue
        except OSError as exc:
            raise UsageError(
                f"cannot write to output directory {out}: {exc.strerror}; choose another with --out"
            ) from None
        raise UsageError(f"too many runs named {base} in {out}")

    @classmethod
    def create_at(cls, path: str | os.PathLike) -> RunFolder:
        """Exactly ``path``, which must be new or empty."""
        path = Path(path)
        if path.exists() and any(path.iterdir()):
            raise UsageError(f"{path} already holds files; choose an empty or new folder")
        path.mkdir(parents=True, exist_ok=True)
        return cls(path)

    @classmethod
    def open(cls, path: str | os.PathLike) -> RunFolder:
        """An existing run folder; UsageError when ``path`` is none."""
        folder = cls(path)
        if not folder.path.is_dir():
            raise UsageError(f"no run folder at {folder.path}")
        if not folder.has_config:
            raise UsageError(f"{folder.path} is not an rlkit run folder: {CONFIG_FILE} is missing")
        return folder

    def ensure(self) -> None:
        """Make the folder if it is not there; UsageError when that fails."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot make run folder {self.path}: {exc.strerror}") from None

    def remove(self) -> None:
        """Delete the folder (a run that failed before it wrote anything)."""
        self.unlock()
        shutil.rmtree(self.path, ignore_errors=True)

    # -- one process at a time ---------------------------------------------------------------
    def lock(self, announce: bool = True) -> None:
        """Hold the run for this process until :meth:`unlock` (or its end, however it ends:
        the lock is an ``flock`` the kernel drops with the process). UsageError when another
        process holds it. ``announce``: write this process's id into the lock file now
        (else :meth:`announce` does, once the work really starts: a command refused after
        taking the lock then leaves the file as it was)."""
        import fcntl

        if self._lock is not None:
            return
        self._lock_made = not (self.path / LOCK_FILE).exists()
        try:
            handle = open(self.path / LOCK_FILE, "a+")  # noqa: SIM115 - kept open while held
        except OSError as exc:  # a read-only filesystem, a folder of another user
            raise UsageError(
                f"cannot write to run folder {self.path}: {exc.strerror}; a run is trained "
                "where it can write (copy the folder somewhere writable)"
            ) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise UsageError(
                f"{self.path} is in use by another rlkit process (pid {holder}); "
                "wait for it to finish or stop it first"
            ) from None
        self._lock = handle
        if announce:
            self.announce()

    def announce(self) -> None:
        """Write this process's id into the lock it holds (what another process, refused,
        names)."""
        if self._lock is not None:
            self._lock.seek(0)
            self._lock.truncate()
            self._lock.write(f"{os.getpid()}\n")
            self._lock.flush()

    def unlock(self, refused: bool = False) -> None:
        """Let go of the run. ``refused``: the command did nothing, so a lock file this
        process made is removed too (nothing written)."""
        if self._lock is not None:
            self._lock.close()  # (closing drops the flock)
            self._lock = None
            if refused and self._lock_made:
                (self.path / LOCK_FILE).unlink(missing_ok=True)

    def remove_unfinished_writes(self) -> list[Path]:
        """Delete what a process that died while writing left behind: temporary checkpoint
        and model folders and files (``.<name>.*``). Call it only while holding the lock."""
        leftovers = [
            *self.checkpoints_dir.glob(f".{CHECKPOINT_PREFIX}*"),
            *self.checkpoints_dir.glob(f".{LATEST_FILE}.*"),
            *self.path.glob(f".{BEST_DIR}.*"),
            *self.path.glob(f".{MODEL_DIR}.*"),
        ]
        for path in leftovers:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        return leftovers

    # -- paths -------------------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.path / CONFIG_FILE

    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY_FILE

    @property
    def metrics_path(self) -> Path:
        return self.path / METRICS_FILE

    @property
    def tensorboard_dir(self) -> Path:
        return self.path / TENSORBOARD_DIR

    @property
    def checkpoints_dir(self) -> Path:
        return self.path / CHECKPOINTS_DIR

    @property
    def best_dir(self) -> Path:
        return self.path / BEST_DIR

    @property
    def model_dir(self) -> Path:
        return self.path / MODEL_DIR

    @property
    def curves_path(self) -> Path:
        return self.path / CURVES_FILE

    @staticmethod
    def is_run(path: str | os.PathLike) -> bool:
        """Does ``path`` look like a run folder (it has a ``config.toml``)?"""
        return (Path(path) / CONFIG_FILE).is_file()

    @property
    def has_config(self) -> bool:
        return self.config_path.is_file()

    @property
    def has_metrics(self) -> bool:
        return self.metrics_path.is_file()

    @property
    def is_finished(self) -> bool:
        """A finished run has its ``summary.json``."""
        return self.summary_path.is_file()

    # -- config.toml and summary.json --------------------------------------------------------
    def write_config(self, run: RunConfig, agent_config: Any) -> None:
        """``config.toml``: the ``[run]`` settings and the resolved ``[agent]`` config."""
        text = to_toml({"run": to_dict(run), "agent": to_dict(agent_config)})
        atomic_write_bytes(self.config_path, text.encode())

    def read_config(self) -> tuple[RunConfig, dict[str, Any]]:
        """The ``RunConfig`` and raw agent table the run was started with."""
        if not self.has_config:
            raise UsageError(f"{self.path} is not an rlkit run folder: {CONFIG_FILE} is missing")
        run, agent = load_config_file(self.config_path)
        return resolve_run_config(run, {}), agent

    def write_summary(self, summary: dict[str, Any]) -> None:
        atomic_write_bytes(self.summary_path, json.dumps(summary, indent=2).encode())

    def read_summary(self) -> dict[str, Any] | None:
        """The finished run's summary (None when it has none, or it does not parse)."""
        try:
            return json.loads(self.summary_path.read_text())
        except (OSError, ValueError):
            return None

    # -- the checkpoint index ----------------------------------------------------------------
    @staticmethod
    def checkpoint_name(step: int) -> str:
        return f"{CHECKPOINT_PREFIX}{step:010d}"

    def checkpoint_dirs(self) -> list[Path]:
        """Every ``step-<N>`` folder under ``checkpoints/`` (complete or not), oldest first."""
        return sorted(
            p
            for p in self.checkpoints_dir.glob(f"{CHECKPOINT_PREFIX}*")
            if CHECKPOINT_NAME.fullmatch(p.name) and p.is_dir()
        )

    def has_checkpoints(self) -> bool:
        return bool(self.checkpoint_dirs())

    def mark_latest(self, checkpoint: Path) -> None:
        """Name ``checkpoint`` in ``checkpoints/latest`` (replaced atomically)."""
        atomic_write_bytes(self.checkpoints_dir / LATEST_FILE, checkpoint.name.encode())

    def checkpoints_newest_first(self, complete: Iterable[Path] | None = None) -> list[Path]:
        """Complete checkpoints, the one ``latest`` names first, then the others newest
        first; UsageError when there is none. ``complete``: the folders that are complete
        (default: every ``step-<N>`` folder)."""
        done = sorted(self.checkpoint_dirs() if complete is None else complete, reverse=True)
        pointer = self.checkpoints_dir / LATEST_FILE
        if pointer.is_file():
            try:
                named = self.checkpoints_dir / pointer.read_text().strip()
            except (OSError, UnicodeDecodeError, ValueError):
                named = None  # a damaged pointer: fall back to the newest folder
            if named in done:
                done = [named, *(p for p in done if p != named)]
        if not done:
            raise UsageError(f"no checkpoint in {self.checkpoints_dir}; nothing to resume")
        return done

    def prune_checkpoints(self, keep: int, complete: Iterable[Path] | None = None) -> list[Path]:
        """Delete all but the newest ``keep`` complete checkpoints (0: keep all), and any
        incomplete one older than the oldest kept; return what is left. ``complete``: the
        folders that are complete (default: every ``step-<N>`` folder)."""
        done = sorted(self.checkpoint_dirs() if complete is None else complete)
        if keep > 0 and len(done) > keep:
            oldest_kept = done[-keep]
            for old in self.checkpoint_dirs():
                if old < oldest_kept:
                    self._remove_checkpoint(old)
        return self.checkpoint_dirs()

    def _remove_checkpoint(self, checkpoint: Path) -> None:
        """Take ``checkpoint`` out of the index in one rename (to a hidden name
        :meth:`remove_unfinished_writes` knows), then delete its files: a reader never sees
        a ``step-<N>`` folder half deleted."""
        hidden = checkpoint.with_name(f".{checkpoint.name}.pruned-{os.getpid()}")
        try:
            checkpoint.rename(hidden)
        except OSError:  # gone already (another process pruned it)
            return
        shutil.rmtree(hidden, ignore_errors=True)

    def set_aside(self, checkpoint: Path) -> Path:
        """Rename a checkpoint that did not load to ``<name>.unusable``: out of the index
        (never resumed from, never counted as one of the kept), its bytes still there."""
        target = checkpoint.with_name(checkpoint.name + UNUSABLE_SUFFIX)
        shutil.rmtree(target, ignore_errors=True)
        checkpoint.rename(target)
        return target

    # -- model folders -----------------------------------------------------------------------
    def save_model(self, agent, best: bool = False) -> Path:
        """``agent.save`` into ``best/`` (or ``model/``) without ever leaving it half-written."""
        return save_agent_atomically(agent, self.best_dir if best else self.model_dir)

    def has_model(self, best: bool = False) -> bool:
        from rlkit.agents.base import is_saved_agent

        return is_saved_agent(self.best_dir if best else self.model_dir)


def save_agent_atomically(agent, path: Path) -> Path:
    """``agent.save`` into a temporary folder beside ``path``, then swap it in."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temp_folder(f".{path.name}.", path.parent)
    try:
        agent.save(tmp)
        old = path.with_name(f".{path.name}.old")
        if path.exists():
            shutil.rmtree(old, ignore_errors=True)
            path.rename(old)
        tmp.rename(path)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path
