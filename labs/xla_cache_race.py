"""Is the XLA cache a sweep's trials share (``OUT/xla-cache``) safe when they write it at once?

Every child process builds the same small compiled-loop program (DQN on
``rlkit/CartPole-v1``, seed 1: one XLA program, the same code for every seed), keeps its XLA
code through rlkit's :func:`~rlkit.run.compiled.xla_cache.use_xla_cache` (``--raw``: through
TensorFlow's flag alone, as before rlkit checked the folder), waits at a barrier until all
children of its wave are ready, then compiles and runs 200 vector steps (2 copies, updates
from step 64) and prints a digest of its Q-network's weights. Whether it loaded the code or
compiled it is read from TensorFlow's own log lines (``TF_CPP_VMODULE``).

Two questions, each in fresh cache folders:

1. ``race``: K children compile the same program into one empty folder at once (``--stagger
   S``: child i starts i*S seconds after the barrier, so that later ones look the entry up
   while earlier ones write it; ``--chasers C``: C children more, each compiling the moment
   the first writer's entry appears, while the others still write it), then one more child
   loads it. All must finish with the weights of a child without any cache, and the folder
   must hold the one entry, nothing partial or temporary.
2. ``damaged``: the entry that race wrote, damaged on purpose (cut to half, cut by one byte,
   emptied, one byte flipped at 1/4 and at 3/4 of the file, one bit flipped in its machine
   code, every section of machine code broken, replaced by text), each in a folder of its
   own; one child runs on it. What does it do: fail, compile afresh, or run with wrong code?

    nice python -m labs.xla_cache_race --procs 4 --rounds 2
    nice python -m labs.xla_cache_race --procs 6 --stagger 2 --skip-damaged
    nice python -m labs.xla_cache_race --procs 3 --chasers 3 --rounds 2 --skip-damaged
    nice python -m labs.xla_cache_race --raw --skip-race   # TensorFlow alone, damaged entries
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV_ID = "rlkit/CartPole-v1"
SEED = 1
VECTOR_STEPS = 200
SMALL = {"hidden_sizes": [16], "batch_size": 16, "buffer_size": 200, "learning_starts": 64,
         "train_freq": 4, "gradient_steps": 2, "target_update": 40}  # fmt: skip
#: TensorFlow's log lines for a load from and a save to the persistent cache
LOADED, SAVED = "Loading cached entry for", "XlaSerializedCacheEntry saved"


def child(folder: str, barrier: str, wave: int, delay: float, raw: bool) -> None:
    """One child: ``folder`` "-" for no cache; waits until ``wave`` files are in ``barrier``."""
    if folder != "-" and not raw:
        from rlkit.run.compiled.xla_cache import use_xla_cache

        use_xla_cache(folder, ENV_ID)
    from rlkit.envs.tf import make_tf_env
    from rlkit.run import experiment
    from rlkit.run.compiled.dqn import DQNProgram
    from rlkit.run.plan import make_envs

    plan = experiment.plan("dqn", ENV_ID, steps=10**6, seed=SEED, eval_every=0,
                           checkpoint_every=0, preset="none", overrides=SMALL)  # fmt: skip
    env = make_envs(plan.settings, plan.spec)
    agent = plan.spec.load_class().from_env(env, seed=SEED, config=plan.agent_config)
    program = DQNProgram(agent, make_tf_env(ENV_ID), 2, SEED, VECTOR_STEPS)
    program._run.get_concrete_function()  # traced before the barrier: the race is XLA's
    if barrier != "-":
        Path(barrier, f"{os.getpid()}").touch()
        while len(os.listdir(barrier)) < wave:
            time.sleep(0.005)
    if delay < 0:  # a chaser: looks the entry up the moment a first writer renamed it
        while not any(Path(folder).rglob("*.pb")):
            time.sleep(0.002)
    time.sleep(max(delay, 0.0))
    started = time.time()
    program.compile()
    compiled = time.time() - started
    program.run_chunk(VECTOR_STEPS)
    digest = hashlib.sha256()
    for w in agent.learner.q.model.weights:
        digest.update(w.numpy().tobytes())
    print(json.dumps({"started": started, "compile_s": compiled,
                      "weights": digest.hexdigest()[:16]}))  # fmt: skip


def spawn(folder: str | Path, raw: bool, barrier="-", wave=1, delay=0.0) -> subprocess.Popen:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0",
               TF_CPP_VMODULE="device_executable_persistor=2")  # fmt: skip
    env.pop("TF_XLA_FLAGS", None)
    if raw and folder != "-":
        env["TF_XLA_FLAGS"] = f"--tf_xla_persistent_cache_directory={folder}"
    argv = [sys.executable, "-m", "labs.xla_cache_race", "--child", str(folder), str(barrier),
            str(wave), str(delay), "1" if raw else "0"]  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)  # fmt: skip


def collect(proc: subprocess.Popen) -> dict:
    """A child's outcome: rc, weights (None if it failed), loaded/saved, its last error line."""
    out, err = proc.communicate()
    row: dict = {"rc": proc.returncode, "weights": None,
                 "loaded": LOADED in err, "saved": SAVED in err, "error": ""}  # fmt: skip
    if proc.returncode == 0:
        row.update(json.loads(out.strip().splitlines()[-1]))
    else:
        lines = [x for x in err.splitlines() if "Error" in x or "error" in x] or err.splitlines()
        row["error"] = (lines[-1] if lines else "")[:220]
    return row


def listing(folder: Path) -> list[str]:
    return sorted(f"{p.relative_to(folder)} ({p.stat().st_size} B)"
                  for p in folder.rglob("*") if p.is_file())  # fmt: skip


def race(work: Path, args: argparse.Namespace, baseline: str, n: int) -> Path:
    folder, barrier = work / f"race-{n}", work / f"barrier-{n}"
    barrier.mkdir()
    procs, raw, everyone = args.procs, args.raw, args.procs + args.chasers
    wave = [spawn(folder, raw, barrier, everyone, i * args.stagger) for i in range(procs)]
    wave += [spawn(folder, raw, barrier, everyone, -1.0) for _ in range(args.chasers)]
    rows = [collect(p) for p in wave]
    rows.append(collect(spawn(folder, raw)))  # one more, after them: loads
    first = min(r.get("started", 1e18) for r in rows)
    for i, r in enumerate(rows):
        who = f"child {i}" if i < procs else "chaser " if i < everyone else "after  "
        at = "       -        "  # the compile: from started to the save (or the load)
        if "started" in r:
            at = f"+{r['started'] - first:6.2f}..+{r['started'] + r['compile_s'] - first:6.2f} s"
        print(
            f"  {who} compiled {at} rc {r['rc']} loaded {r['loaded']!s:<5} saved "
            f"{r['saved']!s:<5} weights {r['weights']} {r['error']}",
            flush=True,
        )
    files = listing(folder)
    same = all(r["weights"] == baseline for r in rows)
    print(f"  all {len(rows)} equal the run without a cache: {same}; folder holds: {files}")
    return folder


def code_sections(data: bytes) -> list[tuple[int, int]]:
    """``(start, size)`` in ``data`` of every section of machine code (an ELF section marked
    executable) of the object files the entry holds."""
    sections = []
    at = data.find(b"\x7fELF")
    while at >= 0:
        shoff = int.from_bytes(data[at + 0x28 : at + 0x30], "little")
        shnum = int.from_bytes(data[at + 0x3C : at + 0x3E], "little")
        for k in range(shnum):
            h = at + shoff + 64 * k
            flags = int.from_bytes(data[h + 8 : h + 16], "little")
            offset = int.from_bytes(data[h + 24 : h + 32], "little")
            size = int.from_bytes(data[h + 32 : h + 40], "little")
            if flags & 0x4 and size:  # SHF_EXECINSTR
                sections.append((at + offset, size))
        at = data.find(b"\x7fELF", at + 1)
    return sections


def flip_at(data: bytes, where: int, bits: int = 0x40) -> bytes:
    """``data`` with ``bits`` of its byte ``where`` flipped."""
    return data[:where] + bytes([data[where] ^ bits]) + data[where + 1 :]


def flip_in_code(data: bytes) -> bytes:
    """``data`` with one bit flipped in the middle of its largest section of machine code."""
    start, size = max(code_sections(data), key=lambda s: s[1])
    return flip_at(data, start + size // 2, 0x01)


def break_every_function(data: bytes) -> bytes:
    """``data`` with the first byte of every section of machine code replaced by ``int3``
    (0xCC, a breakpoint: SIGTRAP wherever that code runs)."""
    out = bytearray(data)
    for start, _ in code_sections(data):
        out[start] = 0xCC
    return bytes(out)


#: ways to damage an entry (bytes in, bytes out)
DAMAGE = {
    "cut to half": lambda b: b[: len(b) // 2],
    "cut by one byte": lambda b: b[:-1],
    "emptied": lambda b: b"",
    "one byte flipped at 1/4": lambda b: flip_at(b, len(b) // 4),
    "one byte flipped at 3/4": lambda b: flip_at(b, 3 * len(b) // 4),
    "one bit flipped in code": flip_in_code,
    "every code section broken": break_every_function,
    "text, not a proto": lambda b: b"not a cache entry\n",
}


def damaged(work: Path, good: Path, raw: bool, baseline: str, names: list[str]) -> None:
    (entry,) = good.rglob("*.pb")
    data = entry.read_bytes()
    for name in names:
        damage = DAMAGE[name]
        folder = work / f"damaged-{name.replace(' ', '-').replace('/', '_')}"
        place = folder / entry.relative_to(good)
        place.parent.mkdir(parents=True)
        place.write_bytes(damage(data))
        r = collect(spawn(folder, raw))
        verdict = ("same weights" if r["weights"] == baseline else
                   f"DIFFERENT weights {r['weights']}" if r["rc"] == 0 else "FAILED")  # fmt: skip
        print(
            f"  {name:<24} rc {r['rc']} loaded {r['loaded']!s:<5} saved {r['saved']!s:<5} "
            f"{verdict} {r['error']}\n  {'':<24} folder after: {listing(folder)}",
            flush=True,
        )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        folder, barrier, wave, delay, raw = sys.argv[2:7]
        child(folder, barrier, int(wave), float(delay), raw == "1")
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--procs", type=int, default=4, help="children racing in one folder")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--stagger", type=float, default=0.0, help="s between starts")
    parser.add_argument("--chasers", type=int, default=0, help="compile when an entry appears")
    parser.add_argument("--raw", action="store_true", help="TensorFlow's flag, not rlkit's")
    parser.add_argument("--skip-race", action="store_true")
    parser.add_argument("--skip-damaged", action="store_true")
    parser.add_argument("--damage", default=",".join(DAMAGE), help="which damages to try")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="xla-cache-race-"))
    print(f"load average {os.getloadavg()[0]:.1f}; {'TensorFlow alone' if args.raw else 'rlkit'}"
          f"; work in {work}", flush=True)  # fmt: skip
    base = collect(spawn("-", args.raw))
    assert base["rc"] == 0, base["error"]
    print(f"without a cache: weights {base['weights']}, compile {base['compile_s']:.1f} s")
    good = None
    for n in range(args.rounds if not args.skip_race else 0):
        print(f"race {n}: {args.procs} children, stagger {args.stagger} s, {args.chasers} "
              "chasers", flush=True)  # fmt: skip
        good = race(work, args, base["weights"], n)
    if not args.skip_damaged:
        if good is None:  # one child writes the entry to damage
            good = work / "good"
            assert collect(spawn(good, args.raw))["rc"] == 0
        print("damaged entries, one child each:", flush=True)
        damaged(work, good, args.raw, base["weights"], args.damage.split(","))
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
