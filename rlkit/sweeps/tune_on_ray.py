"""``rlkit tune`` on Ray Tune: Optuna's TPE proposes, ASHA stops the laggards, then the best
trials run again on fresh seeds (as a sweep) and the best of those is written out.

A search trial is an ordinary rlkit run (``rlkit.run.experiment``) in
``OUT/search/runs/<trial>/seed-S/``: it reports each periodic evaluation's mean return to
Tune, which ASHA compares at its rungs (``grace * reduction_factor**k`` steps). A stopped
trial keeps its run folder as it was at the stop. On ``--resume`` Tune restores the search
(Optuna's state included); a trial that had written a checkpoint continues from it
exactly. Ray and Optuna are imported only here, only when a tune runs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from io import StringIO
from pathlib import Path
from typing import Any

from rlkit.core.errors import UsageError
from rlkit.core.files import atomic_write_text
from rlkit.run.folder import RunFolder
from rlkit.run.hooks.base import Hook
from rlkit.sweeps import tuning
from rlkit.sweeps.ray_connect import init_ray, on_this_machine
from rlkit.sweeps.sweep_on_ray import (
    SweepFailed,
    SweepInterrupted,
    _error_line,
    import_ray,
    run_sweep,
)

EXPERIMENT = "search"
METRIC = "eval_return"  # what TPE learns from and the trials are ranked by
RUNG_METRIC = "rung_score"  # what ASHA compares at its rungs (tuning.rung_score)
FINISHED = "finished"  # (Tune keeps "done" for itself)


def import_optuna():
    """Optuna, or a UsageError saying how to install it."""
    try:
        import optuna
    except ImportError:
        raise UsageError(
            "rlkit tune needs Optuna: from a clone of rlkit, pip install '.[ray]'"
        ) from None
    return optuna


def search_trial(tune_config: dict[str, Any], spec: tuning.TuneSpec, out: str) -> None:
    """Tune's function trainable for one search trial: an rlkit run that reports every
    evaluation, started fresh or resumed from its own newest checkpoint."""
    threads = max(1, int(spec.cpus_per_trial))
    os.environ["TF_NUM_INTRAOP_THREADS"] = str(threads)
    os.environ["TF_NUM_INTEROP_THREADS"] = "1"
    from ray import tune

    from rlkit.core.quiet import import_tensorflow_quietly
    from rlkit.run import experiment

    import_tensorflow_quietly()
    label = "trial-" + tune.get_context().get_trial_id().rsplit("_", 1)[-1]
    values = spec.overrides(tune_config)
    tuning.write_values(Path(out), label, values)
    folder = RunFolder(tuning.search_run(Path(out), label, spec))
    if folder.is_finished:
        summary = folder.read_summary()
        if summary is None:
            raise ValueError(f"{folder.summary_path} does not read as JSON")
        final = summary["final_model"]["eval_return_mean"]
        tune.report({"step": summary["steps"], METRIC: final, RUNG_METRIC: final, FINISHED: 1})
        return
    hooks = [_EvaluationReporter(spec)]  # through the door a user's own hooks take
    if folder.has_checkpoints():
        trainer, run = experiment.resume(folder.path, hooks=hooks)
    else:
        folder.remove()  # a start that wrote no checkpoint
        plan = spec.plan(values, spec.search_seed)
        trainer, run = experiment.start(plan, run_dir=folder.path, hooks=hooks), plan.settings
    result = experiment.drive(trainer, run, handle_signals=False)
    if result.status == experiment.DIVERGED:  # a bad configuration, not a failure: it ends
        step, score = tuning.last_evaluation(folder)
        score = score if score is not None else -math.inf
        tune.report({"step": trainer.step, METRIC: score, RUNG_METRIC: score, FINISHED: 0,
                     "diverged": 1})  # fmt: skip
        return
    if result.status != experiment.FINISHED:
        raise RuntimeError(result.message)
    final = result.summary["final_model"]["eval_return_mean"]
    tune.report({"step": result.summary["steps"], METRIC: final, RUNG_METRIC: final,
                 FINISHED: 1})  # fmt: skip


class _EvaluationReporter(Hook):
    """Each periodic evaluation to Tune: its mean return (for TPE) and the rung score (for
    ASHA: :func:`rlkit.sweeps.tuning.rung_score`, over the training episodes since the
    evaluation before). Not the one at the run's last step: ASHA stops a trial that
    reports ``max_t`` steps at once, before the run would evaluate its final model and
    write its summary (reported after)."""

    def __init__(self, spec: tuning.TuneSpec) -> None:
        self.steps = spec.steps
        self.rule = spec.rung_score
        self.window = int(spec.train.get("eval_every") or max(1, spec.steps // 10))

    def on_step(self, loop, before: int, info: dict) -> None:
        if "eval" in info and loop.step < self.steps:
            from ray import tune

            evaluation = float(info["eval"][0])
            ended = loop.history
            score = tuning.rung_score(self.rule, evaluation, ended.episode_returns,
                                      ended.episode_end_steps, loop.step, self.window)  # fmt: skip
            tune.report({"step": loop.step, METRIC: evaluation, RUNG_METRIC: score,
                         FINISHED: 0})  # fmt: skip


def ended(result: dict | None) -> bool:
    """Did the trial whose last result this is end: run to the end, diverge, or be stopped
    by ASHA? Tune marks those results ``done``. Not its status: Tune sets a trial
    TERMINATED only after telling the callbacks it completed, and at the end of an
    interrupted search it sets the trials it cuts off TERMINATED too."""
    return bool((result or {}).get("done"))


def _progress(interval: float, total: int):
    """A Tune callback: one line to stderr now and then (done, stopped early, running,
    the best score so far)."""
    from ray import tune

    class Progress(tune.Callback):
        def __init__(self) -> None:
            self.last = 0.0

        def on_trial_result(self, iteration, trials, trial, result, **info):
            self._print(trials)

        def on_trial_complete(self, iteration, trials, trial, **info):
            self._print(trials, force=True)

        def _print(self, trials, force: bool = False) -> None:
            now = time.monotonic()
            if not force and now - self.last < interval:
                return
            self.last = now
            done = [t for t in trials if ended(t.last_result)]
            finished = sum(bool((t.last_result or {}).get(FINISHED)) for t in done)
            running = sum(t.status == "RUNNING" and not ended(t.last_result) for t in trials)
            reported = [(t.last_result or {}).get(METRIC) for t in trials]
            scores = [s for s in reported if s is not None]
            best = f"; best evaluation {max(scores):.1f}" if scores else ""
            sys.stderr.write(f"search: {len(done)}/{total} trials done ({finished} ran to the "
                             f"end, {len(done) - finished} stopped early), {running} "
                             f"running{best}\n")  # fmt: skip
            sys.stderr.flush()

    return Progress()


def _search(spec: tuning.TuneSpec, out: Path, resume: bool, interval: float) -> None:
    """The TPE + ASHA search (or its continuation); SweepInterrupted when it stopped early."""
    from ray import tune
    from ray.tune.schedulers import FIFOScheduler
    from ray.tune.search.optuna import OptunaSearch

    from rlkit.sweeps.asha import FloorStoppingASHA

    optuna = import_optuna()
    trainable = tune.with_resources(
        tune.with_parameters(search_trial, spec=spec, out=str(out)), {"cpu": spec.cpus_per_trial}
    )
    path = out / "ray" / EXPERIMENT
    if resume and tune.Tuner.can_restore(str(path)):
        tuner = tune.Tuner.restore(str(path), trainable, resume_unfinished=True,
                                   resume_errored=True)  # fmt: skip
    else:
        startup = min(10, max(2, spec.trials // 3))
        sampler = optuna.samplers.TPESampler(n_startup_trials=startup, seed=spec.search_seed,
                                             multivariate=True)  # fmt: skip
        searcher = OptunaSearch(sampler=sampler, metric=METRIC, mode="max")
        scheduler = (
            FloorStoppingASHA(
                time_attr="step",
                metric=RUNG_METRIC,
                mode="max",
                max_t=spec.steps,
                grace_period=spec.grace,
                reduction_factor=spec.reduction_factor,
            )  # fmt: skip
            if spec.asha
            else FIFOScheduler()
        )
        tuner = tune.Tuner(
            trainable,
            param_space={key: _tune_dimension(tune, dim) for key, dim in spec.dimensions().items()},
            tune_config=tune.TuneConfig(  # (metrics: the searcher's and the scheduler's own)
                search_alg=searcher,
                scheduler=scheduler,
                num_samples=spec.trials,
                max_concurrent_trials=spec.max_concurrent or None,
                # a trial's process goes on to the next trial: TensorFlow is imported once
                # per worker, not once per trial (each run seeds everything it uses)
                reuse_actors=True,
            ),  # fmt: skip
            run_config=tune.RunConfig(
                name=EXPERIMENT,
                storage_path=str(out / "ray"),
                verbose=0,
                failure_config=tune.FailureConfig(max_failures=1),
                callbacks=[_progress(interval, spec.trials)],
            ),  # fmt: skip
        )
    results = tuner.fit()
    errors = [r for r in results if r.error is not None]
    if errors:
        raise SweepFailed("; ".join(_error_line(r.error) for r in errors))
    done = sum(ended(r.metrics) for r in results)
    if done < spec.trials:
        raise SweepInterrupted(
            f"tune stopped with {done} of {spec.trials} search trials done; "
            f"continue with: rlkit tune --resume {out}"
        )


def _tune_dimension(tune, dim):
    low, high = dim.bounds
    if dim.kind == "loguniform":
        return tune.loguniform(low, high)
    if dim.kind == "uniform":
        return tune.uniform(low, high)
    if dim.kind == "int":
        return tune.randint(int(low), int(high) + 1)
    return tune.choice(list(dim.values))


def run_tune(
    spec: tuning.TuneSpec,
    out: Path,
    address: str | None = None,
    resume: bool = False,
    stream=None,
    interval: float = 10.0,
    ranking: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Search, rank the best on fresh seeds, write ``tune.csv`` and ``best.toml``; returns
    the ranking. SweepInterrupted (resume with ``--resume``), SweepFailed as sweeps do.
    ``ranking``: ``max_concurrent`` / ``cpus_per_trial`` for the ranking in place of the
    spec's, if it starts now (a resumed tune's new ones)."""
    stream = stream if stream is not None else sys.stdout
    out = Path(out).resolve()
    if on_this_machine(address):
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray, _ = import_ray()
    optuna = import_optuna()
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # (not a line per study)
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")
    search_file = out / tuning.SEARCH_FILE
    init_ray(ray, address)
    try:
        if not resume:
            spec.save(out)
        if not search_file.is_file():
            _search(spec, out, resume, interval)
            picked = tuning.pick(tuning.search_trials(out, spec), spec.top)
            atomic_write_text(search_file, json.dumps({"picked": picked}, indent=2))
    finally:
        ray.shutdown()
    picked = json.loads(search_file.read_text())["picked"]
    if not picked:
        raise SweepFailed("no search trial reached an evaluation: nothing to rank")
    sweep = dataclasses.replace(spec.sweep(picked), **(ranking or {}))
    final = out / tuning.FINAL_DIR
    try:
        run_sweep(sweep, final, address=address, resume=(final / "sweep.json").is_file(),
                  stream=StringIO(), interval=interval)  # fmt: skip
    except SweepInterrupted:
        raise SweepInterrupted(f"tune stopped while ranking the best trials on fresh seeds; "
                               f"continue with: rlkit tune --resume {out}") from None  # fmt: skip
    except SweepFailed as exc:  # a seed that failed every try counts as not finished
        sys.stderr.write(f"rlkit: ranking went on without a failed seed: {exc}\n")
    rows = tuning.search_trials(out, spec)
    ranked = tuning.rank(out, spec, picked)
    tuning.write_results(out, spec, rows, ranked)
    best = ranked[0]
    score = f"final {best['final_mean']:.1f} over seeds {','.join(map(str, spec.seeds))}"
    text = tuning.best_config_text(spec, best["trial"], picked[best["trial"]], score)
    atomic_write_text(out / tuning.BEST_FILE, text)
    stream.write(tuning.format_table(rows, ranked, spec) + "\n")
    return ranked
