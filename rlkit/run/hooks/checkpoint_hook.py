"""The hook through which a run (:class:`rlkit.run.run.Run`) checkpoints every so many
steps and when a session of the loop ends."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlkit.core.errors import RlkitWarning
from rlkit.core.schedules import crossed
from rlkit.run.hooks.base import Hook

if TYPE_CHECKING:
    from rlkit.run.hooks.base import LoopContext


class CheckpointHook(Hook):
    """``save()`` (a full checkpoint, for exact resume; :meth:`rlkit.run.run.Run.checkpoint`)
    every ``every`` steps (0: none on the way) and at the end of each
    :meth:`~rlkit.run.loop.Trainer.run` (its last step, or a stop request), unless one was
    just written at that step (``last_step``). A checkpoint written in a step is in
    ``info["checkpoint"]`` for the hooks after this one. At the start it warns
    (:class:`RlkitWarning`) when the training env's state cannot travel with a checkpoint:
    such a run resumes at an episode boundary."""

    def __init__(self, every: int, save: Callable[[], Path]) -> None:
        if every < 0:
            raise ValueError(f"every must be >= 0, got {every}")
        self.every = int(every)
        self.save = save
        self.last_step: int | None = None  # the step of the newest checkpoint

    def on_start(self, loop: LoopContext) -> None:
        from rlkit.run.checkpoint import resume_notice

        notice = resume_notice(loop.env)  # said at the start and at each resume
        if notice is not None:
            warnings.warn(notice, RlkitWarning, stacklevel=2)

    def on_step(self, loop: LoopContext, before: int, info: dict[str, Any]) -> None:
        if self.every and crossed(before, loop.step, self.every):
            info["checkpoint"] = self.save()

    def on_end(self, loop: LoopContext) -> None:
        if self.last_step != loop.step:
            self.save()
