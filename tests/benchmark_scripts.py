"""The scripts of benchmarks/ loaded as modules for their tests, as when they run (their
folder on sys.path while they import, for their imports of one another)."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/NAME.py`` as a module named NAME."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module
