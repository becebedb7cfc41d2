"""The peers on one setting: DQN on CartPole-v1 in SB3, PureJaxRL and rlkit's two loops.

``--setting purejaxrl`` (the default) runs, in this one invocation, for each seed in turn
(the order rotated from seed to seed, so that the machine's load falls on all alike), each
in a process of its own, with PureJaxRL's own settings (10 environments, 500k steps, replay
10k, batch 128, a 120x84 network, Adam 2.5e-4 constant, an update every vector step after
10k steps, the target copied every 500 steps, epsilon 1 -> 0.05 over 250k steps from the
start, gamma 0.99, squared error, no gradient clipping, no double DQN):

- ``purejaxrl``: ``purejaxrl/dqn.py`` in its own virtual environment (one compiled JAX
  program; see :mod:`benchmarks.purejaxrl_dqn` for making it);
- ``sb3``: Stable-Baselines3's ``DQN`` in its own virtual environment (PyTorch, a Python
  loop over a ``DummyVecEnv`` of 10 gymnasium CartPoles): ``train_freq=1`` and
  ``gradient_steps=1`` (one ``env.step`` of the vector env, 10 transitions, then one
  update), ``target_update_interval=500`` (SB3 counts it in transitions: every 50 vector
  steps), ``exploration_fraction=0.5``, ``max_grad_norm=inf`` (SB3's clip then multiplies
  by 1), and the squared error in place of SB3's ``smooth_l1_loss`` (swapped in SB3's
  ``dqn`` module only; ``--sb3-loss huber`` keeps SB3's own). What still differs: SB3 takes
  uniform random actions before ``learning_starts`` and bootstraps at CartPole's 500-step
  truncation (PureJaxRL treats it as terminal), and PyTorch's initialisation. SB3 runs on one
  torch thread (``--sb3-threads``): on this loaded 2-core machine two threads made it
  ~25x slower (117 against 2,846 steps/s over 20k steps, load ~11; docs/performance.md);
- ``rlkit-python``: ``rlkit train dqn --env CartPole-v1`` (gymnasium's CartPole, the Python
  loop) with :data:`benchmarks.purejaxrl_dqn.RLKIT_KEYS`;
- ``rlkit-compiled``: ``rlkit train dqn --env rlkit/CartPole-v1`` (the compiled loop), the
  same keys.

Each prints its startup or compile seconds apart from its training seconds, steps/s, and
the mean training return (epsilon 0.05) of the episodes that ended in the last 10% of its
steps (PureJaxRL: its ``returns`` metric over the last 10% of the vector steps); then the
medians and each one's steps/s against PureJaxRL's. ``--learning-starts`` beyond ``--steps``
leaves only acting, the environments and the replay writes: the per-update cost is the
difference. A peer whose virtual environment is
missing is skipped with a line saying how to make it.

``--setting zoo`` runs rl-zoo's DQN CartPole settings (50k steps; those of
:mod:`benchmarks.compare_sb3`, whose ``run_sb3`` and ``run_rlkit`` it calls) for SB3 in
its venv and rlkit's Python loop, alternating, with SB3 on 1 and 2 torch threads.

Making SB3's environment (once; never a dependency of rlkit)::

    python3.11 -m venv /work/venv-sb3
    /work/venv-sb3/bin/pip install torch==2.13.0 stable-baselines3 gymnasium
    #   (torch 2.13.0+cpu, stable-baselines3 2.9.2, gymnasium 1.4.0, numpy 2.4.6 measured)

Running it::

    nice python -m benchmarks.peers_dqn_cartpole --seeds 0,1,2
    nice python -m benchmarks.peers_dqn_cartpole --setting zoo --seeds 0,1,2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import textwrap
from pathlib import Path

from benchmarks.purejaxrl_dqn import PUREJAXRL_CHILD, RLKIT_CHILD, RLKIT_KEYS, run_child

ROOT = Path(__file__).resolve().parent.parent
PEERS = ("purejaxrl", "sb3", "rlkit-python", "rlkit-compiled")
MAKE_SB3 = (
    "python3.11 -m venv {venv} && {venv}/bin/pip install torch==2.13.0 stable-baselines3 gymnasium"
)
MAKE_PUREJAXRL = "see `python -m benchmarks.purejaxrl_dqn --help`'s module docstring"

SB3_CHILD = textwrap.dedent(
    """
    import json, sys, time, types
    seed, steps, threads, loss = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    learning_starts = int(sys.argv[5])
    import torch
    if threads:
        torch.set_num_threads(threads)
    import stable_baselines3
    import stable_baselines3.dqn.dqn as dqn_module
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    if loss == "mse":  # PureJaxRL's mean squared error in place of SB3's smooth_l1 (Huber)
        dqn_module.F = types.SimpleNamespace(smooth_l1_loss=torch.nn.functional.mse_loss)

    class Returns(BaseCallback):
        def __init__(self):
            super().__init__()
            self.rows = []
        def _on_step(self):
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.rows.append((self.num_timesteps, float(info["episode"]["r"])))
            return True

    start = time.perf_counter()
    env = make_vec_env("CartPole-v1", n_envs=10, seed=seed)
    model = DQN(
        "MlpPolicy", env, learning_rate=2.5e-4, buffer_size=10_000, learning_starts=learning_starts,
        batch_size=128, tau=1.0, gamma=0.99, train_freq=1, gradient_steps=1,
        target_update_interval=500, exploration_fraction=0.5, exploration_initial_eps=1.0,
        exploration_final_eps=0.05, max_grad_norm=float("inf"),
        policy_kwargs=dict(net_arch=[120, 84]), seed=seed, device="cpu",
    )
    setup_s = time.perf_counter() - start
    returns = Returns()
    start = time.perf_counter()
    model.learn(total_timesteps=steps, callback=returns)
    train_s = time.perf_counter() - start
    last = [r for s, r in returns.rows if s > steps - steps // 10]
    print(json.dumps({"compile_s": setup_s, "train_s": train_s, "steps": model.num_timesteps,
                      "final_return": sum(last) / max(1, len(last)),
                      "torch": torch.__version__, "threads": torch.get_num_threads(),
                      "sb3": stable_baselines3.__version__, "updates": model._n_updates}))
    """
)

#: rl-zoo's settings: benchmarks.compare_sb3's own functions, each in its own interpreter
ZOO_CHILD = (
    "import json, sys; sys.path.insert(0, {root!r}); "
    "from benchmarks.compare_sb3 import {fn}; print(json.dumps({fn}('dqn', {args})))"
)


def python_of(venv: str) -> Path:
    """The interpreter of a virtual environment."""
    return Path(venv) / "bin" / "python"


def available(args: argparse.Namespace, peers: list[str]) -> list[str]:
    """The peers that can run here; a line for each that cannot, saying how to make it."""
    kept = []
    for peer in peers:
        if peer == "sb3" and not python_of(args.sb3_venv).is_file():
            print(f"skipping sb3: {python_of(args.sb3_venv)} is missing; make it with: "
                  f"{MAKE_SB3.format(venv=args.sb3_venv)}")  # fmt: skip
        elif peer == "purejaxrl" and not (
            python_of(args.purejaxrl_venv).is_file() and dqn_py(args).is_file()
        ):
            print(f"skipping purejaxrl: {python_of(args.purejaxrl_venv)} or {dqn_py(args)} "
                  f"is missing; {MAKE_PUREJAXRL}")  # fmt: skip
        else:
            kept.append(peer)
    return kept


def dqn_py(args: argparse.Namespace) -> Path:
    """PureJaxRL's ``dqn.py`` in its clone."""
    return Path(args.purejaxrl) / "purejaxrl" / "dqn.py"


def command(args: argparse.Namespace, peer: str, seed: int) -> list[str]:
    """The child process that trains ``peer`` on ``seed`` at PureJaxRL's settings."""
    steps = (args.sb3_steps or args.steps) if peer == "sb3" else args.steps
    if peer == "purejaxrl":
        python = str(python_of(args.purejaxrl_venv))
        return [python, "-c", PUREJAXRL_CHILD, str(dqn_py(args)), str(seed), str(steps),
                str(args.learning_starts)]  # fmt: skip
    if peer == "sb3":
        python = str(python_of(args.sb3_venv))
        threads = str(args.sb3_threads)
        return [python, "-c", SB3_CHILD, str(seed), str(steps), threads, args.sb3_loss,
                str(args.learning_starts)]  # fmt: skip
    loop = peer.removeprefix("rlkit-")
    keys = json.dumps(RLKIT_KEYS | {"learning_starts": args.learning_starts})
    return [sys.executable, "-c", RLKIT_CHILD, keys, str(seed), str(steps), str(args.threads),
            loop]  # fmt: skip


def child_env(args: argparse.Namespace, peer: str) -> dict[str, str]:
    """The child's environment: quiet TensorFlow, no wandb, XLA threads if asked."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", WANDB_MODE="disabled",
               CUDA_VISIBLE_DEVICES="")  # fmt: skip
    if args.threads and peer == "purejaxrl":
        env["XLA_FLAGS"] = (
            f"--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads={args.threads}"
        )
    return env


def run_purejaxrl_setting(args: argparse.Namespace, seeds: list[int]) -> None:
    """Every available peer on every seed, then the medians and the ratios."""
    peers = available(args, [p.strip() for p in args.peers.split(",")])
    if not peers:
        sys.exit("no peer can run here (see the lines above)")
    rows: dict[str, list[dict]] = {peer: [] for peer in peers}
    for i, seed in enumerate(seeds):
        for peer in peers[i % len(peers) :] + peers[: i % len(peers)]:
            r = run_child(command(args, peer, seed), child_env(args, peer))
            rows[peer].append(r)
            print(f"seed {seed} {peer:<14} compile/startup {r['compile_s']:5.1f} s  train "
                  f"{r['train_s']:6.1f} s  {r['steps']:,} steps  "
                  f"{r['steps'] / r['train_s']:8,.0f} steps/s  final return "
                  f"{r['final_return']:6.1f}  (load {os.getloadavg()[0]:.1f})",
                  flush=True)  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    rates = {p: statistics.median(r["steps"] / r["train_s"] for r in rs) for p, rs in rows.items()}
    base = rates.get("purejaxrl")
    for peer, rs in rows.items():
        compile_s = statistics.median(r["compile_s"] for r in rs)
        returns = ", ".join(f"{r['final_return']:.1f}" for r in rs)
        ratio = f"  {rates[peer] / base:.2f}x PureJaxRL" if base else ""
        print(f"{peer:<14} median {rates[peer]:8,.0f} steps/s, compile/startup "
              f"{compile_s:.1f} s, final returns {returns}{ratio}")  # fmt: skip
    versions = {k: v for rs in rows.values() for k, v in rs[-1].items()
                if k in ("jax", "tf", "torch", "sb3", "threads")}  # fmt: skip
    print(f"versions: {versions}")


def run_zoo_setting(args: argparse.Namespace, seeds: list[int]) -> None:
    """rl-zoo's settings: rlkit's Python loop and SB3 on each torch thread count."""
    threads = [int(t) for t in args.torch_threads.split(",")]
    names = ["rlkit"] + ([f"sb3-torch{t}" for t in threads] if available(args, ["sb3"]) else [])
    rows: dict[str, list[dict]] = {name: [] for name in names}
    steps = args.steps if args.steps != 500_000 else 50_000
    for i, seed in enumerate(seeds):
        for name in names if i % 2 == 0 else list(reversed(names)):
            if name == "rlkit":
                python, fn, fn_args = sys.executable, "run_rlkit", f"{seed}, {steps}"
            else:
                python, fn = str(python_of(args.sb3_venv)), "run_sb3"
                fn_args = f"{seed}, {steps}, {name.removeprefix('sb3-torch')}"
            code = ZOO_CHILD.format(root=str(ROOT), fn=fn, args=fn_args)
            r = run_child([python, "-c", code], child_env(args, name))
            rows[name].append(r)
            print(f"seed {seed} {name:<12} {r['seconds']:7.1f} s {r['sps']:8,.0f} steps/s  "
                  f"greedy eval {r['eval']:6.1f}  (load {os.getloadavg()[0]:.1f})",
                  flush=True)  # fmt: skip
    base = statistics.median(r["sps"] for r in rows["rlkit"])
    for name, rs in rows.items():
        sps = statistics.median(r["sps"] for r in rs)
        evals = ", ".join(f"{r['eval']:.1f}" for r in rs)
        ratio = "" if name == "rlkit" else f"  rlkit / this: {base / sps:.2f}x"
        print(f"{name:<12} median {sps:8,.0f} steps/s, greedy evals {evals}{ratio}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--setting", choices=["purejaxrl", "zoo"], default="purejaxrl")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"a subset of {PEERS}")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds [0,1,2]")
    parser.add_argument("--steps", type=int, default=500_000,
                        help="environment steps [500000; zoo: 50000]")  # fmt: skip
    parser.add_argument("--sb3-steps", type=int, default=0, help="SB3's own budget [--steps]")
    parser.add_argument(
        "--learning-starts",
        type=int,
        default=10_000,
        help="for all [10000]; beyond --steps: acting, envs and replay only",
    )
    parser.add_argument("--sb3-loss", choices=["mse", "huber"], default="mse")
    parser.add_argument("--threads", type=int, default=0, help="threads for all (0: default)")
    parser.add_argument("--sb3-threads", type=int, default=1,
                        help="SB3's torch threads [1; 0: torch's default]")  # fmt: skip
    parser.add_argument("--torch-threads", default="1,2", help="zoo: SB3's torch threads")
    parser.add_argument("--sb3-venv", default="/work/venv-sb3")
    parser.add_argument("--purejaxrl-venv", default="/work/venv-purejaxrl")
    parser.add_argument("--purejaxrl", default="/work/purejaxrl", help="its clone")
    args = parser.parse_args()
    unknown = set(args.peers.split(",")) - set(PEERS)
    if unknown:
        parser.error(f"--peers: unknown {sorted(unknown)}; choose from {PEERS}")
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"DQN CartPole-v1, {args.setting}'s settings, seeds {seeds}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)  # fmt: skip
    if args.setting == "zoo":
        run_zoo_setting(args, seeds)
    else:
        run_purejaxrl_setting(args, seeds)


if __name__ == "__main__":
    main()
