"""What the training loop keeps: the history a run produced and the loop state a
checkpoint saves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class TrainHistory:
    """What a training run produced.

    episode_returns / episode_lengths: one entry per finished episode;
    episode_end_steps: the loop step at which each episode ended;
    evaluations: ``(step, mean, std)`` per evaluation;
    updates: ``(step, metrics)`` for every update that ran (not kept across resume);
    steps: the agent's step count (``agent.num_steps``) at the end;
    seconds: wall-clock time of this process's part; earlier_seconds: training time of the
    run's earlier sessions (before a resume; None when a checkpoint of an older rlkit did
    not record it);
    interrupted: True when a stop was requested (Ctrl-C, SIGTERM).
    """

    episode_returns: list[float] = field(default_factory=list)
    episode_lengths: list[int] = field(default_factory=list)
    episode_end_steps: list[int] = field(default_factory=list)
    evaluations: list[tuple[int, float, float]] = field(default_factory=list)
    updates: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    steps: int = 0
    seconds: float = 0.0
    earlier_seconds: float | None = 0.0
    steps_this_session: int = 0
    interrupted: bool = False

    @property
    def steps_per_second(self) -> float:
        return self.steps_this_session / self.seconds if self.seconds > 0 else 0.0

    @property
    def total_seconds(self) -> float | None:
        """Training time of all sessions of the run (None when an earlier one is unknown)."""
        return None if self.earlier_seconds is None else self.earlier_seconds + self.seconds

    def recent_return(self, window: int = 20) -> float | None:
        """Mean return of the last ``window`` episodes (None before the first ends)."""
        if not self.episode_returns:
            return None
        return float(np.mean(self.episode_returns[-window:]))

    def to_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps (JSON-serialisable)."""
        return {
            "episode_returns": self.episode_returns,
            "episode_lengths": self.episode_lengths,
            "episode_end_steps": self.episode_end_steps,
            "evaluations": self.evaluations,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainHistory:
        return cls(
            episode_returns=list(data["episode_returns"]),
            episode_lengths=list(data["episode_lengths"]),
            episode_end_steps=list(data["episode_end_steps"]),
            evaluations=[tuple(e) for e in data["evaluations"]],
        )


@dataclass
class LoopState:
    """The loop's own state, saved in checkpoints (JSON-serialisable): its episode
    bookkeeping (the one owner of it), the observation it acts on next, the training time.

    The step count is not here: it is the agent's ``num_steps`` (one counter; the
    checkpoint file repeats it as ``step`` for readers that do not load the agent). The
    hooks' state is their own (:meth:`rlkit.run.hooks.Hook.state`), the count of
    ``metrics.csv`` rows the metrics logger's.
    """

    episodes: int = 0
    episode_return: list[float] = field(default_factory=lambda: [0.0])  # one per stream
    episode_length: list[int] = field(default_factory=lambda: [0])
    obs: list | None = None
    #: the invalid-action masks of ``obs`` (an agent with action_masks), kept for a resume
    action_masks: list | None = None
    seconds: float | None = None  # training time up to the checkpoint (None: not recorded)
