"""The XLA compilation cache a sweep's trials share (``OUT/xla-cache``), with every damaged
entry set aside before TensorFlow can read it.

No TensorFlow here: :func:`use_xla_cache` runs before TensorFlow is imported.

TensorFlow (2.21, ``tensorflow/compiler/jit/device_executable_persistor.h``) writes an entry
to a temporary file of a unique name and renames it into place, so that trials compiling the
same program at once never leave a partial entry (tested: ``labs/xla_cache_race.py``). On
reading it checks the key and the whole HLO against its own, but a damaged entry is not
passed over: the run fails at its first call, and so does every later run of that
configuration. An entry can be damaged where no rename protects it: a machine that stops
before the file's data reached the disk, a folder copied in part. :func:`damage` reads the
entry's protocol-buffer framing as TensorFlow writes it (binary ``XlaSerializedCacheEntry``:
1 key, 2 HLO module, 3 compiled code), without TensorFlow, and :func:`set_aside_damaged` deletes
each entry that fails, so that TensorFlow compiles the program afresh and writes it again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import time
import warnings
from pathlib import Path

from rlkit.core.errors import RlkitWarning
from rlkit.envs.tf import is_tf_env

#: the folder of a sweep where its trials keep their compiled XLA code (``rlkit sweep``)
XLA_CACHE = "xla-cache"

#: TensorFlow's flag for a persistent XLA compilation cache
CACHE_FLAG = "--tf_xla_persistent_cache_directory"

#: TensorFlow's flag for the first part of an entry's name and key (default
#: ``xla_compile_cache``); rlkit's names the host's CPU (:func:`host_cpu`)
PREFIX_FLAG = "--tf_xla_persistent_cache_prefix"

#: an entry's fields (``XlaSerializedCacheEntry``) and its key's (``XlaSerializedCacheKey``)
KEY, HLO_MODULE, EXECUTABLE = 1, 2, 3
SIGNATURE, CLUSTER, DEVICE_TYPE, PREFIX, PJRT = 1, 2, 3, 4, 5
VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


def use_xla_cache(directory: str | Path, env_id: str | None) -> Path | None:
    """Let this process keep the XLA code it compiles in ``directory`` (a folder per
    TensorFlow version under it) and load what is there instead of compiling it again, for
    a run on rlkit's TensorFlow environment ``env_id`` (else nothing: None).

    The compiled loop's program is the same XLA code for every seed of one configuration
    (the seed is a variable), so the seeds of a sweep after the first skip XLA's compile
    (~3/5 of the compile time; tracing remains) and run the same code bit for bit. Entries
    are named after the host's kind of CPU (:func:`host_cpu`), so that nodes of a cluster
    with other CPUs never load each other's code. Trials may share the folder at once
    (TensorFlow writes an entry whole or not at all); a damaged entry found there is
    deleted first (:func:`set_aside_damaged`) and compiled again. Call it before TensorFlow
    compiles anything (it sets ``TF_XLA_FLAGS``); a ``TF_XLA_FLAGS`` that names a cache
    already wins (and one that names a prefix keeps it). Returns the folder used (None,
    with a warning, where the folder cannot be made or a damaged entry cannot be deleted:
    the run compiles as without a cache)."""
    if env_id is None or not is_tf_env(env_id):
        return None
    flags = os.environ.get("TF_XLA_FLAGS", "")
    if CACHE_FLAG in flags:
        return None
    try:
        version = importlib.metadata.version("tensorflow")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    folder = Path(directory) / f"tensorflow-{version}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        removed = set_aside_damaged(folder)
    except OSError as e:  # a damaged entry left in place would fail the run: no cache
        warnings.warn(f"running without the XLA cache in {folder}: {e}", RlkitWarning,
                      stacklevel=2)  # fmt: skip
        return None
    for why in removed:
        warnings.warn(f"deleted a damaged XLA cache entry ({why}); its program is "
                      "compiled again", RlkitWarning, stacklevel=2)  # fmt: skip
    flags = f"{flags} {CACHE_FLAG}={folder}"
    if PREFIX_FLAG not in flags:
        flags += f" {PREFIX_FLAG}=rlkit_cpu_{host_cpu()}"
    os.environ["TF_XLA_FLAGS"] = flags.strip()
    return folder


def host_cpu(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """12 hex digits naming this host's kind of CPU: a digest of the first processor's
    vendor, model and feature flags in ``cpuinfo`` (elsewhere than Linux: of Python's
    ``platform.machine()`` and ``platform.processor()``).

    Part of the name of each cache entry this process writes or looks up: XLA compiles for
    the CPU it runs on (AVX-512 on one that has it), and loads code compiled for features
    the host lacks with only a log line (``cpu_aot_loader.cc``: "could lead to execution
    errors such as SIGILL"), so nodes of a cluster with other CPUs keep entries apart."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        text = f"machine: {platform.machine()}\nprocessor: {platform.processor()}"
    seen: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("vendor_id", "model name", "flags", "CPU implementer", "CPU part",
                   "Features", "machine", "processor") and key not in seen:  # fmt: skip
            seen[key] = " ".join(sorted(value.split()))
    return hashlib.sha256(repr(sorted(seen.items())).encode()).hexdigest()[:12]


#: a temporary file (``*.tmp``) older than this is a writer's that stopped mid-write (a
#: compile writes its entry within seconds of making the file), and is deleted
STALE_SECONDS = 3600.0


def set_aside_damaged(folder: Path, now: float | None = None) -> list[str]:
    """Delete each entry (``*.pb``) of the cache ``folder`` that :func:`damage` finds damaged;
    returns ``"name: why"`` for each (an OSError where one cannot be read or deleted).
    TensorFlow's temporary files (``*.tmp``, a writer's unfinished entry) are never read:
    those younger than :data:`STALE_SECONDS` at ``now`` (default: the clock) are left to
    their writer, older ones (a writer killed mid-write) deleted. An entry that another
    process replaces or deletes meanwhile is passed over (at worst a good entry is compiled
    again)."""
    now = time.time() if now is None else now
    for path in folder.glob("*.tmp"):
        try:
            if now - path.stat().st_mtime > STALE_SECONDS:
                path.unlink()
        except FileNotFoundError:  # renamed into place or deleted meanwhile
            continue
    removed = []
    for path in sorted(folder.glob("*.pb")):
        try:
            why = damage(path.read_bytes(), path.name)
            if why is not None:
                path.unlink()
                removed.append(f"{path.name}: {why}")
        except FileNotFoundError:  # replaced or set aside by another trial meanwhile
            continue
    return removed


def damage(data: bytes, name: str) -> str | None:
    """Why ``data``, the file ``name`` of a cache folder, is not a whole entry that
    TensorFlow could load (None: nothing found).

    Checked: the bytes parse to their end as a protocol buffer; the entry has a key, an HLO
    module and compiled code (not empty), once each; the key parses and names this file
    (TensorFlow names an entry ``[prefix__]signature__cluster__device[__pjrt].pb`` from its
    key). Not checked: bytes changed in place inside the HLO (TensorFlow refuses the entry: a
    failed run) or inside the compiled code (not seen by TensorFlow either)."""
    try:
        fields = _fields(data)
        found = {number: [v for n, v in fields if n == number]
                 for number in (KEY, HLO_MODULE, EXECUTABLE)}  # fmt: skip
        for number, what in ((KEY, "key"), (HLO_MODULE, "HLO module"), (EXECUTABLE, "code")):
            if len(found[number]) != 1 or not isinstance(found[number][0], bytes):
                return f"{len(found[number])} {what} fields of bytes, not 1"
        if not found[EXECUTABLE][0]:
            return "no compiled code"
        _fields(found[HLO_MODULE][0])  # type: ignore[arg-type]
        expected = _file_name(dict(_fields(found[KEY][0])))  # type: ignore[arg-type]
    except ValueError as e:
        return str(e)
    if expected != name:
        return f"its key names {expected}"
    return None


def _file_name(key: dict[int, int | bytes]) -> str:
    """TensorFlow's name for an entry of ``key`` (``XlaSerializedCacheKeyToFileName``)."""
    prefix = key.get(PREFIX, b"")
    device = key.get(DEVICE_TYPE, b"")
    if not isinstance(prefix, bytes) or not isinstance(device, bytes):
        raise ValueError("a key whose prefix or device is not text")
    parts = [prefix.decode(errors="replace")] if prefix else []
    parts += [str(key.get(SIGNATURE, 0)), str(key.get(CLUSTER, 0)), device.decode(errors="replace")]
    if key.get(PJRT, 0):
        parts.append("pjrt")
    return "__".join(parts) + ".pb"


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """``(field number, value)`` of a protocol buffer's top level: an int for a varint or
    fixed-size field, the bytes of a length-delimited one; a ValueError where the bytes end
    inside a field or hold a wire type that no message of the cache uses."""
    fields: list[tuple[int, int | bytes]] = []
    i = 0
    while i < len(data):
        tag, i = _varint(data, i)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise ValueError(f"field number 0 at byte {i}")
        if wire == VARINT:
            value, i = _varint(data, i)
            fields.append((number, value))
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            if i + size > len(data):
                raise ValueError(f"cut inside field {number} at byte {len(data)}")
            fields.append((number, int.from_bytes(data[i : i + size], "little")))
            i += size
        elif wire == LENGTH:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise ValueError(f"cut inside field {number} ({size} bytes) at byte {len(data)}")
            fields.append((number, data[i : i + size]))
            i += size
        else:
            raise ValueError(f"wire type {wire} at byte {i}")
    return fields


def _varint(data: bytes, i: int) -> tuple[int, int]:
    """The varint at ``data[i:]`` and the index after it."""
    value, shift = 0, 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError(f"cut inside a varint at byte {i}")
        byte = data[i]
        value |= (byte & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if byte < 0x80:
            return value, i
