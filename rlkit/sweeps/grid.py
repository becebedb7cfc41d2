"""Sweeps: many seeds and a grid of config values, as ordinary rlkit runs; their summary.

This module holds what a sweep *is*, without Ray: the spec (saved as ``sweep.json``),
its expansion into trials (the cross product of ``--grid`` values, times the seeds), the
check of every trial's config before any runs, where each trial's run folder lives, and
the aggregation of finished trials into ``sweep.csv``. :mod:`rlkit.sweeps.sweep_on_ray` runs the
trials as Ray Tune trials.

Sweep folder::

    OUT/sweep.json                 the spec (rlkit sweep --resume OUT reads it)
    OUT/runs/<config>/seed-<S>/    one ordinary rlkit run folder per trial
    OUT/ray/                       Ray Tune's experiment state (for --resume)
    OUT/sweep.csv                  per configuration: final/best returns over seeds, IQM
    OUT/xla-cache/                 compiled XLA code the trials share (compiled loop)
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlkit.core.errors import UsageError
from rlkit.run.folder import RunFolder

SPEC_FILE = "sweep.json"
RESULTS_FILE = "sweep.csv"
RUNS_DIR = "runs"
DEFAULT_CONFIG = "default"


@dataclass(frozen=True)
class SweepSpec:
    """Everything that defines a sweep.

    ``train``: keyword arguments of :func:`rlkit.run.experiment.plan` shared by every trial
    (env, steps, episodes, eval_every, config_file, preset, overrides ...).
    ``grid``: key -> values (as ``--set`` strings); trials are the cross product, times
    ``seeds``. ``target``: the return a seed must reach to count as a success.
    """

    agent: str
    train: dict[str, Any]
    seeds: list[int]
    grid: dict[str, list[str]] = field(default_factory=dict)
    target: float | None = None
    cpus_per_trial: float = 1.0
    max_concurrent: int = 0  # 0: as many as the CPUs allow
    #: label -> values: these configurations instead of the grid's (``rlkit tune`` runs its
    #: best ones on fresh seeds this way)
    named: dict[str, dict[str, str]] = field(default_factory=dict)

    def configs(self) -> list[dict[str, str]]:
        """Every combination of grid values, in a stable order (one dict per combination)."""
        return [values for _, values in self.labelled()]

    def labelled(self) -> list[tuple[str, dict[str, str]]]:
        """``(label, values)`` of every configuration: the named ones, else the grid's."""
        if self.named:
            return list(self.named.items())
        keys = list(self.grid)
        combos = [dict(zip(keys, values, strict=True))
                  for values in itertools.product(*(self.grid[k] for k in keys))]  # fmt: skip
        return [(config_label(values), values) for values in combos]

    def trials(self) -> list[dict[str, Any]]:
        """``{"config": label, "values": {...}, "seed": s}`` for every trial."""
        return [
            {"config": label, "values": values, "seed": seed}
            for label, values in self.labelled()
            for seed in self.seeds
        ]

    def plan(self, values: dict[str, str], seed: int):
        """The :class:`~rlkit.run.experiment.RunPlan` of one trial (``rlkit train``'s own)."""
        from rlkit.config.options import parse_overrides
        from rlkit.run import experiment

        train = dict(self.train)
        overrides = parse_overrides(train.pop("overrides", []))
        return experiment.plan(self.agent, seed=seed, overrides={**overrides, **values}, **train)

    def validate(self) -> None:
        """Resolve every configuration once (seed 0): bad keys or values, and two
        configurations that resolve to the same run, raise UsageError before any trial
        starts."""
        seen: dict[tuple, str] = {}
        for label, values in self.labelled():
            plan = self.plan(values, self.seeds[0] if self.seeds else 0)
            key = (repr(plan.settings), repr(plan.agent_config))
            if key in seen:
                raise UsageError(
                    f"--grid gives the same configuration twice ({seen[key]} and {label}); "
                    f"{LIST_HINT}"
                )
            seen[key] = label

    def differences(self, other: SweepSpec, fields: list[str]) -> list[str]:
        """Where ``other`` differs from this sweep in ``fields`` (of agent, train, seeds,
        grid, target), one phrase each."""
        flags = {"agent": "AGENT", "train": "the run options", "seeds": "--seeds",
                 "grid": "--grid", "target": "--target"}  # fmt: skip
        return [
            f"{flags[name]} ({getattr(self, name)!r} here, {getattr(other, name)!r} asked)"
            for name in fields
            if getattr(self, name) != getattr(other, name)
        ]

    def save(self, out: Path) -> None:
        from rlkit.core.files import atomic_write_text

        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / SPEC_FILE, json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, out: Path) -> SweepSpec:
        path = Path(out) / SPEC_FILE
        if not path.is_file():
            raise UsageError(f"{out} is not an rlkit sweep folder: {SPEC_FILE} is missing")
        try:
            return cls(**json.loads(path.read_text()))
        except (ValueError, TypeError) as exc:
            raise UsageError(f"corrupt {path}: {exc}") from None


def config_label(values: dict[str, str]) -> str:
    """``{"learning_rate": "1e-3", "double_dqn": "true"}`` ->
    ``learning_rate=1e-3,double_dqn=true`` (``default`` for no grid)."""
    if not values:
        return DEFAULT_CONFIG
    return ",".join(f"{k}={v}" for k, v in values.items()).replace("/", "_")


def trial_dir(out: Path, config: str, seed: int) -> Path:
    return Path(out) / RUNS_DIR / config / f"seed-{seed}"


LIST_HINT = "a list-valued key takes each value in brackets: --grid 'hidden_sizes=[64,64],[256]'"


def split_values(text: str) -> list[str]:
    """``"1e-3,3e-4"`` -> two values; ``"[64,64],[256]"`` -> two lists (commas inside
    brackets belong to the value)."""
    items, depth, current = [], 0, ""
    for char in text:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += char
    return [*items, current.strip()]


def brackets_closed(text: str) -> bool:
    """Every ``[`` closed by a ``]`` after it, none nested (``[64,64],[256`` is not)."""
    depth = 0
    for char in text:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth not in (0, 1):
            return False
    return depth == 0


def parse_grid(pairs: list[str]) -> dict[str, list[str]]:
    """``["lr=1e-3,3e-4", "hidden_sizes=[64,64],[256]"]`` ->
    ``{"lr": ["1e-3", "3e-4"], "hidden_sizes": ["[64,64]", "[256]"]}``; a value given
    twice is refused (two trials would be one run)."""
    grid: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, values = pair.partition("=")
        items = split_values(values)
        if (not sep or not key.strip() or not values.strip() or any(v == "" for v in items)
                or not brackets_closed(values)):  # fmt: skip
            raise UsageError(
                f"malformed --grid {pair!r}: expected KEY=V1,V2,..., "
                "e.g. --grid learning_rate=1e-3,3e-4"
            )
        if key.strip() in grid:
            raise UsageError(f"--grid {key.strip()} is given twice; list all its values once")
        twice = [v for i, v in enumerate(items) if v in items[:i]]
        if twice:
            raise UsageError(f"--grid {key.strip()} gives {twice[0]} twice; {LIST_HINT}")
        grid[key.strip()] = items
    return grid


#: the most seeds a sweep runs (each is a whole run per configuration)
MAX_SEEDS = 1_000


def parse_seeds(text: str) -> list[int]:
    """``"0-9"`` -> ``[0, ..., 9]``; ``"0,3,7"`` -> ``[0, 3, 7]``; UsageError otherwise."""
    try:
        if "-" in text.strip("-"):
            first, last = (int(x) for x in text.split("-"))
            if last - first >= MAX_SEEDS:  # (not made into a list: it may be billions)
                raise OverflowError(last - first + 1)
            seeds = list(range(first, last + 1))
        else:
            seeds = [int(s) for s in text.split(",")]
    except ValueError:
        seeds = []
    except OverflowError as many:
        raise UsageError(
            f"--seeds {text!r} asks for {many.args[0]:,} seeds: at most {MAX_SEEDS:,} (each is a "
            "whole run of every configuration)"
        ) from None
    if not seeds or any(not 0 <= s < 2**32 for s in seeds):
        raise UsageError(f"bad --seeds {text!r}: expected e.g. 0-9 or 0,3,7 (each in [0, 2**32))")
    if len(seeds) > MAX_SEEDS:
        raise UsageError(f"--seeds {text!r} gives {len(seeds):,} seeds: at most {MAX_SEEDS:,}")
    twice = sorted({s for s in seeds if seeds.count(s) > 1})
    if twice:
        raise UsageError(
            f"--seeds {text!r} gives seed {twice[0]} twice: two trials would share a run folder"
        )
    return seeds


def check_cpus(cpus_per_trial: float, address: str | None) -> None:
    """On a cluster started here (no ``--address``), a trial that asks for more CPUs than
    the machine has would never start (Ray waits for them, silently): UsageError."""
    import os

    cpus = os.cpu_count() or 1
    if address is None and cpus_per_trial > cpus:
        raise UsageError(
            f"--cpus-per-trial {cpus_per_trial:g} is more than this machine's {cpus} CPUs: no "
            f"trial could start; give at most {cpus} (or --address of a larger Ray cluster)"
        )


# -- aggregation ----------------------------------------------------------------------------------
def iqm(values) -> float:
    """Interquartile mean: the mean of the middle 50% (``scipy.stats.trim_mean(x, 0.25)``:
    ``int(0.25 n)`` values cut from each end), as rliable recommends."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    cut = int(0.25 * len(x))
    return float(x[cut : len(x) - cut].mean())


def bootstrap_ci(values, statistic=iqm, confidence: float = 0.95, resamples: int = 2000,
                 seed: int = 0) -> tuple[float, float]:  # fmt: skip
    """Percentile bootstrap confidence interval of ``statistic`` over the runs (seeds)."""
    x = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    stats = [statistic(x[rng.integers(0, len(x), len(x))]) for _ in range(resamples)]
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(low), float(high)


def summarise(out: Path, spec: SweepSpec) -> list[dict[str, Any]]:
    """One row per configuration from its trials' ``summary.json`` (finished trials only)."""
    rows = []
    for label, _ in spec.labelled():
        finals, bests = [], []
        for seed in spec.seeds:
            summary = RunFolder(trial_dir(out, label, seed)).read_summary()
            if summary is not None:
                finals.append(summary["final_model"]["eval_return_mean"])
                best = summary.get("best_model", {}).get("eval_return_mean")
                bests.append(best if best is not None else finals[-1])
        row: dict[str, Any] = {"config": label, "seeds_done": len(finals),
                               "seeds": len(spec.seeds)}  # fmt: skip
        if finals:
            low, high = bootstrap_ci(finals)
            row |= {
                "final_mean": float(np.mean(finals)), "final_std": float(np.std(finals)),
                "best_mean": float(np.mean(bests)), "best_std": float(np.std(bests)),
                "final_iqm": iqm(finals), "final_iqm_ci_low": low, "final_iqm_ci_high": high,
            }  # fmt: skip
            if spec.target is not None:
                row["reached_target"] = sum(f >= spec.target for f in finals) / len(finals)
        rows.append(row)
    return rows


COLUMNS = ["config", "seeds_done", "seeds", "final_mean", "final_std", "best_mean", "best_std",
           "final_iqm", "final_iqm_ci_low", "final_iqm_ci_high", "reached_target"]  # fmt: skip


def write_results(out: Path, rows: list[dict[str, Any]]) -> Path:
    """``sweep.csv``: the rows of :func:`summarise` (empty cells where nothing finished)."""
    from io import StringIO

    from rlkit.core.files import atomic_write_text

    text = StringIO()
    writer = csv.DictWriter(text, COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    atomic_write_text(out / RESULTS_FILE, text.getvalue())
    return out / RESULTS_FILE


def format_row(row: dict[str, Any]) -> str:
    """One line of the end-of-sweep table."""
    if not row["seeds_done"]:
        return f"{row['config']}: no seed finished"
    text = (
        f"{row['config']}: final {row['final_mean']:.1f} ± {row['final_std']:.1f}, "
        f"best {row['best_mean']:.1f} ± {row['best_std']:.1f}, IQM {row['final_iqm']:.1f} "
        f"[{row['final_iqm_ci_low']:.1f}, {row['final_iqm_ci_high']:.1f}] "
        f"over {row['seeds_done']}/{row['seeds']} seeds"
    )
    if "reached_target" in row and not math.isnan(row["reached_target"]):
        text += f"; {row['reached_target']:.0%} reached the target"
    return text


def is_sweep(path: Path) -> bool:
    """Is ``path`` a sweep folder (it has ``sweep.json``)?"""
    return (Path(path) / SPEC_FILE).is_file()


def sweep_runs(sweep_dir: Path) -> dict[Path, str]:
    """The finished-or-not trial run folders of a sweep, each labelled by its configuration."""
    spec = SweepSpec.load(sweep_dir)
    runs = {trial_dir(sweep_dir, t["config"], t["seed"]): t["config"] for t in spec.trials()}
    return {d: label for d, label in runs.items() if RunFolder(d).has_metrics}
