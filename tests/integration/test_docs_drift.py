"""docs/architecture.md cannot drift silently: its drawing of the house names every module
of ``rlkit/``, each in its own room's part of the drawing."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: a room's first line in the drawing: ``  rlkit.run   experiment.py ...`` (two rooms side
#: by side: ``  rlkit.learn │ rlkit.replay   ...``)
ROOM_LINE = re.compile(r"^\s*(rlkit\.\w+(?:\s*│\s*rlkit\.\w+)*)(?:\s|$)")


def the_drawing(text: str) -> str:
    """The first fenced block after the heading of the house."""
    house = text[text.index("## The house") :]
    start = house.index("```\n") + len("```\n")
    return house[start : house.index("```", start)]


def rooms_in(drawing: str) -> dict[str, str]:
    """``{room: its part of the drawing}``, from the line naming the room to the next room."""
    rooms: dict[str, str] = {}
    current: list[str] = []
    for line in drawing.splitlines():
        if match := ROOM_LINE.match(line):
            current = re.findall(r"rlkit\.(\w+)", match.group(1))
            for room in current:
                rooms[room] = ""
            line = line[match.end() :]
        elif line.lstrip().startswith("cli/"):
            current = []  # the CLI is not a room of rlkit/
        for room in current:
            rooms[room] += line + "\n"
    return rooms


def names_in(part: str) -> set[str]:
    """The names a part of the drawing shows: ``progress.py``, ``progress``, ``hooks/``, and
    patterns such as ``*_config.py``, all without ``.py`` or ``/``."""
    return set(re.findall(r"[\w*]+", part))


def is_named(name: str, names: set[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, shown) for shown in names)


def unnamed_modules(root: Path, text: str) -> list[str]:
    drawing = the_drawing(text)
    rooms = rooms_in(drawing)
    missing = []
    for path in sorted((root / "rlkit").rglob("*.py")):
        relative = path.relative_to(root / "rlkit")
        if path.name == "__init__.py":
            continue
        if len(relative.parts) == 1:  # a module beside rlkit/__init__.py: anywhere in it
            folders, names = [], names_in(drawing)
        else:
            room, *folders = relative.parts[:-1]
            names = names_in(rooms.get(room, ""))
        if not all(is_named(name, names) for name in (*folders, path.stem)):
            missing.append(f"rlkit/{relative.as_posix()}")
    return missing


def test_the_drawing_names_every_module_of_rlkit_in_its_room():
    missing = unnamed_modules(ROOT, ARCHITECTURE.read_text())
    assert missing == [], (
        "docs/architecture.md's drawing of the house does not name these modules in their "
        "room (add `name.py` to the room's lines):\n" + "\n".join(missing)
    )


def test_a_module_named_only_in_the_prose_or_in_another_room_is_missing():
    text = ARCHITECTURE.read_text()
    drawing = the_drawing(text)
    rooms = {p.name for p in (ROOT / "rlkit").iterdir() if (p / "__init__.py").is_file()}
    assert rooms <= rooms_in(drawing).keys()  # every room is drawn
    assert "cli" not in rooms_in(drawing) and "loop" in names_in(rooms_in(drawing)["run"])
    without = drawing.replace("loop.py (the", "(the")
    assert without != drawing and "run/loop.py" in text.replace(drawing, without)  # prose
    assert "rlkit/run/loop.py" in unnamed_modules(ROOT, text.replace(drawing, without))
    in_core = re.sub(r"(\n\s*rlkit\.core .*)", r"\1 · loop.py", without, count=1)
    assert "loop.py" in rooms_in(in_core)["core"]
    assert "rlkit/run/loop.py" in unnamed_modules(ROOT, text.replace(drawing, in_core))


TEST_PATH = re.compile(r"\btests/[\w/]+\.py\b")


def test_every_test_file_the_docs_name_exists():
    named = {
        (doc.relative_to(ROOT).as_posix(), path)
        for doc in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")]
        for path in TEST_PATH.findall(doc.read_text(encoding="utf-8"))
    }
    assert len(named) > 3  # the pattern still finds them
    assert [(doc, path) for doc, path in sorted(named) if not (ROOT / path).exists()] == []
