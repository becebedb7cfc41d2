"""The built-in hook that evaluates the agent greedily every so many steps and keeps the
best model in the run folder's ``best/``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from rlkit.core import seeding
from rlkit.core.schedules import crossed
from rlkit.run.evaluation import EvaluationStopped, episode_returns
from rlkit.run.hooks.base import Hook

if TYPE_CHECKING:
    from rlkit.run.hooks.base import LoopContext


class EvaluationHook(Hook):
    """Every ``every`` steps: ``episodes`` greedy episodes on ``env``.

    Logs an ``eval`` row, adds ``info["eval"] = (mean, std)`` and, when the mean is the
    best so far (ties go to the later, more trained model), hands the agent to
    ``keep_best`` (a run's :meth:`rlkit.run.run.Run.keep_best` saves it to ``best/``).
    Its counters (``evaluations``, ``best_eval``, ``best_step``, an evaluation
    ``pending`` after a stop request cut it short) are its own state (:meth:`state`), so
    they are checkpointed with the run.
    """

    def __init__(
        self, env, every: int, episodes: int = 10, keep_best: Callable[[Any], None] | None = None
    ) -> None:
        if every <= 0:
            raise ValueError(f"every must be > 0, got {every}")
        self.env = env
        self.every = int(every)
        self.episodes = int(episodes)
        self.keep_best = keep_best
        self.evaluations = 0
        self.best_eval: float | None = None
        self.best_step: int | None = None
        self.pending = False

    def state(self) -> dict[str, Any]:
        return {"evaluations": self.evaluations, "best_eval": self.best_eval,
                "best_step": self.best_step, "pending": self.pending}  # fmt: skip

    def load_state(self, state: dict[str, Any]) -> None:
        self.evaluations = int(state["evaluations"])
        self.best_eval = None if state["best_eval"] is None else float(state["best_eval"])
        self.best_step = None if state["best_step"] is None else int(state["best_step"])
        self.pending = bool(state["pending"])

    def on_start(self, loop: LoopContext) -> None:
        if self.pending:  # cut short by a stop request: made now, as it would have been
            self.evaluate(loop)

    def on_step(self, loop: LoopContext, before: int, info: dict[str, Any]) -> None:
        if crossed(before, loop.step, self.every):
            result = self.evaluate(loop)
            if result is not None:
                info["eval"] = result

    def evaluate(self, loop: LoopContext) -> tuple[float, float] | None:
        """Evaluate now; log it and keep the best model. A stop request in the middle
        abandons it (None): the agent's generators are put back as they were before it, and
        it is pending, so that a resume makes it exactly."""
        step = loop.step
        seed = seeding.eval_seed(loop.seed, self.evaluations)
        rngs = {k: rng.bit_generator.state for k, rng in loop.agent.state()["rngs"].items()}
        try:
            returns = episode_returns(loop.agent, self.env, self.episodes, seed=seed,
                                      should_stop=loop.stop_requested)  # fmt: skip
        except EvaluationStopped:
            for name, rng in loop.agent.state()["rngs"].items():
                rng.bit_generator.state = rngs[name]
            self.pending = True
            return None
        self.pending = False
        mean, std = float(np.mean(returns)), float(np.std(returns))
        self.evaluations += 1
        loop.history.evaluations.append((step, mean, std))
        loop.logger.row("eval", step, loop.episodes, mean, self.episodes, std)
        loop.logger.scalars(step, {"eval/return_mean": mean, "eval/return_std": std})
        if self.best_eval is None or mean >= self.best_eval:
            self.best_eval, self.best_step = mean, step
            if self.keep_best is not None:
                self.keep_best(loop.agent)
        return mean, std
