"""Where an export may be written, checked before TensorFlow loads (no TF here)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from rlkit.core.errors import UsageError
from rlkit.core.files import first_missing, remove_made_folders


def check_destination(out: str | os.PathLike) -> Path:
    """``out`` as a Path when the export folder can be made there; UsageError in one line
    when not: a file or a folder that holds files, a path under a file, or a place where
    no folder can be made or written (``/proc/...``, ``/sys/...``, read-only, no
    permission). Checked as ``rlkit train`` checks its run folder's place, by making the
    folders (and a temporary one where the export's will go), before TensorFlow loads;
    what the check made is removed again."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"--out {out} exists and is not an empty folder: give a new one")
    above = next((p for p in out.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise UsageError(f"--out {out}: {above} is a file, not a folder; choose another --out")
    made = first_missing(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        probe = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        probe.rmdir()
    except OSError as exc:
        raise UsageError(
            f"cannot make the export folder {out}: {exc.strerror or exc}; choose another --out"
        ) from None
    finally:
        remove_made_folders(out, made)
    return out
