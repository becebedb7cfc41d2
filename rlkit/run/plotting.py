"""Learning curves from run folders' ``metrics.csv`` (matplotlib)."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import numpy as np

from rlkit.core.errors import UsageError
from rlkit.run.folder import METRICS_FILE, RunFolder


def read_episodes(run_dir: Path, kind: str = "episode") -> tuple[np.ndarray, np.ndarray]:
    """``(steps, returns)`` of every finished episode of a run, in order.

    ``kind="eval"`` gives the greedy evaluations instead (mean return per evaluation);
    ``kind="game"`` the whole games of an Atari run (where a lost life ends an episode).
    """
    path = RunFolder(run_dir).metrics_path
    if not path.is_file():
        raise UsageError(f"no {METRICS_FILE} in {run_dir}: is it an rlkit run folder?")
    steps, returns = [], []
    try:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("kind") == kind:
                    steps.append(int(row["step"]))
                    returns.append(float(row["return"]))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(f"corrupt {path}: {exc}") from None
    return np.asarray(steps), np.asarray(returns)


def smooth(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing moving average over up to ``window`` points (same length as ``values``)."""
    if window <= 1 or len(values) == 0:
        return values.astype(float)
    cumsum = np.cumsum(np.insert(values.astype(float), 0, 0.0))
    idx = np.arange(1, len(values) + 1)
    lo = np.maximum(idx - window, 0)
    return (cumsum[idx] - cumsum[lo]) / (idx - lo)


def _label(run_dir: Path) -> str:
    """``agent-env`` part of a run folder name (runs of several seeds share it)."""
    parts = run_dir.name.split("-")
    return "-".join(parts[:-3]) if len(parts) > 3 else run_dir.name


def _env_of(run_dir: Path) -> str:
    """The environment id of a run (its ``config.toml``), else its folder's label."""
    folder = RunFolder(run_dir)
    if folder.has_config:
        try:
            return folder.read_config()[0].env
        except UsageError:
            pass
    return _label(run_dir)


def plot_runs(
    run_dirs: list[Path],
    output: Path,
    window: int = 20,
    points: int = 200,
    labels: dict[Path, str] | None = None,
) -> Path:
    """Episode return vs environment steps, smoothed; one panel per environment, in which
    runs of one agent are grouped.

    Each run is drawn thin; each group with two or more runs also gets its mean and a
    band from the lowest to the highest run, interpolated on a common step grid. Greedy
    evaluations are drawn as points. ``labels`` names groups other than by agent and env
    (e.g. a sweep's configurations): runs with the same label form one group.
    """
    output = Path(output)
    if output.suffix.lower() != ".png":
        raise UsageError(f"the plot is written as PNG: name the output file *.png, not {output}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    evaluations: dict[str, list[tuple[np.ndarray, np.ndarray]]] = defaultdict(list)
    games: set[str] = set()  # panels drawn as whole-game scores
    for run_dir in map(Path, run_dirs):
        steps, returns = read_episodes(run_dir, "game")  # Atari: scores of whole games
        env_id = _env_of(run_dir)
        if len(steps):
            games.add(env_id)
        else:
            steps, returns = read_episodes(run_dir)
        if len(steps) == 0:
            raise UsageError(f"{run_dir} has no finished episodes to plot yet")
        label = (labels or {}).get(run_dir) or _label(run_dir)
        panels[env_id][label].append((steps, smooth(returns, window)))
        evaluations[label].append(read_episodes(run_dir, "eval"))
    cols = min(len(panels), 3)
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(8 * cols, 5 * rows), dpi=100, squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, (env_id, groups) in zip(axes.flat, sorted(panels.items()), strict=False):
        _draw_panel(ax, groups, evaluations, points)
        if len(panels) > 1:
            ax.set_title(env_id)
        ax.set_xlabel("environment steps")
        what = "game score, all lives" if env_id in games else "episode return"
        ax.set_ylabel(f"{what} (moving average of {window})")
        ax.grid(alpha=0.3)
        ax.legend(loc="best")
    fig.tight_layout()
    try:
        fig.savefig(output)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}") from None
    finally:
        plt.close(fig)
    return output


def _draw_panel(ax, groups: dict[str, list], evaluations: dict[str, list], points: int) -> None:
    for i, (label, curves) in enumerate(sorted(groups.items())):
        color = f"C{i}"
        for j, (steps, means) in enumerate(evaluations[label]):
            if len(steps):
                ax.plot(steps, means, "o", color=color, ms=4, alpha=0.8,
                        label=f"{label}: greedy evaluations" if j == 0 else None)  # fmt: skip
        for steps, values in curves:
            ax.plot(steps, values, color=color, alpha=0.35 if len(curves) > 1 else 1.0, lw=1)
        if len(curves) > 1:
            end = min(s[-1] for s, _ in curves)
            start = max(s[0] for s, _ in curves)
            grid = np.linspace(start, end, points)
            stacked = np.stack([np.interp(grid, s, v) for s, v in curves])
            ax.plot(
                grid, stacked.mean(0), color=color, lw=2, label=f"{label} (mean of {len(curves)})"
            )
            ax.fill_between(grid, stacked.min(0), stacked.max(0), color=color, alpha=0.15)
        else:
            ax.lines[-1].set_label(label)
