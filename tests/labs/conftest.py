"""Lab tests run only when asked: they check the scripts of labs/ and benchmarks/, not rlkit.

A test marked ``labs`` is deselected unless the run asks for it: a ``-m`` expression that
names the marker (``python -m pytest -m labs``, ``-m "labs and not slow"``), or a path
under tests/labs/ on the command line (``python -m pytest tests/labs/test_zoo_table.py``).
So the README's ``python -m pytest -q`` (CI's ``.ci/run``) and the quick loop
``-m "not slow"`` leave them out. (``addopts = -m "not labs"`` would not do: a later ``-m``,
such as the quick loop's, replaces it.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

LABS_TESTS = Path(__file__).resolve().parent


def asked_for_labs(config: pytest.Config) -> bool:
    """Whether this run asks for lab tests: its ``-m`` names ``labs``, or one of its
    command-line paths lies under tests/labs/."""
    if re.search(r"\blabs\b", config.option.markexpr or ""):
        return True
    start = config.invocation_params.dir
    for arg in config.args:
        path = (start / arg.split("::")[0]).resolve()
        if path == LABS_TESTS or path.is_relative_to(LABS_TESTS):
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the tests marked ``labs`` unless the run asks for them."""
    if asked_for_labs(config):
        return
    kept = [item for item in items if item.get_closest_marker("labs") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i.get_closest_marker("labs")])
        items[:] = kept
