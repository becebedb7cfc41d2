"""What a checkpoint of a large Atari replay costs: written whole, and in shared blocks.

A dqn3 agent (the preset's 1M FrameReplay: 84x84 uint8 frames) is filled with
--fill transitions of random frames, then, twice over in the same invocation,
checkpointed, given --more transitions (the checkpoint period) and checkpointed again:
first with every array in the checkpoint folder (rlkit before incremental checkpoints),
then with large arrays as blocks the checkpoints share (today's default). Printed per save:
seconds, GB written, and the disk the kept checkpoints take; then the time to load
the newest one. Random frames cost the same to write as real ones (nothing is
compressed), and no two blocks of them are alike.

    python -m labs.checkpoint_replay --fill 1000000 --more 250000
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

ENV = "ALE/Pong-v5"


def disk_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def fill(replay, count: int, rng) -> None:
    """Add ``count`` transitions of random frames, episodes of 2,000 steps, each stack the
    previous one shifted by a frame (what ``FrameReplay.add`` checks)."""
    import numpy as np

    frames_per_draw = 4096
    stack = np.zeros(replay.stack_shape, np.uint8)
    pool = rng.integers(0, 256, (frames_per_draw, *replay.stack_shape[:-1]), dtype=np.uint8)
    for t in range(count):
        if t % frames_per_draw == 0:
            pool = rng.integers(0, 256, pool.shape, dtype=np.uint8)
        next_stack = np.concatenate([stack[..., 1:], pool[t % frames_per_draw][..., None]], -1)
        ended = (t + 1) % 2000 == 0
        replay.add(stack, 0, 0.0, next_stack, ended, False)
        stack = np.zeros_like(stack) if ended else next_stack


def measure(mode: str, agent, more: int, rng, out: Path) -> dict[str, int]:
    """Checkpoint ``agent``, add ``more`` transitions, checkpoint again, load the newest;
    print the figures and return the bytes each checkpoint wrote."""
    from rlkit.run import checkpoint_blocks
    from rlkit.run.checkpoint import load_checkpoint, save_checkpoint
    from rlkit.run.folder import RunFolder

    default_block_bytes = checkpoint_blocks.BLOCK_BYTES
    if mode == "whole":
        checkpoint_blocks.BLOCK_BYTES = 2**62  # nothing is that large: the old layout
    folder = RunFolder(out / mode)
    root = folder.checkpoints_dir
    bytes_written = {}
    for label in ("first", "second"):
        if label == "second":
            fill(agent.replay, more, rng)
            agent.num_steps += more
        before = disk_bytes(root) if root.exists() else 0
        start = time.perf_counter()
        save_checkpoint(folder, agent, {"state": {}}, keep=2)
        seconds = time.perf_counter() - start
        now = disk_bytes(root)
        newest = root / f"step-{agent.num_steps:010d}"
        written = now - before if mode == "blocks" else disk_bytes(newest)
        bytes_written[label] = written
        print(f"{mode:>6} {label:>6} checkpoint ({len(agent.replay):,} transitions): "
              f"{seconds:6.1f} s, {written / 1e9:5.2f} GB written, kept checkpoints "
              f"{now / 1e9:5.2f} GB on disk", flush=True)  # fmt: skip
    start = time.perf_counter()
    restored, _, _ = load_checkpoint(root / f"step-{agent.num_steps:010d}")
    print(f"{mode:>6} load of the newest: {time.perf_counter() - start:6.1f} s", flush=True)
    del restored
    checkpoint_blocks.BLOCK_BYTES = default_block_bytes
    return bytes_written


def main() -> dict[str, dict[str, int]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fill", type=int, default=1_000_000, help="transitions first")
    parser.add_argument("--more", type=int, default=250_000, help="transitions between saves")
    parser.add_argument("--capacity", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: tmp)")
    args = parser.parse_args()
    for name in ("fill", "more", "capacity"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name} must be positive")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np

    from rlkit.envs.make import make_env
    from rlkit.run import experiment

    out = Path(tempfile.mkdtemp(prefix="rlkit-ckpt-", dir=args.dir))
    try:
        plan = experiment.plan("dqn", ENV, preset="dqn3", seed=0,
                               overrides={"buffer_size": args.capacity})  # fmt: skip
        agent = plan.spec.load_class().from_env(make_env(ENV), seed=0, config=plan.agent_config)
        rng = np.random.default_rng(0)
        start = time.perf_counter()
        fill(agent.replay, args.fill, rng)
        agent.num_steps = args.fill
        print(f"filled {args.fill:,} transitions in {time.perf_counter() - start:.0f} s",
              flush=True)  # fmt: skip
        results = {}
        for mode in ("whole", "blocks"):
            results[mode] = measure(mode, agent, args.more, rng, out)
            shutil.rmtree(out / mode)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return results


if __name__ == "__main__":
    main()
