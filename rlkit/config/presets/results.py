"""What each shipped preset measured, in short: ``results.toml`` beside the presets, as
``rlkit presets`` prints it (one line a preset) and docs/presets.md tabulates it.

The preset files hold settings and a ``# source:`` line only; the figures are here once,
and tests check that the docs quote the same ones. Nothing here imports TensorFlow.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field

from rlkit.config import presets as shipped

RESULTS_FILE = shipped.PRESETS_DIR / "results.toml"

#: what a ``measure`` means, said under the table
MEASURES = {
    "final": "the final models' mean return over seeds, 100 greedy episodes each (in "
    "brackets: the seeds at the reference's level, its mean less one std)",
    "training": "the mean training return at the preset's steps, one seed (MinAtar: of the "
    "last 100 episodes; dqn3: of Breakout's games, Dopamine's measure)",
}
#: what the reference column holds, said under the table
REFERENCE = "rl-zoo's published benchmark unless named"


def notes(table: list[dict[str, str]]) -> list[str]:
    """What the table's columns mean, for the measures its rows use."""
    final, training = (any(row["measure"] == m for row in table) for m in MEASURES)
    said = [MEASURES["final"]] if final else []
    if training:
        said.append(("for MinAtar and dqn3, " if final else "") + MEASURES["training"])
    return [f"measured: {'; '.join(said)}", f"reference: {REFERENCE}"] if said else []


COLUMNS = ("preset", "env", "source", "steps", "measured", "reference", "time/run")
#: columns dropped first when the terminal is narrow
DROP_ORDER = ("env", "time/run", "source", "steps")


@dataclass(frozen=True)
class PresetResult:
    """One preset's line of ``results.toml`` (see its header for the fields)."""

    preset: str
    source: str
    measure: str = ""
    result: str = ""
    finals: tuple[float, ...] = ()
    at_reference: str = ""
    reference: str = ""
    reference_from: str = "zoo"
    wall_clock: str = ""
    at: str = ""
    envs: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def measured(self) -> str:
        """E.g. ``471.9 (7/10)``, ``8.16 (1 seed)``, ``1.6 (Breakout, 1.25M)``, ``-``."""
        if not self.result:
            return "-"
        detail = self.at or self.at_reference or ("1 seed" if self.measure == "training" else "")
        return f"{self.result} ({detail})" if detail else self.result

    @property
    def versus(self) -> str:
        """The reference: rl-zoo's bare (``500.0 ± 0.0``), another named (``paper ~9.5``)."""
        if not self.reference:
            return "-"
        return (
            self.reference
            if self.reference_from == "zoo"
            else f"{self.reference_from} {self.reference}"
        )


def load_results() -> dict[str, PresetResult]:
    """Every entry of ``results.toml``, by preset name (``"dqn/CartPole-v1"``)."""
    data = tomllib.loads(RESULTS_FILE.read_text())
    known = set(PresetResult.__dataclass_fields__) - {"preset", "extra"}
    out = {}
    for name, entry in data.items():
        fields = {k: v for k, v in entry.items() if k in known}
        fields["finals"] = tuple(float(x) for x in fields.get("finals", ()))
        extra = {k: v for k, v in entry.items() if k not in known}
        out[name] = PresetResult(name, extra=extra, **fields)
    return out


def short_steps(steps: int) -> str:
    """``50000`` -> ``50k``, ``1000000`` -> ``1M``, ``1250000`` -> ``1.25M``."""
    for size, unit in ((1_000_000, "M"), (1_000, "k")):
        if steps >= size:
            return f"{steps / size:g}{unit}"
    return str(steps)


def rows(
    agent: str | None = None, families: Mapping[str, Mapping[str, str]] | None = None
) -> list[dict[str, str]]:
    """One row per shipped preset (of ``agent``), by column name. ``families``: agent ->
    its registry entry's ``preset_families`` (a family preset's env column: ``ALE/*``)."""
    families = families or {}
    results = load_results()
    out = []
    for p in shipped.presets(agent):
        r = results.get(p.name) or PresetResult(p.name, source="-")
        stem = p.name.split("/", 1)[1]
        family = next((prefix + "*" for prefix, name in families.get(p.agent, {}).items()
                       if name == stem), None)  # fmt: skip
        out.append({
            "preset": p.name,
            "env": p.env or family or r.envs or "any",
            "source": r.source,
            "steps": short_steps(int(p.run.get("steps", 0))) if p.run.get("steps") else "-",
            "measured": r.measured,
            "reference": r.versus,
            "time/run": r.wall_clock or "-",
            "measure": r.measure,
        })  # fmt: skip
    return out


def format_table(table: list[dict[str, str]], width: int) -> list[str]:
    """The rows as aligned text lines (a header first), no wider than ``width - 1``: the
    columns of :data:`DROP_ORDER` go first when the terminal is narrow (those that fit
    again once a wider one went come back), then lines are cut."""
    columns = list(COLUMNS)
    limit = max(width - 1, 20)

    def widths(cols: list[str]) -> dict[str, int]:
        return {c: max([len(c), *(len(row[c]) for row in table)]) for c in cols}

    def fits(cols: list[str]) -> bool:
        return sum(widths(cols).values()) + 2 * (len(cols) - 1) <= limit

    dropped = []
    for column in DROP_ORDER:
        if fits(columns):
            break
        columns.remove(column)
        dropped.append(column)
    for column in reversed(dropped):  # one dropped early may fit once a wider one went
        wider = [c for c in COLUMNS if c in columns or c == column]
        if fits(wider):
            columns = wider
    sizes = widths(columns)
    lines = []
    for row in [{c: c for c in columns}, *table]:
        text = "  ".join(row[c].ljust(sizes[c]) for c in columns).rstrip()
        lines.append(text if len(text) <= limit else text[: limit - 1] + "…")
    return lines


def markdown_table(
    agent: str | None = None, families: Mapping[str, Mapping[str, str]] | None = None
) -> str:
    """The same rows as a Markdown table (docs/presets.md holds this one); ``families`` as
    :func:`rows` takes them."""
    table = rows(agent, families)
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row[c] for c in COLUMNS) + " |" for row in table]
    return "\n".join(lines) + "\n"
