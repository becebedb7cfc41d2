"""rlkit's agents. Each is importable by name: ``rlkit.agents.DQN``."""

from __future__ import annotations

import importlib
from typing import Any

from rlkit.agents.registry import AGENTS

_CLASSES = {
    "Agent": "rlkit.agents.base",
    "DQN": "rlkit.agents.dqn",
    "DDPG": "rlkit.agents.ddpg",
    "Reinforce": "rlkit.agents.reinforce",
}

__all__ = ["AGENTS", *_CLASSES]


def __getattr__(name: str) -> Any:
    if name not in _CLASSES:
        raise AttributeError(f"module 'rlkit.agents' has no attribute {name!r}")
    value = getattr(importlib.import_module(_CLASSES[name]), name)
    globals()[name] = value
    return value
