"""The training loop every agent shares: act, step, observe, update, and hooks around it.

``train(agent, env, steps)`` is the one-call form. :class:`Trainer` is the loop itself:
it steps the environment(s) and the agent, keeps the step and episode counts, and hands
what happened to its hooks (:mod:`rlkit.run.hooks`): metrics, evaluation with the best
model, checkpoints, and any hook of the user's. With a run folder it gets the built-in
hooks from its keyword arguments.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from rlkit.core import structure
from rlkit.core.errors import UsageError
from rlkit.run.folder import RunFolder
from rlkit.run.hooks.base import Callback, CallbackHook, Hook, hook_states
from rlkit.run.hooks.checkpointing import CheckpointHook
from rlkit.run.hooks.evaluation import EvaluationHook
from rlkit.run.hooks.metrics import MetricsHook
from rlkit.run.metrics import MetricsLogger
from rlkit.run.state import LoopState, TrainHistory
from rlkit.run.streams import Streams

__all__ = ["LoopState", "TrainHistory", "Trainer", "TrainingDiverged", "train"]


class TrainingDiverged(RuntimeError):
    """A loss or weight became NaN or infinite; the last good checkpoint is kept."""


class Trainer:
    """Runs an agent in an environment and calls hooks around each step.

    Args:
        agent: any rlkit agent (``act``, ``observe_first``/``observe_next``, ``update``).
        env: the training environment, or a gymnasium ``VectorEnv`` (an agent with
            ``vector_envs``).
        seed: seeds the first ``env.reset`` and the action space (default: the agent's).
        run_dir: the run folder (:class:`~rlkit.run.folder.RunFolder`) for ``metrics.csv``,
            TensorBoard, ``checkpoints/`` and ``best/``; None keeps everything in memory.
        eval_env: environment for greedy evaluation every ``eval_every`` steps
            (``eval_episodes`` episodes each); the best model is saved to ``best/``.
        checkpoint_every: steps between checkpoints (0: only on stop and at the end).
        callbacks: ``callback(step, info, history)`` after every step (see
            :class:`~rlkit.run.hooks.CallbackHook`); returning False stops training.
        hooks: more :class:`~rlkit.run.hooks.Hook` objects, called after the built-in ones
            (metrics, evaluation, checkpoints) and before the callbacks.
    """

    def __init__(
        self,
        agent,
        env,
        seed: int | None = None,
        run_dir: str | Path | RunFolder | None = None,
        eval_env=None,
        eval_every: int = 0,
        eval_episodes: int = 10,
        checkpoint_every: int = 0,
        callbacks: Iterable[Callback] = (),
        tensorboard: bool = True,
        keep_checkpoints: int = 2,
        hooks: Iterable[Hook] = (),
    ) -> None:
        if eval_every and eval_env is None:
            raise ValueError("eval_every needs an eval_env")
        self.agent = agent
        self.env = env
        self.seed = agent.seed if seed is None else int(seed)
        if run_dir is None or isinstance(run_dir, RunFolder):
            self.folder = run_dir
        else:
            self.folder = RunFolder(run_dir)
        if self.folder is not None:
            self.folder.ensure()
        self.keep_checkpoints = keep_checkpoints
        self.state = LoopState()
        self.history = TrainHistory()
        self.logger = (
            MetricsLogger(None)
            if self.folder is None
            else MetricsLogger(
                self.folder.metrics_path, self.folder.tensorboard_dir if tensorboard else None
            )
        )
        self.hooks: list[Hook] = [MetricsHook()]
        if eval_every:
            self.hooks.append(EvaluationHook(eval_env, eval_every, eval_episodes))
        if self.folder is not None:
            self.hooks.append(CheckpointHook(checkpoint_every))
        self.hooks.extend(hooks)
        self.hooks.extend(CallbackHook(cb) for cb in callbacks)
        self.obs = None  # the observation(s) the agent acts on next
        self.last_checkpoint_step: int | None = None
        self._stop = threading.Event()
        self.resumed_from: Path | None = None  # the checkpoint folder (after a resume)
        self.skipped_checkpoints: list[str] = []  # newer ones that did not load (set aside)
        # one environment is one stream of experience, a gymnasium VectorEnv N (batched)
        self.streams = Streams(env)
        self.num_envs = self.streams.count if self.streams.vector else 0
        if self.streams.vector and not agent.vector_envs:
            raise UsageError(f"{agent.name} cannot train on vector environments")
        self.state.episode_return = [0.0] * self.streams.count
        self.state.episode_length = [0] * self.streams.count

    @property
    def step(self) -> int:
        """Environment steps taken: the agent's ``num_steps`` (vector envs count each)."""
        return self.agent.num_steps

    @property
    def run_dir(self) -> Path | None:
        return None if self.folder is None else self.folder.path

    # -- control -----------------------------------------------------------------------------
    def request_stop(self) -> None:
        """Ask the loop to stop after the current step (safe from a signal handler)."""
        self._stop.set()

    def stop_requested(self) -> bool:
        """Has a stop been asked for (an evaluation in progress abandons itself)?"""
        return self._stop.is_set()

    def run(self, total_steps: int, max_episodes: int | None = None) -> TrainHistory:
        """Train until the agent's step count (``agent.num_steps``) reaches ``total_steps``
        (or ``max_episodes`` episodes of this trainer end), then call the hooks' ``on_end``
        (with a run folder: a checkpoint). A stop request ends it early
        (``history.interrupted``). Returns the history.
        """
        if total_steps <= 0:
            raise ValueError(f"steps must be > 0, got {total_steps}")
        if max_episodes is not None and max_episodes <= 0:
            raise ValueError(f"max_episodes must be > 0, got {max_episodes}")
        agent, state, history = self.agent, self.state, self.history
        self._describe_run(total_steps, max_episodes)
        if self.obs is None:
            self.start_episodes(self.streams.reset(self.seed))
        else:  # resumed: the episodes a checkpoint of an older rlkit did not start
            waiting = agent.streams_to_start(self.streams.count)
            if waiting:
                agent.observe_first(self.streams.rows(self.obs, waiting), streams=waiting)
        start, start_step = time.perf_counter(), agent.num_steps
        for hook in self.hooks:
            hook.on_start(self)
        try:
            while agent.num_steps < total_steps:
                if self._stop.is_set():
                    history.interrupted = True
                    break
                if max_episodes is not None and state.episodes >= max_episodes:
                    break
                before = agent.num_steps
                info = self._step()
                history.steps = agent.num_steps
                history.seconds = time.perf_counter() - start
                history.steps_this_session = agent.num_steps - start_step
                if any(hook.on_step(self, before, info) is False for hook in self.hooks):
                    break
        finally:
            history.steps = agent.num_steps
            history.seconds = time.perf_counter() - start
            history.steps_this_session = agent.num_steps - start_step
        for hook in self.hooks:
            hook.on_end(self)
        return history

    def _describe_run(self, total_steps: int, max_episodes: int | None) -> None:
        """Give a run folder made by a Trainer its ``config.toml`` (if it has none), so that
        ``rlkit resume`` and ``rlkit evaluate`` work on it as on a CLI run. Skipped for an
        agent or environment rlkit cannot rebuild by name (an unregistered env)."""
        from rlkit.agents.registry import AGENTS
        from rlkit.config.run import RunConfig

        if self.folder is None or self.folder.has_config:
            return
        env = self.env.envs[0] if isinstance(self.env, gym.vector.SyncVectorEnv) else self.env
        spec = env.spec
        if spec is None or self.agent.name not in AGENTS:
            return
        evaluation = next((h for h in self.hooks if isinstance(h, EvaluationHook)), None)
        checkpoints = next((h for h in self.hooks if isinstance(h, CheckpointHook)), None)
        run = RunConfig(
            agent=self.agent.name, env=spec.id, steps=total_steps, seed=self.seed,
            num_envs=max(1, self.num_envs), episodes=max_episodes or 0,
            eval_every=evaluation.every if evaluation else 0,
            eval_episodes=evaluation.episodes if evaluation else 10,
            checkpoint_every=checkpoints.every if checkpoints else 0,
        )  # fmt: skip
        self.folder.write_config(run, self.agent.config)

    # -- one step ----------------------------------------------------------------------------
    def start_episodes(self, obs) -> None:
        """Episodes begin at ``obs`` in every stream (what the agent acts on next)."""
        self.obs = obs
        self.state.episode_return = [0.0] * self.streams.count
        self.state.episode_length = [0] * self.streams.count
        self.agent.observe_first(obs)

    def _step(self) -> dict[str, Any]:
        """One step of every stream (the one environment, or each of a vector env's)."""
        agent, state = self.agent, self.state
        actions = agent.act(self.obs)
        step = self.streams.step(actions)
        agent.observe_next(actions, step.rewards, step.next_obs, step.terminated, step.truncated)
        if step.ended:
            agent.observe_first(step.first_obs, streams=step.ended)
        metrics = agent.update()
        info: dict[str, Any] = {}
        self._record_update(metrics, info)
        for i, reward in enumerate(self.streams.rewards(step)):
            state.episode_return[i] += reward
            state.episode_length[i] += 1
        for i in step.ended:
            self._record_episode(state.episode_return[i], state.episode_length[i], info)
            self._record_game(step.infos[i])
            state.episode_return[i], state.episode_length[i] = 0.0, 0
        self.obs = step.obs
        return info

    def _record_update(self, metrics, info: dict[str, Any]) -> None:
        if metrics is None:
            return
        bad = [k for k, v in metrics.items() if not math.isfinite(v)]
        if bad:
            raise TrainingDiverged(
                f"{bad[0]} became {metrics[bad[0]]} at step {self.step}; "
                "try a lower learning_rate or a gradient clip (max_grad_norm)"
            )
        self.history.updates.append((self.step, metrics))
        info["metrics"] = metrics
        for hook in self.hooks:
            hook.on_update(self, metrics)

    def _record_episode(self, ret: float, length: int, info: dict[str, Any]) -> None:
        self.state.episodes += 1
        self.history.episode_returns.append(ret)
        self.history.episode_lengths.append(length)
        self.history.episode_end_steps.append(self.step)
        info["episode_return"], info["episode_length"] = ret, length
        for hook in self.hooks:
            hook.on_episode(self, ret, length)

    def _record_game(self, env_info: dict[str, Any]) -> None:
        """A whole game ended, when the env reports one (Atari in training, where a lost
        life ends the episode: :class:`rlkit.envs.atari.LifeLossTerminal`)."""
        if "game_return" in env_info:
            ret, length = float(env_info["game_return"]), int(env_info["game_length"])
            for hook in self.hooks:
                hook.on_game(self, ret, length)

    # -- checkpoints -------------------------------------------------------------------------
    def checkpoint(self) -> Path:
        """Write a full checkpoint (see :mod:`rlkit.run.checkpoint`) and return its folder."""
        from rlkit.run.checkpoint import save_checkpoint

        if self.folder is None:
            raise ValueError("checkpoints need a run_dir")
        _check_finite(self.agent)
        self.state.seconds = self.history.total_seconds
        self.state.obs = structure.to_json(self.obs)
        state = {"step": self.step, **asdict(self.state)}
        loop = {
            "state": state,
            "history": self.history.to_dict(),
            "hooks": hook_states(self.hooks),
            "run": {"metrics_rows": self.logger.rows_written},
        }
        path = save_checkpoint(self.folder, self.agent, loop, self.env, self.keep_checkpoints)
        self.last_checkpoint_step = self.step
        return path

    def close(self) -> None:
        """Close the metrics files and let go of the run folder (if this process held it)."""
        self.logger.close()
        if self.folder is not None:
            self.folder.unlock()


def _check_finite(agent) -> None:
    for group, variables in agent.checkpoint_variables().items():
        for v in variables:
            if not np.all(np.isfinite(v.numpy())):
                raise TrainingDiverged(
                    f"{group} weights are no longer finite at step {agent.num_steps}; "
                    "the last good checkpoint is kept"
                )


def train(
    agent,
    env,
    steps: int,
    seed: int | None = None,
    callback: Callback | None = None,
    max_episodes: int | None = None,
    hooks: Iterable[Hook] = (),
    progress: bool = False,
) -> TrainHistory:
    """Run ``agent`` in ``env`` for ``steps`` more environment steps, learning as it goes.

    Each step: ``agent.act(obs)``, ``env.step``, ``agent.observe_next(...)`` (and
    ``agent.observe_first(obs)`` where an episode begins), ``agent.update()``.
    ``seed`` (default: the agent's seed) seeds the first ``env.reset``. Training also
    stops after ``max_episodes`` episodes, or when ``callback(step, info, history)`` (or a
    hook's ``on_step``) returns False. ``progress``: the CLI's progress line on stderr
    (quiet by default). For evaluation during training, checkpoints and logs, use
    :class:`Trainer` with a ``run_dir``.
    """
    import contextlib

    from rlkit.run.evaluation import check_fits, env_of

    if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps <= 0:
        raise UsageError(f"steps must be a positive whole number, got {steps!r}")
    env = env_of(env)
    check_fits(agent, env)
    callbacks = [callback] if callback else []
    bar = contextlib.nullcontext()
    if progress:
        from rlkit.run.progress import TrainingProgress

        bar = TrainingProgress(
            agent.num_steps + steps, f"{agent.name} {_env_name(env)}", start=agent.num_steps,
            total_episodes=max_episodes or 0,
        )  # fmt: skip
        callbacks.append(bar)
    trainer = Trainer(agent, env, seed=seed, callbacks=callbacks, hooks=hooks)
    try:
        with bar:
            return trainer.run(agent.num_steps + steps, max_episodes=max_episodes)
    finally:
        trainer.close()


def _env_name(env) -> str:
    spec = env.spec
    return spec.id if spec is not None else type(env).__name__
