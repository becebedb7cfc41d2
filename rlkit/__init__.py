"""rlkit: reinforcement-learning agents on TensorFlow 2.

    import gymnasium as gym, rlkit
    env = gym.make("CartPole-v1")
    agent = rlkit.agents.DQN.from_env(env, seed=0)
    rlkit.train(agent, env, steps=50_000)
    mean, std = rlkit.evaluate(agent, env, episodes=10)

TensorFlow is imported only when something that needs it is first used, so
``import rlkit`` (and the ``rlkit`` command's ``--help``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> "module:attribute" (None: the module itself)
_LAZY = {
    "agents": "rlkit.agents:",
    "gradients": "rlkit.learn.gradients:",
    "losses": "rlkit.learn.losses:",
    "ReplayMemory": "rlkit.replay.memory:ReplayMemory",
    "scale_gradient": "rlkit.learn.gradients:scale_gradient",
    "train": "rlkit.run.loop:train",
    "evaluate": "rlkit.run.evaluation:evaluate",
    "TrainHistory": "rlkit.run.state:TrainHistory",
    "load": "rlkit.agents.base:load",
    "experiment": "rlkit.run.experiment:",
    "export": "rlkit.run.export_run:export",
    "make_env": "rlkit.envs.make:make_env",
    "UsageError": "rlkit.core.errors:UsageError",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module_name, _, attr = _LAZY[name].partition(":")
    except KeyError:
        raise AttributeError(f"module 'rlkit' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = getattr(module, attr) if attr else module
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def _hooks() -> None:
    from rlkit.core.quiet import quiet_tensorflow_when_it_loads
    from rlkit.envs.registration import register_envs_when_gymnasium_loads

    register_envs_when_gymnasium_loads()
    quiet_tensorflow_when_it_loads()


_hooks()
