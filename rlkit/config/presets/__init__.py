"""Shipped presets: readable run configs per agent and environment, or by name.

A preset is a file ``rlkit/config/presets/<agent>/<name>.toml`` in the format of a run's
``config.toml`` (a ``[run]`` and an ``[agent]`` table), opened and copied like one. Its
first comment line says where its values come from::

    # source: rl-zoo hyperparams/dqn.yml LunarLander (translated key by key) ...

What each preset measured is in docs/presets.md and docs/benchmarks.md, not here.

``<name>`` is an environment id (``/`` written as ``_``) for the preset ``rlkit train
AGENT --env ID`` picks by itself, or any other name (``dqn3``, ``Pendulum-v1-td3``) for
one picked with ``--preset``. Nothing here imports TensorFlow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlkit.core.errors import UsageError

PRESETS_DIR = Path(__file__).parent
NONE = "none"  # --preset none: the agent's generic defaults


@dataclass(frozen=True)
class Preset:
    """One shipped preset file."""

    name: str  # "<agent>/<stem>", e.g. "dqn/LunarLander-v3"
    agent: str
    path: Path
    run: dict[str, Any]
    agent_config: dict[str, Any]
    source: str

    @property
    def env(self) -> str | None:
        """The environment the preset was made for (None for a named preset such as dqn3)."""
        return self.run.get("env") or None

    @property
    def text(self) -> str:
        return self.path.read_text()


def file_stem(env_id: str) -> str:
    """The file name of ``env_id``'s preset: ``ALE/Pong-v5`` -> ``ALE_Pong-v5``."""
    return env_id.replace("/", "_")


def _comment(text: str, key: str) -> str:
    lines = [
        line[len(f"# {key}:") :].strip()
        for line in text.splitlines()
        if line.startswith(f"# {key}:")
    ]
    return " ".join(lines)


def load(path: Path) -> Preset:
    from rlkit.config.run import load_config_file

    run, agent_config = load_config_file(path)
    text = path.read_text()
    agent = path.parent.name
    return Preset(
        f"{agent}/{path.stem}",
        agent,
        path,
        run,
        agent_config,
        _comment(text, "source"),
    )


def presets(agent: str | None = None) -> list[Preset]:
    """Every shipped preset (of ``agent``), sorted by name."""
    folders = [PRESETS_DIR / agent] if agent else sorted(p for p in PRESETS_DIR.iterdir())
    return [load(p) for folder in folders if folder.is_dir() for p in sorted(folder.glob("*.toml"))]


def lookup(agent: str, name: str) -> Preset:
    """The preset ``name`` (``"dqn3"`` or ``"dqn/dqn3"``) of ``agent``; UsageError listing
    the valid names when there is none."""
    stem = name.split("/", 1)[1] if name.startswith(f"{agent}/") else name
    path = PRESETS_DIR / agent / f"{file_stem(stem)}.toml"
    if path.is_file():
        return load(path)
    valid = ", ".join(p.name for p in presets(agent))
    if not valid:
        raise UsageError(f"unknown preset {name!r}: {none_shipped(agent)}; drop --preset")
    raise UsageError(f"unknown preset {name!r} for {agent}; valid: {valid}, or none")


def agents_with_presets() -> list[str]:
    """The agents that ship at least one preset, sorted."""
    return sorted(p.name for p in PRESETS_DIR.iterdir() if p.is_dir() and any(p.glob("*.toml")))


def none_shipped(agent: str) -> str:
    """``"mdqn ships no presets; agents with presets: c51, ddpg, ..."``."""
    return f"{agent} ships no presets; agents with presets: {', '.join(agents_with_presets())}"


def gymnasium_twin(env_id: str) -> str:
    """The gymnasium or minatar id an rlkit TensorFlow environment equals step for step
    (``rlkit/CartPole-v1`` -> ``CartPole-v1``, ``rlkit/MinAtar-Breakout-v0`` ->
    ``MinAtar/Breakout-v0``), whose presets it takes; any other id as it is."""
    if env_id.startswith("rlkit/MinAtar-"):
        return "MinAtar/" + env_id.removeprefix("rlkit/MinAtar-")
    return env_id.removeprefix("rlkit/")


def for_env(
    agent: str,
    env_id: str,
    variant: str | None = None,
    families: Mapping[str, str] | None = None,
) -> Preset | None:
    """The preset ``rlkit train AGENT --env ENV_ID`` uses by itself, if one is shipped: the
    one named after the environment (``<env>-<variant>`` first for a variant: ``rlkit train
    td3`` picks ``ddpg/Pendulum-v1-td3``), else its family's (``ALE/*``: dqn3, or Dopamine's
    Atari gin for the distributional agents; ``MinAtar/*``: minatar). An rlkit TensorFlow
    environment takes the presets of the id it equals (:func:`gymnasium_twin`).

    ``families``: env id prefix -> preset, the agent's registry entry's
    ``preset_families`` (``{"ALE/": "dqn3"}``; this layer does not read the registry)."""
    env_id = gymnasium_twin(env_id)
    stems = [f"{file_stem(env_id)}-{variant}"] if variant else []
    for stem in [*stems, file_stem(env_id)]:
        path = PRESETS_DIR / agent / f"{stem}.toml"
        if path.is_file():
            return load(path)
    family = next((name for prefix, name in (families or {}).items()
                   if env_id.startswith(prefix)), None)  # fmt: skip
    return lookup(agent, family) if family else None
