"""A whole rlkit run as library calls: resolve it, start or resume it, drive it to the end.

What ``rlkit train`` and ``rlkit resume`` do, without the shell: nothing here prints
or exits the process, so sweep runners, benchmarks and notebooks run exactly what the
CLI runs and get a :class:`RunResult` back.

    from rlkit import experiment
    plan = experiment.plan("dqn", env="CartPole-v1", steps=20_000, seed=3,
                           overrides={"learning_rate": 1e-3})
    result = experiment.run(plan, out="runs")
    result.final_return, result.best_return, result.run_dir

- :func:`plan` (:mod:`rlkit.run.plan`): every value resolved and validated (UsageError
  with one line) before TensorFlow is imported, the environment made once to check it;
- :func:`start` makes the run folder, the environments, the agent and the trainer;
  :func:`resume` (:mod:`rlkit.run.resume`) rebuilds the trainer of a stopped run from
  its newest checkpoint;
- :func:`drive` trains to the end (or a stop request, or divergence) and :func:`finish`
  saves the final model, evaluates final and best models on the same fresh episodes,
  writes ``summary.json`` and the learning curve.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlkit.config.run import RunConfig
from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.files import first_missing, remove_made_folders
from rlkit.run.folder import RunFolder
from rlkit.run.hooks.base import Hook, check_hooks
from rlkit.run.plan import RunPlan, make_envs, plan, variant_name

__all__ = [
    "DIVERGED", "FAILED", "FINISHED", "INTERRUPTED", "RunPlan", "RunResult", "check",
    "check_hooks", "drive", "finish",
    "make_envs", "plan", "resume", "run", "start", "variant_name",
]  # fmt: skip

FINISHED, INTERRUPTED, DIVERGED, FAILED = "finished", "interrupted", "diverged", "failed"


def resume(
    run_dir: str | Path,
    steps: int | None = None,
    episodes: int | None = None,
    hooks: Iterable[Hook] = (),
):
    """:func:`rlkit.run.resume.resume_run`: the trainer of a stopped run and its settings
    (``hooks``: the run's own, as :func:`start` takes them). (Imported when called: the
    loop brings gymnasium, which usage errors need not wait for.)"""
    hooks = check_hooks(hooks)
    from rlkit.run.resume import resume_run

    return resume_run(run_dir, steps, episodes, hooks)


@dataclass
class RunResult:
    """What a run ended with.

    status: ``"finished"``, ``"interrupted"`` (a stop request; a checkpoint was written),
    ``"diverged"`` (a loss or weight became NaN/inf; the last good checkpoint is kept) or
    ``"failed"`` (a checkpoint could not be written, e.g. the disk is full; the last
    complete one is kept).
    summary: the ``summary.json`` of a finished run (final and best model returns).
    message: one line saying what happened (the CLI prints it).
    report: the agent's own lines after training (e.g. a bandit's arm probabilities).
    """

    run_dir: Path
    status: str
    history: Any
    message: str
    summary: dict[str, Any] = field(default_factory=dict)
    report: str | None = None

    @property
    def final_return(self) -> float | None:
        """Mean greedy return of the final model (None unless finished)."""
        return self.summary.get("final_model", {}).get("eval_return_mean")

    @property
    def best_return(self) -> float | None:
        """Mean greedy return of the best evaluated model (None without evaluations)."""
        return self.summary.get("best_model", {}).get("eval_return_mean")


def start(
    run_plan: RunPlan,
    out: str | Path = "runs",
    tensorboard: bool = True,
    run_dir: str | Path | None = None,
    hooks: Iterable[Hook] = (),
    loop: str = "auto",
):
    """Create the run folder (``out/<variant>-<env>-<seed>-<time>``, the variant as
    :func:`~rlkit.run.plan.variant_name` names it, e.g. ``td3`` for DDPG with ``td3 =
    true``; or exactly ``run_dir``, which must not hold anything yet), the agent, its
    :class:`~rlkit.run.run.Run` (``config.toml`` written) and its
    :class:`~rlkit.run.loop.Trainer` with ``hooks`` after the built-in ones (as
    ``Trainer(hooks=...)``). Returns the trainer (``trainer.folder`` is the run folder).

    ``loop``: ``"auto"`` takes the compiled loop (:mod:`rlkit.run.compiled.trainer`) where it
    can run (DQN and DDPG on rlkit's TensorFlow environments), ``"compiled"`` insists on it
    (a UsageError saying why not), ``"python"`` keeps the usual loop; ``trainer.loop_note``
    is the line saying which (None for a run only the Python loop could take)."""
    from rlkit.run.compiled.choice import choose_loop

    hooks = check_hooks(hooks)
    settings, spec, config = run_plan.settings, run_plan.spec, run_plan.agent_config
    compiled, note = choose_loop(settings.env, spec.name, config, loop)
    env = make_envs(settings, spec)
    # (an on-policy rollout, PPO's, has no buffer_size: it holds n_steps of each env)
    capacity = getattr(config, "buffer_size", settings.num_envs)
    if settings.num_envs > 1 and capacity < settings.num_envs:
        raise UsageError(
            f"buffer_size ({config.buffer_size}) must hold one step of all "
            f"{settings.num_envs} environments"
        )
    made = first_missing(Path(out) if run_dir is None else Path(run_dir))
    if run_dir is None:
        folder = RunFolder.create(out, run_plan.variant, settings.env, settings.seed)
    else:
        folder = RunFolder.create_at(run_dir)
    run = None
    try:
        from rlkit.core.quiet import import_tensorflow_quietly
        from rlkit.run.run import Run

        import_tensorflow_quietly()
        agent = spec.load_class().from_env(env, seed=settings.seed, config=config)
        eval_env = _eval_env(settings)
        # held until the trainer is closed; config.toml as resolved by the agent (presets)
        run = Run.create(folder, settings, agent.config, tensorboard=tensorboard)
        make = _compiled_trainer if compiled else _trainer
        trainer = make(agent, env, eval_env, settings, run, hooks)
        trainer.loop_note = note
        return trainer
    except BaseException as exc:
        # nothing written stays: the run folder goes, and the folders above it this call
        # made (an --out that was there before is kept, with what it held)
        if run is not None:
            run.close()
        folder.remove()
        remove_made_folders(folder.path, made)
        if isinstance(exc, MemoryError):
            raise UsageError(
                "not enough memory for this agent (is buffer_size too large?)"
            ) from None
        raise


def check(run_plan: RunPlan) -> None:
    """What :func:`start` checks, without making a run folder: the environment and its
    spaces, and the agent built on them (its networks, a builder of one's own). Sweeps and
    tunes call it before any trial starts; UsageError in one line."""
    settings, spec, config = run_plan.settings, run_plan.spec, run_plan.agent_config
    env = make_envs(settings, spec)
    try:
        from rlkit.core.quiet import import_tensorflow_quietly

        import_tensorflow_quietly()
        spec.load_class().from_env(env, seed=settings.seed, config=config)
    except MemoryError:
        raise UsageError("not enough memory for this agent (is buffer_size too large?)") from None
    finally:
        env.close()


def _eval_env(settings: RunConfig):
    from rlkit.envs.make import make_env

    if not settings.eval_every:
        return None
    return make_env(settings.env, training=False, **settings.env_kwargs)


def _trainer(agent, env, eval_env, settings: RunConfig, run, hooks: Iterable[Hook]):
    from rlkit.run.loop import Trainer

    return Trainer(
        agent,
        env,
        seed=settings.seed,
        eval_env=eval_env,
        eval_every=settings.eval_every,
        eval_episodes=settings.eval_episodes,
        hooks=hooks,
        run=run,
    )


def _compiled_trainer(agent, env, eval_env, settings: RunConfig, run, hooks: Iterable[Hook]):
    """The compiled loop's trainer (the vector env only gave the agent its spaces)."""
    from rlkit.run.compiled.trainer import CompiledTrainer

    env.close()
    return CompiledTrainer(
        agent, settings.env, settings.num_envs, settings.seed, run, eval_env=eval_env,
        eval_every=settings.eval_every, eval_episodes=settings.eval_episodes, hooks=hooks,
    )  # fmt: skip


def drive(
    trainer, settings: RunConfig, progress=None, handle_signals: bool = True, on_stop=None
) -> RunResult:
    """Train ``trainer`` to the limits in ``settings``, then :func:`finish` it.

    ``progress``: an optional training callback that is also a context manager (e.g. the
    CLI's progress bar). With ``handle_signals`` (main thread only) SIGINT/SIGTERM stop
    the run cleanly with a checkpoint: status ``"interrupted"``; ``on_stop(signum)`` is
    called as soon as the signal arrives (from a helper thread), e.g. to say so.
    """
    import contextlib

    from rlkit.core.errors import EnvironmentFailed
    from rlkit.run.checkpoint import CheckpointWriteError
    from rlkit.run.hooks.base import CallbackHook
    from rlkit.run.run import TrainingDiverged
    from rlkit.run.signals import stop_on_signals

    run_dir, folder = trainer.run_dir, trainer.folder
    session = [] if progress is None else [CallbackHook(progress)]
    signals = stop_on_signals(trainer, on_stop) if handle_signals else contextlib.nullcontext()
    try:
        with signals, progress if progress is not None else contextlib.nullcontext():
            history = trainer.run(settings.steps, settings.episodes or None, hooks=session)
        if history.interrupted:
            message = (
                f"stopped at step {history.steps}; checkpoint saved. "
                f"Continue with: rlkit resume {run_dir}"
            )
            return RunResult(run_dir, INTERRUPTED, history, message)
        try:
            return finish(trainer, settings)
        except KeyboardInterrupt:  # Ctrl-C in the final evaluation: the checkpoint is whole
            message = (
                f"stopped in the final evaluation at step {history.steps}; training is "
                f"complete and checkpointed. Finish with: rlkit resume {run_dir}"
            )
            return RunResult(run_dir, INTERRUPTED, history, message)
    except TrainingDiverged as exc:
        if folder.has_checkpoints():
            message = f"training stopped: {exc}; checkpoints in {folder.checkpoints_dir}"
        else:
            message = f"training stopped: {exc}; it diverged before the first checkpoint"
        return RunResult(run_dir, DIVERGED, trainer.history, message)
    except CheckpointWriteError as exc:
        return RunResult(run_dir, FAILED, trainer.history, f"training stopped: {exc}")
    except EnvironmentFailed as exc:  # the user's environment: one line, what is left named
        trainer.close()
        raise EnvironmentFailed(f"{exc}; {_left_behind(folder)}") from exc.__cause__
    finally:
        trainer.close()  # (and lets go of the run folder)


def _left_behind(folder: RunFolder | None) -> str:
    """What a run its environment failed leaves: nothing (the folder goes) before its first
    checkpoint; after it, the folder, to resume once the environment is fixed."""
    if folder is None:
        return "nothing was written"
    if folder.has_checkpoints():
        return (f"its checkpoints are kept in {folder.path}: fix the environment and rlkit "
                f"resume {folder.path}, or delete the folder")  # fmt: skip
    folder.remove()
    return f"the run folder {folder.path} was removed (it had no checkpoint yet)"


def finish(trainer, settings: RunConfig) -> RunResult:
    """Save the final model, evaluate it (and the best model, if evaluations kept one) on
    ``eval_episodes`` fresh greedy episodes, write ``summary.json`` and the learning curve."""
    from rlkit.agents.base import load
    from rlkit.envs.make import make_env
    from rlkit.run.evaluation import episodes_phrase, evaluate
    from rlkit.run.hooks.evaluation_hook import EvaluationHook

    agent, history, folder = trainer.agent, trainer.history, trainer.folder
    run_dir = folder.path
    folder.save_model(agent)
    final_env = make_env(settings.env, training=False, **settings.env_kwargs)
    eval_seed = seeding.final_eval_seed(settings.seed)
    mean, std = evaluate(agent, final_env, episodes=settings.eval_episodes, seed=eval_seed)
    variant = variant_name(settings.agent, agent.config)  # "td3" for DDPG with td3 = true
    summary = {
        "agent": agent.name, "variant": variant, "env": settings.env, "seed": settings.seed,
        "steps": history.steps,
        "episodes": len(history.episode_returns),
        **_timing(history),
        "eval_episodes": settings.eval_episodes,
        "final_model": {"eval_return_mean": mean, "eval_return_std": std},
    }  # fmt: skip
    n = settings.eval_episodes
    played = episodes_phrase(n, agent.evaluation_epsilon,
                             not getattr(agent, "deterministic_eval", True))  # fmt: skip
    line = f"eval return {_score(mean, std, n)} over {played}"
    evaluation = next((h for h in trainer.hooks if isinstance(h, EvaluationHook)), None)
    if evaluation is not None and evaluation.best_step is not None:
        best = load(folder.best_dir)
        best_mean, best_std = evaluate(
            best, final_env, episodes=settings.eval_episodes, seed=eval_seed
        )
        summary["best_model"] = {
            "step": evaluation.best_step,
            "training_eval_return_mean": evaluation.best_eval,
            "eval_return_mean": best_mean,
            "eval_return_std": best_std,
        }
        line = headline((mean, std), (best_mean, best_std), evaluation.best_step, n, played)
    folder.write_summary(summary)
    if history.episode_returns:  # the learning curve, as `rlkit plot RUN_DIR` draws it
        from rlkit.run.plotting import plot_runs

        plot_runs([run_dir], folder.curves_path)
    message = (
        f"{variant} {settings.env}: {line} after {history.steps} steps "
        f"({summary['steps_per_second']:.0f} steps/s); saved to {run_dir}"
    )
    return RunResult(run_dir, FINISHED, history, message, summary, agent.report(trainer.env))


def headline(
    final: tuple[float, float], best: tuple[float, float], best_step: int, episodes: int,
    played: str,
) -> str:  # fmt: skip
    """The final line's figures: the model that scored higher on the same fresh episodes
    first (the final one on a tie: ``model/``, what ``rlkit evaluate RUN`` plays), the
    other in brackets."""
    final_text = _score(*final, episodes)
    best_text = _score(*best, episodes)
    if final[0] >= best[0]:
        return (f"eval return {final_text} over {played} (final model, in model/; best model, "
                f"step {best_step}, in best/: {best_text})")  # fmt: skip
    return (f"eval return {best_text} over {played} (best model, step {best_step}, in best/; "
            f"final model {final_text}, in model/)")  # fmt: skip


def _score(mean: float, std: float, episodes: int) -> str:
    """``mean ± std``, with the mean's standard error (how far to trust the mean)."""
    return f"{mean:.1f} ± {std:.1f} (s.e. {std / max(episodes, 1) ** 0.5:.1f})"


def _timing(history) -> dict[str, Any]:
    """Seconds and steps/s over the whole run; after a resume also this session's part.

    A run resumed from a checkpoint of an older rlkit (which did not record its training
    time) reports this session only, and says so.
    """
    total = history.total_seconds
    if total is None:
        return {
            "seconds": round(history.seconds, 3),
            "steps_per_second": round(history.steps_per_second, 1),
            "timing_covers": "the last session only (earlier sessions were not timed)",
        }
    timing = {
        "seconds": round(total, 3),
        "steps_per_second": round(history.steps / total, 1) if total > 0 else 0.0,
    }
    if history.earlier_seconds:
        timing["this_session"] = {
            "steps": history.steps_this_session,
            "seconds": round(history.seconds, 3),
            "steps_per_second": round(history.steps_per_second, 1),
        }
    return timing


def run(
    run_plan: RunPlan,
    out: str | Path = "runs",
    progress=None,
    handle_signals: bool = True,
    tensorboard: bool = True,
) -> RunResult:
    """:func:`start` then :func:`drive`: a whole run, as ``rlkit train`` does it."""
    trainer = start(run_plan, out, tensorboard=tensorboard)
    return drive(trainer, run_plan.settings, progress, handle_signals)
