"""The training loop every agent shares: act, step, observe, update, and hooks around it.

``train(agent, env, steps)`` is the one-call form. :class:`Trainer` is the loop itself:
it steps the environment(s) and the agent, keeps the episode bookkeeping (the one owner
of it), and hands what happened to its hooks (:mod:`rlkit.run.hooks`) through a narrow
:class:`~rlkit.run.hooks.LoopContext`: metrics, evaluation with the best model, and any
hook of the user's. A run folder's life (its lock, ``config.toml``, the metrics files,
checkpoints and their cadence, resume) is a :class:`~rlkit.run.run.Run`'s: the Trainer
makes one from ``run_dir``, or is given one (``run=``, as ``rlkit resume`` does).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from rlkit.core import seeding, structure
from rlkit.core.errors import UsageError
from rlkit.run.folder import RunFolder
from rlkit.run.hooks.base import Callback, CallbackHook, Hook, check_callbacks, check_hooks
from rlkit.run.hooks.evaluation_hook import EvaluationHook
from rlkit.run.run import Restored, Run, TrainingDiverged
from rlkit.run.state import LoopState, TrainHistory
from rlkit.run.streams import CHECK_EVERY, Streams
from rlkit.run.trainer_base import TrainerBase

__all__ = ["LoopState", "TrainHistory", "Trainer", "TrainingDiverged", "train"]


class Trainer(TrainerBase):
    """Runs an agent in an environment and calls hooks around each step.

    Args:
        agent: any rlkit agent (``act``, ``observe_first``/``observe_next``, ``update``).
        env: the training environment, or a gymnasium ``VectorEnv`` (an agent with
            ``vector_envs``).
        seed: seeds the first ``env.reset`` and the action space (default: the agent's).
        run_dir: the run folder (:class:`~rlkit.run.folder.RunFolder`) for ``metrics.csv``,
            TensorBoard, ``checkpoints/`` and ``best/`` (a :class:`~rlkit.run.run.Run` is
            made for it); None keeps everything in memory.
        eval_env: environment for greedy evaluation every ``eval_every`` steps
            (``eval_episodes`` episodes each); the best model is saved to ``best/``.
        checkpoint_every: steps between checkpoints (0: only on stop and at the end).
        callbacks: ``callback(step, info, history)`` after every step (see
            :class:`~rlkit.run.hooks.CallbackHook`); returning False stops training.
        hooks: more :class:`~rlkit.run.hooks.Hook` objects, called after the built-in ones
            (metrics, evaluation, checkpoints) and before the callbacks.
        run: the :class:`~rlkit.run.run.Run` to train in, instead of ``run_dir`` (its own
            ``tensorboard``, ``checkpoint_every`` and ``keep_checkpoints`` apply); a
            restored one (:meth:`~rlkit.run.run.Run.restore`) says where the loop starts.
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
        run: Run | None = None,
    ) -> None:
        if run is not None and run_dir is not None:
            raise ValueError("give a Trainer a run_dir or a run, not both")
        if eval_every and eval_env is None:
            raise ValueError("eval_every needs an eval_env")
        hooks, callbacks = check_hooks(hooks), check_callbacks(callbacks)  # before a folder
        # one environment is one stream of experience, a gymnasium VectorEnv N (batched)
        self.streams = Streams(env)
        self.num_envs = self.streams.count if self.streams.vector else 0
        if self.streams.vector and not agent.vector_envs:
            raise UsageError(f"{agent.name} cannot train on vector environments")
        if run is None and run_dir is not None:
            run = Run(run_dir, tensorboard, checkpoint_every, keep_checkpoints)
        super().__init__(
            agent, env, agent.seed if seed is None else int(seed), run, eval_env, eval_every,
            eval_episodes, [*hooks, *(CallbackHook(cb) for cb in callbacks)],
        )  # fmt: skip
        restored = None if run is None else run.restored
        if restored is None:
            self.state.episode_return = [0.0] * self.streams.count
            self.state.episode_length = [0] * self.streams.count
        else:
            self._go_on(restored)

    def _go_on(self, restored: Restored) -> None:
        """Start where a restored checkpoint left off: its observation in its env, or (an
        env the checkpoint could not keep) a fresh episode from a seeded reset."""
        self.history.earlier_seconds = self.state.seconds
        if restored.env is not None and self.state.obs is not None:
            self.obs = structure.from_json(self.state.obs, self.env.observation_space)
            # the streams an agent of an older rlkit's checkpoint had no episode open in
            waiting = self.agent.streams_to_start(self.streams.count)
            if waiting:
                self.agent.observe_first(self.streams.rows(self.obs, waiting), streams=waiting)
        else:
            restart = seeding.restart_seed(self.seed, self.step)
            self.start_episodes(self.streams.reset(restart))

    def run(
        self, total_steps: int, max_episodes: int | None = None, hooks: Iterable[Hook] = ()
    ) -> TrainHistory:
        """Train until the agent's step count (``agent.num_steps``) reaches ``total_steps``
        (or ``max_episodes`` episodes of this trainer end), then call the hooks' ``on_end``
        (with a run folder: a checkpoint). A stop request ends it early
        (``history.interrupted``). ``hooks``: more hooks for this call only, after the
        others (e.g. a progress line). Returns the history.
        """
        if total_steps <= 0:
            raise ValueError(f"steps must be > 0, got {total_steps}")
        if max_episodes is not None and max_episodes <= 0:
            raise ValueError(f"max_episodes must be > 0, got {max_episodes}")
        hooks = check_hooks(hooks)
        if self.owner is not None:
            self.owner.begin(self._settings(total_steps, max_episodes), self.agent.config)
        if self.obs is None:
            self.start_episodes(self.streams.reset(self.seed))
        return self.run_session(total_steps, max_episodes, hooks, self._step)

    def _settings(self, total_steps: int, max_episodes: int | None) -> Any:
        """This session as a ``config.toml``'s run settings (for a folder a user's Trainer
        made); None for an agent or environment rlkit cannot rebuild by name."""
        import gymnasium as gym

        from rlkit.agents.registry import AGENTS
        from rlkit.config.run import RunConfig

        env = self.env.envs[0] if isinstance(self.env, gym.vector.SyncVectorEnv) else self.env
        if env.spec is None or self.agent.name not in AGENTS or self.owner is None:
            return None
        evaluation = next((h for h in self.hooks if isinstance(h, EvaluationHook)), None)
        return RunConfig(
            agent=self.agent.name, env=env.spec.id, steps=total_steps, seed=self.seed,
            num_envs=max(1, self.num_envs), episodes=max_episodes or 0,
            eval_every=evaluation.every if evaluation else 0,
            eval_episodes=evaluation.episodes if evaluation else 10,
            checkpoint_every=self.owner.checkpointer.every,
        )  # fmt: skip

    # -- one step ----------------------------------------------------------------------------
    def start_episodes(self, obs) -> None:
        """Episodes begin at ``obs`` in every stream (what the agent acts on next)."""
        self.obs = obs
        self.state.episode_return = [0.0] * self.streams.count
        self.state.episode_length = [0] * self.streams.count
        self._read_masks()
        self.agent.observe_first(obs)

    def _read_masks(self) -> None:
        """An agent acting with invalid-action masks: those of what it acts on next, read
        from the environment (kept in the loop's state, for a resume)."""
        width = getattr(self.agent, "action_mask_width", 0)
        if width:
            nvec = getattr(getattr(self.agent, "acting", None), "nvec", None)
            self.state.action_masks = self.streams.action_masks(width, nvec).tolist()

    def _step(self) -> dict[str, Any]:
        """One step of every stream (the one environment, or each of a vector env's)."""
        agent, state = self.agent, self.state
        if state.action_masks is None:
            actions = agent.act(self.obs)
        else:
            actions = agent.act(self.obs, action_masks=np.asarray(state.action_masks, bool))
        step = self.streams.step(actions)
        self._read_masks()
        agent.observe_next(actions, step.rewards, step.next_obs, step.terminated, step.truncated)
        if step.ended:
            agent.observe_first(step.first_obs, streams=step.ended)
        metrics = agent.update()
        info: dict[str, Any] = {}
        self._record_update(metrics, info)
        for i, reward in enumerate(self.streams.rewards(step)):
            state.episode_return[i] += reward
            state.episode_length[i] += 1
        if len(self.streams.pending_rewards) >= CHECK_EVERY:
            self.streams.check_finite(self.step)
        for i in step.ended:
            if not math.isfinite(state.episode_return[i]):  # a NaN reward since the check
                self.streams.check_finite(self.step)
            self.record_episode(state.episode_return[i], state.episode_length[i], info)
            self._record_game(step.infos[i])
            state.episode_return[i], state.episode_length[i] = 0.0, 0
        self.obs = step.obs
        return info

    def _record_update(self, metrics, info: dict[str, Any]) -> None:
        if metrics is not None:
            if not all(math.isfinite(v) for v in metrics.values()):
                # a NaN the environment gave is named as the environment's, not a divergence
                self.streams.check_finite(self.step)
            self.record_update(metrics, info)

    def _record_game(self, env_info: dict[str, Any]) -> None:
        """A whole game ended, when the env reports one (Atari in training, where a lost
        life ends the episode: :class:`rlkit.envs.atari.LifeLossTerminal`)."""
        if "game_return" in env_info:
            self.record_game(float(env_info["game_return"]), int(env_info["game_length"]))


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
    bar: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if progress:
        from rlkit.run.progress import TrainingProgress

        line = TrainingProgress(
            agent.num_steps + steps, f"{agent.name} {_env_name(env)}", start=agent.num_steps,
            total_episodes=max_episodes or 0,
        )  # fmt: skip
        callbacks.append(line)
        bar = line
    trainer = Trainer(agent, env, seed=seed, callbacks=callbacks, hooks=hooks)
    try:
        with bar:
            return trainer.run(agent.num_steps + steps, max_episodes=max_episodes)
    finally:
        trainer.close()


def _env_name(env) -> str:
    spec = env.spec
    return spec.id if spec is not None else type(env).__name__
