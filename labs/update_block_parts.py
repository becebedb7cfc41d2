"""Where does one update block's time go? The parts of a training step, timed in the loop.

Three settings (issue 39): DQN at PureJaxRL's CartPole settings (10 envs, batch 128,
120x84, an update every vector step), DQN at the MinAtar paper's (Breakout, its preset: an
update every step; epsilon annealed over 1,000 steps here so that acting is greedy 90% of
the time, as in most of a run) and DDPG on Pendulum (its preset, updating every step).
Each is an ordinary run (``Trainer`` with a run folder, so TensorBoard is written) whose
parts are wrapped with ``time.perf_counter``: acting, the environment step, storing, and
within ``agent.update()`` choosing and gathering the minibatch (``replay.sample``),
converting it to tensors, the compiled call, refreshing acting's copy of the network and
the target update; what is left of ``update()`` is reading the metrics back and the
bookkeeping; the loop's handling of the metrics (TensorBoard) is timed apart. The parts
are found by name, so the script runs on older commits too (``--tree``).

Printed: milliseconds per block and per step (medians over the measured steps; with
``--stat p10`` the 10th percentiles, closer to the cost itself on a loaded machine).

    python -m labs.update_block_parts --steps 3000
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable

CARTPOLE = [
    "hidden_sizes=[120,84]", "batch_size=128", "buffer_size=10000", "learning_starts=10000",
    "train_freq=10", "gradient_steps=1", "target_update=500", "learning_rate=2.5e-4",
    "learning_rate_end=-1", "loss=mse", "reduction=mean", "double_dqn=false",
    "eps_end=0.05", "eps_anneal_steps=250000", "clip_delta=0",
]  # fmt: skip

SETTINGS: dict[str, dict] = {
    "cartpole": dict(agent="dqn", env="CartPole-v1", preset="none", num_envs=10,
                     overrides=CARTPOLE, warm=11_000, vector=10),
    "minatar": dict(agent="dqn", env="MinAtar/Breakout-v0", num_envs=1,
                    overrides=["eps_anneal_steps=1000"], warm=6_500, vector=1),
    "pendulum": dict(agent="ddpg", env="Pendulum-v1", num_envs=1,
                     overrides=["train_freq=1", "gradient_steps=1"], warm=1_500, vector=1),
}  # fmt: skip

BLOCK_PARTS = ["sample + gather", "convert to tensors", "compiled call",
               "refresh acting's copy", "target update", "rest of update()",
               "metrics to TensorBoard"]  # fmt: skip
STEP_PARTS = ["act", "environment step", "store", "loop bookkeeping"]


def low_decile(values: list[float]) -> float:
    """The 10th percentile: on a loaded machine the calls that ran without waiting for a
    core (``--stat median`` for the median)."""
    return statistics.quantiles(values, n=10)[0]


STAT = statistics.median  # what each part's times are summed up by (--stat)


class Clock:
    """Times calls of wrapped functions; ``times[name]``: seconds of each call."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}
        self.on = False

    def wrap(self, name: str, fn: Callable) -> Callable:
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                if self.on:
                    self.times.setdefault(name, []).append(time.perf_counter() - start)

        return timed


def build(name: str, folder: str):
    """The agent and its Trainer (run folder ``folder``) for setting ``name``."""
    from rlkit.agents.registry import agent_spec
    from rlkit.run.loop import Trainer
    from rlkit.run.plan import make_envs, plan

    s = SETTINGS[name]
    run = plan(s["agent"], s["env"], num_envs=s["num_envs"], overrides=s["overrides"],
               preset=s.get("preset"), seed=0)  # fmt: skip
    spec = agent_spec(run.settings.agent)
    env = make_envs(run.settings, spec)
    agent = spec.load_class().from_env(env, seed=0, config=run.agent_config)
    return agent, Trainer(agent, env, seed=0, run_dir=folder)


def instrument(agent, trainer, clock: Clock) -> None:
    """Wrap the parts (instance attributes shadow the methods the loop calls)."""
    learner = agent.learner
    names = ("tensors", "_block_tensors", "_tensors")  # DQN; DDPG now; DDPG before
    convert = next(name for name in names if hasattr(learner, name))
    call = "train_block" if hasattr(learner, "train_block") else "_train_block"
    setattr(learner, convert, clock.wrap("convert to tensors", getattr(learner, convert)))
    setattr(learner, call, clock.wrap("compiled call", getattr(learner, call)))
    learner.after_blocks = clock.wrap("target update", learner.after_blocks)
    agent.replay.sample = clock.wrap("sample + gather", agent.replay.sample)
    agent.refresh_policy = clock.wrap("refresh acting's copy", agent.refresh_policy)
    agent.update = clock.wrap("update()", agent.update)
    agent.act = clock.wrap("act", agent.act)
    agent.observe_next = clock.wrap("store", agent.observe_next)
    trainer.streams.step = clock.wrap("environment step", trainer.streams.step)
    trainer._record_update = clock.wrap("metrics to TensorBoard", trainer._record_update)
    trainer._step = clock.wrap("step", trainer._step)


def profile(name: str, steps: int) -> tuple[dict[str, float], dict[str, float], int]:
    """(ms per block of each block part, ms per step of each step part, blocks timed)."""
    with tempfile.TemporaryDirectory() as folder:
        agent, trainer = build(name, folder)
        trainer.run(SETTINGS[name]["warm"])
        clock = Clock()
        instrument(agent, trainer, clock)
        clock.on = True
        trainer.run(agent.num_steps + steps * SETTINGS[name]["vector"])
        trainer.close()
    t = clock.times
    blocks = len(t["compiled call"])
    ran = sorted(t["update()"])[-blocks:]  # the update() calls that ran a block
    med = {k: 1e3 * STAT(v) for k, v in t.items()}
    inner = sum(med[k] for k in BLOCK_PARTS[:5] if k in med)
    block = {k: med.get(k, 0.0) for k in BLOCK_PARTS[:5]}
    block["rest of update()"] = max(0.0, 1e3 * STAT(ran) - inner)
    block["metrics to TensorBoard"] = med["metrics to TensorBoard"]
    block["whole block"] = sum(block.values())
    acting = {k: med[k] for k in STEP_PARTS[:3]}
    every_step = blocks >= 0.9 * steps  # (else the median step has no block)
    rest = med["step"] - sum(acting.values()) - (block["whole block"] if every_step else 0)
    acting["loop bookkeeping"] = max(0.0, rest)
    acting["whole step (without the block)"] = sum(acting.values())
    return block, acting, blocks


def call_paths(calls: int) -> dict[str, float]:
    """Microseconds per call (medians, the variants alternating in one process) of the ways
    into TensorFlow a block takes, at CartPole scale: a DQN block of one update called as a
    ``tf.function``, as its concrete function, and through :class:`~rlkit.learn.compiled.
    CompiledFunction` (the traced graph with the flat tensors); a ``[1, 128, 12]`` minibatch
    converted by ``tf.convert_to_tensor`` and by :func:`~rlkit.learn.compiled.fresh_tensor`
    (this tree only); and TensorFlow's own floor (:func:`tensorflow_floor`)."""
    import numpy as np

    from rlkit.learn.compiled import fresh_tensor

    with tempfile.TemporaryDirectory() as folder:
        agent, trainer = build("cartpole", folder)
        trainer.run(SETTINGS["cartpole"]["warm"])
        trainer.close()
    block = agent.learner.train_block
    tensors = agent.learner.tensors(agent.replay.sample(128, 1))
    block(*tensors)
    (concrete,) = block._concrete.values()
    array = np.zeros((1, 128, 12), np.float32)
    tf = __import__("tensorflow")
    floor_empty, floor_vars = tensorflow_floor(concrete.variables)
    ways = {
        "floor: XLA call, no variables": lambda: floor_empty(tensors[0]),
        "floor: XLA call, the block's variables": lambda: floor_vars(tensors[0]),
        "tf.function call": lambda: block.function(*tensors),
        "concrete function call": lambda: concrete(*tensors),
        "CompiledFunction call (flat graph)": lambda: block(*tensors),
        "tf.convert_to_tensor": lambda: tf.convert_to_tensor(array),
        "fresh_tensor": lambda: fresh_tensor(array),
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(calls):
        for name, fn in ways.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: 1e6 * STAT(t) for name, t in times.items()}


def tensorflow_floor(variables) -> tuple[Callable, Callable]:
    """What TensorFlow itself costs per call, whatever rlkit does: two XLA-compiled
    functions called as rlkit calls its block (:class:`~rlkit.learn.compiled.
    CompiledFunction`) on the same minibatch tensor, one with no variables (returns a
    reduction of its input), one that reads and writes every variable the block captures
    (adds zero to each: the same resources in and out, next to no arithmetic)."""
    import tensorflow as tf

    from rlkit.learn.compiled import CompiledFunction

    def empty(batch):
        return tf.reduce_sum(batch)

    def touch(batch):
        zero = tf.reduce_sum(batch) * 0.0
        for v in variables:
            v.assign_add(tf.cast(tf.fill(tf.shape(v), zero), v.dtype))
        return zero

    return CompiledFunction(empty, jit_compile=True), CompiledFunction(touch, jit_compile=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="loop steps timed per setting")
    parser.add_argument("--settings", default="cartpole,minatar,pendulum")
    parser.add_argument(
        "--call-paths",
        type=int,
        default=0,
        help="also time the ways into TensorFlow, this many calls each",
    )
    parser.add_argument(
        "--stat",
        choices=("median", "p10"),
        default="median",
        help="each part's median, or its 10th percentile (a loaded machine)",
    )
    args = parser.parse_args()
    global STAT
    STAT = statistics.median if args.stat == "median" else low_decile
    if args.call_paths:
        for name, us in call_paths(args.call_paths).items():
            print(f"  {name:<36} {us:8.1f} us")
    for name in filter(None, args.settings.split(",")):
        block, step, blocks = profile(name, args.steps)
        print(f"\n{name}: {blocks} blocks in {args.steps} loop steps (ms, {args.stat})")
        for key, ms in block.items():
            print(f"  block  {key:<34} {ms:7.3f}")
        for key, ms in step.items():
            print(f"  step   {key:<34} {ms:7.3f}")


if __name__ == "__main__":
    main()
