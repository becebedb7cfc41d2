"""The files an agent family in a folder of its own touches (docs/architecture.md, "Adding an
agent family"): its folder, its formulas in rlkit/learn/, one registry entry, its export
builder, its compiled program, its presets. Nothing else in rlkit/ or cli/ imports the family
or names its modules, and the registry's paths point into those files (issue 51)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rlkit.agents.registry import AGENTS

ROOT = Path(__file__).resolve().parents[3]
#: family folder -> the files outside it the docs allow it to touch (besides tests, docs)
FAMILIES = {
    "dqn": {  # (and its members: C51, QR-DQN, Rainbow, IQN, M-DQN, each a registry entry)
        "rlkit/agents/registry.py",  # its entries
        "rlkit/exporting/signatures.py",  # its export builder
        "rlkit/run/compiled/dqn.py",  # its compiled program
    },
    "sac": {
        "rlkit/agents/registry.py",  # one entry
        "rlkit/exporting/signatures.py",  # its export builder
        "rlkit/run/compiled/sac.py",  # its compiled program
        "rlkit/learn/max_entropy.py",  # its formulas
    },
    "ddpg": {  # (and TD3, its registry alias)
        "rlkit/agents/registry.py",  # one entry
        "rlkit/exporting/signatures.py",  # its export builder
        "rlkit/run/compiled/ddpg.py",  # its compiled program
        "rlkit/learn/noise.py",  # its formulas: the exploration noise processes
    },
    "reinforce": {
        "rlkit/agents/registry.py",  # one entry
        "rlkit/exporting/signatures.py",  # its export builder (no compiled program)
        "rlkit/learn/returns.py",  # its formulas: returns-to-go
    },
    "ppo": {  # (and A2C, its variant module a2c.py with a registry entry of its own)
        "rlkit/agents/registry.py",  # its entries: ppo and a2c
        "rlkit/exporting/signatures.py",  # its export builder
        "rlkit/run/compiled/ppo.py",  # its compiled program
        "rlkit/learn/advantages.py",  # its formulas: GAE, the clipped surrogate
        "rlkit/learn/normalization.py",  # running statistics (norm_obs, norm_reward)
    },
}
#: families whose presets are their config's own (REINFORCE's ``preset = auto | bandit``),
#: not a folder of rlkit/config/presets/
PRESETS_IN_CONFIG = {"reinforce"}


def family_of(agent_path: str) -> str | None:
    match = re.match(r"rlkit\.agents\.(\w+)\.", agent_path)
    return match.group(1) if match else None


def test_every_family_folder_is_listed_here_and_in_the_docs():
    folders = {p.name for p in (ROOT / "rlkit" / "agents").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}  # fmt: skip
    assert folders == set(FAMILIES)
    text = (ROOT / "docs" / "architecture.md").read_text()
    for outside in set().union(*FAMILIES.values()):
        assert outside.rsplit("/", 1)[-1] in text, outside


def places_naming(family: str) -> set[str]:
    """Files of rlkit/ and cli/ outside the family's folder that import it or name one of its
    modules (``rlkit.agents.sac``, ``rlkit.run.compiled.sac``)."""
    found = set()
    pattern = re.compile(rf"rlkit\.agents\.{family}\b|rlkit\.run\.compiled\.{family}\b")
    for folder in ("rlkit", "cli"):
        for path in (ROOT / folder).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith(f"rlkit/agents/{family}/"):
                continue
            tree = ast.parse(path.read_text())
            names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
            names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
            strings = [n.value for n in ast.walk(tree)
                       if isinstance(n, ast.Constant) and isinstance(n.value, str)]  # fmt: skip
            if any(pattern.search(s) for s in [*names, *strings]):
                found.add(relative)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_nothing_outside_the_documented_files_reaches_into_the_family(family):
    allowed = FAMILIES[family] | {f"rlkit/run/compiled/{family}.py"}
    reaching = places_naming(family) - allowed
    assert reaching == set(), (
        f"{sorted(reaching)} reach into agents/{family}/ (docs/architecture.md)"
    )


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_registry_points_into_the_familys_files(family):
    """Each registry entry of the family (PPO's folder holds two: ppo, and a2c as its variant
    module a2c.py, an agent name of its own) points into the family's files."""
    specs = [s for s in AGENTS.values() if family_of(s.agent_path) == family]
    assert specs
    for spec in specs:
        module = spec.config_class.__module__  # the family's config, or a member's own
        assert module.startswith(f"rlkit.agents.{family}.") and module.endswith("config")
        for path in filter(None, (spec.export_builder, spec.compiled_program)):  # ("": none)
            module = path.partition(":")[0]
            file = module.replace(".", "/") + ".py"
            assert file in FAMILIES[family], f"{path} is outside the family's documented files"
        folder = ROOT / "rlkit" / "config" / "presets" / spec.name
        if family in PRESETS_IN_CONFIG:
            assert not folder.is_dir()
        elif spec.preset_families or spec.name == family:  # (M-DQN ships no preset yet)
            assert folder.is_dir(), f"{spec.name} claims presets but has no folder of them"


@pytest.mark.slow
def test_the_check_would_see_a_new_reach():
    """A module importing the family from outside the list is found."""
    assert "rlkit/agents/registry.py" in places_naming("sac")
