"""Register rlkit's environments with gymnasium without importing gymnasium early.

``import rlkit`` must stay fast (importing gymnasium takes a noticeable part of a second), yet
``gym.make("rlkit/MultiArmedBandit-v0")`` (or an id of rlkit's TensorFlow environments,
``rlkit/CartPole-v1``, ...) must work after ``import rlkit`` in
either import order. So: if gymnasium is already loaded, register now; else
register the moment gymnasium finishes loading (a one-shot import hook).
"""

from __future__ import annotations

import importlib
import sys

from rlkit.core.import_hooks import around_import


def _register() -> None:
    # rlkit's TensorFlow environments: entry-point strings, TensorFlow loads only with an env
    importlib.import_module("rlkit.envs.tf").register_envs()
    loading = sys.modules.get("rlkit.envs.bandit")
    if loading is not None and not hasattr(loading, "register_envs"):
        return  # rlkit.envs.bandit is importing gymnasium right now; it registers itself when done
    importlib.import_module("rlkit.envs.bandit").register_envs()


def register_envs_when_gymnasium_loads() -> None:
    around_import("gymnasium", after=_register)
