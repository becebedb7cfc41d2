"""Resume: a stopped run's trainer rebuilt from its newest usable checkpoint, in one place.

:func:`resume_run` is what ``rlkit resume`` does (the run's own ``config.toml`` says how
to rebuild its environments and hooks); :func:`resume_trainer` is the same for a run
folder a user's own :class:`~rlkit.run.loop.Trainer` wrote. Both walk the checkpoint
index once, newest first, passing over checkpoints that do not load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from rlkit.config.options import make_config
from rlkit.config.run import RunConfig
from rlkit.core.errors import UsageError
from rlkit.run.checkpoint import (
    checkpoint_model_dir,
    checkpoints_newest_first,
    read_checkpoint_summary,
)
from rlkit.run.compiled.choice import ProgramState
from rlkit.run.folder import CONFIG_FILE, RunFolder
from rlkit.run.hooks.base import Hook
from rlkit.run.loop import Trainer
from rlkit.run.run import Run
from rlkit.run.trainer_base import TrainerBase


def resume_run(
    run_dir: str | Path,
    steps: int | None = None,
    episodes: int | None = None,
    hooks: Iterable[Hook] = (),
):
    """The trainer of the stopped run in ``run_dir``, at its newest checkpoint, and its
    :class:`RunConfig` with the limits raised to ``steps`` / ``episodes`` when given.
    ``hooks``: the run's own hooks beyond the built-in ones (as ``Trainer(hooks=...)``;
    one with state takes back what the checkpoint kept of it).

    UsageError when the folder is no run, has no usable checkpoint, or is finished
    (``summary.json``) and already reached the limits. A run that reached its limits but
    stopped before ``summary.json`` is returned as is: ``drive`` only finishes it.
    """
    folder = RunFolder.open(run_dir)
    run, agent_table = folder.read_config()
    # until the trainer is closed: one process trains a run at a time (a refused resume
    # leaves the folder as it was)
    with Run.claim(folder):
        return _resume_locked(folder, run, steps, episodes, agent_table, hooks)


def _resume_locked(
    folder: RunFolder,
    run: RunConfig,
    steps: int | None,
    episodes: int | None,
    agent_table: dict[str, Any] | None = None,
    hooks: Iterable[Hook] = (),
):
    folder.remove_unfinished_writes()  # of a process killed while writing
    candidates = checkpoints_newest_first(folder)
    saved, skipped = _newest_readable(candidates)
    if saved["agent"] != run.agent:
        raise UsageError(
            f"{candidates[len(skipped)]} holds a {saved['agent']} agent but {folder.path} is "
            f"a {run.agent} run"
        )
    check_config_matches(folder, run, agent_table or {}, candidates[len(skipped)])
    for name, value in (("steps", steps), ("episodes", episodes)):
        if value is not None and value < (1 if name == "steps" else 0):
            raise UsageError(f"--{name} must be a positive number, got {value}")
    if steps is not None and steps < saved["step"]:
        raise UsageError(
            f"{folder.path} is already at step {saved['step']}; --steps is the total to train "
            f"to: pass more than {saved['step']} to go on"
        )
    raised = {"steps": steps, "episodes": episodes}
    try:  # checked as a new run's are (a range, num_envs within the steps)
        run = make_config(RunConfig, {k: v for k, v in raised.items() if v is not None}, base=run)
    except UsageError as exc:
        raise UsageError(str(exc).replace("for steps", "for --steps").replace(
            "for episodes", "for --episodes")) from None  # fmt: skip
    # A run stopped after its last checkpoint but before summary.json (its final evaluation
    # was interrupted) is resumed with nothing left to train: drive() only finishes it.
    if saved["step"] >= run.steps and folder.is_finished:
        raise UsageError(
            f"{folder.path} is already at step {saved['step']}; pass --steps above that to go on"
        )
    if run.episodes and saved["episodes"] >= run.episodes and folder.is_finished:
        raise UsageError(
            f"{folder.path} already has {saved['episodes']} episodes; "
            "pass --episodes above that (or 0 for no limit) to go on"
        )
    from rlkit.core.quiet import import_tensorflow_quietly
    from rlkit.envs.make import make_env, make_vector_env

    import_tensorflow_quietly()
    trainer = _restore(
        folder,
        candidates[len(skipped) :],
        lambda: make_env(run.env, training=False, **run.env_kwargs),
        (lambda: make_vector_env(run.env, run.num_envs, **run.env_kwargs))
        if run.num_envs > 1
        else (lambda: make_env(run.env, **run.env_kwargs)),
        skipped,
        eval_every=run.eval_every,
        eval_episodes=run.eval_episodes,
        checkpoint_every=run.checkpoint_every,
        hooks=hooks,
    )
    return trainer, run


def check_config_matches(
    folder: RunFolder, run: RunConfig, agent_table: dict[str, Any], checkpoint: Path
) -> None:
    """UsageError naming the keys where ``config.toml`` (perhaps edited by hand) no longer
    describes the run its checkpoint holds: an agent key, the seed, or an environment of
    other spaces. A resume trains what the checkpoint holds, so the file would misdescribe
    the run (and its environment would not fit the agent)."""
    import json

    from rlkit.core.spaces import space_to_dict

    try:
        meta = json.loads((checkpoint_model_dir(checkpoint) / "agent.json").read_text())
        saved_config, saved_seed = dict(meta["config"]), meta["seed"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # loading the checkpoint says what is wrong with it
    differ = [
        f"{key} ({_shown(agent_table[key])} in {CONFIG_FILE}, {_shown(saved_config[key])} in "
        "the checkpoint)"
        for key in agent_table
        if key in saved_config and _plain(agent_table[key]) != _plain(saved_config[key])
    ]
    if run.seed != saved_seed:
        differ.append(f"seed ({run.seed} in {CONFIG_FILE}, {saved_seed} in the checkpoint)")
    if not differ:  # the environment: its spaces must be the agent's
        from rlkit.envs.make import make_env

        env = make_env(run.env, **run.env_kwargs)
        try:
            for kind in ("observation_space", "action_space"):
                if kind in meta and _plain(space_to_dict(getattr(env, kind))) != _plain(meta[kind]):
                    differ.append(f"env ({run.env}'s {kind.replace('_', ' ')} is not the "
                                  "checkpoint's)")  # fmt: skip
                    break
        finally:
            env.close()
    if differ:
        raise UsageError(
            f"{folder.config_path} no longer describes the run in {checkpoint.name}: it differs "
            f"in {'; '.join(differ)}; put the file back as the run made it, or start a new run "
            "with 'rlkit train --config FILE'"
        )


def _plain(value: Any) -> Any:
    """Lists for tuples, all the way down (TOML and JSON read lists)."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _shown(value: Any) -> str:
    from rlkit.config.run import toml_value

    try:
        return toml_value(_plain(value))
    except TypeError:
        return repr(value)


def resume_trainer(
    run_dir: str | Path,
    env_factory: Callable[[], Any],
    train_env_factory: Callable[[], Any] | None = None,
    **kwargs,
):
    """A :class:`~rlkit.run.loop.Trainer` that continues the run in ``run_dir`` from its
    newest checkpoint.

    A newest checkpoint that does not load (corrupt) is passed over for the next older
    one and set aside (renamed ``<name>.unusable``, out of the checkpoint index, so that
    pruning never keeps it in place of a good one): ``trainer.skipped_checkpoints`` says
    which and why, ``trainer.resumed_from`` is the folder used. ``env_factory()`` makes
    the evaluation env, and the training env when the checkpoint could not keep it
    (``train_env_factory()`` instead, if given: e.g. a vector env). Keyword arguments are
    the Trainer's (eval_every, eval_episodes, checkpoint_every, callbacks, hooks ...).
    """
    folder = RunFolder(run_dir)
    candidates = checkpoints_newest_first(folder)
    return _restore(folder, candidates, env_factory, train_env_factory, [], **kwargs)


def _newest_readable(
    candidates: Sequence[Path],
) -> tuple[dict[str, Any], list[tuple[Path, str]]]:
    """The summary of the first checkpoint whose state file reads, and ``(checkpoint,
    why)`` for each one before it that did not."""
    skipped: list[tuple[Path, str]] = []
    for checkpoint in candidates:
        try:
            return read_checkpoint_summary(checkpoint), skipped
        except UsageError as exc:
            if checkpoint == candidates[-1]:
                raise
            skipped.append((checkpoint, str(exc)))
    raise AssertionError("unreachable: checkpoints_newest_first never returns an empty list")


def _restore(
    folder: RunFolder,
    candidates: Sequence[Path],
    env_factory: Callable[[], Any],
    train_env_factory: Callable[[], Any] | None,
    skipped: list[tuple[Path, str]],
    **kwargs,
) -> TrainerBase:
    """The Run restored from the first of ``candidates`` that loads, and the Trainer that
    starts from it (``kwargs``: the Trainer's; the run's own are the Run's)."""
    import inspect

    run_options = set(inspect.signature(Run).parameters) - {"folder"}  # the Run's own keywords
    own = {k: kwargs.pop(k) for k in list(kwargs) if k in run_options}
    run = Run.restore(folder, candidates, skipped, **own)
    restored = run.restored
    assert restored is not None
    try:
        if kwargs.get("eval_every") and kwargs.get("eval_env") is None:
            kwargs["eval_env"] = env_factory()
        if isinstance(restored.env, ProgramState):  # a run of the compiled loop
            from rlkit.run.compiled.trainer import CompiledTrainer

            return CompiledTrainer.restored(restored.agent, restored.env, run, **kwargs)
        env = restored.env if restored.env is not None else (train_env_factory or env_factory)()
        return Trainer(restored.agent, env, run=run, **kwargs)
    except BaseException:
        run.logger.close()
        raise
