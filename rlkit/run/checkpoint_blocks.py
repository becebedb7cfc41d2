"""Large checkpoint arrays as blocks shared between checkpoints: incremental replay saves.

A replay of 1M Atari frames is 7 GB, and between two checkpoints only the part of the
ring written since the last one changes. So every array of at least :data:`BLOCK_BYTES`
(in practice the replay's frames or observations) is cut into row blocks of about that
size, each saved once as ``blocks/<sha1 of its bytes>.npy`` beside the ``step-*``
folders; a checkpoint's ``blocks.json`` lists, per array, its dtype, shape and blocks.
A block already on disk (whole: its size is checked) is not written again, so a
checkpoint writes the blocks the ring touched since the previous one (DQN3.0's settings
with a checkpoint every 250k steps: ~1.8 GB instead of 7.1 once the replay is full), and
the kept checkpoints share the rest on disk. Blocks are written under a temporary name,
synced and renamed; blocks no kept checkpoint lists are removed after each save.

A checkpoint folder is therefore not self-contained: copy ``checkpoints/`` whole. And a
block the kept checkpoints share, if deleted or damaged, breaks each of them (a one-line
error on resume, naming the block); what they do not share still falls back.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from rlkit.core.errors import UsageError
from rlkit.core.files import file_mode

BLOCKS_DIR = "blocks"
MANIFEST_FILE = "blocks.json"
#: arrays at least this large are saved as shared row blocks of about this size (bytes)
BLOCK_BYTES = 64 * 2**20


def split_large(arrays: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict]:
    """``(small, large)``: the arrays under :data:`BLOCK_BYTES`, and the others."""
    small = {k: v for k, v in arrays.items() if v.nbytes < BLOCK_BYTES or v.ndim == 0}
    return small, {k: v for k, v in arrays.items() if k not in small}


def save_blocks(arrays: dict[str, np.ndarray], store: Path) -> dict:
    """Save each array's row blocks into ``store`` (those not already there) and return
    the manifest that :func:`load_blocks` reads them back with."""
    store.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for key, array in arrays.items():
        array = np.ascontiguousarray(array)
        row_bytes = max(1, array.nbytes // max(1, len(array)))
        rows = max(1, BLOCK_BYTES // row_bytes)
        names = [_save_block(array[start : start + rows], store)
                 for start in range(0, len(array), rows)]  # fmt: skip
        manifest[key] = {"dtype": array.dtype.str, "shape": list(array.shape), "blocks": names}
    return manifest


def _save_block(block: np.ndarray, store: Path) -> str:
    # (an ndarray is a buffer; numpy's stubs say so for Python >= 3.12 only)
    digest = hashlib.sha1(block, usedforsecurity=False)  # type: ignore[arg-type]
    digest.update(repr((block.dtype.str, block.shape)).encode())
    name = f"{digest.hexdigest()}.npy"
    path = store / name
    if not path.is_file() or path.stat().st_size != _npy_size(block):  # (a cut-short one)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=store)
        try:
            os.fchmod(fd, file_mode())
            with os.fdopen(fd, "wb") as f:
                np.save(f, block, allow_pickle=False)
                f.flush()
                os.fsync(f.fileno())  # on disk before its name says it is complete
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return name


def _npy_size(block: np.ndarray) -> int:
    """The size in bytes of ``block`` saved by :func:`numpy.save`."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(block))
    return len(header.getvalue()) + block.nbytes


def load_blocks(checkpoint: Path) -> dict[str, np.ndarray]:
    """The arrays ``checkpoint``'s manifest lists, reassembled from the shared blocks
    (nothing when it has no manifest: a checkpoint written whole, or by an older rlkit).
    UsageError naming the checkpoint when a block is missing or does not fit."""
    manifest = read_manifest(checkpoint)
    store = checkpoint.parent / BLOCKS_DIR
    arrays = {}
    for key, entry in manifest.items():
        array = np.empty(entry["shape"], np.dtype(entry["dtype"]))
        start = 0
        for name in entry["blocks"]:
            start += _read_block(store / name, array[start:], checkpoint, key)
        if start != len(array):
            raise UsageError(f"corrupt checkpoint {checkpoint}: the blocks of {key} hold "
                             f"{start} of its {len(array)} rows")  # fmt: skip
        arrays[key] = array
    return arrays


def _read_block(path: Path, rest: np.ndarray, checkpoint: Path, key: str) -> int:
    """Read the block at ``path`` straight into the first rows of ``rest`` (no array in
    between); the number of rows it held."""
    where = f"corrupt checkpoint {checkpoint}: block {path.name} of {key}"
    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                           (2, 0): np.lib.format.read_array_header_2_0}.get(version)  # fmt: skip
            if read_header is None:
                raise UsageError(f"{where} has an unknown format {version}")
            shape, fortran, dtype = read_header(f)
            if (
                dtype != rest.dtype
                or fortran
                or shape[1:] != rest.shape[1:]
                or (shape[0] > len(rest))
            ):
                raise UsageError(f"{where} does not fit its array")
            rows = rest[: shape[0]]
            # (an ndarray is a buffer; numpy's stubs say so for Python >= 3.12 only)
            if f.readinto(rows.reshape(-1).view(np.uint8)) != rows.nbytes:  # type: ignore[arg-type]
                raise UsageError(f"{where} is cut short")
    except FileNotFoundError:
        raise UsageError(f"{where} is missing from {path.parent}") from None
    return shape[0]


def read_manifest(checkpoint: Path) -> dict:
    """``checkpoint``'s block manifest, ``{}`` when it has none."""
    path = checkpoint / MANIFEST_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"corrupt checkpoint {checkpoint}: {MANIFEST_FILE}: {exc!r}") from None


def remove_unlisted_blocks(root: Path, checkpoints: list[Path]) -> None:
    """Delete the blocks under ``root`` that none of ``checkpoints`` lists (and temporary
    files left by an interrupted save). A checkpoint whose manifest cannot be read keeps
    every block: nothing is removed that it might need."""
    store = root / BLOCKS_DIR
    if not store.is_dir():
        return
    listed: set[str] = set()
    for checkpoint in checkpoints:
        try:
            for entry in read_manifest(checkpoint).values():
                listed.update(entry["blocks"])
        except (UsageError, AttributeError, KeyError, TypeError):
            return
    for path in store.iterdir():
        if path.name not in listed:
            path.unlink(missing_ok=True)
