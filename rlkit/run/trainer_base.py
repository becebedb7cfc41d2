"""What both training loops share: :class:`TrainerBase`, under the Python loop's
:class:`~rlkit.run.loop.Trainer` and the compiled loop's
:class:`~rlkit.run.compiled.trainer.CompiledTrainer`.

It holds the hooks and their wiring (the built-in metrics, evaluation with the best model
and the run's checkpoints, then the user's), one session of either loop
(:meth:`TrainerBase.run_session`: ``advance()`` is one step or one chunk), the records of
an update and of an ended episode, stop handling, and the tie to the run folder's
:class:`~rlkit.run.run.Run`. That tie goes one way: the trainer reads its run's restored
state and reports to it through one callable (:meth:`TrainerBase.snapshot`, handed over by
:meth:`~rlkit.run.run.Run.attach`); the Run never holds or reads the trainer.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rlkit.core import structure
from rlkit.run.folder import RunFolder
from rlkit.run.hooks.base import Hook, LoopContext, hook_states, load_hook_states
from rlkit.run.hooks.evaluation_hook import EvaluationHook
from rlkit.run.hooks.metrics_hook import MetricsHook
from rlkit.run.metrics import MetricsLogger
from rlkit.run.run import LoopSnapshot, Run, TrainingDiverged
from rlkit.run.state import LoopState, TrainHistory


class TrainerBase:
    """The loop-independent half of a trainer.

    Args:
        agent: the agent it trains.
        env: what hooks see as the training env (the compiled loop: its program's state).
        seed: the run's seed.
        run: the :class:`~rlkit.run.run.Run` it trains in, or None (everything in memory);
            a restored one gives the loop state, history and hooks' states it starts from.
        eval_env, eval_every, eval_episodes: greedy evaluation every ``eval_every`` steps
            (the best model kept in the run's ``best/``).
        hooks: more hooks (checked), after the built-in ones.
    """

    def __init__(
        self, agent: Any, env: Any, seed: int, run: Run | None, eval_env: Any = None,
        eval_every: int = 0, eval_episodes: int = 10, hooks: Iterable[Hook] = (),
    ) -> None:  # fmt: skip
        if eval_every and eval_env is None:
            raise ValueError("eval_every needs an eval_env")
        self.owner = run
        self.agent, self.env, self.seed = agent, env, int(seed)
        restored = None if run is None else run.restored
        self.state = LoopState() if restored is None else restored.state
        self.history = TrainHistory() if restored is None else restored.history
        self.logger = MetricsLogger(None) if run is None else run.logger
        self.hooks: list[Hook] = [MetricsHook()]
        if eval_every:
            keep_best = None if run is None else run.keep_best
            self.hooks.append(EvaluationHook(eval_env, eval_every, eval_episodes, keep_best))
        if run is not None:
            self.hooks.append(run.checkpointer)
        self.hooks.extend(hooks)
        if restored is not None:
            load_hook_states(self.hooks, restored.hooks)
        self._active = self.hooks  # and a session's own hooks while run_session() runs
        self.obs: Any = None  # the observation(s) the agent acts on next
        self._stop = threading.Event()
        self.context = LoopContext(self)
        if run is not None:
            run.attach(self.snapshot)

    # -- what the run and the hooks read ------------------------------------------------------
    @property
    def step(self) -> int:
        """Environment steps taken: the agent's ``num_steps`` (vector envs count each)."""
        return self.agent.num_steps

    @property
    def folder(self) -> RunFolder | None:
        """The run folder (None without a run)."""
        return None if self.owner is None else self.owner.folder

    @property
    def run_dir(self) -> Path | None:
        return None if self.owner is None else self.owner.folder.path

    @property
    def resumed_from(self) -> Path | None:
        """The checkpoint folder the run was restored from (None unless resumed)."""
        return None if self.owner is None else self.owner.resumed_from

    @property
    def skipped_checkpoints(self) -> list[str]:
        """Newer checkpoints that did not load on resume (set aside), one line each."""
        return [] if self.owner is None else self.owner.skipped_checkpoints

    def env_to_save(self) -> Any:
        """What a checkpoint keeps of the training environment: the env itself."""
        return self.env

    def snapshot(self) -> LoopSnapshot:
        """What a checkpoint keeps of the loop, now (what the Run is handed)."""
        state = asdict(self.state) | {
            "obs": structure.to_json(self.obs),
            "seconds": self.history.total_seconds,
        }
        if state["action_masks"] is None:  # (only an agent acting with masks keeps them)
            del state["action_masks"]
        return LoopSnapshot(
            agent=self.agent, step=self.step, state=state, history=self.history.to_dict(),
            hooks=hook_states(self.hooks), env=self.env_to_save(),
        )  # fmt: skip

    # -- control ------------------------------------------------------------------------------
    def request_stop(self) -> None:
        """Ask the loop to stop after the current step or chunk (safe from a signal handler)."""
        self._stop.set()

    def stop_requested(self) -> bool:
        """Has a stop been asked for (an evaluation in progress abandons itself)?"""
        return self._stop.is_set()

    def checkpoint(self) -> Path:
        """Write a full checkpoint now (:meth:`rlkit.run.run.Run.checkpoint`); its folder."""
        if self.owner is None:
            raise ValueError("checkpoints need a run_dir")
        return self.owner.checkpoint()

    def close(self) -> None:
        """Close the metrics files and let go of the run folder (if this process held it)."""
        if self.owner is None:
            self.logger.close()
        else:
            self.owner.close()

    # -- records ------------------------------------------------------------------------------
    def record_update(self, metrics: dict[str, float], info: dict[str, Any], when: str = "at"):
        """An update's (or a chunk's mean) ``metrics`` into the history, ``info`` and the
        hooks' ``on_update``; TrainingDiverged when one is not finite (``when``: "at" a
        step, or "by" it for a chunk)."""
        bad = [k for k, v in metrics.items() if not math.isfinite(v)]
        if bad:
            raise TrainingDiverged(
                f"{bad[0]} became {metrics[bad[0]]} {when} step {self.step}; "
                "try a lower learning_rate or a gradient clip (max_grad_norm)"
            )
        self.history.updates.append((self.step, metrics))
        info["metrics"] = metrics
        for hook in self._active:
            hook.on_update(self.context, metrics)

    def record_episode(self, ret: float, length: int, info: dict[str, Any]) -> None:
        """An episode ended at :attr:`step` with return ``ret`` after ``length`` steps."""
        self.state.episodes += 1
        self.history.episode_returns.append(ret)
        self.history.episode_lengths.append(length)
        self.history.episode_end_steps.append(self.step)
        info["episode_return"], info["episode_length"] = ret, length
        for hook in self._active:
            hook.on_episode(self.context, ret, length)

    def record_game(self, ret: float, length: int) -> None:
        """A whole game ended (Atari in training, where a lost life ends the episode)."""
        for hook in self._active:
            hook.on_game(self.context, ret, length)

    # -- a session ----------------------------------------------------------------------------
    def run_session(
        self,
        total_steps: int,
        max_episodes: int | None,
        hooks: Iterable[Hook],
        advance: Callable[[], dict[str, Any]],
    ) -> TrainHistory:
        """What a session of either loop does around its steps: the hooks' ``on_start``;
        ``advance()`` (one step, or one chunk, returning its ``info``) until the agent's step
        count reaches ``total_steps``, ``max_episodes`` episodes ended or a stop is
        requested (``history.interrupted``), each followed by the hooks' ``on_step`` (False
        stops); then ``on_end``. ``hooks``: this session's own, after the loop's. The
        history's step counts and times are kept as it goes."""
        agent, state, history, context = self.agent, self.state, self.history, self.context
        self._active = [*self.hooks, *hooks]
        start, start_step = time.perf_counter(), agent.num_steps
        try:
            for hook in self._active:
                hook.on_start(context)
            try:
                while agent.num_steps < total_steps:
                    if self.stop_requested():
                        history.interrupted = True
                        break
                    if max_episodes is not None and state.episodes >= max_episodes:
                        break
                    before = agent.num_steps
                    info = advance()
                    history.steps = agent.num_steps
                    history.seconds = time.perf_counter() - start
                    history.steps_this_session = agent.num_steps - start_step
                    if any(hook.on_step(context, before, info) is False for hook in self._active):
                        break
            finally:
                history.steps = agent.num_steps
                history.seconds = time.perf_counter() - start
                history.steps_this_session = agent.num_steps - start_step
            for hook in self._active:
                hook.on_end(context)
        finally:
            self._active = self.hooks
        return history
