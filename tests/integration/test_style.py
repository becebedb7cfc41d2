"""The code base stays ruff-clean (lint and format), as the project's standards require."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the test extra installs ruff next to this interpreter, on PATH or not (an unactivated venv)
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff comes with the test extra")
@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]])
def test_ruff(command):
    result = subprocess.run([RUFF, *command], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# -- the import contract (pyproject.toml [tool.importlinter]; docs/architecture.md) -----------
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
    "lint-imports"
)
needs_import_linter = pytest.mark.skipif(
    LINT_IMPORTS is None, reason="import-linter comes with the test extra"
)


def _kept(root: Path, *contracts: str) -> bool:
    """Does ``lint-imports`` pass on the tree at ``root`` (only ``contracts``, if given)?
    Its exit status decides, never its wording."""
    options = [option for contract in contracts for option in ("--contract", contract)]
    result = subprocess.run([LINT_IMPORTS, "--no-cache", *options], cwd=root,
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode in (0, 1), result.stdout[-3000:] + result.stderr[-2000:]
    return result.returncode == 0


def _copy_of_the_house(tmp_path: Path) -> Path:
    for name in ("rlkit", "cli"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def _append(path: Path, code: str) -> None:
    with open(path, "a") as f:
        f.write("\n\n" + code)


@needs_import_linter
def test_the_import_contract_holds():
    assert _kept(ROOT)


@pytest.mark.slow
@needs_import_linter
def test_the_import_contract_catches_an_upward_import_inside_a_function(tmp_path):
    house = _copy_of_the_house(tmp_path)
    _append(house / "rlkit" / "core" / "files.py",
            "def _upward():\n    from rlkit.run import folder  # noqa: F401\n")  # fmt: skip
    assert _kept(ROOT, "layers") and _kept(ROOT, "no-circles")  # (an unknown id fails too)
    assert not _kept(house, "layers")
    assert not _kept(house, "no-circles")  # and it is a circle: core -> run -> core
    assert _kept(house, "outside-the-house")


@needs_import_linter
@pytest.mark.parametrize(
    "module, imported",
    [("cli/main.py", "labs.ale_versions"), ("rlkit/core/files.py", "benchmarks")],
)
@pytest.mark.slow
def test_the_import_contract_keeps_labs_and_benchmarks_outside(tmp_path, module, imported):
    house = _copy_of_the_house(tmp_path)
    _append(house / module, f"def _outside():\n    import {imported}  # noqa: F401\n")
    assert _kept(ROOT, "outside-the-house")
    assert not _kept(house, "outside-the-house")
    assert _kept(house, "layers")


# -- one owner for the run folder: no other module spells its file names ----------------------
RUN_FOLDER_NAMES = {"config.toml", "summary.json", "metrics.csv", "tensorboard", "checkpoints",
                    "curves.png", "latest"}  # fmt: skip
#: the same spelling meaning something else: `rlkit plot -o`'s default, in the current folder
NOT_RUN_FOLDER = {("cli/inspect.py", "curves.png")}
#: names too common to forbid everywhere: forbidden as a path part (``path / "best"``)
RUN_FOLDER_PARTS = {"best", "model"}


def _spelled_run_folder_names(path: Path) -> list[str]:
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            here = (str(path.relative_to(ROOT)), text)
            if (
                text in RUN_FOLDER_NAMES or text.startswith("step-")
            ) and here not in NOT_RUN_FOLDER:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text!r}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            right = node.right
            if isinstance(right, ast.Constant) and right.value in RUN_FOLDER_PARTS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: / {right.value!r}")
    return found


@pytest.mark.slow
def test_only_the_run_folder_spells_the_run_folder_file_names():
    owner = ROOT / "rlkit" / "run" / "folder.py"
    files = [p for d in ("rlkit", "cli") for p in sorted((ROOT / d).rglob("*.py")) if p != owner]
    spelled = [hit for p in files for hit in _spelled_run_folder_names(p)]
    assert spelled == [], "run-folder names outside rlkit/run/folder.py:\n" + "\n".join(spelled)
    assert len(_spelled_run_folder_names(owner)) >= len(RUN_FOLDER_NAMES)  # it does spell them


def test_every_package_of_rlkit_is_installed():
    """A plain ``pip install .`` installs only the packages pyproject.toml lists (the
    editable install the tests run from would hide a missing one)."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "rlkit").rglob("__init__.py")
    } | {"rlkit.cli"}
    assert found == listed


def test_no_module_of_the_product_is_over_400_lines():
    """Small modules with one job each (issue 51: none over 400 lines)."""
    root = Path(__file__).resolve().parents[2]
    long = [f"{p.relative_to(root)} ({n} lines)" for folder in ("rlkit", "cli")
            for p in sorted((root / folder).rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > 400]  # fmt: skip
    assert long == []
