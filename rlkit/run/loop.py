"""The training loop every agent shares, with evaluation, checkpoints and logging.

``train(agent, env, steps)`` is the one-call form. :class:`Trainer` is the same
loop with a run folder: periodic evaluation (best model kept), checkpoints for
exact resume, ``metrics.csv`` and TensorBoard, and a clean stop on Ctrl-C/SIGTERM.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.schedules import crossed
from rlkit.run.metrics import MetricsLogger

CHECKPOINT_DIR = "checkpoints"
BEST_DIR = "best"


class TrainingDiverged(RuntimeError):
    """A loss or weight became NaN or infinite; the last good checkpoint is kept."""


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


Callback = Callable[[int, dict[str, Any], TrainHistory], "bool | None"]


@dataclass
class LoopState:
    """The loop's own state, saved in checkpoints (JSON-serialisable).

    The step count is not here: it is the agent's ``num_steps`` (one counter; the
    checkpoint file repeats it as ``step`` for readers that do not load the agent).
    """

    episodes: int = 0
    episode_return: float | list[float] = 0.0  # a list with one entry per vector sub-env
    episode_length: int | list[int] = 0
    obs: list | None = None
    evaluations: int = 0
    best_eval: float | None = None
    best_step: int | None = None
    metrics_rows: int = 0
    seconds: float | None = None  # training time up to the checkpoint (None: not recorded)


class Trainer:
    """Runs an agent in an environment, learning, evaluating, logging and checkpointing.

    Args:
        agent: any rlkit agent (``act``/``observe``/``update``).
        env: the training environment.
        seed: seeds the first ``env.reset`` and the action space (default: the agent's).
        run_dir: folder for ``metrics.csv``, TensorBoard, ``checkpoints/`` and ``best/``;
            None keeps everything in memory.
        eval_env: environment for greedy evaluation every ``eval_every`` steps
            (``eval_episodes`` episodes each); the best model is saved to ``best/``.
        checkpoint_every: steps between checkpoints (0: only on stop and at the end).
        callbacks: ``callback(step, info, history)`` after every step; returning False
            stops training. ``info`` holds ``episode_return``/``episode_length`` when an
            episode ended, ``metrics`` when an update ran, ``eval`` after an evaluation,
            and ``logger`` (a :class:`MetricsLogger`; ``logger.scalars`` logs custom values).
    """

    def __init__(
        self,
        agent,
        env,
        seed: int | None = None,
        run_dir: str | Path | None = None,
        eval_env=None,
        eval_every: int = 0,
        eval_episodes: int = 10,
        checkpoint_every: int = 0,
        callbacks: Iterable[Callback] = (),
        tensorboard: bool = True,
        keep_checkpoints: int = 2,
    ) -> None:
        if eval_every and eval_env is None:
            raise ValueError("eval_every needs an eval_env")
        self.agent = agent
        self.env = env
        self.seed = agent.seed if seed is None else int(seed)
        self.run_dir = Path(run_dir) if run_dir is not None else None
        if self.run_dir is not None:
            try:
                self.run_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UsageError(f"cannot make run folder {run_dir}: {exc.strerror}") from None
        self.eval_env = eval_env
        self.eval_every = int(eval_every)
        self.eval_episodes = int(eval_episodes)
        self.checkpoint_every = int(checkpoint_every)
        self.callbacks = list(callbacks)
        self.keep_checkpoints = keep_checkpoints
        self.state = LoopState()
        self.history = TrainHistory()
        self.logger = MetricsLogger(self.run_dir, tensorboard=tensorboard)
        self._obs = None
        self._last_checkpoint_step: int | None = None
        self._stop = threading.Event()
        self.resumed_from: Path | None = None  # the checkpoint folder (Trainer.resume)
        self.skipped_checkpoints: list[str] = []  # newer checkpoints that did not load
        # a gymnasium VectorEnv: N environments stepped together, batched acting
        self.num_envs = int(getattr(env, "num_envs", 0))
        if self.num_envs:
            if not hasattr(agent, "observe_batch"):
                raise UsageError(f"{agent.name} cannot train on vector environments")
            self.state.episode_return = [0.0] * self.num_envs
            self.state.episode_length = [0] * self.num_envs

    @property
    def step(self) -> int:
        """Environment steps taken: the agent's ``num_steps`` (vector envs count each)."""
        return self.agent.num_steps

    # -- control -----------------------------------------------------------------------------
    def request_stop(self) -> None:
        """Ask the loop to stop after the current step (safe from a signal handler)."""
        self._stop.set()

    def run(self, total_steps: int, max_episodes: int | None = None) -> TrainHistory:
        """Train until the agent's step count (``agent.num_steps``) reaches ``total_steps``
        (or ``max_episodes`` episodes of this trainer end), then checkpoint.

        Returns the history. With a run folder a checkpoint is written at the end and
        when a stop was requested (``history.interrupted``).
        """
        if total_steps <= 0:
            raise ValueError(f"steps must be > 0, got {total_steps}")
        if max_episodes is not None and max_episodes <= 0:
            raise ValueError(f"max_episodes must be > 0, got {max_episodes}")
        agent, env, state, history = self.agent, self.env, self.state, self.history
        self._describe_run(total_steps, max_episodes)
        if self._obs is None:
            env.action_space.seed(self.seed)
            self._obs, _ = env.reset(seed=self.seed)
        start, start_step = time.perf_counter(), agent.num_steps
        last_rate_step, last_rate_time = agent.num_steps, start
        try:
            while agent.num_steps < total_steps:
                if self._stop.is_set():
                    history.interrupted = True
                    break
                if max_episodes is not None and state.episodes >= max_episodes:
                    break
                before = agent.num_steps
                info = self._vector_step() if self.num_envs else self._step()
                step = agent.num_steps
                if step - last_rate_step >= 1000:
                    now = time.perf_counter()
                    rate = (step - last_rate_step) / (now - last_rate_time)
                    self.logger.scalars(
                        step,
                        {"perf/steps_per_second": rate}
                        | {f"train/{k}": v for k, v in agent.diagnostics().items()},
                    )
                    last_rate_step, last_rate_time = step, now
                if self.eval_every and crossed(before, step, self.eval_every):
                    info["eval"] = self.evaluate_now()
                if self.checkpoint_every and crossed(before, step, self.checkpoint_every):
                    self.checkpoint()
                history.steps = step
                history.seconds = time.perf_counter() - start
                history.steps_this_session = step - start_step
                info["logger"] = self.logger
                if any(cb(step, info, history) is False for cb in self.callbacks):
                    break
        finally:
            history.steps = agent.num_steps
            history.seconds = time.perf_counter() - start
            history.steps_this_session = agent.num_steps - start_step
        if self.run_dir is not None and self._last_checkpoint_step != agent.num_steps:
            self.checkpoint()  # (unless a periodic checkpoint was just written at this step)
        return history

    def _describe_run(self, total_steps: int, max_episodes: int | None) -> None:
        """Give a run folder made by a Trainer its ``config.toml`` (if it has none), so that
        ``rlkit resume`` and ``rlkit evaluate`` work on it as on a CLI run. Skipped for an
        agent or environment rlkit cannot rebuild by name (an unregistered env)."""
        from rlkit.agents.registry import AGENTS
        from rlkit.config import run as runs

        if self.run_dir is None or (self.run_dir / runs.CONFIG_FILE).exists():
            return
        spec = getattr(self.env, "spec", None) or getattr(
            getattr(self.env, "envs", [None])[0], "spec", None
        )
        if spec is None or self.agent.name not in AGENTS:
            return
        run = runs.RunConfig(
            agent=self.agent.name, env=spec.id, steps=total_steps, seed=self.seed,
            num_envs=max(1, self.num_envs), episodes=max_episodes or 0,
            eval_every=self.eval_every, eval_episodes=self.eval_episodes,
            checkpoint_every=self.checkpoint_every,
        )  # fmt: skip
        runs.write_config(self.run_dir, run, self.agent.config)

    def _step(self) -> dict[str, Any]:
        """One step of a single environment."""
        agent, env, state = self.agent, self.env, self.state
        obs = self._obs
        action = agent.act(obs)
        next_obs, reward, terminated, truncated, env_info = env.step(action)
        agent.observe(obs, action, reward, next_obs, terminated, truncated)
        metrics = agent.update()
        state.episode_return += float(reward)
        state.episode_length += 1
        info: dict[str, Any] = {}
        self._record_update(metrics, info)
        if terminated or truncated:
            self._record_episode(state.episode_return, state.episode_length, info)
            self._record_game(env_info)
            state.episode_return, state.episode_length = 0.0, 0
            self._obs, _ = env.reset()
        else:
            self._obs = next_obs
        return info

    def _vector_step(self) -> dict[str, Any]:
        """One step of every sub-environment (vector env in SAME_STEP autoreset mode)."""
        agent, state = self.agent, self.state
        obs = self._obs
        actions = agent.act(obs)
        next_obs, rewards, terminated, truncated, infos = self.env.step(actions)
        done = np.logical_or(terminated, truncated)
        stored_next = next_obs
        if done.any():  # the env already reset those: their last observation is in infos
            stored_next = np.array(next_obs, copy=True)
            final = infos["final_obs"]
            for i in np.flatnonzero(done):
                stored_next[i] = final[i]
        agent.observe_batch(obs, actions, rewards, stored_next, terminated, truncated)
        metrics = agent.update()
        info: dict[str, Any] = {}
        self._record_update(metrics, info)
        for i in range(self.num_envs):
            state.episode_return[i] += float(rewards[i])
            state.episode_length[i] += 1
            if done[i]:
                self._record_episode(state.episode_return[i], state.episode_length[i], info)
                self._record_game(_sub_env_info(infos.get("final_info", {}), i))
                state.episode_return[i], state.episode_length[i] = 0.0, 0
        self._obs = next_obs
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
        self.logger.scalars(self.step, {f"train/{k}": v for k, v in metrics.items()})
        info["metrics"] = metrics

    def _record_episode(self, ret: float, length: int, info: dict[str, Any]) -> None:
        state, history = self.state, self.history
        state.episodes += 1
        history.episode_returns.append(ret)
        history.episode_lengths.append(length)
        history.episode_end_steps.append(self.step)
        self.logger.row("episode", self.step, state.episodes, ret, length)
        self.logger.scalars(self.step, {"episode/return": ret, "episode/length": length})
        info["episode_return"], info["episode_length"] = ret, length

    def _record_game(self, env_info: dict[str, Any]) -> None:
        """A ``game`` row when the env reports a whole game ending (Atari in training, where a
        lost life ends the episode: :class:`rlkit.envs.atari.LifeLossTerminal`)."""
        if "game_return" in env_info:
            ret, length = float(env_info["game_return"]), int(env_info["game_length"])
            self.logger.row("game", self.step, self.state.episodes, ret, length)
            self.logger.scalars(self.step, {"game/return": ret, "game/length": length})

    # -- evaluation --------------------------------------------------------------------------
    def evaluate_now(self) -> tuple[float, float]:
        """Greedy evaluation on ``eval_env``; logs it and keeps the best model."""
        state = self.state
        seed = seeding.eval_seed(self.seed, state.evaluations)
        returns = episode_returns(self.agent, self.eval_env, self.eval_episodes, seed=seed)
        mean, std = float(np.mean(returns)), float(np.std(returns))
        state.evaluations += 1
        self.history.evaluations.append((self.step, mean, std))
        self.logger.row("eval", self.step, state.episodes, mean, self.eval_episodes, std)
        self.logger.scalars(self.step, {"eval/return_mean": mean, "eval/return_std": std})
        # ties go to the later, more trained model (its learning rate has annealed further)
        if state.best_eval is None or mean >= state.best_eval:
            state.best_eval, state.best_step = mean, self.step
            if self.run_dir is not None:
                save_model(self.agent, self.run_dir / BEST_DIR)
        return mean, std

    # -- checkpoints -------------------------------------------------------------------------
    def checkpoint(self) -> Path:
        """Write a full checkpoint (see :mod:`rlkit.run.checkpoint`) and return its folder."""
        from rlkit.run.checkpoint import save_checkpoint

        if self.run_dir is None:
            raise ValueError("checkpoints need a run_dir")
        _check_finite(self.agent)
        self.state.metrics_rows = self.logger.rows_written
        self.state.seconds = self.history.total_seconds
        self.state.obs = np.asarray(self._obs).tolist()
        state = {"step": self.step, **asdict(self.state)}
        loop = {"state": state, "history": _history_to_dict(self.history)}
        path = save_checkpoint(
            self.run_dir / CHECKPOINT_DIR, self.agent, loop, self.env, self.keep_checkpoints
        )
        self._last_checkpoint_step = self.step
        return path

    @classmethod
    def resume(
        cls,
        run_dir: str | Path,
        env_factory: Callable[[], Any],
        train_env_factory: Callable[[], Any] | None = None,
        **kwargs,
    ) -> Trainer:
        """A trainer that continues the run in ``run_dir`` from its newest checkpoint.

        A newest checkpoint that does not load (corrupt) is passed over for the next older
        one: ``trainer.skipped_checkpoints`` says which and why, ``trainer.resumed_from``
        is the folder used.

        ``env_factory()`` makes the evaluation env, and the training env when the
        checkpoint could not keep it (``train_env_factory()`` instead, if given: e.g. a
        vector env). Keyword arguments are as for the constructor (eval_every,
        eval_episodes, checkpoint_every, callbacks ...).
        """
        from rlkit.run.checkpoint import load_newest_usable

        run_dir = Path(run_dir)
        checkpoint, (agent, loop, env), skipped = load_newest_usable(run_dir / CHECKPOINT_DIR)
        try:
            saved = dict(loop["state"])
            if int(saved.pop("step")) != agent.num_steps:
                raise ValueError(f"step {loop['state']['step']} != agent step {agent.num_steps}")
            state = LoopState(**saved)
            history = _history_from_dict(loop["history"])
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"corrupt checkpoint {checkpoint}: loop state: {exc!r}") from None
        if kwargs.get("eval_every") and kwargs.get("eval_env") is None:
            kwargs["eval_env"] = env_factory()
        if env is None:
            env = (train_env_factory or env_factory)()
            restored_env = False
        else:
            restored_env = True
        trainer = cls(agent, env, run_dir=run_dir, **kwargs)
        history.earlier_seconds = state.seconds
        trainer.state, trainer.history = state, history
        trainer.resumed_from, trainer.skipped_checkpoints = checkpoint, skipped
        trainer._last_checkpoint_step = agent.num_steps
        trainer.logger.truncate(trainer.state.metrics_rows)
        if restored_env and trainer.state.obs is not None:
            trainer._obs = np.asarray(trainer.state.obs, dtype=env.observation_space.dtype)
        else:  # no pickled env: start a fresh episode
            restart = seeding.restart_seed(trainer.seed, trainer.step)
            trainer.env.action_space.seed(restart)
            trainer._obs, _ = trainer.env.reset(seed=restart)
            n = trainer.num_envs
            trainer.state.episode_return = [0.0] * n if n else 0.0
            trainer.state.episode_length = [0] * n if n else 0
        return trainer

    def close(self) -> None:
        self.logger.close()


def _history_to_dict(history: TrainHistory) -> dict[str, Any]:
    return {
        "episode_returns": history.episode_returns,
        "episode_lengths": history.episode_lengths,
        "episode_end_steps": history.episode_end_steps,
        "evaluations": history.evaluations,
    }


def _history_from_dict(data: dict[str, Any]) -> TrainHistory:
    return TrainHistory(
        episode_returns=list(data["episode_returns"]),
        episode_lengths=list(data["episode_lengths"]),
        episode_end_steps=list(data["episode_end_steps"]),
        evaluations=[tuple(e) for e in data["evaluations"]],
    )


def _check_finite(agent) -> None:
    for group, variables in agent.checkpoint_variables().items():
        for v in variables:
            if not np.all(np.isfinite(v.numpy())):
                raise TrainingDiverged(
                    f"{group} weights are no longer finite at step {agent.num_steps}; "
                    "the last good checkpoint is kept"
                )


def save_model(agent, path: Path) -> Path:
    """``agent.save`` into a temporary folder, then swap it in: never half-written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        agent.save(tmp)
        old = path.with_name(f".{path.name}.old")
        if path.exists():
            shutil.rmtree(old, ignore_errors=True)
            path.rename(old)
        tmp.rename(path)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


@contextlib.contextmanager
def stop_on_signals(trainer: Trainer, on_stop: Callable[[int], None] | None = None):
    """While inside, SIGINT and SIGTERM ask ``trainer`` to stop cleanly (checkpoint, return).

    ``on_stop(signum)`` runs as soon as the first signal arrives, from a helper thread:
    Python runs signal handlers only between bytecodes, so while a long TensorFlow call
    (the first update block compiles for seconds) holds the main thread, the handler
    waits; the helper thread hears the signal at once through ``signal.set_wakeup_fd``.
    A second Ctrl-C raises KeyboardInterrupt (when the main thread next runs Python).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    watched = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.getsignal(s) for s in watched}

    received = []  # signals the Python-level handler has run for

    def handler(signum, frame):
        received.append(signum)
        if signum == signal.SIGINT and received.count(signal.SIGINT) > 1:
            raise KeyboardInterrupt
        trainer.request_stop()

    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    old_wakeup = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)

    def watch() -> None:
        told = False
        while True:
            try:
                data = os.read(read_fd, 64)
            except OSError:
                return
            if not data:  # the pipe was closed: the context is over
                return
            signums = [b for b in data if b in watched]
            if signums and not told:
                told = True
                trainer.request_stop()
                if on_stop is not None:
                    on_stop(signums[0])

    watcher = threading.Thread(target=watch, name="rlkit-signal-watch", daemon=True)
    for s in watched:
        signal.signal(s, handler)
    watcher.start()
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        signal.set_wakeup_fd(old_wakeup)
        os.close(write_fd)
        watcher.join(timeout=1.0)
        os.close(read_fd)


def train(
    agent,
    env,
    steps: int,
    seed: int | None = None,
    callback: Callback | None = None,
    max_episodes: int | None = None,
) -> TrainHistory:
    """Run ``agent`` in ``env`` for ``steps`` more environment steps, learning as it goes.

    Each step: ``agent.act(obs)``, ``env.step``, ``agent.observe(...)``, ``agent.update()``.
    ``seed`` (default: the agent's seed) seeds the first ``env.reset``. Training also
    stops after ``max_episodes`` episodes, or when ``callback(step, info, history)``
    returns False (see :class:`Trainer`). For evaluation during training,
    checkpoints and logs, use :class:`Trainer` with a ``run_dir``.
    """
    trainer = Trainer(agent, env, seed=seed, callbacks=[callback] if callback else ())
    try:
        return trainer.run(agent.num_steps + steps, max_episodes=max_episodes)
    finally:
        trainer.close()


def evaluate(agent, env, episodes: int = 10, seed: int | None = None) -> tuple[float, float]:
    """Mean and standard deviation of the return of ``episodes`` greedy episodes.

    ``seed`` seeds the first reset (later resets continue the env's generator).
    """
    returns = episode_returns(agent, env, episodes, seed)
    return float(np.mean(returns)), float(np.std(returns))


def episode_returns(agent, env, episodes: int, seed: int | None = None) -> list[float]:
    """Returns of ``episodes`` greedy episodes (``agent.act(obs, explore=False)``)."""
    if episodes <= 0:
        raise ValueError(f"episodes must be > 0, got {episodes}")
    returns = []
    obs, _ = env.reset(seed=seed)
    for _ in range(episodes):
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(agent.act(obs, explore=False))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
        obs, _ = env.reset()
    return returns


def _sub_env_info(infos: dict[str, Any], i: int) -> dict[str, Any]:
    """Sub-environment ``i``'s entries of a vector env's info dict (gymnasium stores each key
    as an array, with a ``_key`` mask of the sub-environments that set it)."""
    return {k: v[i] for k, v in infos.items()
            if not k.startswith("_") and infos.get(f"_{k}", np.zeros(i + 1, bool))[i]}  # fmt: skip
