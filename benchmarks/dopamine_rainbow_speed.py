"""rlkit's Rainbow against Dopamine's own Rainbow on MinAtar: environment steps per second
while learning, same settings, one invocation (issue 36's target: rlkit >= 3x Dopamine).

Each side is a whole training run in a fresh process, as a user starts it, into a
temporary folder: rlkit's ``rlkit train rainbow --env MinAtar/<Game>-v0`` (the preset
``rainbow/minatar``, taken from Dopamine's MinAtar gin) and Dopamine 4.1.2's
``JaxRainbowAgent`` with that gin through its own Runner
(``labs/dopamine_minatar/run_rainbow.py``, in Dopamine's own venv). Both write a row to
their ``metrics.csv`` as each episode ends; this polls the two files and times the steps
from the first episode ending at or past ``--start`` (after learning starts at 1,000 steps
and the first compiled updates) to the first at or past ``--start + --steps``, then stops
the process, printing steps/s and the process's own CPU time per step (less sensitive to
a loaded machine than the wall clock). Both learn from step 1,000 with one update of batch
32 every 4 steps; the sides run one after the other (alternating with ``--reps`` > 1) and
the machine's load (``os.getloadavg``) is printed beside each.

Dopamine's JAX Rainbow samples uniformly whatever its gin says (Dopamine issue #230);
rlkit's preset samples prioritized as the gin asks. ``--uniform`` also times rlkit with
``prioritized=false``, the replay Dopamine actually runs. ``--compiled`` also times rlkit's
preset in its compiled loop on the game's TensorFlow twin (``rlkit/MinAtar-<Game>-v0``,
minatar's game step for step), and with ``--uniform`` that too with ``prioritized=false``.

    python -m benchmarks.dopamine_rainbow_speed --game breakout --start 5000 --steps 20000 \
        --uniform --reps 2

Needs Dopamine's venv (labs/dopamine_minatar/README.md), ``--dopamine-python``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "labs" / "dopamine_minatar" / "run_rainbow.py"
#: --rlkit-src: a folder holding an ``rlkit`` package (with its ``cli``) to time instead of
#: the installed one (e.g. ``git archive`` of a commit, ``cli/`` moved into ``rlkit/``)
RLKIT_SRC = ""


def rlkit_source(commit: str) -> str:
    """A temporary folder holding the ``rlkit`` package of ``commit`` (``git archive`` of
    this repository, ``cli/`` moved into ``rlkit/`` as the install does), for ``--before``."""
    folder = tempfile.mkdtemp(prefix=f"rlkit-{commit[:8]}-")
    archive = subprocess.run(["git", "archive", commit, "rlkit", "cli"], cwd=ROOT,
                             check=True, capture_output=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    os.rename(os.path.join(folder, "cli"), os.path.join(folder, "rlkit", "cli"))
    return folder


ENV_IDS = {
    "breakout": "MinAtar/Breakout-v0",
    "space_invaders": "MinAtar/SpaceInvaders-v0",
    "asterix": "MinAtar/Asterix-v0",
    "freeway": "MinAtar/Freeway-v0",
    "seaquest": "MinAtar/Seaquest-v0",
}


def last_step(metrics: Path) -> int:
    """The ``step`` of the last complete row of a ``metrics.csv`` (0 when none yet)."""
    try:
        with open(metrics, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            lines = f.read().decode(errors="replace").split("\n")
    except OSError:
        return 0
    for line in reversed(lines[:-1]):  # the text after the last newline may be partial
        fields = line.split(",")
        if len(fields) > 1 and fields[1].isdigit() and fields[0] == "episode":
            return int(fields[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_window(
    command: list[str],
    metrics_of,
    start: int,
    steps: int,
    limit: float,
    cwd: Path = ROOT,
    source: str | None = None,
) -> tuple[float, float]:
    """``(steps/s, CPU ms per step)`` between the first episodes ending at or past ``start``
    and ``start + steps`` of the run ``command`` starts (``metrics_of()`` finds its
    metrics.csv once it exists). CPU time is the process's own, all its threads: less
    sensitive to the machine's load than the wall clock."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    source = RLKIT_SRC if source is None else source
    if source:  # --rlkit-src or --before: that rlkit first on the path
        env["PYTHONPATH"] = os.pathsep.join([source, env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    began = time.monotonic()
    first: tuple[float, int, float] | None = None
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{command[:3]} ended before the window: "
                    f"{proc.stderr.read().decode()[-2000:] if proc.stderr else ''}"
                )
            if time.monotonic() - began > limit:
                raise RuntimeError(f"{command[:3]}: no window within {limit:.0f} s")
            path = metrics_of()
            step = last_step(path) if path else 0
            now = time.monotonic()
            if first is None and step >= start:
                first = (now, step, cpu_seconds(proc.pid))
            elif first is not None and step >= start + steps:
                cpu = cpu_seconds(proc.pid) - first[2]
                return (step - first[1]) / (now - first[0]), 1000 * cpu / (step - first[1])
            time.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()


def rlkit_rate(
    game: str, seed: int, start: int, steps: int, extra: list[str], source: str | None = None,
    compiled: bool = False,
) -> tuple[float, float]:  # fmt: skip
    """``compiled``: on the game's TensorFlow twin (``rlkit/MinAtar-<Game>-v0``), which the
    compiled loop runs."""
    env_id = ENV_IDS[game].replace("MinAtar/", "rlkit/MinAtar-") if compiled else ENV_IDS[game]
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "rlkit.cli.main", "train", "rainbow", "--env",
                   env_id, "--seed", str(seed), "--steps", str(start + steps + 20_000),
                   "--quiet", "--eval-every", "0", "--out", out, *extra]  # fmt: skip

        def metrics() -> Path | None:
            found = list(Path(out).glob("*/metrics.csv"))
            return found[0] if found else None

        # run from the temporary folder: the rlkit installed in this python, never the
        # source tree's rlkit/ shadowing it from the current directory
        return time_window(command, metrics, start, steps, limit=3600, cwd=Path(out),
                           source=source)  # fmt: skip


def dopamine_rate(
    python: str, game: str, seed: int, start: int, steps: int, extra: list[str]
) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        command = [python, str(DRIVER), "--game", game, "--seed", str(seed), "--base-dir",
                   out, "--steps", "1000000", "--iteration-steps", "1000000", *extra]  # fmt: skip
        return time_window(command, lambda: Path(out) / "metrics.csv", start, steps, 3600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(ENV_IDS), default="breakout")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=5000, help="window starts at this step")
    parser.add_argument("--steps", type=int, default=25000, help="window length in steps")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--uniform", action="store_true", help="also rlkit prioritized=false")
    parser.add_argument(
        "--compiled",
        action="store_true",
        help="also rlkit's preset in the compiled loop, on the game's TensorFlow twin",
    )
    parser.add_argument(
        "--epsilon-decay",
        type=int,
        help="both sides' epsilon decay in steps (default: the gin's 250,000, so the window "
        "acts almost all at random); e.g. 1000: the window acts as late training does",
    )
    parser.add_argument("--rlkit-src", default="", help="time the rlkit package in this folder")
    parser.add_argument(
        "--before",
        default="",
        help="also time the rlkit preset at this git commit (before a change), same invocation",
    )
    parser.add_argument(
        "--dopamine-python",
        default=str(ROOT.parent / "dopamine-venv" / "bin" / "python"),
        help="the python of Dopamine's venv",
    )
    args = parser.parse_args()
    global RLKIT_SRC
    RLKIT_SRC = args.rlkit_src
    dopamine_extra: list[str] = []
    rlkit_extra: list[str] = []
    if args.epsilon_decay is not None:
        dopamine_extra = [
            "--gin-binding",
            f"JaxRainbowAgent.epsilon_decay_period = {args.epsilon_decay}",
        ]
        rlkit_extra = ["--set", f"eps_anneal_steps={args.epsilon_decay}"]
    sides = {
        "dopamine rainbow (uniform, #230)": lambda: dopamine_rate(
            args.dopamine_python, args.game, args.seed, args.start, args.steps, dopamine_extra
        ),
        "rlkit rainbow (preset, prioritized)": lambda: rlkit_rate(
            args.game, args.seed, args.start, args.steps, rlkit_extra
        ),
    }
    if args.before:
        before = rlkit_source(args.before)
        sides[f"rlkit rainbow (preset) at {args.before[:8]}"] = lambda: rlkit_rate(
            args.game, args.seed, args.start, args.steps, rlkit_extra, before
        )
    if args.compiled:
        sides["rlkit rainbow, compiled loop (rlkit/MinAtar-)"] = lambda: rlkit_rate(
            args.game, args.seed, args.start, args.steps, rlkit_extra, compiled=True
        )
    if args.uniform:
        uniform = [*rlkit_extra, "--set", "prioritized=false"]
        sides["rlkit rainbow, prioritized=false"] = lambda: rlkit_rate(
            args.game, args.seed, args.start, args.steps, uniform
        )
        if args.compiled:
            sides["rlkit rainbow, compiled, prioritized=false"] = lambda: rlkit_rate(
                args.game, args.seed, args.start, args.steps, uniform, compiled=True
            )
    print(
        f"MinAtar {args.game}, seed {args.seed}: steps {args.start:,} -> "
        f"{args.start + args.steps:,} of each run; epsilon decay "
        f"{args.epsilon_decay or 250_000:,} steps; load {os.getloadavg()[0]:.2f} at start",
        flush=True,
    )
    rates: dict[str, list[float]] = {name: [] for name in sides}
    cpus: dict[str, list[float]] = {name: [] for name in sides}
    for rep in range(args.reps):
        order = list(sides) if rep % 2 == 0 else list(reversed(sides))
        for name in order:
            rate, cpu = sides[name]()
            rates[name].append(rate)
            cpus[name].append(cpu)
            load = os.getloadavg()[0]
            print(
                f"rep {rep}: {name:44s} {rate:7.0f} steps/s  {cpu:6.2f} CPU ms/step  "
                f"(load {load:.2f})",
                flush=True,
            )
    first = next(iter(sides))
    base, base_cpu = statistics.median(rates[first]), statistics.median(cpus[first])
    print(f"\nmedian of {args.reps}:")
    for name in sides:
        rate, cpu = statistics.median(rates[name]), statistics.median(cpus[name])
        print(
            f"  {name:44s} {rate:7.0f} steps/s  {rate / base:5.2f}x Dopamine's;  "
            f"{cpu:6.2f} CPU ms/step  {base_cpu / cpu:5.2f}x less CPU"
        )


if __name__ == "__main__":
    main()
