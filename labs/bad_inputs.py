"""Bad and odd inputs over every command and the Python API, each run and classified.

    python labs/bad_inputs.py [--jobs 2] [--only PREFIX,...] [--timeout 90]

The promise (docs/cli.md, docs/api.md): bad input gets one line on stderr and exit 2 with
nothing written; from Python, ``rlkit.UsageError`` with one line. Each case runs in a fresh
folder (holding a copy of one small finished run, ``run/``, for the commands that read one)
and is classified:

- ``usage``: exit 2, one ``rlkit: error: ...`` line, nothing written (Python: one-line
  ``UsageError``);
- ``usage+written``: the one line, but files were left or changed;
- ``traceback``: a Python traceback, or another exit status with more than one line;
- ``hang``: still running after the timeout (killed);
- ``accepted``: exit 0 (the input was taken: right for the odd-but-valid ones, marked ``ok``).

Each case says what it expects (``refuse`` or ``ok``); the tally counts outcomes and the cases
whose outcome is not what was expected. Nothing here starts Ray: every sweep and tune case
is one that must be refused before Ray starts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # (run as a script)
from labs.bad_inputs_cases import RLKIT, TRAIN, Case, cases  # noqa: E402


def prepare(base: Path) -> None:
    """One small finished run (``run``) and broken copies of it (``run2``...``run6``)."""
    out = base / "runs"
    subprocess.run([*RLKIT, *TRAIN, "--eval-every", "100", "--checkpoint-every", "100",
                    "--out", str(out)], check=True, capture_output=True)  # fmt: skip
    (made,) = out.iterdir()
    shutil.move(str(made), base / "run")
    shutil.rmtree(out)
    run = base / "run"
    for n in (2, 3, 4, 5, 6):
        shutil.copytree(run, base / f"run{n}")
        (base / f"run{n}" / "summary.json").unlink()
    config = (base / "run2" / "config.toml").read_text()
    (base / "run2" / "config.toml").write_text(
        config.replace("learning_rate = ", "learning_rate = -5\n#", 1)
    )
    (base / "run3" / "config.toml").write_text(
        config.replace('env = "CartPole-v1"', 'env = "Acrobot-v1"')
    )
    (base / "run4" / "config.toml").write_text("[run\n")
    shutil.rmtree(base / "run5" / "checkpoints")
    shutil.rmtree(base / "run5" / "best")
    (base / "run6" / "model" / "weights.npz").write_bytes(b"not a zip")
    shutil.rmtree(base / "run6" / "checkpoints")


def snapshot(folder: Path) -> dict[str, tuple[int, float]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime)
            for p in folder.rglob("*") if p.is_file()}  # fmt: skip


def run_case(case: Case, base: Path, timeout: float) -> tuple[str, str]:
    """Run one case in a fresh copy of ``base``; return (outcome, its last stderr line)."""
    with tempfile.TemporaryDirectory(prefix="bad-input-") as tmp:
        work = Path(tmp) / "w"
        shutil.copytree(base, work, symlinks=True)
        for name, text in case.files:
            path = work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8", "surrogateescape"))
        before = snapshot(work)
        env = {**os.environ, "PYTHONPATH": str(work), "DISPLAY": "", "WAYLAND_DISPLAY": ""}
        env.pop("TF_CPP_MIN_LOG_LEVEL", None)
        if case.code:
            code = ("import sys\nimport rlkit\ntry:\n" + "".join(
                f"    {line}\n" for line in case.code.splitlines()) +
                "except rlkit.UsageError as exc:\n    print(f'UsageError: {exc}', file=sys.stderr)"
                "\n    sys.exit(2)\n")  # fmt: skip
            command = [sys.executable, "-c", code]
        else:
            command = [*RLKIT, *case.argv]
        start = time.monotonic()
        try:
            done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)  # fmt: skip
        except subprocess.TimeoutExpired:
            return "hang", f"still running after {timeout:.0f} s"
        err_lines = [line for line in done.stderr.splitlines() if line.strip()]
        last = err_lines[-1] if err_lines else ""
        if done.returncode == 0:
            return "accepted", f"{time.monotonic() - start:.1f} s"
        if "Traceback" in done.stderr or done.returncode < 0:
            return "traceback", last
        if done.returncode == 2 and len(err_lines) == 1:
            written = snapshot(work) != before
            return ("usage+written" if written else "usage"), last
        return "traceback", f"exit {done.returncode}: {last}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--only",
        default="",
        help="only the cases whose name starts with one of these (comma-separated)",
    )
    parser.add_argument("--timeout", type=float, default=90.0)
    args = parser.parse_args()
    prefixes = tuple(args.only.split(",")) if args.only else ("",)
    chosen = [case for case in cases() if case.name.startswith(prefixes)]
    with tempfile.TemporaryDirectory(prefix="bad-inputs-base-") as tmp:
        base = Path(tmp)
        prepare(base)
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda case: run_case(case, base, args.timeout), chosen))
    tally: Counter[str] = Counter()
    unexpected = []
    for case, (outcome, detail) in zip(chosen, results, strict=True):
        tally[outcome] += 1
        fine = outcome == {"refuse": "usage", "ok": "accepted", "fails": "traceback"}[case.expect]
        mark = " " if fine else "!"
        print(f"{mark} {outcome:<13} {case.name:<42} {detail[:150]}")
        if not fine:
            unexpected.append(case.name)
    print(f"\n{len(chosen)} inputs: " + ", ".join(f"{n} {k}" for k, n in tally.most_common()))
    print(f"as expected: {len(chosen) - len(unexpected)}; not as expected: {len(unexpected)}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
