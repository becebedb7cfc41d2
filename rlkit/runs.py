"""Run directories: where a training run's config, metrics and model are written."""

from __future__ import annotations

import csv
import io
import json
import os
import time
from pathlib import Path
from typing import Any

from rlkit.agents.base import atomic_write_bytes
from rlkit.errors import UsageError

CONFIG_FILE = "config.toml"
SUMMARY_FILE = "summary.json"
METRICS_FILE = "metrics.csv"
MODEL_DIR = "model"


def create_run_dir(out: str | os.PathLike, agent: str, env_id: str, seed: int) -> Path:
    """Make ``out/<agent>-<env>-<seed>-<YYYYmmdd-HHMMSS>`` (a suffix keeps names unique).

    Raises UsageError when ``out`` cannot be created or written.
    """
    out = Path(out)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = f"{agent}-{env_id.replace('/', '_')}-{seed}-{stamp}"
    try:
        out.mkdir(parents=True, exist_ok=True)
        for n in range(1000):
            path = out / (base if n == 0 else f"{base}-{n}")
            try:
                path.mkdir()
                return path
            except FileExistsError:
                continue
    except OSError as exc:
        raise UsageError(
            f"cannot write to output directory {out}: {exc.strerror}; choose another with --out"
        ) from None
    raise UsageError(f"too many runs named {base} in {out}")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} to TOML")


def to_toml(tables: dict[str, dict[str, Any]]) -> str:
    """Flat ``{table: {key: value}}`` as TOML (values: bool, int, float, str, lists of those)."""
    lines = []
    for table, values in tables.items():
        lines.append(f"[{table}]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in values.items())
        lines.append("")
    return "\n".join(lines)


def write_config(run_dir: Path, run: dict[str, Any], agent_config: dict[str, Any]) -> None:
    """``config.toml``: the ``[run]`` settings and the resolved ``[agent]`` config."""
    atomic_write_bytes(run_dir / CONFIG_FILE, to_toml({"run": run, "agent": agent_config}).encode())


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    atomic_write_bytes(run_dir / SUMMARY_FILE, json.dumps(summary, indent=2).encode())


def write_episode_metrics(run_dir: Path, history) -> None:
    """``metrics.csv``: one row per finished episode (step, episode, return, length)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["step", "episode", "return", "length"])
    rows = zip(
        history.episode_end_steps, history.episode_returns, history.episode_lengths, strict=True
    )
    for i, (step, ret, length) in enumerate(rows, start=1):
        writer.writerow([step, i, f"{ret:.6g}", length])
    atomic_write_bytes(run_dir / METRICS_FILE, buffer.getvalue().encode())
