"""The life of one run, owned in one place: :class:`Run` (Dopamine's ``Runner`` without the
loop).

A run is its folder (:class:`~rlkit.run.folder.RunFolder`): held by one process at a time
(the lock taken by :meth:`Run.claim` and let go by :meth:`Run.close`, nowhere else), its
``config.toml`` (written once: :meth:`Run.create`, or :meth:`Run.begin` for a folder a
user's Trainer made), ``metrics.csv`` and TensorBoard (the :class:`MetricsLogger` it
owns), its checkpoints and their cadence (:class:`~rlkit.run.hooks.checkpoint_hook.
CheckpointHook` calls :meth:`Run.checkpoint`), the hooks' saved state, and resume
(:meth:`Run.restore` reads a checkpoint; the Trainer that takes the Run starts from it).

The loop (:class:`~rlkit.run.trainer_base.TrainerBase`: the Python loop's Trainer, the
compiled loop's) only steps the environment and the agent. The tie goes one way: the loop
reports to its Run through one callable handed to :meth:`Run.attach` (a
:class:`LoopSnapshot` of what a checkpoint keeps) and :meth:`Run.begin`; the Run never holds,
reads or sets the loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rlkit.core.errors import UsageError
from rlkit.run.folder import RunFolder
from rlkit.run.hooks.checkpoint_hook import CheckpointHook
from rlkit.run.metrics import MetricsLogger
from rlkit.run.state import LoopState, TrainHistory

if TYPE_CHECKING:
    from rlkit.config.run import RunConfig


class TrainingDiverged(RuntimeError):
    """A loss or weight became NaN or infinite; the last good checkpoint is kept."""


@dataclass
class Restored:
    """What a checkpoint gave back: the agent, the training env (None when the checkpoint
    could not keep it: a fresh one restarts its episode), the loop's state and history,
    the hooks' states (``{state_key: state}``)."""

    checkpoint: Path
    agent: Any
    env: Any
    state: LoopState
    history: TrainHistory
    hooks: dict[str, dict[str, Any]]


@dataclass
class LoopSnapshot:
    """What the loop reports to its Run for a checkpoint: the agent, the step, the loop state
    (its :class:`~rlkit.run.state.LoopState` as a dict, with ``obs`` and ``seconds``), the
    history's dict, the hooks' states (``{state_key: state}``) and what stands for the
    training env (the env itself, or the compiled program's state)."""

    agent: Any
    step: int
    state: dict[str, Any]
    history: dict[str, Any]
    hooks: dict[str, dict[str, Any]]
    env: Any


class Run:
    """One run folder's life while a Trainer trains in it.

    ``tensorboard``: write TensorBoard events beside ``metrics.csv``;
    ``checkpoint_every``: steps between checkpoints (0: only on a stop and at the end);
    ``keep_checkpoints``: how many complete checkpoints stay.
    """

    def __init__(
        self,
        folder: str | Path | RunFolder,
        tensorboard: bool = True,
        checkpoint_every: int = 0,
        keep_checkpoints: int = 2,
    ) -> None:
        self.folder = folder if isinstance(folder, RunFolder) else RunFolder(folder)
        self.folder.ensure()
        tensorboard_dir = self.folder.tensorboard_dir if tensorboard else None
        self.logger = MetricsLogger(self.folder.metrics_path, tensorboard_dir)
        self.checkpointer = CheckpointHook(checkpoint_every, self.checkpoint)
        self.keep_checkpoints = keep_checkpoints
        self.restored: Restored | None = None  # set by restore(): where the loop starts
        self.skipped_checkpoints: list[str] = []  # newer ones that did not load (set aside)
        self._report: Callable[[], LoopSnapshot] | None = None  # the loop's, once attached

    # -- the folder, one process at a time -------------------------------------------------
    @staticmethod
    @contextlib.contextmanager
    def claim(folder: RunFolder) -> Iterator[None]:
        """Hold ``folder`` for this process (UsageError when another holds it) while the
        block checks and builds; its id is written once the block succeeds. A block that
        raises lets go and leaves the folder as it was. Let go by :meth:`close`."""
        folder.lock(announce=False)
        try:
            yield
        except BaseException:
            folder.unlock(refused=True)
            raise
        folder.announce()

    @classmethod
    def create(
        cls, folder: RunFolder, settings: RunConfig, agent_config: Any, **kwargs: Any
    ) -> Run:
        """A new run in the new, empty ``folder``: held for this process, its
        ``config.toml`` written (``settings`` and the agent's resolved config)."""
        with cls.claim(folder):
            folder.write_config(settings, agent_config)
            return cls(folder, checkpoint_every=settings.checkpoint_every, **kwargs)

    def close(self) -> None:
        """Close the metrics files and let go of the folder (if this process held it)."""
        self.logger.close()
        self.folder.unlock()

    # -- the loop it serves ----------------------------------------------------------------
    def attach(self, report: Callable[[], LoopSnapshot]) -> None:
        """A loop trains in this run: ``report()`` gives what a checkpoint keeps of it."""
        if self._report is not None:
            raise ValueError(f"{self.folder.path} already has its Trainer")
        self._report = report

    def begin(self, settings: RunConfig | None, agent_config: Any) -> None:
        """A session of the loop begins: give a folder made by a user's Trainer its
        ``config.toml`` (if it has none) from the loop's ``settings``, so that ``rlkit
        resume`` and ``rlkit evaluate`` work on it as on a CLI run (None: an agent or
        environment rlkit cannot rebuild by name, nothing written)."""
        if settings is not None and not self.folder.has_config:
            self.folder.write_config(settings, agent_config)

    def keep_best(self, agent: Any) -> None:
        """Save ``agent`` as the run's best model (``best/``)."""
        self.folder.save_model(agent, best=True)

    # -- checkpoints -----------------------------------------------------------------------
    def checkpoint(self) -> Path:
        """Write a full checkpoint (:mod:`rlkit.run.checkpoint`) of what the loop reports,
        with the metrics row count; return its folder."""
        from rlkit.run.checkpoint import save_checkpoint

        if self._report is None:
            raise ValueError(f"no Trainer trains in {self.folder.path} yet")
        loop = self._report()
        _check_finite(loop.agent)
        saved = {
            "state": {"step": loop.step, **loop.state},
            "history": loop.history,
            "hooks": loop.hooks,
            "run": {"metrics_rows": self.logger.rows_written},
        }
        path = save_checkpoint(self.folder, loop.agent, saved, loop.env, self.keep_checkpoints)
        self.checkpointer.last_step = loop.step
        return path

    @classmethod
    def restore(
        cls,
        folder: RunFolder,
        candidates: Sequence[Path],
        skipped: Sequence[tuple[Path, str]] = (),
        **kwargs: Any,
    ) -> Run:
        """The run in ``folder`` at the first of ``candidates`` (newest first) that loads:
        the ones before it, and ``skipped``, are set aside (``<name>.unusable``, said in
        :attr:`skipped_checkpoints`); ``metrics.csv`` is cut back to the checkpoint's rows.
        The Trainer built with it starts from :attr:`restored`. Keyword arguments: the
        constructor's."""
        from rlkit.run.checkpoint import load_newest_usable

        checkpoint, (agent, loop, env), more_skipped = load_newest_usable(list(candidates))
        try:
            saved = dict(loop["state"])
            if int(saved.pop("step")) != agent.num_steps:
                raise ValueError(f"step {loop['state']['step']} != agent step {agent.num_steps}")
            state = LoopState(**saved)
            history = TrainHistory.from_dict(loop["history"])
            hooks, rows = dict(loop["hooks"]), int(loop["run"]["metrics_rows"])
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"corrupt checkpoint {checkpoint}: loop state: {exc!r}") from None
        run = cls(folder, **kwargs)
        run.restored = Restored(checkpoint, agent, env, state, history, hooks)
        run.skipped_checkpoints = [
            f"{why}; set aside as {folder.set_aside(path).name}, resuming from {checkpoint.name}"
            for path, why in [*skipped, *more_skipped]
        ]
        run.checkpointer.last_step = agent.num_steps
        run.logger.truncate(rows)
        return run

    @property
    def resumed_from(self) -> Path | None:
        """The checkpoint folder the run was restored from (None for a new run)."""
        return None if self.restored is None else self.restored.checkpoint


def _check_finite(agent: Any) -> None:
    for group, variables in agent.checkpoint_variables().items():
        for v in variables:
            if not np.all(np.isfinite(v.numpy())):
                raise TrainingDiverged(
                    f"{group} weights are no longer finite at step {agent.num_steps}; "
                    "the last good checkpoint is kept"
                )
