"""``rlkit export`` and ``rlkit.export``: a run's (or a saved agent's) policy exported, checked.

The run-folder side of :mod:`rlkit.exporting.writer`: which model (the best by default, the
final one with ``model="final"``), the run's environment and its arguments for the
check, observations of the run's replay (from its newest checkpoint) for the check, the
variant's name, and what ``rlkit evaluate EXPORT_DIR`` needs to play the export with a
run's protocol (its evaluation episodes and environment arguments, kept in the metadata).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.exporting.destination import check_destination
from rlkit.exporting.writer import CHECK_OBSERVATIONS, ExportResult, check_request
from rlkit.run.folder import RunFolder

MODELS = ("best", "final")
#: checkpoints larger than this (bytes, all together) are not loaded for their replay
REPLAY_LOAD_LIMIT = 2 * 10**9


def export(
    source: Any,
    out: str | os.PathLike,
    model: str = "best",
    format: str = "saved_model",
    quantize: str | None = None,
    env: str | None = None,
    check_observations: int = CHECK_OBSERVATIONS,
    notes: list[str] | None = None,
    **networks,
) -> ExportResult:
    """Export the greedy policy of ``source`` into the new (or empty) folder ``out``.

    ``source``: a run folder (its ``model``: ``"best"``, else the final one when the run
    kept no best; or ``"final"``; a run stopped before it saved one: its newest
    checkpoint's model, said in ``notes``), a saved agent's folder, or an agent object. ``env``: the
    environment id the check plays (default: the run's; a saved agent's folder without
    it is checked on draws from its observation space). ``networks``: a network of one's
    own given as a Python object when the agent was made, as :func:`rlkit.load` takes it.
    ``notes``: a list that receives a line for each choice made (e.g. no best model). See
    :func:`rlkit.exporting.writer.export` for the rest; UsageError for bad input, nothing
    written.
    """
    from rlkit.exporting import writer as exporting

    notes = [] if notes is None else notes
    if model not in MODELS:
        raise UsageError(f"unknown model {model!r}: use best or final")
    out = check_destination(check_request(out, format, quantize))
    if not isinstance(source, (str, os.PathLike)):  # an agent
        return exporting.export(source, out, format, quantize, env=env,
                                check_observations=check_observations)  # fmt: skip
    agent, env_id, extra, replay = _load(Path(source), model, env, notes, networks)
    if replay is not None:
        replay = [("the run's replay", replay)]
    from rlkit.run.plan import variant_name

    result = exporting.export(
        agent, out, format, quantize, env=env_id, observations=replay,
        variant=variant_name(agent.name, agent.config), check_observations=check_observations,
        extra=extra, env_kwargs=extra.get("env_kwargs"),
    )  # fmt: skip
    result.lines[:0] = notes
    return result


def _load(path: Path, model: str, env_id: str | None, notes: list[str], networks: dict):
    """``(agent, env id, metadata extra, replay observations or None)`` of a run folder or
    a saved agent's folder."""
    import rlkit
    from rlkit.agents.base import is_saved_agent

    if not path.exists():
        raise UsageError(f"no run folder or saved agent at {path}")
    if is_saved_agent(path):
        return rlkit.load(path, **networks), env_id, {}, None
    if not RunFolder.is_run(path):
        raise UsageError(f"{path} is neither an rlkit run folder nor a saved agent")
    folder = RunFolder(path)
    run, _ = folder.read_config()
    best = model == "best" and folder.has_model(best=True)
    if folder.has_model(best=best):
        if model == "best" and not best:
            notes.append(f"{path} kept no best model (trained without evaluations): its final one")
        agent = rlkit.load(folder.best_dir if best else folder.model_dir, **networks)
        which = "best" if best else "final"
    else:  # stopped (Ctrl-C) before it saved one: its newest checkpoint holds the model
        agent, which = _newest_checkpoint_model(folder, model, networks, notes)
    kwargs = run.env_kwargs if env_id in (None, run.env) else {}
    evaluation = {"episodes": run.eval_episodes, "seed": seeding.final_eval_seed(run.seed)}
    extra = {"evaluation": evaluation, "env_kwargs": kwargs, "model": which}
    return agent, env_id or run.env, extra, _replay(folder, notes)


def _newest_checkpoint_model(folder: RunFolder, model: str, networks: dict, notes: list[str]):
    """``(agent, "checkpoint step-N")``: the model of a stopped run's newest checkpoint, for
    a run that saved no ``model`` yet (said in ``notes``); UsageError when it has none
    either."""
    from rlkit.run.checkpoint import checkpoint_model_dir, latest_checkpoint

    wanted = "best or final" if model == "best" else "final"
    if not folder.has_checkpoints():
        missing = "best model, no final model" if model == "best" else "final model"
        raise UsageError(
            f"{folder.path} has no {missing} and no checkpoint: nothing to export (the run "
            "stopped before its first checkpoint)"
        )
    checkpoint = latest_checkpoint(folder)
    import rlkit

    agent = rlkit.load(checkpoint_model_dir(checkpoint), **networks)
    notes.append(
        f"{folder.path} has no {wanted} model (the run stopped before saving one): exporting "
        f"the model of its newest checkpoint, {checkpoint.name} (rlkit resume {folder.path} "
        "trains it on)"
    )
    return agent, f"checkpoint {checkpoint.name}"


def _replay(folder: RunFolder, notes: list[str]):
    """A sample of the run's replay (its newest checkpoint's) in the environment's terms,
    or None (no checkpoint, no replay, or one that does not load: said in ``notes``)."""
    from rlkit.exporting.check import from_replay
    from rlkit.run.checkpoint import latest_checkpoint, load_checkpoint

    if not folder.has_checkpoints():
        return None
    stored = sum(f.stat().st_size for f in folder.checkpoints_dir.rglob("*") if f.is_file())
    if stored > REPLAY_LOAD_LIMIT:  # (an Atari replay: gigabytes to read for a sample)
        notes.append(f"the run's replay was not used: its checkpoints hold {stored / 1e9:.1f} GB "
                     "(the check used the environment's observations)")  # fmt: skip
        return None
    try:
        agent, _, _ = load_checkpoint(latest_checkpoint(folder))
    except UsageError as exc:
        notes.append(f"the run's replay was not used: {exc}")
        return None
    return from_replay(agent, CHECK_OBSERVATIONS)


def evaluate_export(
    path: Path, env_id: str | None, episodes: int | None, seed: int | None, env_kwargs: dict
) -> tuple[list[float], Any, str, int, str]:
    """Play an export's greedy policy as ``rlkit evaluate`` plays a run's model: ``(returns,
    policy, env id, episodes, what the seed is)``. Defaults: the export's env, its run's evaluation
    episodes, final-evaluation seed (0 for an export that does not say) and environment
    arguments."""
    from rlkit.core.spaces import space_to_dict
    from rlkit.envs.make import make_env
    from rlkit.exporting.exported import ExportedPolicy, read_metadata
    from rlkit.exporting.writer import strict_json
    from rlkit.run.evaluation import episode_returns

    meta = read_metadata(path)
    if env_id is None and meta.get("env_id") is None:
        raise UsageError(f"{path} does not say its environment: give --env ID")
    if env_id in (None, meta.get("env_id")):
        env_kwargs = {**meta.get("env_kwargs", {}), **env_kwargs}
    env_id = env_id or meta["env_id"]
    episodes = episodes or meta.get("evaluation", {}).get("episodes", 10)
    if seed is None:  # the run's final-evaluation seed, where the export says it
        seed = meta.get("evaluation", {}).get("seed")
        seed_note = f"seed {seed} (the run's final evaluation)" if seed is not None else "seed 0"
        seed = 0 if seed is None else seed
    else:
        seed_note = f"seed {seed}"
    env = make_env(env_id, training=False, **env_kwargs)
    policy = ExportedPolicy(path)
    for kind in ("observation_space", "action_space"):
        if strict_json(space_to_dict(getattr(env, kind))) != meta[kind]:
            what = kind.replace("_", " ")
            raise UsageError(f"the policy in {path} was exported for another {what} than "
                             f"{env_id}'s {getattr(env, kind)}")  # fmt: skip
    return episode_returns(policy, env, episodes, seed=seed), policy, env_id, episodes, seed_note
