"""The arithmetic ceiling of one TD3 and one SAC update at rl-zoo's HalfCheetah sizes.

Counts the matrix products of one update (forward and backward passes, twin critics, the
target computation, TD3's actor every ``policy_delay`` updates), then times exactly those
products, as plain matmuls of the same shapes on random data, on this machine:

- TensorFlow, compiled with XLA (``jit_compile=True``: how rlkit's update runs) and as a
  graph without XLA (TensorFlow's oneDNN kernels), with 1 and 2 threads;
- PyTorch (SB3's venv, ``--sb3-venv``), with 1 and 2 threads.

Each product list runs as one call (one ``tf.function``; one Python loop of ``torch.mm``),
timed over ``--calls`` calls after a warm-up: the fastest call, the median call and the CPU
seconds a call (on a machine shared with other jobs the fastest call and the CPU time are the
steadier figures); the GFLOP/s is the list's FLOPs over that time. The update can be no
faster than its products at the best rate measured: that time, plus the environment step and
acting measured by :mod:`benchmarks.compare_sb3`, bounds the steps/s any implementation of the
same arithmetic reaches here.

    python -m benchmarks.update_flops --omp-passive   # counts, then TF and torch, 1 and 2 threads
    python -m benchmarks.update_flops --count-only    # the FLOP counts alone

(SAC on Pendulum-v1 at rl-zoo's settings, issue 52's compiled-loop case, is timed too.)

What an update multiplies (``B`` examples, a layer of ``n_in`` inputs and ``n_out`` outputs:
``2·B·n_in·n_out`` FLOPs a product): a forward pass one product a layer; its backward pass
the weight gradient (one product a layer) and the gradient to the layer's input (one a layer,
except the first layer of a network whose input is data, which needs none). TD3 (SB3's and
rlkit's ``train``): the critics' step (target actor forward on s'; both target critics forward
on (s', a'); both critics forward on (s, a) with their weight and input gradients) every
update; the actor's step (actor forward on s, the first critic forward on (s, mu(s)), its
input gradients down to the action, the actor's weight and input gradients) every
``policy_delay`` (2) updates. SAC: the actor forward on s (its sample feeds the temperature and
actor losses) and on s'; both target critics on (s', a'); both critics forward and backward
on (s, a); both critics forward on (s, ã) with their input gradients to ã; the actor's weight
and input gradients. Elementwise work (activations, Adam, the target averages, the
log-probability) is left out: it is a few FLOPs per weight or per activation against hundreds
per weight for the products.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BATCH, OBS, ACT = 256, 17, 6  # rl-zoo's batch size; HalfCheetah-v5's observation and action

Product = tuple[int, int, int]  # [m, k] @ [k, n]


def layers(n_in: int, hidden: tuple[int, ...], n_out: int) -> list[tuple[int, int]]:
    """An MLP's ``(inputs, outputs)`` per layer."""
    sizes = [n_in, *hidden, n_out]
    return list(zip(sizes[:-1], sizes[1:], strict=True))


def forward(batch: int, net: list[tuple[int, int]]) -> list[Product]:
    """A forward pass: ``[B, n_in] @ [n_in, n_out]`` a layer."""
    return [(batch, i, o) for i, o in net]


def weight_grads(batch: int, net: list[tuple[int, int]]) -> list[Product]:
    """The weight gradients: ``[n_in, B] @ [B, n_out]`` a layer."""
    return [(i, batch, o) for i, o in net]


def input_grads(batch: int, net: list[tuple[int, int]], first: bool) -> list[Product]:
    """The gradients to each layer's input: ``[B, n_out] @ [n_out, n_in]``; the first
    layer's only when ``first`` (its input is an action being differentiated)."""
    return [(batch, o, i) for j, (i, o) in enumerate(net) if first or j > 0]


def td3_products(batch: int, obs: int, act: int, hidden: tuple[int, ...], delay: int
                 ) -> dict[str, list[Product]]:  # fmt: skip
    """TD3's products: ``critic`` (every update) and ``actor`` (every ``delay`` updates)."""
    actor, critic = layers(obs, hidden, act), layers(obs + act, hidden, 1)
    critic_step = (forward(batch, actor) + 2 * forward(batch, critic)  # the targets
                   + 2 * (forward(batch, critic) + weight_grads(batch, critic)
                          + input_grads(batch, critic, False)))  # fmt: skip
    actor_step = (forward(batch, actor) + forward(batch, critic)
                  + input_grads(batch, critic, True)
                  + weight_grads(batch, actor) + input_grads(batch, actor, False))  # fmt: skip
    return {"critic": critic_step, "actor": actor_step, "delay": [(delay, 0, 0)]}


def sac_products(batch: int, obs: int, act: int, hidden: tuple[int, ...]) -> list[Product]:
    """SAC's products of one update (the policy's head: mean and log std, ``2·act``)."""
    actor, critic = layers(obs, hidden, 2 * act), layers(obs + act, hidden, 1)
    return (2 * forward(batch, actor) + 2 * forward(batch, critic)  # s and s'; the targets
            + 2 * (forward(batch, critic) + weight_grads(batch, critic)
                   + input_grads(batch, critic, False))  # the critics' step
            + 2 * (forward(batch, critic) + input_grads(batch, critic, True))  # Q(s, ã)
            + weight_grads(batch, actor) + input_grads(batch, actor, False))  # fmt: skip


def flops(products: list[Product]) -> int:
    """``2·m·k·n`` summed over the products."""
    return sum(2 * m * k * n for m, k, n in products)


def cases() -> dict[str, tuple[list[Product], float]]:
    """Each timed product list and its weight in one update (TD3's actor: 1/delay)."""
    td3 = td3_products(BATCH, OBS, ACT, (400, 300), 2)
    return {"td3 critic step": (td3["critic"], 1.0), "td3 actor step": (td3["actor"], 0.5),
            "sac update": (sac_products(BATCH, OBS, ACT, (256, 256)), 1.0),
            # rl-zoo's SAC Pendulum-v1 (3 observations, 1 action): issue 52's compiled loop
            "sac pendulum": (sac_products(BATCH, 3, 1, (256, 256)), 1.0)}  # fmt: skip


def timed_cases() -> dict[str, tuple[list[Product], float]]:
    """:func:`cases` and, for the machine's own rate, one large square product (1024^3: 2.1
    GFLOP, far beyond any call's fixed cost)."""
    return {**cases(), "square 1024": ([(1024, 1024, 1024)], 0.0)}


def summary(times: list[float], cpu: float) -> dict[str, float]:
    """The fastest and the median call (seconds) and the CPU seconds a call (``cpu`` over
    all of them)."""
    return {"min": min(times), "median": statistics.median(times), "cpu": cpu / len(times)}


def cpu_seconds() -> float:
    """This process's CPU seconds so far."""
    return time.process_time()


def time_tf(products: list[Product], jit: bool, calls: int) -> dict[str, float]:
    """:func:`summary` of calls running ``products`` in one ``tf.function``."""
    import tensorflow as tf

    gen = tf.random.Generator.from_seed(0)
    pairs = [(gen.normal([m, k]), gen.normal([k, n])) for m, k, n in products]

    @tf.function(jit_compile=jit)
    def run(pairs):
        return tf.add_n([tf.reduce_sum(tf.matmul(a, b)) for a, b in pairs])

    run(pairs).numpy()
    times, cpu = [], cpu_seconds()
    for _ in range(calls):
        start = time.perf_counter()
        run(pairs).numpy()
        times.append(time.perf_counter() - start)
    return summary(times, cpu_seconds() - cpu)


def time_torch(products: list[Product], calls: int) -> dict[str, float]:
    """:func:`summary` of Python loops of ``torch.mm`` over ``products``."""
    import torch

    gen = torch.Generator().manual_seed(0)
    pairs = [(torch.randn(m, k, generator=gen), torch.randn(k, n, generator=gen))
             for m, k, n in products]  # fmt: skip
    times = []
    with torch.no_grad():
        for call in range(calls + 3):
            if call == 3:
                cpu = cpu_seconds()
            start = time.perf_counter()
            total = sum(float(torch.mm(a, b).sum()) for a, b in pairs)
            if call >= 3:
                times.append(time.perf_counter() - start)
    assert total == total  # (the results are used)
    return summary(times, cpu_seconds() - cpu)


def child(kind: str, threads: int, calls: int) -> dict[str, dict[str, float]]:
    """In a fresh process: seconds a call of each case's products, ``kind`` ``xla``, ``tf``
    or ``torch`` on ``threads`` threads."""
    if kind == "torch":
        import torch

        torch.set_num_threads(threads)
        return {name: time_torch(p, calls) for name, (p, _) in timed_cases().items()}
    os.environ["TF_NUM_INTRAOP_THREADS"] = os.environ["TF_NUM_INTEROP_THREADS"] = str(threads)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    return {name: time_tf(p, kind == "xla", calls) for name, (p, _) in timed_cases().items()}


def print_counts() -> None:
    """Each case's products and FLOPs, and the FLOPs of one TD3 and one SAC update."""
    for name, (products, weight) in cases().items():
        print(f"{name}: {len(products)} products, {flops(products) / 1e6:.1f} MFLOP "
              f"(x{weight} a update)")  # fmt: skip
    print(f"TD3 update (critic + actor / 2): {td3_update_flops() / 1e6:.1f} MFLOP; "
          f"SAC update: {flops(cases()['sac update'][0]) / 1e6:.1f} MFLOP (Pendulum's: "
          f"{flops(cases()['sac pendulum'][0]) / 1e6:.1f})")  # fmt: skip


def td3_update_flops() -> float:
    """The FLOPs of one TD3 update, the actor's step shared over ``policy_delay`` (2)."""
    c = cases()
    return flops(c["td3 critic step"][0]) + 0.5 * flops(c["td3 actor step"][0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--kinds", default="xla,tf,torch")
    parser.add_argument("--count-only", action="store_true")
    parser.add_argument("--omp-passive", action="store_true",
                        help="OMP_WAIT_POLICY=PASSIVE (see benchmarks/compare_sb3.py)")  # fmt: skip
    parser.add_argument("--sb3-venv", default=os.environ.get("RLKIT_SB3_VENV", "/work/venv-sb3"))
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, threads, calls = args.child
        print(json.dumps(child(kind, int(threads), int(calls))))
        return
    print_counts()
    if args.count_only:
        return
    sb3_python = Path(args.sb3_venv) / "bin" / "python"
    omp = {"OMP_WAIT_POLICY": "PASSIVE"} if args.omp_passive else {}
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"{omp or 'OMP_WAIT_POLICY unset'}")  # fmt: skip
    for kind in args.kinds.split(","):
        python = str(sb3_python) if kind == "torch" else sys.executable
        for threads in [int(t) for t in args.threads.split(",")]:
            done = subprocess.run(
                [python, "-m", "benchmarks.update_flops", "--child", kind, str(threads),
                 str(args.calls)], capture_output=True, text=True, cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT), **omp},
            )  # fmt: skip
            if done.returncode != 0:
                sys.exit(f"{kind} on {threads} threads failed:\n{done.stderr[-2000:]}")
            timed = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{kind} on {threads} thread(s), load {os.getloadavg()[0]:.2f}:", flush=True)
            for name, t in timed.items():
                gflops = flops(timed_cases()[name][0]) / 1e6
                print(f"  {name:<16} fastest {1000 * t['min']:6.2f} ms "
                      f"({gflops / t['min'] / 1e3:4.0f} GFLOP/s), median "
                      f"{1000 * t['median']:6.2f} ms, CPU {1000 * t['cpu']:6.2f} ms a call "
                      f"({gflops / t['cpu'] / 1e3:4.0f} GFLOP per CPU second)")  # fmt: skip
            for what in ("min", "cpu"):
                td3 = timed["td3 critic step"][what] + 0.5 * timed["td3 actor step"][what]
                print(f"  one TD3 update's products: {1000 * td3:.2f} ms "
                      f"({'fastest' if what == 'min' else 'CPU'}); SAC's: "
                      f"{1000 * timed['sac update'][what]:.2f} ms; SAC Pendulum's: "
                      f"{1000 * timed['sac pendulum'][what]:.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
