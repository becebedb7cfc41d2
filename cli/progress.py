"""A live progress bar for training: step count, recent episode return, steps per second."""

from __future__ import annotations

import sys
import time

import click


class TrainingProgress:
    """A training callback that draws a click progress bar on stderr.

    Redraws at most every ``interval`` seconds so the bar costs nothing per step.
    """

    def __init__(
        self, total_steps: int, label: str, interval: float = 0.25, start: int = 0
    ) -> None:
        self.total = total_steps
        self.interval = interval
        self._bar = click.progressbar(
            length=total_steps,
            label=label,
            show_pos=True,
            show_eta=True,
            item_show_func=lambda text: text,
            file=sys.stderr,
            width=24,
        )
        self._shown = start
        self._start_step = start
        self._last = 0.0
        self._start = time.perf_counter()

    def __enter__(self) -> TrainingProgress:
        self._bar.__enter__()
        if self._shown:
            self._bar.update(self._shown)
        return self

    def __exit__(self, *exc) -> None:
        self._bar.__exit__(*exc)

    def __call__(self, step: int, info: dict, history) -> None:
        now = time.perf_counter()
        if now - self._last < self.interval and step != self.total:
            return
        self._last = now
        recent = history.recent_return()
        sps = (step - self._start_step) / max(now - self._start, 1e-9)
        text = f"return {recent:8.1f}" if recent is not None else "return      -  "
        self._bar.update(step - self._shown, f"{text} | {sps:6.0f} steps/s")
        self._shown = step
