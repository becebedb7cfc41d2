"""Should the DQN family's MinAtar presets compile their update with XLA? (issue 36, speed)

The MinAtar presets once set ``jit_compile = false`` on a measurement that TensorFlow's own
kernels ran MinAtar's small convolution ~1.7x faster than XLA on this CPU. This lab times
it again with rlkit's real agents, each built from the preset ``rlkit train MEMBER --env
MinAtar/Breakout-v0`` picks (C51 has no MinAtar preset: Rainbow's with ``n_step = 1`` and
uniform replay, Dopamine's C51 settings), with ``jit_compile`` false and true:

- **update** (default): both agents of every member in one process, their replays filled
  with the same 2,000 random-policy transitions of Breakout; after 30 warm-up updates,
  ``--rounds`` rounds in each of which every agent runs ``--updates`` blocks of one update
  exactly as the training loop calls them (``agent.learn(agent.replay.sample(32, 1))``:
  sampling, the compiled call, the priorities written back), the agents alternating
  (forward, then reverse order). Printed per round and as medians over the rounds:
  milliseconds per update, wall-clock (median and 10th percentile of every update) and the
  process's CPU time, their ratio (without XLA / with XLA: above 1, XLA is faster), and
  the voluntary context switches per update. ``--im2col`` adds two ways: the 3x3
  convolution computed as one matrix product (:func:`im2col`), without and with XLA.
- **train** (``--train STEPS``): whole ``rlkit train MEMBER --env MinAtar/Breakout-v0
  --set jit_compile=...`` runs in fresh processes, alternating, ``--reps`` each, timed over
  steps ``--start`` -> ``--start + STEPS`` (startup and compiling left out): steps/s and
  the process's CPU milliseconds per step, medians.

    nice python -m labs.family_xla_update --rounds 7 --updates 100
    nice python -m labs.family_xla_update --rounds 5 --updates 60 --im2col
    nice python -m labs.family_xla_update --train 8000 --reps 3 --members rainbow qrdqn

The findings are in docs/dqn-family.md ("Measured", XLA on MinAtar's update).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

ENV = "MinAtar/Breakout-v0"
MEMBERS = ("dqn", "c51", "qrdqn", "rainbow", "iqn")
#: C51 on MinAtar: Rainbow's preset as Dopamine's C51 runs it (1-step, uniform replay)
C51_FROM_RAINBOW = {"n_step": 1, "prioritized": False}


def preset_config(member: str) -> dict:
    """The agent table of the preset ``rlkit train MEMBER --env MinAtar/Breakout-v0`` uses
    (C51: Rainbow's with :data:`C51_FROM_RAINBOW`)."""
    from rlkit.agents.registry import AGENTS
    from rlkit.config import presets

    agent = "rainbow" if member == "c51" else member
    preset = presets.for_env(agent, ENV, families=AGENTS[agent].preset_families)
    assert preset is not None, member
    config = dict(preset.agent_config)
    return config | C51_FROM_RAINBOW if member == "c51" else config


def build(member: str, jit: bool, transitions: list):
    """The member's agent with ``jit_compile = jit``, its replay holding ``transitions``."""
    import rlkit

    names = {"dqn": "DQN", "c51": "C51", "qrdqn": "QRDQN", "rainbow": "Rainbow", "iqn": "IQN"}
    config = preset_config(member) | {"jit_compile": jit, "learning_starts": 0}
    agent = getattr(rlkit.agents, names[member]).from_env(ENV, seed=0, **config)
    for kind, *values in transitions:
        if kind == "first":
            agent.observe_first(values[0])
        else:
            agent.observe(*values)
    return agent


def im2col(layer, inputs):
    """``layer`` (a Conv2D of stride 1) as one matrix product of its input's patches
    (:func:`rlkit.networks.patch_conv.patch_matmul_conv`, what the compiled loop traces);
    the same weights and result to float32 rounding (checked in :func:`patch_im2col`)."""
    from rlkit.networks.patch_conv import patch_matmul_conv

    return layer.activation(patch_matmul_conv(inputs, layer.kernel, layer.padding) + layer.bias)


def patch_im2col(agent) -> None:
    """Every convolution of the agent's online and target networks computed by
    :func:`im2col` (before anything is traced); checks one against Keras' own."""
    import types

    import numpy as np

    for network in (agent.learner.q, agent.learner.q_target):
        for layer in network.convs:
            x = np.random.default_rng(0).random((4, 10, 10, layer.kernel.shape[2]))
            x = x.astype(np.float32)
            native = np.asarray(layer(x))
            layer.call = types.MethodType(im2col, layer)
            np.testing.assert_allclose(np.asarray(layer(x)), native, rtol=1e-5, atol=1e-6)


def random_transitions(count: int) -> list:
    """``count`` steps of Breakout under a uniform random policy, as observe calls."""
    from rlkit.envs.make import make_env

    env = make_env(ENV)
    env.action_space.seed(0)
    obs, _ = env.reset(seed=0)
    calls: list = [("first", obs)]
    for _ in range(count):
        action = env.action_space.sample()
        obs, reward, terminated, truncated, _ = env.step(action)
        calls.append(("step", action, reward, obs, terminated, truncated))
        if terminated or truncated:
            obs, _ = env.reset()
            calls.append(("first", obs))
    return calls


def time_updates(agent, count: int) -> tuple[list[float], float, float]:
    """Wall-clock milliseconds of each of ``count`` blocks of one update; the process's CPU
    milliseconds and voluntary context switches (all threads: a thread waiting for
    another) per update over them."""
    walls, cpu = [], time.process_time()
    switches = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
    for _ in range(count):
        start = time.perf_counter()
        agent.learn(agent.replay.sample(32, 1))
        walls.append((time.perf_counter() - start) * 1e3)
    switches = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - switches
    return walls, (time.process_time() - cpu) * 1e3 / count, switches / count


def update_costs(members: list[str], rounds: int, updates: int, matmul: bool) -> None:
    transitions = random_transitions(2_000)
    ways: list = [False, True, "im2col", "im2col+xla"] if matmul else [False, True]
    agents = {(m, way): build(m, way in (True, "im2col+xla"), transitions)
              for m in members for way in ways}  # fmt: skip
    for (_, way), agent in agents.items():
        if way in ("im2col", "im2col+xla"):
            patch_im2col(agent)
    for agent in agents.values():
        time_updates(agent, 30)  # tracing, compiling, first calls
    walls: dict = {key: [] for key in agents}  # every update's wall-clock ms
    cpus: dict = {key: [] for key in agents}  # each round's CPU ms per update
    switches: dict = {key: [] for key in agents}  # each round's context switches per update
    keys = list(agents)
    for r in range(rounds):
        for key in keys if r % 2 == 0 else reversed(keys):
            wall, cpu, switch = time_updates(agents[key], updates)
            walls[key] += wall
            cpus[key].append(cpu)
            switches[key].append(switch)
            print(f"round {r}: {key[0]:8s} {key[1]!s:10s} wall median "
                  f"{statistics.median(wall):7.2f} p10 {low_decile(wall):6.2f} ms, "
                  f"{cpu:6.2f} ms CPU, {switch:5.1f} switches per update", flush=True)  # fmt: skip
    print(f"\n{ENV}, one update (batch 32) as the loop calls it, {rounds} rounds of "
          f"{updates}: wall-clock median and 10th percentile of every update, CPU the "
          "median of the rounds; (ratio) = no XLA / this way")  # fmt: skip
    for label, stat in (("wall median", statistics.median), ("wall p10", low_decile)):
        table(label, members, ways, {key: stat(values) for key, values in walls.items()})
    cpu = {key: statistics.median(values) for key, values in cpus.items()}
    table("CPU", members, ways, cpu)
    print("  voluntary context switches per update (medians of the rounds): " + ", ".join(
        f"{m} {w}: {statistics.median(v):.0f}" for (m, w), v in switches.items()))  # fmt: skip


def low_decile(values: list[float]) -> float:
    """The 10th percentile: on a loaded machine the updates that ran without waiting."""
    return statistics.quantiles(values, n=10)[0]


def table(label: str, members: list[str], ways: list, ms: dict) -> None:
    """One line per member: each way's milliseconds and its ratio to no XLA's."""
    names = {False: "no XLA", True: "XLA", "im2col": "im2col", "im2col+xla": "im2col+XLA"}
    for m in members:
        base = ms[(m, False)]
        cells = [f"{names[w]} {ms[(m, w)]:6.2f} ms" + (f" ({base / ms[(m, w)]:4.2f})" if w
                 is not False else "") for w in ways]  # fmt: skip
        print(f"  {label:12s} {m:8s} " + "  ".join(cells))


def window_rate(member: str, jit: bool, start: int, steps: int) -> tuple[float, float]:
    """Steps/s and CPU ms per step over steps ``start`` -> ``start + steps`` of one ``rlkit
    train`` in a fresh process (after startup and the first compiled calls), read from its
    live metrics.csv as :mod:`benchmarks.dopamine_rainbow_speed` times it."""
    from benchmarks.dopamine_rainbow_speed import time_window

    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "rlkit.cli.main", "train", member, "--env", ENV,
                   "--steps", str(start + steps + 20_000), "--quiet", "--eval-every", "0",
                   "--out", out, "--set", f"jit_compile={str(jit).lower()}"]  # fmt: skip
        if member == "c51":
            command += ["--preset", "none"]
            for key, value in preset_config("c51").items():
                if key != "jit_compile":
                    text = value if isinstance(value, str) else json.dumps(value)
                    command += ["--set", f"{key}={text}"]

        def metrics() -> Path | None:
            found = list(Path(out).glob("*/metrics.csv"))
            return found[0] if found else None

        return time_window(command, metrics, start, steps, limit=3600, cwd=Path(out))


def train_costs(members: list[str], start: int, steps: int, reps: int) -> None:
    keys = [(m, jit) for m in members for jit in (False, True)]
    rates: dict = {key: [] for key in keys}
    cpus: dict = {key: [] for key in keys}
    for rep in range(reps):
        for key in keys if rep % 2 == 0 else reversed(keys):
            rate, cpu = window_rate(*key, start, steps)
            rates[key].append(rate)
            cpus[key].append(cpu)
            load = os.getloadavg()[0]
            print(f"rep {rep}: {key[0]:8s} xla={key[1]!s:5s} {rate:7.0f} steps/s "
                  f"{cpu:6.2f} CPU ms/step (load {load:.1f})", flush=True)  # fmt: skip
    print(f"\n{ENV}, rlkit train, steps {start:,} -> {start + steps:,} (an update every 4 "
          f"steps from 1,000), medians of {reps}")  # fmt: skip
    for m in members:
        r0, r1 = (statistics.median(rates[(m, j)]) for j in (False, True))
        c0, c1 = (statistics.median(cpus[(m, j)]) for j in (False, True))
        print(f"  {m:8s} steps/s no XLA {r0:6.0f}  XLA {r1:6.0f}  ratio {r1 / r0:5.2f}   "
              f"CPU ms/step no XLA {c0:6.2f}  XLA {c1:6.2f}  ratio {c0 / c1:5.2f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", nargs="*", choices=MEMBERS, default=list(MEMBERS))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--updates", type=int, default=100)
    parser.add_argument(
        "--im2col",
        action="store_true",
        help="also the convolution as one matmul, without and with XLA",
    )
    parser.add_argument(
        "--train",
        type=int,
        default=0,
        help="time whole runs over this many steps (0: in-process updates)",
    )
    parser.add_argument("--start", type=int, default=3000, help="--train's window starts here")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if min(args.rounds, args.updates, args.reps) <= 0 or min(args.train, args.start) < 0:
        parser.error("--rounds, --updates and --reps must be positive, --train, --start >= 0")
    if args.train:
        train_costs(args.members, args.start, args.train, args.reps)
    else:
        update_costs(args.members, args.rounds, args.updates, args.im2col)


if __name__ == "__main__":
    main()
