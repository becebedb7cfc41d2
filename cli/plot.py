"""What ``rlkit plot`` draws of each folder it is given: a run folder, a folder of run
folders, a sweep (its trials), a tune (its search trials and its ranking on fresh seeds)
or a tune's ``search`` folder (its search trials)."""

from __future__ import annotations

from pathlib import Path

from rlkit.core.errors import UsageError


def groups_to_plot(paths: list[Path], by: str = "config") -> list:
    """The :class:`~rlkit.run.plotting.RunGroup` s ``rlkit plot PATH...`` draws: the runs
    of runs, folders of runs and sweeps grouped by configuration
    (:func:`~rlkit.run.plotting.group_runs`; ``by="preset"``: one line per preset, see
    :func:`~rlkit.run.plotting.preset_labels`), then each tune's own panels
    (:func:`~rlkit.sweeps.tuning.run_groups`)."""
    from rlkit.run.folder import RunFolder
    from rlkit.run.plotting import group_runs, preset_labels
    from rlkit.sweeps import tuning
    from rlkit.sweeps.grid import is_sweep, sweep_runs

    runs: list[Path] = []
    tunes = []
    for path in map(Path, paths):
        if tuning.is_tune(path) or _is_search(path):
            tune = path if tuning.is_tune(path) else path.parent
            groups = tuning.run_groups(tune, ranking=tune == path)
            if not groups:
                raise UsageError(f"no trial of the tune in {tune} has finished an episode yet")
            tunes.extend(groups)
        elif is_sweep(path):
            trials = sweep_runs(path)
            if not trials:
                raise UsageError(f"no trial of the sweep in {path} has started yet")
            runs.extend(trials)
        elif not RunFolder.is_run(path) and any(map(RunFolder.is_run, path.iterdir())):
            runs.extend(sorted(d for d in path.iterdir() if RunFolder(d).has_metrics))
        else:
            runs.append(path)
    labels = preset_labels(runs) if by == "preset" else None
    return (group_runs(runs, labels) if runs else []) + tunes


def _is_search(path: Path) -> bool:
    """Is ``path`` a tune's ``search`` folder (``TUNE_DIR/search``)?"""
    from rlkit.sweeps import tuning

    return path.name == tuning.SEARCH_DIR and tuning.is_tune(path.parent)
