"""Environments written in TensorFlow: classic control and MinAtar as pure, batched functions.

Each env here is equal step for step to gymnasium's or ``minatar``'s (observations,
rewards, terminations, truncations) and runs inside ``tf.function(jit_compile=True)`` and
``tf.while_loop``; see docs/tf-envs.md. This package's ``__init__`` imports no TensorFlow:
a module with an env (and TensorFlow) is imported when :func:`make_tf_env` or ``gym.make``
asks for it.

    from rlkit.envs.tf import make_tf_env
    env = make_tf_env("rlkit/CartPole-v1")     # a TFEnv: reset / step / transition
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from rlkit.core.errors import UsageError

if TYPE_CHECKING:
    from rlkit.envs.tf.base import TFEnv

#: rlkit id -> "module:class" of its TFEnv
ENV_IDS: dict[str, str] = {
    "rlkit/CartPole-v1": "rlkit.envs.tf.cartpole:CartPole",
    "rlkit/Acrobot-v1": "rlkit.envs.tf.acrobot:Acrobot",
    "rlkit/MountainCar-v0": "rlkit.envs.tf.mountain_car:MountainCar",
    "rlkit/MountainCarContinuous-v0": "rlkit.envs.tf.continuous_mountain_car:MountainCarContinuous",
    "rlkit/Pendulum-v1": "rlkit.envs.tf.pendulum:Pendulum",
}

#: MinAtar's games (``minatar``'s ``MinAtar/<Game>-v0``): rlkit id -> "module:class". gymnasium
#: allows one ``/`` in an id, so ``MinAtar/Breakout-v0`` is ``rlkit/MinAtar-Breakout-v0``.
MINATAR_IDS: dict[str, str] = {
    "rlkit/MinAtar-Breakout-v0": "rlkit.envs.tf.minatar_breakout:Breakout",
    "rlkit/MinAtar-SpaceInvaders-v0": "rlkit.envs.tf.minatar_space_invaders:SpaceInvaders",
    "rlkit/MinAtar-Freeway-v0": "rlkit.envs.tf.minatar_freeway:Freeway",
    "rlkit/MinAtar-Asterix-v0": "rlkit.envs.tf.minatar_asterix:Asterix",
    "rlkit/MinAtar-Seaquest-v0": "rlkit.envs.tf.minatar_seaquest:Seaquest",
}

#: every TensorFlow environment: rlkit id -> "module:class"
ALL_IDS: dict[str, str] = {**ENV_IDS, **MINATAR_IDS}


def is_tf_env(env_id: str) -> bool:
    """Is ``env_id`` one of rlkit's TensorFlow environments?"""
    return env_id in ALL_IDS


def make_tf_env(env_id: str) -> TFEnv:
    """The :class:`~rlkit.envs.tf.base.TFEnv` of ``env_id`` (an id of :data:`ALL_IDS`)."""
    if env_id not in ALL_IDS:
        raise UsageError(
            f"{env_id!r} is not an rlkit TensorFlow environment; those are {', '.join(ALL_IDS)}"
        )
    module, _, name = ALL_IDS[env_id].partition(":")
    return getattr(importlib.import_module(module), name)()


def register_envs() -> None:
    """Register the ids of :data:`ALL_IDS` with gymnasium (no TensorFlow import: entry points
    are strings). ``gym.make(id)`` gives one copy (:class:`~rlkit.envs.tf.gym_adapter.TFGymEnv`),
    ``gym.make_vec(id, n, vectorization_mode="vector_entry_point")`` ``n`` copies stepped in one
    compiled call (:class:`~rlkit.envs.tf.gym_adapter.TFVectorEnv`). No ``TimeLimit`` wrapper:
    each env truncates at its own limit (gymnasium's)."""
    import gymnasium as gym

    for env_id in ALL_IDS:
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point="rlkit.envs.tf.gym_adapter:TFGymEnv",
                vector_entry_point="rlkit.envs.tf.gym_adapter:TFVectorEnv",
                kwargs={"env_id": env_id},
            )
