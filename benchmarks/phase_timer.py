"""Where a training run's wall-clock goes: the random phase, the learning phase, and inside
each learning step the environment, acting and the update (standard library only, so that a
peer's own venv can import it: :mod:`benchmarks.compare_sb3` runs SB3 there).

A :class:`PhaseTimer` wraps named methods of the objects a training loop calls (the env's
``step``, the agent's acting and update calls) with a clock, and marks moments by the step
count (the loop's callback calls :meth:`PhaseTimer.at_step`). :meth:`PhaseTimer.report` then
gives, for the phase between two marks, its steps/s and each wrapped call's milliseconds per
step; what is left ("other") is the loop's own work: storing the transition, bookkeeping,
wrappers.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def cpu_seconds() -> float:
    """This process's CPU seconds so far (user and system, every thread)."""
    return time.process_time()


#: the learning steps left out of the "steady" phase: the first update's compile or warm-up
WARM_STEPS = 100


class PhaseTimer:
    """Seconds spent inside wrapped calls, and snapshots of them at chosen step counts.

    Args:
        marks: ``{step_count: name}``: after the step that brings the count to
            ``step_count``, the clock and every call's total so far are kept under ``name``.
    """

    def __init__(self, marks: dict[int, str]) -> None:
        self.marks = dict(marks)
        self.seconds: dict[str, float] = {}
        self.snapshots: dict[str, tuple[float, dict[str, float], float]] = {}
        self.first_call: dict[str, float] = {}  # a label's first call after the "learn" mark

    def wrap(self, obj: Any, attribute: str, label: str) -> None:
        """Time every call of ``obj.attribute`` (an instance attribute shadows the method)
        under ``label``."""
        original: Callable[..., Any] = getattr(obj, attribute)
        self.seconds.setdefault(label, 0.0)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent = time.perf_counter() - start
                self.seconds[label] += spent
                if "learn" in self.snapshots and label not in self.first_call:
                    self.first_call[label] = spent

        setattr(obj, attribute, timed)

    def start(self) -> None:
        """The run begins now (mark ``"start"``, and a mark at step 0)."""
        self.snapshots["start"] = (time.perf_counter(), dict(self.seconds), cpu_seconds())
        self.at_step(0)

    def at_step(self, step: int) -> None:
        """Called after each step with the step count: snapshot if ``step`` is a mark."""
        name = self.marks.get(step)
        if name is not None:
            self.snapshots[name] = (time.perf_counter(), dict(self.seconds), cpu_seconds())

    def stop(self) -> None:
        """The run ends now (mark ``"end"``)."""
        self.snapshots["end"] = (time.perf_counter(), dict(self.seconds), cpu_seconds())

    def phase(self, first: str, last: str, steps: int) -> dict[str, float]:
        """The phase from mark ``first`` to mark ``last`` over ``steps`` environment steps:
        ``seconds``, ``sps`` (steps/s), ``cpu_ms`` (the process's CPU milliseconds a step: on a
        loaded machine steadier than the wall clock) and, per wrapped label and ``other``,
        wall-clock milliseconds per step."""
        (t0, s0, c0), (t1, s1, c1) = self.snapshots[first], self.snapshots[last]
        seconds = t1 - t0
        out = {"seconds": seconds, "steps": steps, "sps": steps / seconds,
               "cpu_ms": (c1 - c0) / steps * 1000}  # fmt: skip
        inside = 0.0
        for label in s1:
            spent = s1[label] - s0.get(label, 0.0)
            inside += spent
            out[f"{label}_ms"] = spent / steps * 1000
        out["other_ms"] = (seconds - inside) / steps * 1000
        return out


def marks(learning_starts: int, steps: int, warm: int = WARM_STEPS) -> dict[int, str]:
    """The marks of a run of ``steps`` steps whose first update follows step
    ``learning_starts + 1``: ``learn`` (the random phase ends) and ``steady`` (the first
    ``warm`` learning steps, with the first update's compile, are past). With vector envs
    (the step count moving N at a time) both must be multiples of N to be reached."""
    out = {learning_starts: "learn"}
    if learning_starts + warm < steps:
        out[learning_starts + warm] = "steady"
    return out


def phases(timer: PhaseTimer, learning_starts: int, steps: int,
           warm: int = WARM_STEPS) -> dict[str, dict[str, float]]:  # fmt: skip
    """``random`` (steps up to ``learning_starts``), ``learning`` (the rest) and ``steady``
    (the learning phase after its first ``warm`` steps: :func:`marks`' ``warm``), as
    :meth:`PhaseTimer.phase` gives them."""
    if learning_starts >= steps:  # a run too short to learn: all random
        return {"random": timer.phase("start", "end", steps)}
    out = {}
    if learning_starts > 0:
        out["random"] = timer.phase("start", "learn", learning_starts)
    out["learning"] = timer.phase("learn", "end", steps - learning_starts)
    if "steady" in timer.snapshots:
        out["steady"] = timer.phase("steady", "end", steps - learning_starts - warm)
    return out


def split_line(result: dict) -> str:
    """The steady learning phase's steps/s and milliseconds a step, or the learning phase's."""
    phases = result["phases"]
    name = next(n for n in ("steady", "learning", "random", "whole") if n in phases)
    p = phases[name]
    if "env_ms" not in p:  # the compiled loop: one program, no split
        return (
            f"{name} {p['sps']:6.1f}/s (one XLA program: no split); compile "
            f"{result['first_update_s']:.1f} s"
        )
    rand = phases.get("random") if name != "random" else None
    head = f"random {rand['sps']:6.0f}/s  " if rand else ""
    return (f"{head}{name} {p['sps']:6.1f}/s, CPU {p['cpu_ms']:.2f} ms/step; wall: env "
            f"{p['env_ms']:.2f} act {p['act_ms']:.2f} update {p['update_ms']:.2f} other "
            f"{p['other_ms']:.2f} ms/step; first update "
            f"{result['first_update_s']:.2f} s")  # fmt: skip


def common_phase(rows: dict[str, list[dict]]) -> str:
    """The first of ``steady``, ``learning``, ``whole`` that every run of ``rows`` timed."""
    every = [r["phases"] for results in rows.values() for r in results]
    return next(n for n in ("steady", "learning", "whole") if all(n in p for p in every))


def ratios(name: str, rows: dict[str, list[dict]], phase: str) -> str:
    """For an SB3 row: each rlkit row's median steps/s over its (the whole run; the ``phase``)
    and its CPU milliseconds a step in the ``phase`` over rlkit's."""
    if not name.startswith("sb3"):
        return ""

    def medians(results: list[dict]) -> tuple[float, float, float]:
        return (statistics.median(r["sps"] for r in results),
                statistics.median(r["phases"][phase]["sps"] for r in results),
                statistics.median(r["phases"][phase]["cpu_ms"] for r in results))  # fmt: skip

    sb3_all, sb3_phase, sb3_cpu = medians(rows[name])
    parts = []
    for other, results in rows.items():
        if other.startswith("rlkit"):
            all_, ph, cpu = medians(results)
            parts.append(f"{other} {all_ / sb3_all:.2f}x ({phase} {ph / sb3_phase:.2f}x, "
                         f"CPU a step {sb3_cpu / cpu:.2f}x less)")  # fmt: skip
    return "\n      rlkit faster: " + ", ".join(parts)
