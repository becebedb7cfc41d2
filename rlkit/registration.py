"""Register rlkit's environments with gymnasium without importing gymnasium early.

``import rlkit`` must stay fast (gymnasium takes ~0.25 s to import), yet
``gym.make("rlkit/MultiArmedBandit-v0")`` must work after ``import rlkit`` in
either import order. So: if gymnasium is already loaded, register now; else
register the moment gymnasium finishes loading (a one-shot import hook).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys


def _register() -> None:
    loading = sys.modules.get("rlkit.bandit")
    if loading is not None and not hasattr(loading, "register_envs"):
        return  # rlkit.bandit is importing gymnasium right now; it registers itself when done
    importlib.import_module("rlkit.bandit").register_envs()


class _AfterGymnasium:
    """A meta-path finder that wraps gymnasium's loader; it removes itself once gymnasium
    has really been imported (a mere ``find_spec`` probe leaves it in place)."""

    def find_spec(self, name, path=None, target=None):
        if name != "gymnasium":
            return None
        sys.meta_path.remove(self)  # let the real finders answer
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        finder = self

        def exec_and_register(module) -> None:
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
            exec_module(module)
            _register()

        spec.loader.exec_module = exec_and_register
        return spec


def register_envs_when_gymnasium_loads() -> None:
    if "gymnasium" in sys.modules:
        _register()
    elif not any(isinstance(f, _AfterGymnasium) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterGymnasium())
