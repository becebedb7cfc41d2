"""``rlkit presets`` prints a compact table whose figures the docs and the README agree with.

The figures live once, in rlkit/config/presets/results.toml; docs/presets.md holds the same
table and quotes them in its entries, docs/benchmarks.md's rows and the README too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlkit.agents.registry import preset_families
from rlkit.cli.main import main
from rlkit.config import presets
from rlkit.config.presets import results

ROOT = Path(__file__).resolve().parents[3]
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def cli(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def numbers(text: str) -> set[float]:
    return {float(x) for x in NUMBER.findall(text.replace(",", ""))}


def doc_entry(name: str) -> str:
    """docs/presets.md's section of preset ``name``."""
    text = (ROOT / "docs" / "presets.md").read_text()
    match = re.search(rf"^## {re.escape(name)}(?: \(|\n).*?(?=^## |\Z)", text, re.M | re.S)
    assert match, f"docs/presets.md has no entry for {name}"
    return match.group(0)


def benchmark_row(name: str) -> list[str] | None:
    """docs/benchmarks.md's table row of preset ``name`` (its own settings, no variant)."""
    for line in (ROOT / "docs" / "benchmarks.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == name:
            return cells
    return None


def test_every_shipped_preset_has_its_results_and_nothing_else_does():
    shipped = {p.name for p in presets.presets()}
    assert set(results.load_results()) == shipped
    for p in presets.presets():
        assert not re.search(r"^# (result|measured):", p.text, re.M)  # settings only


@pytest.mark.parametrize("entry", results.load_results().values(), ids=lambda r: r.preset)
def test_the_short_source_says_what_the_presets_source_line_says(entry):
    source = presets.lookup(*entry.preset.split("/")).source.lower()
    for part in re.split(r",|\+", entry.source):
        words = [w for w in part.lower().split() if len(w) >= 3 or "^" in w]
        assert any(w in source for w in words), f"{part!r} is not in {entry.preset}'s source"


@pytest.mark.parametrize(
    "entry",
    [r for r in results.load_results().values() if r.result],
    ids=lambda r: r.preset,
)
def test_docs_presets_md_quotes_the_same_figures(entry):
    entry_text = doc_entry(entry.preset)
    measured = entry_text[entry_text.index("**Measured.**") :]
    quoted = numbers(measured)
    assert set(entry.finals) <= quoted, f"{entry.preset}: {entry.finals} not all in {measured}"
    if entry.wall_clock:
        assert entry.wall_clock in measured
    if entry.finals:
        mean = sum(entry.finals) / len(entry.finals)
        assert abs(mean - float(entry.result)) <= 0.1  # (docs/benchmarks.md's unrounded mean)
        row = benchmark_row(entry.preset)
        assert row is not None, f"docs/benchmarks.md has no row for {entry.preset}"
        assert row[3].startswith(entry.result + " ("), row  # rlkit final, mean over seeds
        assert row[4] == entry.at_reference, row
        zoo_mean, zoo_std = (float(x) for x in row[2].split("±"))
        ref_mean, ref_std = (float(x) for x in entry.reference.split("±"))
        assert zoo_mean == ref_mean and abs(zoo_std - ref_std) <= 0.05, row
    else:  # MinAtar, dqn3: the figure and the reference, in the entry's words
        assert float(entry.result) in quoted
        assert float(entry.reference.lstrip("~")) in quoted


def test_docs_presets_md_holds_the_table_rlkit_presets_prints():
    text = (ROOT / "docs" / "presets.md").read_text()
    assert results.markdown_table(families=preset_families()) in text


def test_readme_agrees_on_cartpole_and_lunarlander():
    readme = " ".join((ROOT / "README.md").read_text().split())
    table = results.load_results()
    cartpole, lunar = table["dqn/CartPole-v1"], table["dqn/LunarLander-v3"]
    steps = int(presets.lookup("dqn", "CartPole-v1").run["steps"])
    assert f"final models average {cartpole.result}" in readme
    solved = cartpole.at_reference.replace("/", " of ")  # "7 of 10"
    assert f"score 500 on {solved}" in readme
    assert f"{cartpole.wall_clock} a run" in readme
    assert f"({steps:,} steps" in readme
    best = re.search(r"best model mean (\d+\.\d)", doc_entry("dqn/CartPole-v1")).group(1)
    assert f"best models average {best}" in readme
    assert "the final one on eight" not in readme
    assert f"{lunar.result} over three seeds against the zoo's" in readme
    assert f"{lunar.reference.split(' ±')[0]}, {lunar.wall_clock} a run" in readme


@pytest.mark.parametrize("width", [40, 60, 80, 100, 120, 200])
def test_presets_prints_one_line_per_preset_fitting_the_terminal(capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    status, out, err = cli(capsys, "presets")
    assert status == 0, err
    lines = out.splitlines()
    assert all(len(line) <= width - 1 for line in lines), [len(x) for x in lines]
    names = [p.name for p in presets.presets()]
    rows = [line for line in lines if line.split(" ")[0] in names]
    assert [r.split(" ")[0] for r in rows] == names  # one line each, in order
    if width >= 80:
        cartpole = next(r for r in rows if r.startswith("dqn/CartPole-v1 "))
        assert "50k" in cartpole and "471.9 (7/10)" in cartpole and "500.0 ± 0.0" in cartpole
    if width >= 160:
        assert lines[0].split() == ["preset", "env", "source", "steps", "measured",
                                    "reference", "time/run"]  # fmt: skip
        lunar = next(r for r in rows if r.startswith("dqn/LunarLander-v3 "))
        assert "LunarLander-v3" in lunar and "rl-zoo" in lunar and "~110 s" in lunar
        atari = next(r for r in rows if r.startswith("dqn/dqn3 "))
        assert "ALE/*" in atari and "DQN3.0" in atari and "50M" in atari


def test_presets_filters_by_agent_and_long_prints_the_prose(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    status, out, _ = cli(capsys, "presets", "ddpg")
    assert status == 0 and "ddpg/Pendulum-v1-td3" in out and "dqn/" not in out
    assert "for MinAtar" not in out  # only the notes its rows need
    status, out, _ = cli(capsys, "presets", "dqn", "--long")
    assert status == 0 and "dqn/LunarLander-v3  (env LunarLander-v3)" in out
    assert "source: rl-zoo hyperparams/dqn.yml LunarLander" in out and "ddpg/" not in out
    status, _, err = cli(capsys, "presets", "nope")
    assert status == 2 and len(err.strip().splitlines()) == 1 and "unknown agent" in err


def test_short_steps():
    assert [results.short_steps(n) for n in (300, 20_000, 120_000, 1_250_000, 50_000_000)] == [
        "300", "20k", "120k", "1.25M", "50M"]  # fmt: skip
