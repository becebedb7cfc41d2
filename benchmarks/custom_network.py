"""Does a network of the user's own cost anything per step? ``rlkit train dqn --env
CartPole-v1`` with the built-in 256x256 MLP against the same MLP built by the user
(``--set q_network=benchmarks.custom_network:build``, a keras.Sequential of Dense layers:
acting goes through the same numpy copy), and against a user's network that is not a plain
Dense stack (LayerNormalization: one compiled call per step).

Each run is a whole ``rlkit train`` in a fresh subprocess, alternating the order; printed:
steps/s of each run, the medians, and each user network's ratio to the built-in one.

    python -m benchmarks.custom_network --steps 20000 --reps 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

VARIANTS = {
    "built-in MLP": [],
    "user MLP (Dense stack)": ["--set", "q_network=benchmarks.custom_network:build"],
    "user MLP + LayerNorm": ["--set", "q_network=benchmarks.custom_network:build_layer_norm"],
}


def build(observation_space, action_space):
    """The built-in network's shape, as a user writes it: 256x256 ReLU, a linear head."""
    import keras

    return keras.Sequential([
        keras.Input(observation_space.shape),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(int(action_space.n)),
    ])  # fmt: skip


def build_layer_norm(observation_space, action_space):
    """The same with a LayerNormalization after each hidden layer (no numpy mirror)."""
    import keras

    x = inputs = keras.Input(observation_space.shape)
    for _ in range(2):
        x = keras.layers.LayerNormalization()(keras.layers.Dense(256, activation="relu")(x))
    return keras.Model(inputs, keras.layers.Dense(int(action_space.n))(x))


def run(args: list[str], steps: int) -> float:
    """Steps/s of one ``rlkit train`` in a fresh process (its summary.json's figure)."""
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "rlkit.cli.main", "train", "dqn", "--env",
                   "CartPole-v1", "--steps", str(steps), "--quiet", "--out", out,
                   *args]  # fmt: skip
        subprocess.run(command, check=True, capture_output=True)
        (run_dir,) = Path(out).iterdir()
        return json.loads((run_dir / "summary.json").read_text())["steps_per_second"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if args.steps <= 0 or args.reps <= 0:
        parser.error("--steps and --reps must be positive")
    rates: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for rep in range(args.reps):
        order = list(VARIANTS) if rep % 2 == 0 else list(reversed(VARIANTS))
        for name in order:
            rates[name].append(run(VARIANTS[name], args.steps))
            print(f"rep {rep}: {name:<24} {rates[name][-1]:8.0f} steps/s", flush=True)
    base = statistics.median(rates["built-in MLP"])
    print(f"\nmedian over {args.reps} runs of {args.steps:,} steps:")
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"  {name:<24} {median:8.0f} steps/s  ratio to built-in {median / base:.3f}")


if __name__ == "__main__":
    main()
