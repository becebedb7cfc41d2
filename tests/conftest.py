import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")

TESTS = Path(__file__).resolve().parent
#: the rooms of rlkit (docs/architecture.md): tests/unit/<room>/ for each
ROOMS = (
    "core",
    "config",
    "learn",
    "replay",
    "networks",
    "exporting",
    "agents",
    "envs",
    "run",
    "sweeps",
)
#: where a test file may sit (CONTRIBUTING.md, "Where a test goes"), relative to tests/
PLACES = {Path("unit", room) for room in ROOMS} | {Path("integration"), Path("labs")}


class MisplacedTestFile(pytest.Module):
    """A test file outside the tree's places: collected as one error naming where it goes."""

    def collect(self):
        place = self.path.resolve().parent.relative_to(TESTS).as_posix()
        where = "directly in tests/" if place == "." else f"in tests/{place}/"
        raise self.CollectError(
            f"{self.path.name} sits {where}: a test file goes in "
            "tests/unit/<room>/ (room: " + ", ".join(ROOMS) + "), tests/integration/ or "
            "tests/labs/ (CONTRIBUTING.md, 'Where a test goes')"
        )


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector):
    """A ``test_*.py`` anywhere but in :data:`PLACES` fails the collection."""
    path = module_path.resolve()
    if (
        path.name.startswith("test_")
        and path.is_relative_to(TESTS)
        and path.parent.relative_to(TESTS) not in PLACES
    ):
        return MisplacedTestFile.from_parent(parent, path=module_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put every Ray test in one pytest-xdist group (``--dist loadgroup`` runs a group on one
    worker: two Ray clusters at once on a two-core machine starve each other), then deselect
    the tests marked ``long`` (the longest Ray end-to-end runs, whose features other tests
    cover more cheaply) unless the run asks for them: a ``-m`` naming ``long``, or a test
    named on the command line (``path::test``). The README's ``python -m pytest -q`` (CI)
    then stays inside its time budget; ``python -m pytest -m long`` runs them."""
    for item in items:
        if item.get_closest_marker("ray") is not None:
            item.add_marker(pytest.mark.xdist_group("ray"))
    if re.search(r"\blong\b", config.option.markexpr or "") or any("::" in a for a in config.args):
        return
    long = [item for item in items if item.get_closest_marker("long") is not None]
    if long:
        config.hook.pytest_deselected(items=long)
        items[:] = [item for item in items if item.get_closest_marker("long") is None]
