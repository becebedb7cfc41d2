"""The built-in hook that logs: episode and game rows to ``metrics.csv`` (through the loop's
:class:`~rlkit.run.metrics.MetricsLogger`), update scalars, the step rate and the agent's
diagnostics to TensorBoard. The evaluation rows are written by
:class:`~rlkit.run.hooks.evaluation_hook.EvaluationHook`, which runs the evaluations."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rlkit.run.hooks.base import Hook

if TYPE_CHECKING:
    from rlkit.run.hooks.base import LoopContext

#: steps between two TensorBoard points of the step rate and the agent's diagnostics
RATE_INTERVAL = 1000


class MetricsHook(Hook):
    """Writes the episodes and games the loop reports to ``metrics.csv``, and the update
    scalars, step rate and diagnostics to TensorBoard."""

    def on_start(self, loop: LoopContext) -> None:
        self._rate_step, self._rate_time = loop.step, time.perf_counter()

    def on_update(self, loop: LoopContext, metrics: dict[str, float]) -> None:
        loop.logger.scalars(loop.step, {f"train/{k}": v for k, v in metrics.items()})

    def on_episode(self, loop: LoopContext, episode_return: float, length: int) -> None:
        loop.logger.row("episode", loop.step, loop.episodes, episode_return, length)
        loop.logger.scalars(loop.step, {"episode/return": episode_return, "episode/length": length})

    def on_game(self, loop: LoopContext, game_return: float, length: int) -> None:
        loop.logger.row("game", loop.step, loop.episodes, game_return, length)
        loop.logger.scalars(loop.step, {"game/return": game_return, "game/length": length})

    def on_step(self, loop: LoopContext, before: int, info: dict[str, Any]) -> None:
        step = loop.step
        if step - self._rate_step < RATE_INTERVAL:
            return
        now = time.perf_counter()
        rate = (step - self._rate_step) / (now - self._rate_time)
        diagnostics = {f"train/{k}": v for k, v in loop.agent.diagnostics().items()}
        loop.logger.scalars(step, {"perf/steps_per_second": rate} | diagnostics)
        self._rate_step, self._rate_time = step, now
