"""Live training progress that fits the terminal it is drawn in.

On a terminal: one line redrawn in place (carriage return, erase to end of line), never
wider than the terminal, so it cannot wrap and stack at 80 columns; the least important
fields are dropped first when space is short. When stderr is not a terminal (a log file,
CI): a plain line every ``line_interval`` seconds.

Runs capped by episodes too (REINFORCE, the bandit) are measured against whichever cap,
steps or episodes, they are nearer to: the percentage, the count shown (episodes or
steps) and the time left all follow it, so a run ends at 100% with the count of the cap
that stopped it (``3,000/3,000 steps``, not ``100%  83/1,000 episodes``).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

BAR_MAX = 30
BAR_MIN = 10


def terminal_width(stream: TextIO, fallback: int = 80) -> int:
    """``COLUMNS`` when set, else the width of the terminal ``stream`` is on, else 80."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return fallback


def format_duration(seconds: float) -> str:
    """``75`` -> ``"1:15"``, ``3725`` -> ``"1:02:05"``."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class TrainingProgress:
    """A training callback (and context manager) that shows progress on ``stream``.

    Args:
        total_steps: the run's step cap.
        label: shown first, e.g. ``"dqn CartPole-v1"``.
        start: the step count the run starts (or resumes) at.
        total_episodes: the run's episode cap (0: none).
        start_episodes: episodes already done when the run resumes.
        interval: seconds between redraws on a terminal.
        line_interval: seconds between lines when ``stream`` is not a terminal.
    """

    def __init__(
        self,
        total_steps: int,
        label: str,
        start: int = 0,
        total_episodes: int = 0,
        start_episodes: int = 0,
        stream: TextIO | None = None,
        interval: float = 0.25,
        line_interval: float = 10.0,
    ) -> None:
        self.total_steps = total_steps
        self.total_episodes = total_episodes
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if self.tty else line_interval
        self._start_step, self._start_episodes = start, start_episodes
        self._start_time = self._last = time.perf_counter()
        self._drawn = False
        self._drawn_state: tuple[int, int, float | None] | None = None
        self._state: tuple[int, int, float | None] = (start, start_episodes, None)

    def __enter__(self) -> TrainingProgress:
        self._draw()
        return self

    def __exit__(self, *exc) -> None:
        if self._drawn_state != self._state:  # (the last step may have been drawn already)
            self._draw()
        if self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()

    def __call__(self, step: int, info: dict, history) -> None:
        now = time.perf_counter()
        episodes = len(history.episode_returns)
        self._state = (step, episodes, history.recent_return())
        done = step >= self.total_steps or (self.total_episodes and episodes >= self.total_episodes)
        if now - self._last >= self.interval or done:
            self._last = now
            self._draw()

    # -- what is shown -----------------------------------------------------------------------
    def fraction(self, step: int, episodes: int) -> float:
        """How far the run is, 0..1: the nearer of its step and episode caps."""
        fraction = step / self.total_steps if self.total_steps else 0.0
        if self.total_episodes:
            fraction = max(fraction, episodes / self.total_episodes)
        return min(fraction, 1.0)

    def _episodes_nearer(self, step: int, episodes: int) -> bool:
        """Whether the episode cap is the one the run is nearer to (the one it stops at)."""
        if not self.total_episodes:
            return False
        steps_done = step / self.total_steps if self.total_steps else 0.0
        return episodes / self.total_episodes >= steps_done

    def line(self, width: int) -> str:
        """The progress line, at most ``width - 1`` characters (the cursor needs one)."""
        step, episodes, recent = self._state
        elapsed = max(time.perf_counter() - self._start_time, 1e-9)
        fraction = self.fraction(step, episodes)
        start_fraction = self.fraction(self._start_step, self._start_episodes)
        if self._episodes_nearer(step, episodes):
            count = f"{episodes:,}/{self.total_episodes:,} episodes"
        else:
            count = f"{step:,}/{self.total_steps:,} steps"
        sps = (step - self._start_step) / elapsed
        left = None
        if fraction > start_fraction:
            rate = (fraction - start_fraction) / elapsed
            left = format_duration((1.0 - fraction) / rate)
        # fields in the order they are dropped when the line is too wide: last first
        fields = [
            f"{fraction:4.0%}",
            count,
            f"return {recent:.1f}" if recent is not None else "return -",
            f"{sps:,.0f} steps/s",
            f"{left} left" if left is not None else "",
            self.label,
        ]
        limit = max(width - 1, 8)
        while True:
            label, rest = fields[5], "  ".join(f for f in fields[:5] if f)
            text = f"{label}  {rest}" if label else rest
            bar_width = min(BAR_MAX, limit - len(text) - 3)  # "[", "]" and a space
            if bar_width >= BAR_MIN:
                filled = int(round(fraction * bar_width))
                bar = "[" + "#" * filled + "-" * (bar_width - filled) + "]"
                text = f"{label}  {bar} {rest}" if label else f"{bar} {rest}"
            if len(text) <= limit or sum(1 for f in fields if f) <= 1:
                return text.strip()[:limit]
            fields = _drop_least_important(fields)

    def _draw(self) -> None:
        text = self.line(terminal_width(self.stream))
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._drawn = True
        self._drawn_state = self._state


def _drop_least_important(fields: list[str]) -> list[str]:
    """Blank the least important field still shown: label, speed, time left, return, count."""
    for i in (5, 3, 4, 2, 1):
        if fields[i]:
            return [*fields[:i], "", *fields[i + 1 :]]
    return fields
