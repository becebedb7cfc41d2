"""What a tune *is*, without Ray: its spec (``tune.json``), its trials' run folders, the
ranking of what they reached, ``tune.csv`` and the best configuration as a config file.

Tune folder::

    OUT/tune.json                    the spec (rlkit tune --resume OUT reads it)
    OUT/search/runs/<trial>/seed-S/  one ordinary run folder per search trial (seed S)
    OUT/search/runs/<trial>/values.json   the values the search gave that trial
    OUT/search.json                  the search's outcome: the trials picked for ranking
    OUT/final/                       a sweep: the picked trials on fresh seeds
    OUT/tune.csv                     every trial: its values, score, steps, stopped early
    OUT/best.toml                    the best configuration: rlkit train --config OUT/best.toml
    OUT/ray/                         Ray Tune's experiment state (for --resume)

:mod:`rlkit.sweeps.tune_on_ray` runs the search and the ranking on Ray Tune.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np

from rlkit.core.errors import UsageError
from rlkit.core.files import atomic_write_text
from rlkit.run.folder import RunFolder
from rlkit.sweeps.grid import SweepSpec, trial_dir
from rlkit.sweeps.search_spaces import Dimension, parse_dimension, trial_overrides

SPEC_FILE = "tune.json"
SEARCH_DIR = "search"
SEARCH_FILE = "search.json"
FINAL_DIR = "final"
RESULTS_FILE = "tune.csv"
BEST_FILE = "best.toml"
VALUES_FILE = "values.json"


@dataclass(frozen=True)
class TuneSpec:
    """Everything that defines a tune.

    ``train``: keyword arguments of :func:`rlkit.run.experiment.plan` shared by every trial
    (env, steps, eval_every, eval_episodes, preset, overrides: the ``--set`` strings ...).
    ``space``: key -> dimension text (:mod:`rlkit.sweeps.search_spaces`). ``trials`` search
    trials, all on ``search_seed``; then the ``top`` best that ran to the end are run on
    each of ``seeds`` (fresh seeds) and ranked by their final models' mean return.
    ``grace``: the steps every trial runs before ASHA may stop it; a trial goes on past
    ``grace * reduction_factor**k`` only while it is in the best ``1/reduction_factor``.
    ``rung_score``: what ASHA compares there (:func:`rung_score`): ``"shown"`` or
    ``"eval"``.
    """

    agent: str
    train: dict[str, Any]
    space: dict[str, str]
    trials: int
    seeds: list[int]
    top: int = 3
    search_seed: int = 0
    grace: int = 0
    reduction_factor: int = 3
    asha: bool = True
    rung_score: str = "shown"
    cpus_per_trial: float = 1.0
    max_concurrent: int = 0
    fixed: dict[str, str] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return int(self.train["steps"])

    def dimensions(self) -> dict[str, Dimension]:
        return {key: parse_dimension(text, key) for key, text in self.space.items()}

    def overrides(self, sampled: dict[str, Any]) -> dict[str, str]:
        """A trial's ``--set`` values: what the search sampled, ties, then ``fixed``."""
        return trial_overrides(self.agent, sampled, self.fixed)

    def sweep(self, picked: dict[str, dict[str, str]]) -> SweepSpec:
        """The ranking: the ``picked`` trials (label -> values) on the fresh seeds."""
        train = {k: v for k, v in self.train.items() if k != "overrides"}
        return SweepSpec(self.agent, train, list(self.seeds), named=picked,
                         cpus_per_trial=self.cpus_per_trial,
                         max_concurrent=self.max_concurrent)  # fmt: skip

    def plan(self, values: dict[str, str], seed: int):
        """One trial's :class:`~rlkit.run.plan.RunPlan` (``rlkit train``'s own)."""
        return self.sweep({}).plan(values, seed)

    def save(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / SPEC_FILE, json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, out: Path) -> TuneSpec:
        path = Path(out) / SPEC_FILE
        if not path.is_file():
            raise UsageError(f"{out} is not an rlkit tune folder: {SPEC_FILE} is missing")
        try:
            data = json.loads(path.read_text())
            data.setdefault("rung_score", "eval")  # a tune made before there was a choice
            return cls(**data)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"corrupt {path}: {exc}") from None


#: what ASHA may compare at its rungs (``rlkit tune --rung-score``)
RUNG_SCORES = ("shown", "eval")


def rung_score(
    rule: str,
    evaluation: float,
    episode_returns: list[float],
    episode_end_steps: list[int],
    step: int,
    window: int,
) -> float:
    """The score a trial reports to ASHA at an evaluation at loop ``step``.

    ``"eval"``: the evaluation's mean greedy return. ``"shown"``: the better of that and
    the mean return of the training episodes that ended in the last ``window`` steps
    (``(step - window, step]``; the newest episode if none did; the evaluation alone
    before any episode ended). Both returns are in the environment's reward units.

    Why: the greedy policy is a poor early witness where reward is deceptive. On
    MountainCarContinuous every greedy car stands still at first (0, any motion costs)
    while the exploring cars that reach the flag (+100) show it only in their training
    episodes; on Acrobot most greedy policies sit at the -500 cap while their training
    episodes already differ (-275 against -500). Comparing the evaluation alone stops the
    trials that are learning.
    """
    ended = [(r, end) for r, end in zip(episode_returns, episode_end_steps, strict=True)
             if end <= step]  # fmt: skip
    if rule == "eval" or not ended:
        return float(evaluation)
    recent = [r for r, end in ended if end > step - window]
    training = float(np.mean(recent)) if recent else float(ended[-1][0])
    return max(float(evaluation), training)


def is_tune(path: Path) -> bool:
    return (Path(path) / SPEC_FILE).is_file()


def search_dir(out: Path) -> Path:
    return Path(out) / SEARCH_DIR


def search_run(out: Path, label: str, spec: TuneSpec) -> Path:
    """The run folder of search trial ``label``."""
    return trial_dir(search_dir(out), label, spec.search_seed)


def write_values(out: Path, label: str, values: dict[str, str]) -> None:
    path = trial_dir(search_dir(out), label, 0).parent / VALUES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(values, indent=2))


def search_trials(out: Path, spec: TuneSpec) -> list[dict[str, Any]]:
    """Every search trial found on disk: label, values, steps reached, score (its last
    evaluation's mean return; the final model's for a finished trial), finished."""
    rows = []
    root = search_dir(out) / "runs"
    for values_path in sorted(root.glob(f"*/{VALUES_FILE}")):
        label = values_path.parent.name
        folder = RunFolder(search_run(out, label, spec))
        summary = folder.read_summary()
        steps, score = last_evaluation(folder)
        if summary is not None:
            steps, score = summary["steps"], summary["final_model"]["eval_return_mean"]
        rows.append({"trial": label, "values": json.loads(values_path.read_text()),
                     "steps": steps, "score": score, "finished": summary is not None})  # fmt: skip
    return rows


def last_evaluation(folder: RunFolder) -> tuple[int, float | None]:
    """``(last step logged, last evaluation's mean return or None)`` of a run folder."""
    if not folder.metrics_path.is_file():
        return 0, None
    step, score = 0, None
    with open(folder.metrics_path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                step = max(step, int(row["step"]))
                if row.get("kind") == "eval":
                    score = float(row["return"])
            except (KeyError, TypeError, ValueError):
                continue
    return step, score


def pick(rows: list[dict[str, Any]], top: int) -> dict[str, dict[str, str]]:
    """The ``top`` best trials that ran to the end, by score: label -> values (best first);
    if none ran to the end (all stopped early or diverged), the best of those."""
    scored = [r for r in rows if r["score"] is not None and r["score"] > -math.inf]
    finished = [r for r in scored if r["finished"]] or scored  # (else: the best stopped)
    finished.sort(key=lambda r: -r["score"])
    return {r["trial"]: r["values"] for r in finished[:top]}


def rank(out: Path, spec: TuneSpec, picked: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """The picked trials by their fresh seeds' final returns (mean, best first), each with
    every seed's final return."""
    ranking: list[dict[str, Any]] = []
    for label in picked:
        finals = []
        for seed in spec.seeds:
            summary = RunFolder(trial_dir(Path(out) / FINAL_DIR, label, seed)).read_summary()
            if summary is not None:
                finals.append(summary["final_model"]["eval_return_mean"])
        mean = float(np.mean(finals)) if finals else float("nan")
        ranking.append({"trial": label, "finals": finals, "final_mean": mean})
    ranking.sort(key=lambda r: -r["final_mean"] if finals_ok(r) else float("inf"))
    return ranking


def finals_ok(row: dict[str, Any]) -> bool:
    return bool(row["finals"])


def picked_trials(out: Path) -> dict[str, dict[str, str]]:
    """The trials the search picked for the ranking (``search.json``; none before it ends)."""
    path = Path(out) / SEARCH_FILE
    return json.loads(path.read_text())["picked"] if path.is_file() else {}


def run_groups(out: Path, ranking: bool = True) -> list:
    """What ``rlkit plot TUNE_DIR`` draws (:class:`~rlkit.run.plotting.RunGroup` s): a panel
    of the search trials, one line each, labelled by trial and score (with the steps it
    reached where it did not run to the end: ASHA stopped it, or it still runs), and, once
    the ranking has begun (and ``ranking``), a panel of the ranked trials, each the mean
    and band of its fresh seeds, in the ranking's order. Runs with no finished episode
    yet are left out."""
    from rlkit.run.plotting import RunGroup, describe_run, read_episodes

    def drawable(run: Path) -> bool:
        return RunFolder(run).has_metrics and len(read_episodes(run)[0]) > 0

    spec = TuneSpec.load(out)
    env = spec.train["env"]
    rows = search_trials(out, spec)
    panel = f"{env}: search, {len(rows)} of {spec.trials} trials on seed {spec.search_seed}"
    groups = []
    for row in rows:
        run = search_run(out, row["trial"], spec)
        if not drawable(run):
            continue
        score = "no evaluation yet" if row["score"] is None else f"{row['score']:.1f}"
        if not row["finished"]:
            score += f" at {row['steps']:,} steps"
        label = f"{row['trial']} ({score})"
        groups.append(RunGroup(describe_run(run)[0], panel, (("trial", row["trial"]),),
                               (run,), label))  # fmt: skip
    picked = picked_trials(out) if ranking else {}
    panel = (f"{env}: the best {len(picked)} on fresh seeds "
             f"{', '.join(map(str, spec.seeds))}")  # fmt: skip
    for i, row in enumerate(rank(out, spec, picked), 1):
        runs = [trial_dir(Path(out) / FINAL_DIR, row["trial"], seed) for seed in spec.seeds]
        runs = [run for run in runs if drawable(run)]
        if runs:
            final = f"final {row['final_mean']:.1f}" if row["finals"] else "no seed finished"
            groups.append(RunGroup(describe_run(runs[0])[0], panel, (("trial", row["trial"]),),
                                   tuple(runs), f"{i}. {row['trial']} ({final})"))  # fmt: skip
    return groups


def write_results(out: Path, spec: TuneSpec, rows: list[dict[str, Any]],
                  ranking: list[dict[str, Any]]) -> Path:  # fmt: skip
    """``tune.csv``: one row per search trial, its values, and its fresh-seed finals if ranked."""
    keys = sorted({k for r in rows for k in r["values"]})
    ranked = {r["trial"]: r for r in ranking}
    columns = ["trial", "score", "steps", "stopped_early", "fresh_seed_mean",
               "fresh_seed_finals", *keys]  # fmt: skip
    text = StringIO()
    writer = csv.DictWriter(text, columns, lineterminator="\n")
    writer.writeheader()
    for r in sorted(rows, key=lambda r: r["trial"]):
        extra = ranked.get(r["trial"])
        writer.writerow({
            "trial": r["trial"], "score": "" if r["score"] is None else f"{r['score']:.6g}",
            "steps": r["steps"], "stopped_early": str(not r["finished"]).lower(),
            "fresh_seed_mean": f"{extra['final_mean']:.6g}" if extra and extra["finals"] else "",
            "fresh_seed_finals": " ".join(f"{f:.6g}" for f in extra["finals"]) if extra else "",
            **{k: r["values"].get(k, "") for k in keys},
        })  # fmt: skip
    atomic_write_text(Path(out) / RESULTS_FILE, text.getvalue())
    return Path(out) / RESULTS_FILE


def best_config_text(spec: TuneSpec, label: str, values: dict[str, str], score: str) -> str:
    """The best configuration as a config file ``rlkit train --config`` runs as it is: the
    trial's ``[run]`` settings and its whole ``[agent]`` config (preset, config file,
    ``--set`` and what the search found: nothing is left to a preset underneath)."""
    from rlkit.config.options import to_dict
    from rlkit.config.run import toml_value

    plan = spec.plan(values, spec.search_seed)
    settings = to_dict(plan.settings)
    base = settings.get("preset") or "none"
    run_keys = ["agent", "env", "env_kwargs", "steps", "num_envs", "episodes", "eval_every",
                "eval_episodes"]  # fmt: skip
    lines = [f"# source: rlkit tune {spec.agent} (trial {label}, {score}), on preset {base}; "
             f"search space and every trial in {RESULTS_FILE}", "[run]"]  # fmt: skip
    lines += [f"{k} = {toml_value(settings[k])}" for k in run_keys
              if k in settings and settings[k] not in (None, {})]  # fmt: skip
    lines += ['preset = "none"', "", "[agent]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in to_dict(plan.agent_config).items()]
    return "\n".join(lines) + "\n"


def format_table(rows: list[dict[str, Any]], ranking: list[dict[str, Any]], spec: TuneSpec) -> str:
    """The end-of-tune table: the ranked trials (fresh seeds), then the search's best."""
    by_label = {r["trial"]: r for r in rows}
    varying = [k for k in spec.space if len({str(r["values"].get(k)) for r in rows}) > 1]
    lines = [f"best trials on fresh seeds {','.join(map(str, spec.seeds))} "
             f"({spec.steps:,} steps each):"]  # fmt: skip
    for i, r in enumerate(ranking, 1):
        finals = ", ".join(f"{f:.1f}" for f in r["finals"]) or "none finished"
        search = by_label[r["trial"]]["score"]
        lines.append(f"  {i}. {r['trial']}: final {r['final_mean']:.1f} ({finals}); "
                     f"search {search:.1f}; {_values(by_label[r['trial']], varying)}")  # fmt: skip
    stopped = sum(not r["finished"] for r in rows)
    lines.append(f"search: {len(rows)} trials, {stopped} stopped early by ASHA")
    best = sorted(rows, key=lambda r: -(r["score"] if r["score"] is not None else -np.inf))
    for r in best[: max(5, len(ranking))]:
        score = "—" if r["score"] is None else f"{r['score']:.1f}"
        state = "ran to the end" if r["finished"] else "stopped early"
        lines.append(f"  {r['trial']}: {score} at {r['steps']:,} steps ({state}); "
                     f"{_values(r, varying)}")  # fmt: skip
    return "\n".join(lines)


def _values(row: dict[str, Any], keys: list[str]) -> str:
    return " ".join(f"{k}={_short(row['values'].get(k, ''))}" for k in keys)


def _short(value: str) -> str:
    try:
        number = float(value)
    except ValueError:
        return value.replace(" ", "")
    if "." not in value and "e" not in value:
        return value
    for digits in range(3, 7):  # short, but never rounded onto a whole number it is not
        text = f"{number:.{digits}g}"
        if float(text) != round(number) or number == round(number):
            return text
    return repr(number)
