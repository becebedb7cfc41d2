"""rlkit's agents. Each is importable by name: ``rlkit.agents.DQN``."""

from __future__ import annotations

import importlib
from typing import Any

from rlkit.agents.registry import AGENTS

#: class name -> module: the base class, and each registered agent's class
_CLASSES = {
    "Agent": "rlkit.agents.base",
    **{spec.class_name: spec.agent_path.partition(":")[0] for spec in AGENTS.values()},
}

__all__ = ["AGENTS", *_CLASSES]


def __getattr__(name: str) -> Any:
    if name not in _CLASSES:
        raise AttributeError(f"module 'rlkit.agents' has no attribute {name!r}")
    value = getattr(importlib.import_module(_CLASSES[name]), name)
    globals()[name] = value
    return value
