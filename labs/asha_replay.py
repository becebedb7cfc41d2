"""Would other ASHA rungs have met the wall-clock target on the same trials?

``python -m benchmarks.tune_targets`` leaves a tune (``CASE/tune``) and the same search
trials run to the end (``CASE/full``). This replays ASHA over the complete runs: the
search's trials in the order the search started them, each reporting its evaluations as
``rlkit tune`` does (the rung score from :func:`rlkit.sweeps.tuning.rung_score`), to
rlkit's own scheduler (:class:`rlkit.sweeps.asha.FloorStoppingASHA`) with other first
rungs and reduction factors. A trial stopped at step ``s`` costs ``s / steps`` of its
training seconds to the end (Ray's start-up and trial set-up left out). It prints, per
setting, how many trials stop, the training the search would cost against all of it, and
the best finished trials by their search-seed final return.

It replays fixed trials: with other decisions TPE would have proposed others after its
random start. So it answers "on these trials, what does a cheaper ASHA give up", not
"what would that search have found".

    python -m labs.asha_replay runs/tune-bench/acrobot
    python -m labs.asha_replay runs/tune-bench/acrobot --rung-score eval
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path
from types import SimpleNamespace

from rlkit.sweeps import tuning

SETTINGS = [(0.2, 3), (0.2, 2), (0.2, 4), (0.1, 3), (0.1, 2)]  # (first rung, reduction)


def load_trials(case: Path) -> tuple[list[dict], int, int]:
    """The search's trials in start order, each with its complete run; (trials, steps,
    evaluation period)."""
    spec = tuning.TuneSpec.load(case / "tune")
    started = sorted((case / "tune" / "ray" / "search").glob("search_trial_*"),
                     key=lambda p: int(p.name.split("_")[3]))  # fmt: skip
    trials = []
    for path in started:
        label = "trial-" + path.name.split("_")[2]
        run = case / "full" / "runs" / label / f"seed-{spec.search_seed}"
        summary = json.loads((run / "summary.json").read_text())
        with open(run / "metrics.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        trials.append({
            "label": label,
            "episodes": [(int(r["step"]), float(r["return"])) for r in rows
                         if r["kind"] == "episode"],
            "evaluations": [(int(r["step"]), float(r["return"])) for r in rows
                            if r["kind"] == "eval"],
            "seconds": summary["seconds"],
            "final": summary["final_model"]["eval_return_mean"],
        })  # fmt: skip
    return trials, spec.steps, int(spec.train["eval_every"])


def replay(trials, steps: int, window: int, first: float, reduction: int, rule: str):
    """(stopped, training seconds, the finished trials best first) under one setting."""
    from ray.tune.schedulers import TrialScheduler

    from rlkit.sweeps.asha import FloorStoppingASHA

    grace = window * max(1, math.ceil(first * steps / window))
    scheduler = FloorStoppingASHA(time_attr="step", metric="score", mode="max", max_t=steps,
                                  grace_period=grace, reduction_factor=reduction)  # fmt: skip
    spent, finished = 0.0, []
    for trial in trials:
        handle = SimpleNamespace(trial_id=trial["label"])
        scheduler.on_trial_add(None, handle)
        ended_at = steps
        returns = [r for _, r in trial["episodes"]]
        ends = [s for s, _ in trial["episodes"]]
        for step, evaluation in trial["evaluations"]:
            if step >= steps:
                break
            score = tuning.rung_score(rule, evaluation, returns, ends, step, window)
            result = {"step": step, "score": score}
            if scheduler.on_trial_result(None, handle, result) == TrialScheduler.STOP:
                ended_at = step
                break
        spent += trial["seconds"] * ended_at / steps
        if ended_at == steps:
            finished.append((trial["final"], trial["label"]))
    return len(trials) - len(finished), spent, sorted(finished, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", type=Path, help="a benchmark case folder (with tune/ and full/)")
    parser.add_argument("--rung-score", choices=tuning.RUNG_SCORES, default="shown")
    args = parser.parse_args()
    trials, steps, window = load_trials(args.case)
    total = sum(t["seconds"] for t in trials)
    print(f"{len(trials)} trials of {steps:,} steps, {total:,.0f} s of training to the end; "
          f"ASHA on the rung score '{args.rung_score}'")  # fmt: skip
    for first, reduction in SETTINGS:
        stopped, spent, best = replay(trials, steps, window, first, reduction, args.rung_score)
        top = ", ".join(f"{label} {final:.0f}" for final, label in best[:3]) or "none"
        print(f"  first rung {first:.0%}, reduction {reduction}: {stopped} stopped, "
              f"{spent:,.0f} s ({spent / total:.2f}); best finished: {top}")  # fmt: skip


if __name__ == "__main__":
    main()
