"""Run code around the first import of another package, without importing it early.

``import rlkit`` must stay fast, so rlkit never imports gymnasium or TensorFlow itself at
import time; yet some things must happen when they load (register rlkit's environments
with gymnasium; keep TensorFlow's start-up chatter off the terminal). :func:`around_import`
installs a one-shot meta-path finder that wraps the package's module execution.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager


class _AroundImport:
    """A meta-path finder that wraps ``name``'s loader; it removes itself once the package
    has really been imported (a mere ``find_spec`` probe leaves it in place)."""

    def __init__(
        self, name: str, around: Callable[[], AbstractContextManager], after: Callable[[], None]
    ):
        self.name, self.around, self.after = name, around, after

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
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

        def wrapped(module) -> None:
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
            with finder.around():
                exec_module(module)
                finder.after()

        spec.loader.exec_module = wrapped  # type: ignore[method-assign]  # the point: wrap it
        return spec


def around_import(
    name: str,
    around: Callable[[], AbstractContextManager] = contextlib.nullcontext,
    after: Callable[[], None] = lambda: None,
) -> None:
    """When top-level package ``name`` is first imported, run its import inside
    ``around()`` and call ``after()`` once it is loaded (inside ``around`` too). If it is
    loaded already, just call ``after()``."""
    if name in sys.modules:
        after()
    elif not any(isinstance(f, _AroundImport) and f.name == name for f in sys.meta_path):
        sys.meta_path.insert(0, _AroundImport(name, around, after))
