"""A whole rlkit run as library calls: resolve it, start or resume it, drive it to the end.

What ``rlkit train`` and ``rlkit resume`` do, without the shell: nothing here prints
or exits the process, so sweep runners, benchmarks and notebooks run exactly what the
CLI runs and get a :class:`RunResult` back.

    from rlkit.run import experiment
    plan = experiment.plan("dqn", env="CartPole-v1", steps=20_000, seed=3,
                           overrides={"learning_rate": 1e-3})
    result = experiment.run(plan, out="runs")
    result.final_return, result.best_return, result.run_dir

- :func:`plan`: defaults < config file ``[run]``/``[agent]`` < arguments < ``overrides``,
  each agent's own defaults for steps, episodes and evaluation filled in, every value
  validated (UsageError with one line) before TensorFlow is imported;
- :func:`start` makes the run folder, the environments, the agent and the trainer;
  :func:`resume` rebuilds the trainer of a stopped run from its newest checkpoint;
- :func:`drive` trains to the end (or a stop request, or divergence) and :func:`finish`
  saves the final model, evaluates final and best models on the same fresh episodes,
  writes ``summary.json`` and ``curves.png``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rlkit.agents.registry import AgentSpec, agent_spec
from rlkit.config.presets import Preset
from rlkit.config.run import RunConfig
from rlkit.core import seeding
from rlkit.core.errors import UsageError

FINISHED, INTERRUPTED, DIVERGED = "finished", "interrupted", "diverged"


@dataclass(frozen=True)
class RunPlan:
    """A resolved, validated run: the ``[run]`` settings and the agent config.

    ``preset``: the shipped preset under the config file and options (None: the agent's
    generic defaults); ``preset_picked``: True when it was chosen by the environment
    rather than named with ``preset=``.
    """

    run: RunConfig
    agent_config: Any
    preset: Preset | None = None
    preset_picked: bool = False

    @property
    def spec(self) -> AgentSpec:
        return agent_spec(self.run.agent)


@dataclass
class RunResult:
    """What a run ended with.

    status: ``"finished"``, ``"interrupted"`` (a stop request; a checkpoint was written)
    or ``"diverged"`` (a loss or weight became NaN/inf; the last good checkpoint is kept).
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


def plan(
    agent: str | None = None,
    env: str | None = None,
    *,
    steps: int | None = None,
    seed: int | None = None,
    num_envs: int | None = None,
    episodes: int | None = None,
    eval_every: int | None = None,
    eval_episodes: int | None = None,
    checkpoint_every: int | None = None,
    config_file: str | Path | None = None,
    overrides: Mapping[str, Any] | Iterable[str] = (),
    preset: str | None = None,
) -> RunPlan:
    """Resolve a run as ``rlkit train`` would; raises UsageError naming what is wrong.

    Precedence: the agent's defaults < the preset < the config file < arguments <
    ``overrides``. ``preset``: a shipped preset's name (``"dqn3"``, ``"dqn/dqn3"``),
    ``"none"`` for the generic defaults, or None: the config file's ``[run] preset``,
    else the preset shipped for this agent and environment, if any (``rlkit presets``).
    ``overrides`` are agent config keys: a mapping or ``"key=value"`` strings (``--set``).
    Arguments left None take the config file's value, else the preset's, else the
    agent's default.
    """
    from rlkit.config import presets
    from rlkit.config.options import make_config, parse_overrides
    from rlkit.config.run import load_config_file, resolve_run_config

    file_run, file_agent = load_config_file(config_file) if config_file else ({}, {})
    agent_name = agent if agent is not None else file_run.get("agent")
    chosen = preset if preset is not None else (file_run.get("preset") or None)
    picked = None
    if agent_name is not None and chosen != presets.NONE:
        spec = agent_spec(str(agent_name))
        if chosen:
            picked = presets.lookup(spec.name, str(chosen))
        else:
            picked = presets.for_env(spec.name, env or file_run.get("env") or spec.default_env)
    if picked is not None:  # under the config file: a run's own config.toml wins
        file_run = {**{k: v for k, v in picked.run.items() if k != "agent"}, **file_run}
        file_agent = {**picked.agent_config, **file_agent}
    file_run["preset"] = picked.name if picked is not None else presets.NONE
    given = {
        "agent": agent, "env": env, "steps": steps, "seed": seed, "episodes": episodes,
        "num_envs": num_envs, "eval_every": eval_every, "eval_episodes": eval_episodes,
        "checkpoint_every": checkpoint_every,
    }  # fmt: skip
    if agent is None and "agent" not in file_run:
        raise UsageError(
            "missing AGENT: e.g. 'rlkit train dqn --env CartPole-v1' (or --config FILE)"
        )
    run = resolve_run_config(file_run, given)
    spec = agent_spec(run.agent)
    env_id = run.env or spec.default_env
    env_defaults = spec.env_defaults.get(env_id, {})
    defaults = {"agent": spec.name, "env": env_id,
                "steps": run.steps or env_defaults.get("steps", spec.default_steps)}  # fmt: skip
    if eval_every is None and "eval_every" not in file_run:
        defaults["eval_every"] = spec.default_eval_every
    if episodes is None and "episodes" not in file_run:
        defaults["episodes"] = env_defaults.get("episodes", spec.default_episodes)
    run = resolve_run_config(file_run, given | defaults)
    if not isinstance(overrides, Mapping):
        overrides = parse_overrides(overrides)
    agent_config = make_config(spec.config_class(), {**file_agent, **overrides})
    return RunPlan(run, agent_config, picked, picked is not None and not chosen)


def make_envs(run: RunConfig, spec: AgentSpec):
    """The training env of ``run`` (a vector env with ``num_envs > 1``), checked against
    the agent; UsageError for an unknown id or spaces the agent cannot handle."""
    from rlkit.envs.make import make_env, make_vector_env

    env = make_env(run.env)
    spec.check_spaces(env.observation_space, env.action_space, run.env)
    if run.num_envs == 1:
        return env
    if not spec.vector_envs:
        raise UsageError(f"{spec.name} learns on-policy from whole episodes: drop --num-envs")
    env.close()
    return make_vector_env(run.env, run.num_envs)


def start(
    run_plan: RunPlan,
    out: str | Path = "runs",
    tensorboard: bool = True,
    run_dir: str | Path | None = None,
):
    """Create the run folder (``out/<agent>-<env>-<seed>-<time>``, or exactly ``run_dir``,
    which must not hold anything yet), the agent and its
    :class:`~rlkit.run.loop.Trainer`; write ``config.toml``. Returns the trainer
    (``trainer.run_dir`` is the folder)."""
    from rlkit.config import run as runs

    run, spec, config = run_plan.run, run_plan.spec, run_plan.agent_config
    env = make_envs(run, spec)
    if run.num_envs > 1 and config.buffer_size < run.num_envs:
        raise UsageError(
            f"buffer_size ({config.buffer_size}) must hold one step of all "
            f"{run.num_envs} environments"
        )
    if run_dir is None:
        run_dir = runs.create_run_dir(out, spec.name, run.env, run.seed)
    else:
        run_dir = Path(run_dir)
        if run_dir.exists() and any(run_dir.iterdir()):
            raise UsageError(f"{run_dir} already holds files; choose an empty or new folder")
        run_dir.mkdir(parents=True, exist_ok=True)
    try:
        from rlkit.core.quiet import import_tensorflow_quietly

        import_tensorflow_quietly()
        agent = spec.load_class().from_env(env, seed=run.seed, config=config)
    except MemoryError:
        shutil.rmtree(run_dir, ignore_errors=True)  # it holds nothing yet
        raise UsageError("not enough memory for this agent (is buffer_size too large?)") from None
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)
        raise
    runs.write_config(run_dir, run, agent.config)  # as resolved by the agent (presets)
    return _trainer(agent, env, run, run_dir, tensorboard)


def _trainer(agent, env, run: RunConfig, run_dir: Path, tensorboard: bool):
    from rlkit.envs.make import make_env
    from rlkit.run.loop import Trainer

    return Trainer(
        agent,
        env,
        seed=run.seed,
        run_dir=run_dir,
        eval_env=make_env(run.env, training=False) if run.eval_every else None,
        eval_every=run.eval_every,
        eval_episodes=run.eval_episodes,
        checkpoint_every=run.checkpoint_every,
        tensorboard=tensorboard,
    )


def resume(run_dir: str | Path, steps: int | None = None, episodes: int | None = None):
    """The trainer of the stopped run in ``run_dir``, at its newest checkpoint, and its
    :class:`RunConfig` with the limits raised to ``steps`` / ``episodes`` when given.

    UsageError when the folder is no run, has no usable checkpoint, or is finished
    (``summary.json``) and already reached the limits. A run that reached its limits but
    stopped before ``summary.json`` is returned as is: :func:`drive` only finishes it.
    """
    from rlkit.config.run import SUMMARY_FILE, read_run_config
    from rlkit.run.checkpoint import checkpoints_newest_first, read_checkpoint_summary

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"no run folder at {run_dir}")
    run, _ = read_run_config(run_dir)
    candidates = checkpoints_newest_first(run_dir / "checkpoints")
    for checkpoint in candidates:  # the newest readable one (corrupt ones are passed over)
        try:
            saved = read_checkpoint_summary(checkpoint)
            break
        except UsageError:
            if checkpoint == candidates[-1]:
                raise
    if saved["agent"] != run.agent:
        raise UsageError(
            f"{checkpoint} holds a {saved['agent']} agent but {run_dir} is a {run.agent} run"
        )
    for name, value in (("steps", steps), ("episodes", episodes)):
        if value is not None and value < (1 if name == "steps" else 0):
            raise UsageError(f"--{name} must be a positive number, got {value}")
    run = replace(
        run,
        steps=run.steps if steps is None else steps,
        episodes=run.episodes if episodes is None else episodes,
    )
    # A run stopped after its last checkpoint but before summary.json (its final evaluation
    # was interrupted) is resumed with nothing left to train: drive() only finishes it.
    finished = (run_dir / SUMMARY_FILE).is_file()
    if saved["step"] >= run.steps and finished:
        raise UsageError(
            f"{run_dir} is already at step {saved['step']}; pass --steps above that to go on"
        )
    if run.episodes and saved["episodes"] >= run.episodes and finished:
        raise UsageError(
            f"{run_dir} already has {saved['episodes']} episodes; "
            "pass --episodes above that (or 0 for no limit) to go on"
        )
    from rlkit.core.quiet import import_tensorflow_quietly
    from rlkit.envs.make import make_env, make_vector_env
    from rlkit.run.loop import Trainer

    import_tensorflow_quietly()
    trainer = Trainer.resume(
        run_dir,
        lambda: make_env(run.env, training=False),
        train_env_factory=(lambda: make_vector_env(run.env, run.num_envs))
        if run.num_envs > 1
        else (lambda: make_env(run.env)),
        eval_every=run.eval_every,
        eval_episodes=run.eval_episodes,
        checkpoint_every=run.checkpoint_every,
    )
    return trainer, run


def drive(
    trainer, run: RunConfig, progress=None, handle_signals: bool = True, on_stop=None
) -> RunResult:
    """Train ``trainer`` to ``run``'s limits, then :func:`finish` it.

    ``progress``: an optional training callback that is also a context manager (e.g. the
    CLI's progress bar). With ``handle_signals`` (main thread only) SIGINT/SIGTERM stop
    the run cleanly with a checkpoint: status ``"interrupted"``; ``on_stop(signum)`` is
    called as soon as the signal arrives (from a helper thread), e.g. to say so.
    """
    import contextlib

    from rlkit.run.loop import TrainingDiverged, stop_on_signals

    run_dir = trainer.run_dir
    if progress is not None:
        trainer.callbacks.append(progress)
    signals = stop_on_signals(trainer, on_stop) if handle_signals else contextlib.nullcontext()
    try:
        with signals, progress if progress is not None else contextlib.nullcontext():
            history = trainer.run(run.steps, max_episodes=run.episodes or None)
    except TrainingDiverged as exc:
        trainer.close()
        checkpoints = run_dir / "checkpoints"
        if any(checkpoints.glob("step-*")):
            message = f"training stopped: {exc}; checkpoints in {checkpoints}"
        else:
            message = f"training stopped: {exc}; it diverged before the first checkpoint"
        return RunResult(run_dir, DIVERGED, trainer.history, message)
    finally:
        if progress is not None:
            trainer.callbacks.remove(progress)
    trainer.close()
    if history.interrupted:
        message = (
            f"stopped at step {history.steps}; checkpoint saved. "
            f"Continue with: rlkit resume {run_dir}"
        )
        return RunResult(run_dir, INTERRUPTED, history, message)
    return finish(trainer, run)


def finish(trainer, run: RunConfig) -> RunResult:
    """Save the final model, evaluate it (and the best model, if evaluations kept one) on
    ``eval_episodes`` fresh greedy episodes, write ``summary.json`` and ``curves.png``."""
    from rlkit.agents.base import load
    from rlkit.config import run as runs
    from rlkit.envs.make import make_env
    from rlkit.run.loop import evaluate, save_model

    agent, history, run_dir = trainer.agent, trainer.history, trainer.run_dir
    save_model(agent, run_dir / runs.MODEL_DIR)
    final_env = make_env(run.env, training=False)
    eval_seed = seeding.final_eval_seed(run.seed)
    mean, std = evaluate(agent, final_env, episodes=run.eval_episodes, seed=eval_seed)
    summary = {
        "agent": agent.name, "env": run.env, "seed": run.seed, "steps": history.steps,
        "episodes": len(history.episode_returns),
        **_timing(history),
        "eval_episodes": run.eval_episodes,
        "final_model": {"eval_return_mean": mean, "eval_return_std": std},
    }  # fmt: skip
    n = run.eval_episodes
    headline = f"eval return {_score(mean, std, n)} over {n} greedy episodes"
    if trainer.state.best_step is not None:
        best = load(run_dir / "best")
        best_mean, best_std = evaluate(best, final_env, episodes=run.eval_episodes, seed=eval_seed)
        summary["best_model"] = {
            "step": trainer.state.best_step,
            "training_eval_return_mean": trainer.state.best_eval,
            "eval_return_mean": best_mean,
            "eval_return_std": best_std,
        }
        headline = (
            f"eval return {_score(best_mean, best_std, n)} over {n} greedy episodes (best "
            f"model, step {trainer.state.best_step}, in best/; final model "
            f"{_score(mean, std, n)}, in model/)"
        )
    runs.write_summary(run_dir, summary)
    if history.episode_returns:  # the learning curve, as `rlkit plot RUN_DIR` draws it
        from rlkit.run.plotting import plot_runs

        plot_runs([run_dir], run_dir / "curves.png")
    message = (
        f"{agent.name} {run.env}: {headline} after {history.steps} steps "
        f"({summary['steps_per_second']:.0f} steps/s); saved to {run_dir}"
    )
    return RunResult(run_dir, FINISHED, history, message, summary, agent.report(trainer.env))


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
    return drive(trainer, run_plan.run, progress, handle_signals)
