"""The built-in hook that checkpoints the run every so many steps and when it ends."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from rlkit.core.errors import RlkitWarning
from rlkit.core.schedules import crossed
from rlkit.run.hooks.base import Hook

if TYPE_CHECKING:
    from rlkit.run.loop import Trainer


class CheckpointHook(Hook):
    """A full checkpoint (exact resume) every ``every`` steps (0: none on the way) and at
    the end of each :meth:`~rlkit.run.loop.Trainer.run` (its last step, or a stop request),
    unless one was just written at that step. At the start it warns (:class:`RlkitWarning`)
    when the training env's state cannot travel with a checkpoint: such a run resumes at an
    episode boundary."""

    def __init__(self, every: int = 0) -> None:
        if every < 0:
            raise ValueError(f"every must be >= 0, got {every}")
        self.every = int(every)

    def on_start(self, loop: Trainer) -> None:
        from rlkit.run.checkpoint import resume_notice

        notice = resume_notice(loop.env)  # said at the start and at each resume
        if notice is not None:
            warnings.warn(notice, RlkitWarning, stacklevel=2)

    def on_step(self, loop: Trainer, before: int, info: dict[str, Any]) -> None:
        if self.every and crossed(before, loop.step, self.every):
            loop.checkpoint()

    def on_end(self, loop: Trainer) -> None:
        if loop.last_checkpoint_step != loop.step:
            loop.checkpoint()
