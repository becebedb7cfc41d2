"""One registry (issue 51, item 2): every agent's entry is checked against each feature that
claims it, and nothing in rlkit or the CLI lists agents beside the registry.

The quick tests here read the registry's claims and check each against the feature's own
code (export builders and their signatures, compiled programs and the loop choice, family
presets, search spaces, variants); :func:`test_each_agent_trains_resumes_evaluates_exports`
runs every agent through the CLI (slow)."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from rlkit.agents.registry import AGENTS, ALIASES, load
from rlkit.config import presets
from rlkit.run.compiled.choice import compiled_agents, unsupported

ROOT = Path(__file__).resolve().parents[3]
NAMES = sorted(AGENTS)


def config_keys(name: str) -> set[str]:
    return {f.name for f in dataclasses.fields(AGENTS[name].config_class)}


@pytest.mark.parametrize("name", NAMES)
def test_the_entry_names_its_own_class_and_config(name):
    spec = AGENTS[name]
    assert spec.name == name
    cls = spec.load_class()
    assert cls.__name__ == spec.class_name
    assert cls.name == name, "the class's name is the registry key runs are saved under"


@pytest.mark.parametrize("name", NAMES)
def test_search_space_ties_and_variants_are_config_keys(name):
    spec, keys = AGENTS[name], config_keys(name)
    assert set(spec.search_space) <= keys, set(spec.search_space) - keys
    assert set(spec.ties) | set(spec.ties.values()) <= keys
    for key, variant in spec.variants:
        assert key in keys
        assert spec.variant_of({key: True}) == variant
        assert spec.variant_of({key: False}) == name
    assert spec.variant_of(None) == name


@pytest.mark.parametrize("name", NAMES)
def test_export_builder_is_a_builder_with_known_signatures(name):
    from rlkit.exporting import signatures as export_graph

    spec = AGENTS[name]
    assert spec.export_builder, f"{name} claims no export: every agent exports today"
    assert load(spec.export_builder) in export_graph.SIGNATURES


def test_an_agent_without_an_export_builder_is_refused_in_one_line(monkeypatch):
    from rlkit.core.errors import UsageError
    from rlkit.exporting import signatures as export_graph

    monkeypatch.setitem(AGENTS, "dqn", dataclasses.replace(AGENTS["dqn"], export_builder=""))

    class Agent:
        name = "dqn"
        registry = staticmethod(lambda: AGENTS)  # (what Agent.registry() gives)

    listed = r"^cannot export a dqn agent \(rlkit exports a2c, c51, ddpg, "
    with pytest.raises(UsageError, match=listed):
        export_graph.builder(Agent())


@pytest.mark.parametrize("name", NAMES)
def test_compiled_program_claim_matches_the_loop_choice(name):
    from rlkit.run.compiled.program import CompiledProgram

    spec = AGENTS[name]
    config = spec.config_class()
    env = "rlkit/Pendulum-v1" if spec.default_env == "Pendulum-v1" else "rlkit/CartPole-v1"
    why = unsupported(env, name, config)
    if spec.compiled_program:
        assert issubclass(load(spec.compiled_program), CompiledProgram)
        assert why is None, why
        assert name in compiled_agents()
    else:
        assert why == f"{name} has no compiled loop ({', '.join(compiled_agents())} have)"
    minatar = unsupported("rlkit/MinAtar-Breakout-v0", name, config)
    assert (minatar is None) == (spec.compiled_program != "" and spec.compiled_on_minatar)


@pytest.mark.parametrize("name", NAMES)
def test_family_presets_exist_and_are_picked_by_themselves(name):
    spec = AGENTS[name]
    for prefix, preset in spec.preset_families.items():
        assert presets.lookup(name, preset).agent == name
        env = prefix + "AnyGameWithoutItsOwnPreset-v0"  # the family preset, not a game's
        picked = presets.for_env(name, env, families=spec.preset_families)
        assert picked is not None and picked.name == f"{name}/{preset}"


def test_aliases_name_registered_agents_and_their_keys():
    for alias, entry in ALIASES.items():
        assert alias not in AGENTS and entry.agent in AGENTS
        assert set(entry.settings) <= config_keys(entry.agent)


def agent_name_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """Places in a module that list agents: a collection literal holding two or more
    registered names, or a comparison with one (``agent.name == "ddpg"``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            names = [i.value for i in items if isinstance(i, ast.Constant) and i.value in AGENTS]
            if len(names) >= 2:
                found.append((node.lineno, f"lists {names}"))
        elif isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                if isinstance(operand, ast.Constant) and operand.value in AGENTS:
                    found.append((node.lineno, f"compares with {operand.value!r}"))
    return found


@pytest.mark.slow
def test_nothing_but_the_registry_lists_agents():
    places = []
    for folder in ("rlkit", "cli"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "registry.py":
                continue
            for line, what in agent_name_literals(ast.parse(path.read_text())):
                places.append(f"{path.relative_to(ROOT)}:{line} {what}")
    assert places == [], "\n".join(places)


def test_the_walk_would_see_a_second_list():
    tree = ast.parse('A = ("dqn", "c51")\nif agent.name == "ddpg": pass\n')
    assert [what for _, what in agent_name_literals(tree)] == [
        "lists ['dqn', 'c51']",
        "compares with 'ddpg'",
    ]


#: settings of their own that make an agent's CLI run a second or two
TINY = {
    "reinforce": ["--episodes", "4"],
    "iqn": ["--set", "num_tau_samples=4", "--set", "num_tau_prime_samples=4",
            "--set", "num_quantile_samples=4"],
    "qrdqn": ["--set", "num_quantiles=8"],
}  # fmt: skip
#: settings any agent takes where it has the key: small networks, learning from step 100, no
#: XLA (its compile costs more than these steps)
SMALL = {"hidden_sizes": "[16]", "actor_hidden_sizes": "[16]", "critic_hidden_sizes": "[16]",
         "learning_starts": "100", "batch_size": "16", "train_freq": "50",
         "jit_compile": "false"}  # fmt: skip


def tiny(name: str) -> list[str]:
    keys = config_keys(name)
    small = [f"--set={k}={v}" for k, v in SMALL.items() if k in keys]
    return [*TINY.get(name, []), *small]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_each_agent_trains_resumes_evaluates_exports(name, tmp_path, capsys):
    """Train, resume past the first stop, evaluate, export: through the CLI, with each
    agent's own defaults (its default environment) shrunk to a few hundred steps."""
    from rlkit.cli.main import main

    spec = AGENTS[name]
    extra = tiny(name)
    out = str(tmp_path / "runs")
    argv = ["train", name, "--steps", "300", "--eval-every", "0", "--eval-episodes", "1",
            "--checkpoint-every", "150", "--quiet", "--out", out, *extra]  # fmt: skip
    assert main(argv) == 0
    (run,) = (tmp_path / "runs").iterdir()
    more = ["--episodes", "8"] if "--episodes" in extra else ["--steps", "450"]
    assert main(["resume", str(run), *more, "--quiet"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["agent"] == name and summary["env"] == spec.default_env
    capsys.readouterr()
    assert main(["evaluate", str(run), "--episodes", "1"]) == 0
    assert "return" in capsys.readouterr().out
    assert main(["export", str(run), "--out", str(tmp_path / "export")]) == 0
    meta = json.loads((tmp_path / "export" / "rlkit_export.json").read_text())
    assert meta["agent"] == name
