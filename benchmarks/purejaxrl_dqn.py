"""rlkit's compiled loop against PureJaxRL's DQN, on PureJaxRL's own CartPole settings.

Both run in this one invocation, one after the other for each seed (so that the machine's
load falls on both alike), each in a process of its own:

- **PureJaxRL**: ``purejaxrl/dqn.py`` as published (``make_train`` with the ``config`` of its
  ``main``: 10 environments, 500k steps, replay 10k, batch 128, a 120x84 network, Adam
  2.5e-4, an update every vector step after 10k steps, the target copied every 500 steps,
  epsilon 1 -> 0.05 over 250k steps from the start, the mean squared error), run in its own
  virtual environment (never a dependency of rlkit). Its ``jax.jit(jax.vmap(train))`` is
  lowered and compiled first (the compile time), then run (the training time).
- **rlkit**: ``rlkit train dqn --env rlkit/CartPole-v1`` with the same settings (the keys
  below), through the library (``experiment.start(..., loop="compiled")``): the compile
  time (``trainer.compile()``), then the training time of ``trainer.run`` (metrics.csv,
  TensorBoard and a checkpoint at the end included; no evaluations).

It prints, per seed and framework: compile seconds, training seconds, steps/s, and the
mean training return of the episodes that ended in the last 10% of the steps (PureJaxRL:
its ``returns`` metric, the mean over the 10 envs of each one's last finished episode,
averaged over the last 10% of the vector steps); then the medians and the ratio of
steps/s rlkit / PureJaxRL. Both returns are training returns (epsilon 0.05): CartPole is
solved near 500.

Making PureJaxRL's environment (once)::

    python3.11 -m venv /work/venv-purejaxrl
    /work/venv-purejaxrl/bin/pip install "jax[cpu]==0.4.30" flax==0.8.5 optax==0.2.3 \\
        chex==0.1.86 gymnax==0.0.8 flashbax==0.1.2 six wandb
    git clone https://github.com/luchris429/purejaxrl /work/purejaxrl   # (31756b1 measured)

Running it::

    nice python -m benchmarks.purejaxrl_dqn --venv /work/venv-purejaxrl \\
        --purejaxrl /work/purejaxrl --seeds 0,1,2
    python -m benchmarks.purejaxrl_dqn ... --steps 100000     # a shorter look
    python -m benchmarks.purejaxrl_dqn ... --threads 1        # both XLAs on one thread
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

#: PureJaxRL's settings as rlkit keys (rlkit's DQN with the config of dqn.py's main)
RLKIT_KEYS = {
    "hidden_sizes": [120, 84], "batch_size": 128, "buffer_size": 10_000,
    "learning_starts": 10_000, "train_freq": 10, "gradient_steps": 1, "target_update": 500,
    "learning_rate": 2.5e-4, "learning_rate_end": -1, "optimizer": "adam", "loss": "mse",
    "reduction": "mean", "double_dqn": False, "gamma": 0.99, "eps_start": 1.0, "eps_end": 0.05,
    "eps_anneal_steps": 250_000, "exploration_from_start": True, "clip_delta": 0,
}  # fmt: skip

PUREJAXRL_CHILD = textwrap.dedent(
    """
    import importlib.util, json, sys, time
    import jax, jax.numpy as jnp
    path, seed, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    learning_starts = int(sys.argv[4]) if len(sys.argv) > 4 else 10000
    spec = importlib.util.spec_from_file_location("purejaxrl_dqn", path)
    dqn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dqn)
    config = {
        "NUM_ENVS": 10, "BUFFER_SIZE": 10000, "BUFFER_BATCH_SIZE": 128,
        "TOTAL_TIMESTEPS": steps, "EPSILON_START": 1.0, "EPSILON_FINISH": 0.05,
        "EPSILON_ANNEAL_TIME": 25e4, "TARGET_UPDATE_INTERVAL": 500, "LR": 2.5e-4,
        "LEARNING_STARTS": learning_starts, "TRAINING_INTERVAL": 10, "LR_LINEAR_DECAY": False,
        "GAMMA": 0.99, "TAU": 1.0, "ENV_NAME": "CartPole-v1", "SEED": seed, "NUM_SEEDS": 1,
        "WANDB_MODE": "disabled", "ENTITY": "", "PROJECT": "",
    }
    rngs = jax.random.split(jax.random.PRNGKey(seed), 1)
    start = time.perf_counter()
    train = jax.jit(jax.vmap(dqn.make_train(config))).lower(rngs).compile()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    out = jax.block_until_ready(train(rngs))
    train_s = time.perf_counter() - start
    returns = out["metrics"]["returns"][0]
    tail = returns[-max(1, len(returns) // 10):]
    print(json.dumps({"compile_s": compile_s, "train_s": train_s,
                      "steps": int(config["NUM_ENVS"] * len(returns)),
                      "final_return": float(jnp.mean(tail)), "jax": jax.__version__}))
    """
)

RLKIT_CHILD = textwrap.dedent(
    """
    import json, sys, tempfile, time
    keys = json.loads(sys.argv[1])
    seed, steps, threads = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    loop = sys.argv[5] if len(sys.argv) > 5 else "compiled"
    env_id = "rlkit/CartPole-v1" if loop == "compiled" else "CartPole-v1"
    from rlkit.run import experiment
    plan = experiment.plan("dqn", env_id, steps=steps, seed=seed, num_envs=10,
                           eval_every=0, checkpoint_every=0, preset="none", overrides=keys)
    import tensorflow as tf
    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        trainer = experiment.start(plan, out, tensorboard=True, loop=loop)
        try:
            # compiled: tracing and XLA; python: making the envs, agent and run folder
            # (its small XLA blocks compile inside the first update, in the training time)
            compile_s = trainer.compile() if loop == "compiled" else time.perf_counter() - start
            start = time.perf_counter()
            history = trainer.run(steps)
            train_s = time.perf_counter() - start
        finally:
            trainer.close()
    last = [r for r, s in zip(history.episode_returns, history.episode_end_steps)
            if s > steps - steps // 10]
    print(json.dumps({"compile_s": compile_s, "train_s": train_s, "steps": history.steps,
                      "final_return": sum(last) / max(1, len(last)), "tf": tf.__version__}))
    """
)


def run_child(argv: list[str], env: dict[str, str], cwd: str | None = None) -> dict:
    """Run a child process (in ``cwd``); its last stdout line is a JSON object."""
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)
    if done.returncode != 0:
        sys.exit(f"{argv[0]} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", required=True, help="PureJaxRL's virtual environment")
    parser.add_argument("--purejaxrl", required=True, help="a clone of luchris429/purejaxrl")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds [0,1,2]")
    parser.add_argument("--steps", type=int, default=500_000, help="environment steps [500000]")
    parser.add_argument("--threads", type=int, default=0, help="XLA threads for both (0: default)")
    args = parser.parse_args()
    python = Path(args.venv) / "bin" / "python"
    dqn_py = Path(args.purejaxrl) / "purejaxrl" / "dqn.py"
    for path, what in ((python, "--venv"), (dqn_py, "--purejaxrl")):
        if not path.is_file():
            sys.exit(f"{what}: {path} is missing (see this script's docstring to make it)")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", WANDB_MODE="disabled")
    jax_env = dict(env)
    if args.threads:
        jax_env["XLA_FLAGS"] = (
            f"--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads={args.threads}"
        )
    seeds = [int(s) for s in args.seeds.split(",")]
    load = os.getloadavg()[0]
    print(f"CartPole-v1, PureJaxRL's settings, {args.steps:,} steps, seeds {seeds}; "
          f"load average {load:.1f} on {os.cpu_count()} CPUs", flush=True)  # fmt: skip
    rows: dict[str, list[dict]] = {"purejaxrl": [], "rlkit": []}
    for seed in seeds:
        pjx = [str(python), "-c", PUREJAXRL_CHILD, str(dqn_py), str(seed), str(args.steps)]
        rows["purejaxrl"].append(run_child(pjx, jax_env))
        keys = json.dumps(RLKIT_KEYS)
        ours = [sys.executable, "-c", RLKIT_CHILD, keys, str(seed), str(args.steps),
                str(args.threads)]  # fmt: skip
        rows["rlkit"].append(run_child(ours, env))
        for name in rows:
            r = rows[name][-1]
            print(f"seed {seed} {name:<9} compile {r['compile_s']:5.1f} s  train "
                  f"{r['train_s']:6.1f} s  {r['steps'] / r['train_s']:8,.0f} steps/s  "
                  f"final return {r['final_return']:6.1f}", flush=True)  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    rates = {n: statistics.median(r["steps"] / r["train_s"] for r in rs) for n, rs in rows.items()}
    for name, rs in rows.items():
        compile_s = statistics.median(r["compile_s"] for r in rs)
        returns = ", ".join(f"{r['final_return']:.0f}" for r in rs)
        print(f"{name:<9} median {rates[name]:8,.0f} steps/s, compile {compile_s:.1f} s, "
              f"final returns {returns}")  # fmt: skip
    print(f"rlkit / PureJaxRL steps/s: {rates['rlkit'] / rates['purejaxrl']:.2f}")


if __name__ == "__main__":
    main()
