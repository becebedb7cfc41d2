"""Files that are never half-written: write to a temporary name, then rename into place.

The temporary names ``tempfile`` makes are private (0600 files, 0700 folders); what is
renamed into place gets the mode an ordinary ``open``/``mkdir`` would have given it under
the process umask (0644 and 0755 under umask 022), so others can read a run on shared
storage when the umask says they may.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def current_umask() -> int:
    """The process umask, read without changing it where the system says it (Linux)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and put back at once
    os.umask(mask)
    return mask


def file_mode() -> int:
    """What ``open(path, "w")`` gives a new file: 0666 less the umask."""
    return 0o666 & ~current_umask()


def folder_mode() -> int:
    """What ``mkdir`` gives a new folder: 0777 less the umask."""
    return 0o777 & ~current_umask()


def make_temp_folder(prefix: str, parent: str | os.PathLike) -> Path:
    """A new uniquely named folder in ``parent`` with an ordinary folder's mode."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    os.chmod(path, folder_mode())
    return path


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: never half-written."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode())


def first_missing(path: Path) -> Path | None:
    """The topmost folder of ``path`` (``path`` itself included) that does not exist yet:
    what making ``path`` will create. None when ``path`` is there already."""
    path = Path(path).absolute()
    if path.exists():
        return None
    top = path
    while not top.parent.exists():
        top = top.parent
    return top


def remove_made_folders(path: Path, made: Path | None) -> None:
    """Remove the now empty folders from ``path``'s parent up to ``made`` (what
    :func:`first_missing` said a call would create); a folder that holds anything is
    kept, and so is every folder above ``made``."""
    if made is None:
        return
    path = Path(path).absolute()
    for folder in [path, *path.parents]:
        if not folder.is_relative_to(made):
            return
        try:
            folder.rmdir()  # only when empty
        except FileNotFoundError:
            continue
        except OSError:
            return
