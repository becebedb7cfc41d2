"""rlkit's compiled PPO loop against PureJaxRL's PPO, on PureJaxRL's own CartPole settings.

Both run in this one invocation, one after the other for each seed (so that the machine's
load falls on both alike), each in a process of its own:

- **PureJaxRL**: ``purejaxrl/ppo.py`` as published (``make_train`` with the ``config`` of its
  ``__main__``: 4 environments, rollouts of 128 steps, 500k steps, 4 epochs of 4
  minibatches, gamma 0.99, GAE lambda 0.95, clip 0.2, entropy 0.01, value 0.5, gradient
  norm 0.5, separate 64x64 tanh actor and critic, orthogonal initialisation, Adam 2.5e-4
  with epsilon 1e-5 annealed linearly), run in its own virtual environment (never a
  dependency of rlkit). Its ``wrappers.py`` imports brax and navix at the top, for
  environments CartPole does not use: the child below stubs those modules in
  ``sys.modules`` before importing it (the clone is not edited). Its
  ``jax.jit(make_train(config))`` is lowered and compiled first (the compile time), then
  run (the training time).
- **rlkit**: ``rlkit train ppo --env rlkit/CartPole-v1`` with the same settings (the keys
  below), through the library (``experiment.start(..., loop="compiled")``): the compile
  time (``trainer.compile()``), then the training time of ``trainer.run`` (metrics.csv,
  TensorBoard and a checkpoint at the end included; no evaluations).

Both run the same number of steps: ``--steps`` rounded down to whole rollouts of 4 x 128
(PureJaxRL's ``NUM_UPDATES = TOTAL_TIMESTEPS // NUM_STEPS // NUM_ENVS``: 500,000 gives 976
updates, 499,712 steps), so both do the same work per step: the same networks, one rollout
of 512 steps, then 4 epochs of 4 minibatches of 128.

Where the two still differ (rlkit's keys are SB3's PPO; PureJaxRL's is CleanRL's):

- the value loss: PureJaxRL's is ``VF_COEF * 0.5 * max((V - R)^2, (V' - R)^2)`` with
  ``V'`` the prediction clipped to within ``CLIP_EPS`` (0.2) of the rollout's value
  (CleanRL's form); rlkit's is SB3's ``vf_coef * mean((V - R)^2)``, no half, no clipping
  (its ``clip_range_vf`` is SB3's form, ``(V' - R)^2`` alone, so it is left off): with the
  same ``vf_coef`` 0.5 rlkit's value gradient is twice PureJaxRL's where the clip is
  inactive (``vf_coef`` 0.25 would match its scale);
- the advantages are normalised per minibatch in both, PureJaxRL's with the population
  std (``jnp.std``), rlkit's with the sample std (SB3's torch ``std()``), each + 1e-8;
- the learning rate: PureJaxRL's schedule is ``LR * (1 - (count // 16) / NUM_UPDATES)``
  with ``count`` the minibatch steps done, so it is constant within an update and falls
  by update, ``LR (1 - k / 976)`` at update ``k = 0..975``; rlkit's falls by environment
  step, ``LR (1 - now / lr_anneal_steps)`` at the step count ``now`` of the update
  (``lr_end_fraction`` 0, ``lr_anneal_steps`` the run's steps): ``LR (1 - (k + 1) / 976)``,
  one update ahead, its last update at 0;
- the end of an episode: gymnax's CartPole ends at 500 steps with ``done`` and PureJaxRL's
  GAE treats every ``done`` as a termination; rlkit's ``bootstrap_truncated`` is set
  false to do the same (its default bootstraps a truncation from V(final observation));
  rlkit's program still evaluates V of the rollout's next observations (one more value
  pass over the 512 rows per update) where PureJaxRL takes the next row's value;
- the action: PureJaxRL samples distrax's Categorical, rlkit takes the Gumbel-max of the
  logits; each its own random numbers. Adam (epsilon 1e-5 on the bias-corrected root:
  optax's, and rlkit's ``torch_adam`` since 6fb003f; Keras' Adam before it), the
  orthogonal gains (sqrt 2 hidden, 0.01 policy head, 1 value head, zero biases),
  gradient clipping over both networks' global norm and one optimizer over both are
  the same.

It prints, per seed and framework: compile seconds, training seconds, steps/s, and the
mean training return of the episodes that ended in the last 10% of the steps (PureJaxRL:
its ``returned_episode_returns`` where ``returned_episode``, in the last 10% of the vector
steps); then the medians and the ratio of steps/s rlkit / PureJaxRL. CartPole's training
returns (a sampling policy) reach 500 when solved.

Making PureJaxRL's environment (once; purejaxrl_dqn.py's, with distrax and
tensorflow-probability added, serves both)::

    python3.11 -m venv /work/venv-purejaxrl
    /work/venv-purejaxrl/bin/pip install "jax[cpu]==0.4.30" flax==0.8.5 optax==0.2.3 \\
        chex==0.1.86 gymnax==0.0.8 distrax==0.1.5 tensorflow-probability==0.24.0 six
    git clone https://github.com/luchris429/purejaxrl /work/purejaxrl   # (31756b1 measured)

Running it::

    nice python -m benchmarks.purejaxrl_ppo --venv /work/venv-purejaxrl \\
        --purejaxrl /work/purejaxrl --seeds 0,1
    python -m benchmarks.purejaxrl_ppo ... --steps 100000     # a shorter look
    python -m benchmarks.purejaxrl_ppo ... --threads 1        # both XLAs on one thread
    python -m benchmarks.purejaxrl_ppo ... --rlkit /tmp/before --rlkit .   # two checkouts
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import textwrap
from pathlib import Path

from benchmarks.purejaxrl_dqn import run_child

NUM_ENVS, NUM_STEPS, NUM_MINIBATCHES = 4, 128, 4

#: PureJaxRL's settings as rlkit keys (rlkit's PPO with the config of ppo.py's __main__);
#: lr_anneal_steps is the run's steps, set per run
RLKIT_KEYS = {
    "n_steps": NUM_STEPS, "batch_size": NUM_ENVS * NUM_STEPS // NUM_MINIBATCHES,
    "n_epochs": 4, "learning_rate": 2.5e-4, "lr_end_fraction": 0.0, "adam_epsilon": 1e-5,
    "optimizer": "adam", "gamma": 0.99, "gae_lambda": 0.95, "clip_range": 0.2,
    "clip_range_end_fraction": -1.0, "clip_range_vf": 0.0, "normalize_advantage": True,
    "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5, "target_kl": 0.0,
    "hidden_sizes": [64, 64], "value_hidden_sizes": [64, 64], "ortho_init": True,
    "bootstrap_truncated": False,
}  # fmt: skip

PUREJAXRL_CHILD = textwrap.dedent(
    """
    import importlib.util, json, os, sys, time, types
    # wrappers.py imports brax and navix at the top (for other environments): stubs
    for name in ("brax", "brax.envs", "brax.envs.wrappers", "brax.envs.wrappers.training",
                 "navix"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["brax"].envs = sys.modules["brax.envs"]
    training = sys.modules["brax.envs.wrappers.training"]
    training.EpisodeWrapper = training.AutoResetWrapper = None
    import jax, jax.numpy as jnp
    path, seed, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sys.path.insert(0, os.path.dirname(path))  # ppo.py imports `wrappers`
    spec = importlib.util.spec_from_file_location("purejaxrl_ppo", path)
    ppo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ppo)
    config = {
        "LR": 2.5e-4, "NUM_ENVS": 4, "NUM_STEPS": 128, "TOTAL_TIMESTEPS": steps,
        "UPDATE_EPOCHS": 4, "NUM_MINIBATCHES": 4, "GAMMA": 0.99, "GAE_LAMBDA": 0.95,
        "CLIP_EPS": 0.2, "ENT_COEF": 0.01, "VF_COEF": 0.5, "MAX_GRAD_NORM": 0.5,
        "ACTIVATION": "tanh", "ENV_NAME": "CartPole-v1", "ANNEAL_LR": True, "DEBUG": False,
    }
    rng = jax.random.PRNGKey(seed)
    start = time.perf_counter()
    train = jax.jit(ppo.make_train(config)).lower(rng).compile()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    out = jax.block_until_ready(train(rng))
    train_s = time.perf_counter() - start
    info = out["metrics"]  # [updates, NUM_STEPS, NUM_ENVS] each
    ended = info["returned_episode"].reshape(-1, config["NUM_ENVS"])
    returns = info["returned_episode_returns"].reshape(-1, config["NUM_ENVS"])
    tail = max(1, ended.shape[0] // 10)
    ended, returns = ended[-tail:], returns[-tail:]
    final = float(jnp.sum(jnp.where(ended, returns, 0.0)) / jnp.maximum(jnp.sum(ended), 1))
    print(json.dumps({"compile_s": compile_s, "train_s": train_s,
                      "steps": int(config["NUM_ENVS"] * info["returned_episode"].shape[0]
                                   * info["returned_episode"].shape[1]),
                      "final_return": final, "episodes": int(jnp.sum(ended)),
                      "jax": jax.__version__}))
    """
)

RLKIT_CHILD = textwrap.dedent(
    """
    import json, sys, tempfile, time
    keys = json.loads(sys.argv[1])
    seed, steps, threads = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    from rlkit.run import experiment
    plan = experiment.plan("ppo", "rlkit/CartPole-v1", steps=steps, seed=seed, num_envs=4,
                           eval_every=0, checkpoint_every=0, preset="none", overrides=keys)
    import tensorflow as tf
    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    with tempfile.TemporaryDirectory() as out:
        trainer = experiment.start(plan, out, tensorboard=True, loop="compiled")
        try:
            compile_s = trainer.compile()
            start = time.perf_counter()
            history = trainer.run(steps)
            train_s = time.perf_counter() - start
        finally:
            trainer.close()
    last = [r for r, s in zip(history.episode_returns, history.episode_end_steps)
            if s > steps - steps // 10]
    print(json.dumps({"compile_s": compile_s, "train_s": train_s, "steps": history.steps,
                      "final_return": sum(last) / max(1, len(last)), "episodes": len(last),
                      "tf": tf.__version__}))
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", required=True, help="PureJaxRL's virtual environment")
    parser.add_argument("--purejaxrl", required=True, help="a clone of luchris429/purejaxrl")
    parser.add_argument("--seeds", default="0,1", help="comma-separated seeds [0,1]")
    parser.add_argument("--steps", type=int, default=500_000, help="environment steps [500000]")
    parser.add_argument("--threads", type=int, default=0, help="XLA threads for both (0: default)")
    parser.add_argument("--rlkit", action="append", default=[], metavar="CHECKOUT",
                        help="rlkit from this checkout (repeatable: a row each, alternating "
                        "with PureJaxRL; default: the rlkit imported)")  # fmt: skip
    args = parser.parse_args()
    python = Path(args.venv) / "bin" / "python"
    ppo_py = Path(args.purejaxrl) / "purejaxrl" / "ppo.py"
    for path, what in ((python, "--venv"), (ppo_py, "--purejaxrl")):
        if not path.is_file():
            sys.exit(f"{what}: {path} is missing (see this script's docstring to make it)")
    rollout = NUM_ENVS * NUM_STEPS
    steps = args.steps // rollout * rollout  # PureJaxRL's NUM_UPDATES whole rollouts
    if steps == 0:
        sys.exit(f"--steps: at least one rollout of {rollout} steps")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    jax_env = dict(env)
    if args.threads:
        jax_env["XLA_FLAGS"] = (
            f"--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads={args.threads}"
        )
    keys = json.dumps(dict(RLKIT_KEYS, lr_anneal_steps=steps))
    seeds = [int(s) for s in args.seeds.split(",")]
    load = os.getloadavg()[0]
    print(f"PPO CartPole-v1, PureJaxRL's settings, {steps:,} steps ({steps // rollout} "
          f"rollouts of {rollout}), seeds {seeds}; load average {load:.1f} on "
          f"{os.cpu_count()} CPUs", flush=True)  # fmt: skip
    checkouts = {"rlkit": None} if not args.rlkit else {
        f"rlkit {path}": str(Path(path).resolve()) for path in args.rlkit}  # fmt: skip
    rows: dict[str, list[dict]] = {"purejaxrl": [], **{name: [] for name in checkouts}}
    width = max(len(name) for name in rows)
    for seed in seeds:
        pjx = [str(python), "-c", PUREJAXRL_CHILD, str(ppo_py), str(seed), str(steps)]
        rows["purejaxrl"].append(run_child(pjx, jax_env))
        for name, checkout in checkouts.items():
            ours = [sys.executable, "-c", RLKIT_CHILD, keys, str(seed), str(steps),
                    str(args.threads)]  # fmt: skip
            if checkout is None:
                rows[name].append(run_child(ours, env))
            else:  # (run there: a child's sys.path starts with its working folder)
                rows[name].append(run_child(ours, dict(env, PYTHONPATH=checkout), checkout))
        for name in rows:
            r = rows[name][-1]
            print(f"seed {seed} {name:<{width}} compile {r['compile_s']:5.1f} s  train "
                  f"{r['train_s']:6.1f} s  {r['steps'] / r['train_s']:8,.0f} steps/s  "
                  f"final return {r['final_return']:6.1f} ({r['episodes']} episodes)",
                  flush=True)  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    rates = {n: statistics.median(r["steps"] / r["train_s"] for r in rs) for n, rs in rows.items()}
    for name, rs in rows.items():
        compile_s = statistics.median(r["compile_s"] for r in rs)
        returns = ", ".join(f"{r['final_return']:.0f}" for r in rs)
        print(f"{name:<{width}} median {rates[name]:8,.0f} steps/s, compile {compile_s:.1f} s, "
              f"final returns {returns}")  # fmt: skip
    for name in checkouts:
        print(f"{name} / PureJaxRL steps/s: {rates[name] / rates['purejaxrl']:.2f}")


if __name__ == "__main__":
    main()
