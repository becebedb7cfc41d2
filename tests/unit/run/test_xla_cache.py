"""The shared XLA cache's check of its entries (rlkit/run/compiled/xla_cache.py), on entries built
here byte for byte as TensorFlow frames them (real ones:
tests/integration/test_xla_cache_entries.py)."""

import os

import pytest

from rlkit.core.errors import RlkitWarning
from rlkit.run.compiled.xla_cache import (
    CACHE_FLAG,
    PREFIX_FLAG,
    damage,
    host_cpu,
    set_aside_damaged,
    use_xla_cache,
)

NAME = "xla_compile_cache__8601842563979060624__15119863673954768288__XLA_CPU_JIT.pb"


def varint(n: int) -> bytes:
    out = b""
    while True:
        out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            return out


def field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def entry(code: bytes = b"\x7fELF machine code" * 20, prefix=b"xla_compile_cache") -> bytes:
    """An ``XlaSerializedCacheEntry`` named :data:`NAME`: key, HLO module, compiled code."""
    key = (field(1, 8601842563979060624) + field(2, 15119863673954768288)
           + field(3, b"XLA_CPU_JIT") + field(4, prefix))  # fmt: skip
    hlo = field(1, b"a_inference__chunk_1176") + field(3, field(1, b"computation")) + field(5, 7)
    return field(1, key) + field(2, hlo) + field(3, code)


def test_a_whole_entry_passes_and_no_cut_of_it_does():
    """A writer stopped anywhere (the machine off before the data reached the disk) leaves
    a prefix of the entry: every proper prefix is found, the empty file included."""
    data = entry()
    assert damage(data, NAME) is None
    for cut in range(len(data)):
        assert damage(data[:cut], NAME) is not None, cut


def test_what_else_is_found():
    data = entry()
    assert damage(entry(code=b""), NAME) == "no compiled code"
    assert damage(data + field(3, b"more"), NAME) == "2 code fields of bytes, not 1"
    assert damage(b"not a cache entry\n", NAME) == "wire type 6 at byte 1"
    assert "names" in damage(data, "xla_compile_cache__1__2__XLA_CPU_JIT.pb")  # moved
    assert damage(data[:-1] + b"\x00" * 3, NAME) is not None  # zeros after a cut
    # TensorFlow's name for a key without a prefix, and for PJRT's code
    assert damage(entry(prefix=b""), NAME.removeprefix("xla_compile_cache__")) is None
    pjrt = field(1, 1) + field(2, 2) + field(3, b"CPU") + field(5, 1)
    assert damage(field(1, pjrt) + field(2, b"") + field(3, b"x"), "1__2__CPU__pjrt.pb") is None


def test_damaged_entries_are_deleted_and_the_rest_left(tmp_path):
    good, cut = tmp_path / NAME, tmp_path / NAME.replace("__XLA", "__GPU")
    good.write_bytes(entry())
    cut.write_bytes(entry()[:100])
    unfinished = tmp_path / (NAME + "host-1a-42-5f.tmp")  # a writer's, never read
    unfinished.write_bytes(entry()[:100])
    abandoned = tmp_path / (NAME + "host-1b-43-60.tmp")  # a writer killed an hour ago
    abandoned.write_bytes(entry()[:100])
    now = unfinished.stat().st_mtime + 10
    os.utime(abandoned, (now - 3601, now - 3601))
    (why,) = set_aside_damaged(tmp_path, now=now)
    assert why.startswith(f"{cut.name}: cut inside")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([good.name, unfinished.name])


def test_use_xla_cache_deletes_a_damaged_entry_before_tensorflow_reads_it(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    folder = use_xla_cache(tmp_path, "rlkit/CartPole-v1")
    monkeypatch.delenv("TF_XLA_FLAGS")
    (folder / NAME).write_bytes(b"")
    with pytest.warns(RlkitWarning, match=f"damaged XLA cache entry \\({NAME}: 0 key fields"):
        assert use_xla_cache(tmp_path, "rlkit/CartPole-v1") == folder
    assert not (folder / NAME).exists()
    prefix = f"{PREFIX_FLAG}=rlkit_cpu_{host_cpu()}"
    assert os.environ["TF_XLA_FLAGS"] == f"{CACHE_FLAG}={folder} {prefix}"


def test_a_damaged_entry_that_cannot_be_deleted_means_no_cache(tmp_path, monkeypatch):
    """TensorFlow would fail the run on it: the run compiles without the cache instead."""
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    folder = use_xla_cache(tmp_path, "rlkit/CartPole-v1")
    monkeypatch.delenv("TF_XLA_FLAGS")
    (folder / NAME).write_bytes(entry()[:-1])

    def refuse(self, missing_ok=False):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr("pathlib.Path.unlink", refuse)
    with pytest.warns(RlkitWarning, match="running without the XLA cache in .*Permission denied"):
        assert use_xla_cache(tmp_path, "rlkit/CartPole-v1") is None
    assert "TF_XLA_FLAGS" not in os.environ


CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC
flags\t\t: fpu sse2 avx2 avx512f
"""


def test_entries_are_named_after_the_kind_of_cpu(tmp_path, monkeypatch):
    """XLA loads code compiled for CPU features the host lacks (a log line, then maybe
    SIGILL): nodes with other CPUs must look up other entries; the same CPU the same ones."""
    one, same, other = tmp_path / "one", tmp_path / "same", tmp_path / "other"
    one.write_text(CPUINFO)
    same.write_text(CPUINFO.replace("avx2 avx512f", "avx512f avx2") + "\n" + CPUINFO)
    other.write_text(CPUINFO.replace(" avx512f", ""))
    assert host_cpu(one) == host_cpu(same) != host_cpu(other)
    assert len(host_cpu(tmp_path / "none")) == 12  # no /proc/cpuinfo: Python's platform
    monkeypatch.setenv("TF_XLA_FLAGS", f"{PREFIX_FLAG}=mine")  # one's own prefix is kept
    folder = use_xla_cache(tmp_path, "rlkit/CartPole-v1")
    assert os.environ["TF_XLA_FLAGS"] == f"{PREFIX_FLAG}=mine {CACHE_FLAG}={folder}"
