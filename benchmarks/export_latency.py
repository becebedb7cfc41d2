"""What an exported policy weighs and costs per action: CartPole's MLP (rlkit's default DQN
network, 4 -> 256 -> 256 -> 2) and Atari's Nature CNN (84x84x4 uint8 -> 512 -> 6), each as
a SavedModel and as TFLite (float32, float16, dynamic-range), one observation per call on
the CPU, next to the agent's own ``act`` (numpy for the MLP, one compiled call for the CNN).

Printed per network and format: the export folder's size, the median and 90th-percentile
latency of one ``action`` call (batch 1) over ``--calls`` calls after a warm-up, and whether
its actions on the timed observations equal the agent's. The weights are untrained: the
cost does not depend on their values.

    python -m benchmarks.export_latency --calls 2000
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

FORMATS = (("saved_model", None), ("tflite", None), ("tflite", "float16"), ("tflite", "dynamic"))


def agents():
    """``{name: (agent, observations [calls, ...])}`` for the two networks."""
    import gymnasium as gym
    import numpy as np

    from rlkit.agents import DQN

    cartpole = DQN.from_env(gym.make("CartPole-v1"), seed=0)
    images = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    atari = DQN(images, gym.spaces.Discrete(6), seed=0, hidden_sizes=(512,), jit_compile=False)
    return {"CartPole MLP 256x256": cartpole, "Atari Nature CNN": atari}


def timed(act, observations, warmup: int = 20) -> list[float]:
    """Seconds of each ``act(observation)`` call (after ``warmup`` calls)."""
    for obs in observations[:warmup]:
        act(obs)
    times = []
    for obs in observations:
        start = time.perf_counter()
        act(obs)
        times.append(time.perf_counter() - start)
    return times


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per format (MLP)")
    parser.add_argument("--cnn-calls", type=int, default=300, help="timed calls (CNN)")
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    from rlkit.exporting.exported import ExportedPolicy

    print(f"TensorFlow {tf.__version__}, {os.cpu_count()} CPUs; batch 1, CPU, median / p90")
    for name, agent in agents().items():
        calls = args.calls if "MLP" in name else args.cnn_calls
        space = agent.observation_space
        space.seed(0)
        observations = [space.sample() for _ in range(calls)]
        want = [agent.act(o, explore=False) for o in observations]
        own = np.array(timed(lambda o, a=agent: a.act(o, explore=False), observations)) * 1e3
        print(f"\n{name}\n  {'agent.act':<22} {'':>10}  {np.median(own):7.3f} ms "
              f"{np.percentile(own, 90):7.3f} ms")  # fmt: skip
        with tempfile.TemporaryDirectory() as tmp:
            for format, quantize in FORMATS:
                out = Path(tmp) / f"{format}-{quantize}"
                agent.export(out, format=format, quantize=quantize, check_observations=200)
                policy = ExportedPolicy(out)
                ms = np.array(timed(policy.act, observations)) * 1e3
                pairs = zip(observations, want, strict=True)
                same = np.mean([policy.act(o) == w for o, w in pairs])
                label = format + (f" {quantize}" if quantize else "")
                size = folder_bytes(out) / 1e3
                print(f"  {label:<22} {size:>7.0f} kB  {np.median(ms):7.3f} ms "
                      f"{np.percentile(ms, 90):7.3f} ms  actions equal {same:.1%}")  # fmt: skip


if __name__ == "__main__":
    main()
