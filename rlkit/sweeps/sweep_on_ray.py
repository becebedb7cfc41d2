"""Running a sweep's trials as Ray Tune trials, on this machine or a Ray cluster.

Each trial is a function trainable that runs one ordinary rlkit run (``rlkit.run.experiment``)
into ``OUT/runs/<config>/seed-<S>/``, with TensorFlow's thread pools sized to the CPUs Ray
gave it (Ray's ``OMP_NUM_THREADS`` does not reach TensorFlow). Whenever rlkit writes a
checkpoint the trial reports to Tune with a small Tune checkpoint naming it; a retried
(``FailureConfig``) or restored (``Tuner.restore``) trial finds rlkit's own newest
checkpoint in its run folder and continues from it exactly; a finished trial (its
``summary.json`` exists) is never run again. On a cluster, ``OUT`` must be on storage
every node sees (docs/sweeps.md).

Ray is imported only here, only when a sweep runs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlkit.core.errors import UsageError
from rlkit.run.folder import RunFolder
from rlkit.run.hooks.base import Hook
from rlkit.sweeps.grid import (
    RESULTS_FILE,
    SweepSpec,
    format_row,
    summarise,
    trial_dir,
    write_results,
)
from rlkit.sweeps.ray_connect import init_ray, on_this_machine

RAY_DIR = "ray"
EXPERIMENT = "sweep"
REPORT_EVERY = 5_000  # steps between progress reports without a checkpoint


def import_ray():
    """Ray, or a UsageError saying how to install it."""
    try:
        import ray
        from ray import tune
    except ImportError:
        raise UsageError(
            "rlkit sweep needs Ray: from a clone of rlkit, pip install '.[ray]'"
        ) from None
    return ray, tune


def run_trial(tune_config: dict[str, Any], spec: SweepSpec, out: str) -> None:
    """Tune's function trainable: one rlkit run, started fresh or resumed exactly (compiled
    XLA code kept in ``OUT/xla-cache``: :func:`~rlkit.run.compiled.xla_cache.use_xla_cache`);
    ``tune_config["trial"]`` is one of :meth:`SweepSpec.trials`."""
    config = tune_config["trial"]
    threads = max(1, int(spec.cpus_per_trial))
    os.environ["TF_NUM_INTRAOP_THREADS"] = str(threads)  # before TensorFlow starts
    os.environ["TF_NUM_INTEROP_THREADS"] = "1"
    from ray import tune

    from rlkit.core.quiet import import_tensorflow_quietly
    from rlkit.run import experiment
    from rlkit.run.compiled import xla_cache

    xla_cache.use_xla_cache(Path(out) / xla_cache.XLA_CACHE, spec.train.get("env"))

    import_tensorflow_quietly()
    import tensorflow as tf

    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:  # already initialised in this process: the env vars did it
        pass
    folder = RunFolder(trial_dir(Path(out), config["config"], config["seed"]))
    _log_attempt(folder.path)
    if folder.is_finished:  # finished before (a restored sweep): nothing to do
        summary = folder.read_summary()
        if summary is None:
            raise ValueError(f"{folder.summary_path} does not read as JSON")
        tune.report(_final_metrics(summary))
        return
    hooks = [_Reporter(folder.path)]  # through the door a user's own hooks take
    if folder.has_checkpoints():
        trainer, run = experiment.resume(folder.path, hooks=hooks)
    else:
        folder.remove()  # a start that wrote no checkpoint
        plan = spec.plan(config["values"], config["seed"])
        trainer, run = experiment.start(plan, run_dir=folder.path, hooks=hooks), plan.settings
    result = experiment.drive(trainer, run, handle_signals=False)
    if result.status != experiment.FINISHED:
        raise RuntimeError(result.message)
    tune.report(_final_metrics(result.summary))


def _log_attempt(run_dir: Path) -> None:
    """Append which Ray node runs this attempt of the trial to ``seed-<S>.attempts`` beside
    its run folder (a retried trial shows one line per attempt)."""
    import ray

    run_dir.parent.mkdir(parents=True, exist_ok=True)
    node = ray.get_runtime_context().get_node_id()
    with open(run_dir.parent / f"{run_dir.name}.attempts", "a") as f:
        f.write(f"{time.strftime('%H:%M:%S')} node {node}\n")


def _final_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    best = summary.get("best_model", {}).get("eval_return_mean")
    final = summary["final_model"]["eval_return_mean"]
    return {"step": summary["steps"], "final_return": final,
            "best_return": final if best is None else best, "done": 1}  # fmt: skip


class _Reporter(Hook):
    """A training-loop hook: progress to Tune, with a Tune checkpoint naming rlkit's newest
    checkpoint each time one is written (``info["checkpoint"]``, from the run's checkpoint
    hook before this one)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    def on_start(self, loop) -> None:
        self.last_report = loop.step

    def on_step(self, loop, before: int, info: dict) -> None:
        from ray import tune

        step = loop.step
        checkpointed = "checkpoint" in info and step > self.last_report
        if not checkpointed and step - self.last_report < REPORT_EVERY:
            return
        self.last_report = step
        recent = loop.history.recent_return() or 0.0
        metrics = {"step": step, "recent_return": recent, "done": 0}
        if not checkpointed:
            tune.report(metrics)
            return
        with tempfile.TemporaryDirectory() as pointer:
            Path(pointer, "rlkit_checkpoint.json").write_text(
                json.dumps({"run_dir": str(self.run_dir), "step": step})
            )
            tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(pointer))


def _progress_callback(interval: float, spec: SweepSpec | None = None):
    """A Tune callback printing one line per configuration (done/running/failed, best) to
    stderr. (Tune pickles its callbacks with the experiment: it holds no stream itself.)"""
    from ray import tune

    class Progress(tune.Callback):
        def __init__(self) -> None:
            self.last = 0.0

        def on_trial_result(self, iteration, trials, trial, result, **info):
            self._maybe_print(trials)

        def on_trial_complete(self, iteration, trials, trial, **info):
            self._maybe_print(trials, force=True)

        def on_trial_error(self, iteration, trials, trial, **info):
            self._maybe_print(trials, force=True)

        def _maybe_print(self, trials, force=False) -> None:
            now = time.monotonic()
            if not force and now - self.last < interval:
                return
            self.last = now
            import sys

            sys.stderr.write(progress_lines(trials, len(spec.seeds) if spec else None) + "\n")
            sys.stderr.flush()

    return Progress()


def progress_lines(trials, per_config: int | None = None) -> str:
    """``config: 3/5 done, 2 running, 0 failed; best final 500.0`` for each configuration;
    ``per_config``: its trials in all (its seeds), started or not (default: those started)."""
    by_config: dict[str, list] = {}
    for trial in trials:
        by_config.setdefault(trial.config["trial"]["config"], []).append(trial)
    lines = []
    for label, group in by_config.items():
        counts = {s: sum(t.status == s for t in group) for s in ("TERMINATED", "RUNNING", "ERROR")}
        finals = [t.last_result.get("final_return") for t in group if t.last_result]
        finals = [f for f in finals if f is not None]
        best = f"; best final {max(finals):.1f}" if finals else ""
        lines.append(f"  {label}: {counts['TERMINATED']}/{per_config or len(group)} done, "
                     f"{counts['RUNNING']} running, {counts['ERROR']} failed{best}")  # fmt: skip
    return "\n".join(lines)


def run_sweep(
    spec: SweepSpec,
    out: Path,
    address: str | None = None,
    resume: bool = False,
    max_failures: int = 3,
    stream=None,
    interval: float = 10.0,
    asked: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Run (or with ``resume`` continue) the sweep in ``out``; returns the per-configuration
    rows also written to ``sweep.csv``. A new sweep's ``sweep.json`` is written once Ray
    is up (a cluster that does not answer leaves nothing behind).

    ``asked``: operational options given with ``--resume`` (``max_concurrent``,
    ``cpus_per_trial``, ``max_failures``). Where Ray saved no experiment to restore, the
    sweep starts its Tune experiment afresh with them (``sweep.json`` records the new
    concurrency and CPUs). Where it restores one, Ray keeps each trial's resources and
    retries and the sweep's concurrency as it saved them (``Tuner.restore`` takes none of
    them): one line on stderr says so, and which values go on instead."""
    import sys

    if on_this_machine(address):
        # Ray otherwise advertises this machine's network address even for a cluster that
        # lives here; with this (Ray's own switch) everything stays on the loopback.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray, tune = import_ray()
    stream = stream if stream is not None else sys.stdout  # the table; progress: stderr
    out = Path(out).resolve()
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")
    init_ray(ray, address)
    asked = {k: v for k, v in (asked or {}).items() if v is not None}
    path = out / RAY_DIR / EXPERIMENT
    restoring = resume and tune.Tuner.can_restore(str(path))
    if resume and not restoring and asked:  # nothing of Ray's to restore: they all apply
        max_failures = asked.get("max_failures", max_failures)
        resources = {k: v for k, v in asked.items() if k in ("cpus_per_trial", "max_concurrent")}
        spec = dataclasses.replace(spec, **resources)
    if not resume or (not restoring and asked):
        spec.save(out)
    try:
        trainable = tune.with_resources(
            tune.with_parameters(run_trial, spec=spec, out=str(out)),
            {"cpu": spec.cpus_per_trial},
        )
        if restoring:
            tuner = tune.Tuner.restore(str(path), trainable, resume_unfinished=True,
                                       resume_errored=True)  # fmt: skip
            note = restore_note(spec, asked, _saved_max_failures(tuner))
            if note:
                sys.stderr.write(f"rlkit: {note}\n")
                sys.stderr.flush()
        else:
            tuner = tune.Tuner(
                trainable,
                param_space={"trial": tune.grid_search(spec.trials())},
                tune_config=tune.TuneConfig(max_concurrent_trials=spec.max_concurrent or None),
                run_config=tune.RunConfig(
                    name=EXPERIMENT,
                    storage_path=str(out / RAY_DIR),
                    failure_config=tune.FailureConfig(max_failures=max_failures),
                    checkpoint_config=tune.CheckpointConfig(num_to_keep=1),
                    verbose=0,
                    callbacks=[_progress_callback(interval, spec)],
                ),
            )
        results = tuner.fit()
    finally:
        ray.shutdown()
    rows = summarise(out, spec)
    write_results(out, rows)
    for row in rows:
        stream.write(format_row(row) + "\n")
    failed = [(r.config["trial"], _error_line(r.error)) for r in results if r.error is not None]
    unfinished = [r for r in results if r.error is None and not (r.metrics or {}).get("done")]
    if failed:
        raise SweepFailed(
            "; ".join(f"trial {t['config']} seed {t['seed']} failed: {why}" for t, why in failed)
            + f" (the other trials' results are in {out / RESULTS_FILE})"
        )
    if unfinished:
        raise SweepInterrupted(stopped_message(spec, len(results) - len(unfinished), out))
    return rows


def stopped_message(spec: SweepSpec, finished: int, out: Path) -> str:
    """What a stopped sweep says: of all its trials (Tune's results hold only those that
    started), how many finished."""
    total = len(spec.trials())
    return (
        f"sweep stopped with {finished} of {total} trial{'s' * (total != 1)} finished; "
        f"continue with: rlkit sweep --resume {out}"
    )


#: the operational options of ``rlkit sweep`` and how a restored sweep's saved value reads
OPERATIONAL: dict[str, tuple[str, Callable[[Any], str]]] = {
    "max_concurrent": ("--max-concurrent", lambda v: str(v) if v else "as many as the CPUs allow"),
    "cpus_per_trial": ("--cpus-per-trial", lambda v: f"{v:g}"),
    "max_failures": ("--max-failures", str),
}


def restore_note(spec: SweepSpec, asked: dict[str, Any], max_failures: int | None) -> str:
    """The line saying which of the options ``asked`` with ``--resume`` a restored Tune
    experiment cannot take (those differing from what Ray saved: ``spec``'s concurrency and
    CPUs, ``max_failures`` when known), and what goes on instead; "" when none."""
    saved = {"max_concurrent": spec.max_concurrent, "cpus_per_trial": spec.cpus_per_trial,
             "max_failures": max_failures}  # fmt: skip
    differ = [name for name in OPERATIONAL if name in asked
              and (saved[name] is None or asked[name] != saved[name])]  # fmt: skip
    if not differ:
        return ""
    flags = " and ".join(f"{OPERATIONAL[n][0]} {OPERATIONAL[n][1](asked[n])}" for n in differ)
    kept = ", ".join(
        f"{OPERATIONAL[n][0].removeprefix('--')} "
        + ("as saved" if saved[n] is None else OPERATIONAL[n][1](saved[n]))
        for n in differ
    )
    verb = "does" if len(differ) == 1 else "do"
    return (f"{flags} {verb} not apply: Ray restores this sweep's trials with the "
            f"concurrency, CPUs and retries it saved ({kept})")  # fmt: skip


def _saved_max_failures(tuner) -> int | None:
    """The ``--max-failures`` a restored Tuner goes on with (its saved ``FailureConfig``),
    or None where this Ray keeps it elsewhere."""
    try:
        return int(tuner._local_tuner.get_run_config().failure_config.max_failures)
    except (AttributeError, TypeError, ValueError):
        return None


class SweepFailed(RuntimeError):
    """A trial failed every time it was tried (its message names the trials and errors)."""


class SweepInterrupted(RuntimeError):
    """The sweep stopped (Ctrl-C) before every trial finished; ``--resume`` goes on."""


def _error_line(error: BaseException) -> str:
    """The one line of a trial's error that says what went wrong (Ray wraps it in a
    traceback of its own)."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__
