"""Does ``rlkit tune`` find what the generic defaults miss, and does ASHA pay?

For each case (Acrobot-v1 DQN, target -100; MountainCarContinuous-v0 DDPG, target 90), from
the generic defaults (``--preset none``), this runs ``rlkit tune`` (16 trials of 50k steps,
TPE + ASHA, the best 3 on 3 fresh seeds), then runs **the same 16 configurations to the
end** (no ASHA, as one sweep on the search seed), and prints in one table:

- the search's wall-clock with ASHA and the same trials all run to the end, and the ratio
  (target: <= 0.5), and how many trials ASHA stopped (target: >= half);
- the best configurations' final models on the fresh seeds, and whether one reaches the
  target on at least 2 of 3 seeds.

    python -m benchmarks.tune_targets --case acrobot --out runs/tune-bench
    python -m benchmarks.tune_targets --case mountaincar --out runs/tune-bench
    python -m benchmarks.tune_targets --case acrobot --out runs/tune-bench --report  # again

Each case is hours of CPU on two cores (docs/tuning.md gives the figures measured).
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

CASES = {
    "acrobot": {"agent": "dqn", "env": "Acrobot-v1", "target": -100.0},
    "mountaincar": {"agent": "ddpg", "env": "MountainCarContinuous-v0", "target": 90.0},
}


def tune(case: dict, out: Path, args) -> float:
    """``rlkit tune`` as a user runs it; returns its search's wall-clock (seconds)."""
    command = [sys.executable, "-m", "rlkit.cli.main", "tune", case["agent"], "--env",
               case["env"], "--preset", "none", "--steps", str(args.steps), "--trials",
               str(args.trials), "--seeds", "3", "--top", "3", "--max-concurrent",
               str(args.concurrent), "--rung-score", args.rung_score,
               "--out", str(out)]  # fmt: skip
    started = time.time()
    subprocess.run(command, check=True)
    return (out / "search.json").stat().st_mtime - started


def full_runs(out: Path, full: Path, concurrent: int) -> float:
    """The tune's search trials again, every one to the end (one sweep); its wall-clock."""
    from rlkit.sweeps.sweep_on_ray import run_sweep
    from rlkit.sweeps.tuning import TuneSpec, search_trials

    spec = TuneSpec.load(out)
    named = {r["trial"]: r["values"] for r in search_trials(out, spec)}
    sweep = spec.sweep(named)
    sweep = type(sweep)(**{**sweep.__dict__, "seeds": [spec.search_seed],
                           "max_concurrent": concurrent})  # fmt: skip
    started = time.time()
    run_sweep(sweep, full, stream=StringIO())
    return time.time() - started


def report(case: dict, out: Path, asha_s: float, full_s: float) -> None:
    from rlkit.sweeps.tuning import TuneSpec, search_trials

    spec = TuneSpec.load(out)
    rows = search_trials(out, spec)
    stopped = sum(not r["finished"] for r in rows)
    print(f"{case['agent']} {case['env']}: {len(rows)} trials of {spec.steps:,} steps, ASHA on "
          f"the rung score '{spec.rung_score}'")  # fmt: skip
    print(f"  search with ASHA: {asha_s:,.0f} s; the same trials all to the end: {full_s:,.0f} s;"
          f" ratio {asha_s / full_s:.2f} (target <= 0.5)")  # fmt: skip
    print(f"  ASHA stopped {stopped} of {len(rows)} early (target: at least half)")
    with open(out / "tune.csv", newline="") as f:
        ranked = [r for r in csv.DictReader(f) if r["fresh_seed_finals"]]
    ranked.sort(key=lambda r: -float(r["fresh_seed_mean"]))
    for r in ranked:
        finals = [float(x) for x in r["fresh_seed_finals"].split()]
        hits = sum(f >= case["target"] for f in finals)
        print(
            f"  {r['trial']}: fresh seeds {', '.join(f'{f:.1f}' for f in finals)}; "
            f"{hits}/{len(finals)} reach {case['target']:g}"
            + ("  <- target met" if hits >= 2 else "")
        )
    best = (out / "best.toml").read_text().splitlines()
    print("  best.toml [agent]: " + "; ".join(best[best.index("[agent]") + 1 :]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), required=True)
    parser.add_argument("--out", type=Path, default=Path("runs/tune-bench"))
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--concurrent", type=int, default=1, help="trials at once (both runs)")
    parser.add_argument("--rung-score", choices=["shown", "eval"], default="shown",
                        help="what ASHA compares (rlkit tune --rung-score)")  # fmt: skip
    parser.add_argument("--report", action="store_true", help="only print what ran before")
    args = parser.parse_args()
    case = CASES[args.case]
    out, full = args.out / args.case / "tune", args.out / args.case / "full"
    times = args.out / args.case / "times.json"
    if not args.report:
        asha_s = tune(case, out, args)
        full_s = full_runs(out, full, args.concurrent)
        times.write_text(json.dumps({"asha_search_s": asha_s, "full_s": full_s}))
    measured = json.loads(times.read_text())
    report(case, out, measured["asha_search_s"], measured["full_s"])


if __name__ == "__main__":
    main()
