"""Learning curves from run folders' ``metrics.csv`` (matplotlib), one line per group of
runs: the seeds of one agent variant, environment and configuration (``config.toml``)."""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rlkit.config.presets import gymnasium_twin
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


#: ``[run]`` settings that make no other configuration: the agent and environment (a
#: group's own), the seed (averaged over), how long a run is, how often it is evaluated and
#: checkpointed, and the preset it started from (its values are in the agent table)
NOT_CONFIGURATION = frozenset(
    {"agent", "env", "seed", "steps", "episodes", "eval_every", "eval_episodes",
     "checkpoint_every", "preset"}
)  # fmt: skip
#: at most this many differing keys in a label (then "+N more")
LABEL_KEYS = 4
#: a panel of at most this many lines names each line's evaluation points in its legend
EVALUATIONS_IN_LEGEND = 4


@dataclass(frozen=True)
class RunGroup:
    """Runs drawn as one line: the seeds of one agent variant, environment and configuration.

    ``config``: the configuration's keys and values (as TOML writes them), sorted;
    ``label``: the legend's name (variant, environment, and the keys in which the group
    differs from the others of its variant and environment).
    """

    variant: str
    env: str
    config: tuple[tuple[str, str], ...]
    runs: tuple[Path, ...]
    label: str


def describe_run(run_dir: Path) -> tuple[str, str, dict[str, str]]:
    """``(variant, env, configuration)`` of a run, from its ``config.toml``.

    The variant is :func:`~rlkit.run.plan.variant_name`'s (``td3`` for a DDPG run with
    ``td3 = true``, whatever its folder is called); the configuration is the agent config,
    defaults filled in (so runs written before a key existed compare equal), plus the
    ``[run]`` settings other than :data:`NOT_CONFIGURATION` (``num_envs``, each of
    ``env_kwargs``). Schedules compare as the steps they came to, not as the fractions of
    the run they were given in (:func:`~rlkit.config.schedule_fractions.resolved_table`): a run
    made before fractions existed groups with one whose fraction came to the same steps.
    A folder without a readable ``config.toml`` is described by its name.
    """
    from rlkit.config.options import to_dict
    from rlkit.config.run import toml_value
    from rlkit.config.schedule_fractions import resolved_table
    from rlkit.run.plan import variant_name

    folder = RunFolder(run_dir)
    try:
        run, table = folder.read_config()
    except UsageError:
        parts = Path(run_dir).name.split("-")
        if len(parts) > 4:  # <agent>-<env>-<seed>-<YYYYmmdd>-<HHMMSS>
            return parts[0], "-".join(parts[1:-3]), {}
        return Path(run_dir).name, "", {}
    agent = resolved_table(_agent_table(run.agent, table), table, run.steps)
    config = {k: toml_value(v) for k, v in agent.items()}
    for key, value in to_dict(run).items():
        if key == "env_kwargs":
            config.update({f"env_kwargs.{k}": toml_value(v) for k, v in value.items()})
        elif key not in NOT_CONFIGURATION:
            config[key] = toml_value(value)
    return variant_name(run.agent, table), run.env, config


def _agent_table(agent: str, table: dict[str, Any]) -> dict[str, Any]:
    """The agent table with the config class's defaults filled in (as given, where the
    agent or a value is unknown); keys the config no longer has are kept as they are."""
    import dataclasses

    from rlkit.agents.registry import agent_spec
    from rlkit.config.options import make_config, to_dict

    try:
        config_class = agent_spec(agent).config_class
        known = {f.name for f in dataclasses.fields(config_class)}
        config = make_config(config_class, {k: v for k, v in table.items() if k in known})
    except (UsageError, TypeError, ValueError):
        return dict(table)
    return {**table, **to_dict(config)}


def group_runs(run_dirs: list[Path], labels: dict[Path, str] | None = None) -> list[RunGroup]:
    """The runs grouped by agent variant, environment and configuration, in a stable order.

    Seeds of one configuration form one group; groups of one variant and environment are
    labelled by the keys in which their configurations differ (``dqn CartPole-v1
    learning_rate=0.001``). ``labels`` names some runs' groups itself (e.g. by preset):
    runs with the same given label and environment form one group, called that.
    """
    found: dict[tuple, list[Path]] = defaultdict(list)
    configs: dict[tuple, dict[str, str]] = {}
    for run_dir in map(Path, run_dirs):
        variant, env, config = describe_run(run_dir)
        given = (labels or {}).get(run_dir)
        key: tuple[str, str, tuple[tuple[str, str], ...]]
        if given:
            key = ("", env, (("label", given),))
        else:
            key = (variant, env, tuple(sorted(config.items())))
        found[key].append(run_dir)
        configs[key] = config if not given else {}
    groups = []
    for key, runs in found.items():
        variant, env, pairs = key
        if not variant:  # a given label
            label = dict(pairs)["label"]
        else:
            others = [configs[k] for k in found if k[:2] == key[:2]]
            label = _label(variant, env, configs[key], others)
        groups.append(RunGroup(variant, env, pairs, tuple(runs), label))
    groups.sort(key=lambda g: (g.env, g.label))
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for i, group in enumerate(groups):  # a label names one line of its panel
        seen[group.env, group.label] += 1
        if seen[group.env, group.label] > 1:
            label = f"{group.label} ({seen[group.env, group.label]})"
            groups[i] = RunGroup(group.variant, group.env, group.config, group.runs, label)
    return groups


def preset_labels(run_dirs: list[Path]) -> dict[Path, str]:
    """``{run: "variant env (preset)"}`` for the runs whose ``config.toml`` names a preset:
    their seeds one line per preset, whatever else they set (the others keep
    :func:`group_runs`' labels by configuration)."""
    labels = {}
    for run_dir in map(Path, run_dirs):
        try:
            preset = RunFolder(run_dir).read_config()[0].preset
        except UsageError:
            continue
        if preset:
            variant, env, _ = describe_run(run_dir)
            labels[run_dir] = f"{variant} {env} ({preset})"
    return labels


def _label(variant: str, env: str, config: dict[str, str], others: list[dict[str, str]]) -> str:
    """``variant env`` and the keys (sorted) whose values differ among ``others``."""
    keys = sorted({k for other in others for k in other})
    differ = [k for k in keys if len({other.get(k, "-") for other in others}) > 1]
    words = [f"{k}={config.get(k, '-')}" for k in differ[:LABEL_KEYS]]
    if len(differ) > LABEL_KEYS:
        words.append(f"+{len(differ) - LABEL_KEYS} more")
    return " ".join(part for part in (variant, env, *words) if part)


def plot_runs(
    run_dirs: list[Path],
    output: Path,
    window: int = 20,
    points: int = 200,
    labels: dict[Path, str] | None = None,
) -> Path:
    """Episode return vs environment steps, smoothed, of the runs grouped by
    :func:`group_runs` (``labels`` names groups other than by variant, environment and
    configuration, e.g. by preset); :func:`plot_groups` draws them."""
    return plot_groups(group_runs(run_dirs, labels), output, window, points)


def plot_groups(
    groups: list[RunGroup], output: Path, window: int = 20, points: int = 200, until: int = 0
) -> Path:
    """Draw ``groups`` (:func:`group_runs`) to the PNG ``output``: one panel per environment
    (an rlkit TensorFlow environment in the panel of the id it equals step for step).
    ``until`` > 0 draws each run up to that environment step (its episodes ended by then,
    smoothed as in the whole run; its evaluations made by then).

    Each run is drawn thin; each group with two or more runs (seeds) also gets its mean and
    a band from the lowest to the highest run, interpolated on a common step grid. Greedy
    evaluations are drawn as points.
    """
    output = Path(output)
    if output.suffix.lower() != ".png":
        raise UsageError(f"the plot is written as PNG: name the output file *.png, not {output}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # per environment, per label: the smoothed curves and the evaluations of its runs
    panels: dict[str, dict[str, tuple[list, list]]] = defaultdict(dict)
    games: set[str] = set()  # panels drawn as whole-game scores
    for group in groups:
        panel = gymnasium_twin(group.env)  # rlkit/CartPole-v1 beside CartPole-v1
        curves, evaluations = panels[panel].setdefault(group.label, ([], []))
        for run_dir in group.runs:
            steps, returns = read_episodes(run_dir, "game")  # Atari: scores of whole games
            if len(steps):
                games.add(panel)
            else:
                steps, returns = read_episodes(run_dir)
            if len(steps) == 0:
                raise UsageError(f"{run_dir} has no finished episodes to plot yet")
            curve = _up_to(steps, smooth(returns, window), until)
            if len(curve[0]) == 0:
                raise UsageError(f"{run_dir} has no episode ended by step {until:,} to plot")
            curves.append(curve)
            evaluations.append(_up_to(*read_episodes(run_dir, "eval"), until))
    if not panels:
        raise UsageError("no runs to plot")
    cols = min(len(panels), 3)
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(8 * cols, 5 * rows), dpi=100, squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, (env_id, lines) in zip(axes.flat, sorted(panels.items()), strict=False):
        _draw_panel(ax, lines, points)
        if len(panels) > 1:
            ax.set_title(env_id)
        ax.set_xlabel("environment steps")
        what = "game score, all lives" if env_id in games else "episode return"
        ax.set_ylabel(f"{what} (moving average of {window})")
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize="small" if len(lines) > EVALUATIONS_IN_LEGEND else None)
    fig.tight_layout()
    try:
        fig.savefig(output)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}") from None
    finally:
        plt.close(fig)
    return output


def _up_to(steps: np.ndarray, values: np.ndarray, until: int) -> tuple[np.ndarray, np.ndarray]:
    """The points at or before step ``until`` (all of them for 0)."""
    if until <= 0:
        return steps, values
    kept = steps <= until
    return steps[kept], values[kept]


def _draw_panel(ax, lines: dict[str, tuple[list, list]], points: int) -> None:
    """One line per label: its runs thin, their mean and min-max band, their evaluations
    (in a panel of more than :data:`EVALUATIONS_IN_LEGEND` lines, one legend entry says
    what the points are, rather than one per line)."""
    import matplotlib

    few = len(lines) <= EVALUATIONS_IN_LEGEND
    palette = matplotlib.colormaps["tab20"] if len(lines) > 10 else None  # (10: the cycle's)
    for i, (label, (curves, evaluations)) in enumerate(sorted(lines.items())):
        color = f"C{i}" if palette is None else palette(i % 20)
        for j, (steps, means) in enumerate(evaluations):
            if len(steps):
                name = f"{label}: greedy evaluations" if few else "greedy evaluations (points)"
                ax.plot(steps, means, "o", color=color, ms=4, alpha=0.8,
                        label=name if j == 0 and (few or i == 0) else None)  # fmt: skip
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
