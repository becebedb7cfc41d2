"""rlkit against Stable-Baselines3 on identical settings, in one invocation.

Each repetition trains rlkit and SB3 one after the other (alternating which goes
first), each in a fresh subprocess, and prints wall-clock time, environment
steps per second and the final greedy evaluation return (10 episodes), then the
medians and the speed ratio. Settings are rl-zoo's:

- DQN, CartPole-v1: lr 2.3e-3, batch 64, buffer 100k, learning_starts 1000,
  gamma 0.99, target_update_interval 10, train_freq 256, gradient_steps 128,
  exploration_fraction 0.16, final eps 0.04, net 256x256, 50k steps; rlkit starts
  from PyTorch's initialisation (init="torch") as SB3 does;
- DDPG, Pendulum-v1: gamma 0.98, buffer 200k, learning_starts 10k, normal noise
  0.1, lr 1e-3, net 400x300, batch 256, tau 0.005, 20k steps, with one of two update
  schedules: ``ddpg`` updates once after every step (train_freq 1, gradient_steps 1);
  ``ddpg-episode`` is the schedule of rl-zoo's ddpg.yml (train_freq [1, "episode"],
  gradient_steps -1: after each 200-step episode, 200 updates). rlkit runs the latter
  as train_freq 200, gradient_steps 200 and learning_starts 10,001 (rlkit starts
  learning *at* that step, SB3 *after* it), so both run 50 blocks, 10,000 updates;
- SAC, Pendulum-v1 (``sac``): rl-zoo's sac.yml entry, n_timesteps 20k, learning_rate 1e-3,
  every other key SB3's SAC default (buffer 1M, batch 256, learning_starts 100, tau 0.005,
  gamma 0.99, train_freq 1, gradient_steps 1, ent_coef auto, net_arch [256, 256]); rlkit
  runs its preset ``sac/Pendulum-v1``, which is that entry key by key;
- SAC, LunarLanderContinuous-v3 (``sac-lunar``): rl-zoo's entry (preset
  ``sac/LunarLanderContinuous-v3``: lin_7.3e-4, tau 0.01, net_arch [400, 300],
  learning_starts 10k, batch 256, buffer 1M) but 20k steps instead of 500k (10k uniform
  random steps, then 10k updates): a speed check, not a learning one. The learning rate
  falls linearly to 0, over the whole run in SB3 (the zoo's ``linear_schedule``), over the
  steps after learning_starts in rlkit (its preset's reading of ``lin_``);
- TD3 and SAC on HalfCheetah-v5 (``td3-halfcheetah``, ``sac-halfcheetah``): rl-zoo's
  HalfCheetah-v4 entries (rlkit's presets ``ddpg/HalfCheetah-v5-td3`` and
  ``sac/HalfCheetah-v5``, docs/mujoco.md): TD3 net 400x300, lr 1e-3, batch 256, train_freq 1,
  gradient_steps 1, normal action noise 0.1, policy_delay 2, target noise 0.2 clipped at
  0.5; SAC SB3's defaults (net 256x256, lr 3e-4, batch 256, ent_coef auto), buffer 1M,
  gamma 0.99, tau 0.005. A speed check, not a learning run: 5,000 steps of which the first
  1,000 are uniform random (``--learning-starts``; the zoo's 10,000 would be all random in a
  short run), then one update a step; the greedy evaluation is one episode (1,000 steps).
- ``ppo-cartpole``, ``a2c-cartpole``: rl-zoo's CartPole-v1 entries of ppo.yml and a2c.yml, 8
  envs, in rlkit's Python loop (its presets) and in SB3: benchmarks/compare_sb3_onpolicy.py;
- ``sac-compiled``: the preset ``sac/Pendulum-v1`` in rlkit's compiled loop on
  ``rlkit/Pendulum-v1`` (one XLA program; compile timed apart) against SB3's ``sac`` run.

Every run's training is timed in phases (benchmarks/phase_timer.py): the random steps, the
learning steps, and the learning steps after the first 100 (``steady``: without the first
update's compile or warm-up); inside the steady phase, milliseconds a step in the
environment's ``step``, in acting (rlkit ``agent.act``; SB3 ``_sample_action``), in the
update (rlkit ``agent.update``: replay sampling, the compiled update, the acting copy's
refresh; SB3 ``train``: sampling and the update) and the rest of the loop. Both libraries
make their first update in the step after ``learning_starts`` steps: rlkit updates *at* its
``learning_starts`` step, SB3 *after* it, so rlkit runs with one more (as for
``ddpg-episode``).

SB3 runs in its own virtual environment, never rlkit's (a peer is not a dependency of rlkit):
``--sb3-venv`` (default ``$RLKIT_SB3_VENV``, else /work/venv-sb3), made once with

    python3.11 -m venv /work/venv-sb3
    /work/venv-sb3/bin/pip install torch==2.13.0 stable-baselines3 "gymnasium[mujoco]==1.4.*"

(measured with torch 2.13.0+cpu, stable-baselines3 2.9.2, gymnasium 1.4.0, mujoco 4.0.0).
rlkit runs in this interpreter. Each run is a fresh process of its interpreter.
``--tf-threads`` sets rlkit's TensorFlow threads (intra- and inter-op; 0: TF's default, all
cores) and ``--torch-threads`` SB3's; given the same list, each rlkit row is compared with
the SB3 row of its thread count. Each run also prints its process CPU seconds over its
training seconds (1.0: one core busy). ``--omp-passive`` sets ``OMP_WAIT_POLICY=PASSIVE`` in
every run: PyTorch's OpenMP threads then sleep while they wait instead of spinning, which on
a 2-core machine loaded by other jobs keeps two torch threads from collapsing (SB3's SAC
update on HalfCheetah at load 7: 843 ms with two spinning threads, 29.5 ms passive, 24-43 ms
on one thread); it changes no arithmetic, and TensorFlow does not use OpenMP.

    python -m benchmarks.compare_sb3 --algo dqn --reps 3 --torch-threads 1,2
    python -m benchmarks.compare_sb3 --algo ddpg --reps 1 --torch-threads 2
    python -m benchmarks.compare_sb3 --algo ddpg-episode --reps 1 --torch-threads 1,2
    python -m benchmarks.compare_sb3 --algo sac --reps 1 --torch-threads 1,2
    python -m benchmarks.compare_sb3 --algo sac-lunar --reps 1 --torch-threads 1
    python -m benchmarks.compare_sb3 --algo td3-halfcheetah --reps 3 --threads 1,2
    python -m benchmarks.compare_sb3 --algo sac-halfcheetah --reps 3 --threads 1,2
    python -m benchmarks.compare_sb3 --algo sac-compiled --steps 5000 --reps 2 --threads 1,2
    python -m benchmarks.compare_sb3 --algo ppo-cartpole,a2c-cartpole --reps 3 --threads 1,2 \
        --omp-passive

Each run's line ends with the 1-minute load average at its end: on a machine shared with
other jobs the figures are the machine's as much as the agents' (docs/sac.md: two torch
threads on two busy cores ran SAC's update over 10x slower than one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.compare_sb3_onpolicy import STEPS as ONPOLICY_STEPS
from benchmarks.phase_timer import (
    WARM_STEPS,
    PhaseTimer,
    common_phase,
    cpu_seconds,
    marks,
    phases,
    ratios,
    split_line,
)

ROOT = Path(__file__).resolve().parent.parent
#: each algorithm's default step count (--steps overrides it)
STEPS = {"dqn": 50_000, "ddpg": 20_000, "ddpg-episode": 20_000, "sac": 20_000,
         "sac-lunar": 20_000, "td3-halfcheetah": 5_000, "sac-halfcheetah": 5_000,
         "sac-compiled": 20_000, **ONPOLICY_STEPS}  # fmt: skip
#: the SAC benchmarks' environments
SAC_ENVS = {"sac": "Pendulum-v1", "sac-lunar": "LunarLanderContinuous-v3"}
#: the HalfCheetah speed checks: SB3's learning_starts by default (--learning-starts)
HALFCHEETAH = {"td3-halfcheetah": 1_000, "sac-halfcheetah": 1_000}
MAKE_SB3 = (
    "python3.11 -m venv {venv} && {venv}/bin/pip install torch==2.13.0 stable-baselines3 "
    '"gymnasium[mujoco]==1.4.*"'
)


def run_sb3(*args) -> dict:
    """SB3's run (:func:`benchmarks.compare_sb3_peer.run_sb3`, in SB3's venv)."""
    from benchmarks.compare_sb3_peer import run_sb3 as peer_run

    return peer_run(*args)


def _quiet_env() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed_learn(learn, timer, random_steps: int, steps: int, warm: int = WARM_STEPS) -> dict:
    """Run ``learn()`` under ``timer`` (its marks set); the run's seconds, steps/s, CPU
    seconds over wall seconds and its phases (:func:`benchmarks.phase_timer.phases`)."""
    cpu = cpu_seconds()
    timer.start()
    learn()
    timer.stop()
    cpu = cpu_seconds() - cpu
    seconds = timer.snapshots["end"][0] - timer.snapshots["start"][0]
    whole = {"seconds": seconds, "steps": steps, "sps": steps / seconds,
             "cpu_ms": cpu / steps * 1000}  # fmt: skip
    return {"seconds": seconds, "sps": steps / seconds, "cpu_per_wall": cpu / seconds,
            "phases": {**phases(timer, random_steps, steps, warm), "whole": whole},
            "first_update_s": timer.first_call.get("update", 0.0)}  # fmt: skip


def run_rlkit(algo: str, seed: int, steps: int, tf_threads: int = 0,
              learning_starts: int | None = None) -> dict:  # fmt: skip
    _quiet_env()
    if tf_threads:  # before TensorFlow starts
        os.environ["TF_NUM_INTRAOP_THREADS"] = os.environ["TF_NUM_INTEROP_THREADS"] = str(
            tf_threads
        )
    import gymnasium as gym
    import tensorflow as tf

    import rlkit
    from rlkit.config import presets

    if tf_threads:
        tf.config.threading.set_intra_op_parallelism_threads(tf_threads)
        tf.config.threading.set_inter_op_parallelism_threads(tf_threads)
    if algo == "sac-compiled":
        return run_rlkit_compiled(seed, steps)
    if algo in ONPOLICY_STEPS:
        from benchmarks.compare_sb3_onpolicy import run_rlkit_onpolicy

        return run_rlkit_onpolicy(algo, seed, steps)
    episodes = 10
    if algo == "dqn":
        env_id = "CartPole-v1"
        env = gym.make(env_id)
        agent = rlkit.agents.DQN.from_env(
            env, seed=seed, learning_rate=2.3e-3, batch_size=64, buffer_size=100_000,
            learning_starts=1000, gamma=0.99, target_update=10, train_freq=256,
            gradient_steps=128, eps_start=1.0, eps_end=0.04, eps_anneal_steps=8000,
            hidden_sizes=(256, 256), loss="huber", reduction="mean", max_grad_norm=10.0,
            double_dqn=False, learning_rate_end=-1.0, init="torch",
        )  # fmt: skip
    elif algo in HALFCHEETAH:
        env_id, episodes = "HalfCheetah-v5", 1
        env = gym.make(env_id)
        agent_name, preset = (
            ("ddpg", "HalfCheetah-v5-td3") if algo.startswith("td3") else ("sac", env_id)
        )
        settings = dict(presets.lookup(agent_name, preset).agent_config)
        # SB3 updates after its learning_starts-th step, rlkit at it: one more for rlkit
        settings["learning_starts"] = (learning_starts or HALFCHEETAH[algo]) + 1
        cls = rlkit.agents.DDPG if agent_name == "ddpg" else rlkit.agents.SAC
        agent = cls.from_env(env, seed=seed, **settings)
    elif algo in SAC_ENVS:
        env_id = SAC_ENVS[algo]
        env = gym.make(env_id)
        agent = rlkit.agents.SAC.from_env(env, seed=seed, **sac_preset(env_id, steps))
    else:
        env_id = "Pendulum-v1"
        env = gym.make(env_id)
        schedule = DDPG_EPISODE_RLKIT if algo == "ddpg-episode" else {}
        agent = rlkit.agents.DDPG.from_env(env, seed=seed, **{**DDPG_RLKIT, **schedule})
    cfg = agent.config
    random_steps = max(cfg.learning_starts, cfg.batch_size) - 1  # steps before the first update
    timer = PhaseTimer(marks(random_steps, steps))
    timer.wrap(env, "step", "env")
    timer.wrap(agent, "act", "act")
    timer.wrap(agent, "update", "update")

    def learn() -> None:
        rlkit.train(agent, env, steps=steps, seed=seed, callback=lambda n, *_: timer.at_step(n))

    result = _timed_learn(learn, timer, random_steps, steps)
    mean, std = rlkit.evaluate(agent, gym.make(env_id), episodes=episodes, seed=seed + 10_000)
    threads = (tf.config.threading.get_intra_op_parallelism_threads(),
               tf.config.threading.get_inter_op_parallelism_threads())  # fmt: skip
    return {**result, "eval": mean, "eval_std": std, "rss_mb": _peak_rss_mb(),
            "updates": int(agent.num_updates), "threads": "tf {}/{}".format(*threads)}  # fmt: skip


def run_rlkit_compiled(seed: int, steps: int) -> dict:
    """rlkit's preset ``sac/Pendulum-v1`` in the compiled loop on ``rlkit/Pendulum-v1`` (acting,
    the environment, the replay and the updates in one XLA program): its compile timed apart,
    then ``steps`` steps; the greedy evaluation on gymnasium's Pendulum-v1."""
    import gymnasium as gym
    import tensorflow as tf

    import rlkit
    from rlkit.run import experiment

    plan = experiment.plan("sac", "rlkit/Pendulum-v1", steps=steps, seed=seed, eval_every=0,
                           checkpoint_every=0)  # fmt: skip
    trainer = experiment.start(plan, "runs", tensorboard=False, loop="compiled")
    try:
        compile_seconds = trainer.compile()
        cpu, start = cpu_seconds(), time.perf_counter()
        trainer.run(steps)
        seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    finally:
        trainer.close()
    agent = trainer.agent
    mean, std = rlkit.evaluate(agent, gym.make("Pendulum-v1"), episodes=10, seed=seed + 10_000)
    threads = (tf.config.threading.get_intra_op_parallelism_threads(),
               tf.config.threading.get_inter_op_parallelism_threads())  # fmt: skip
    whole = {"seconds": seconds, "steps": steps, "sps": steps / seconds,
             "cpu_ms": cpu / steps * 1000}  # fmt: skip
    return {"seconds": seconds, "sps": steps / seconds, "cpu_per_wall": cpu / seconds,
            "phases": {"whole": whole}, "first_update_s": compile_seconds, "eval": mean,
            "eval_std": std, "rss_mb": _peak_rss_mb(), "updates": int(agent.num_updates),
            "threads": "tf {}/{}, compiled loop".format(*threads)}  # fmt: skip


def sac_preset(env_id: str, steps: int) -> dict:
    """rlkit's shipped SAC preset for ``env_id`` as keyword arguments, its ``lin_`` schedule
    (``lr_anneal_fraction``, a share of the run the run's plan resolves) given as
    ``lr_anneal_steps``: the ``steps`` after learning_starts."""
    from rlkit.config import presets

    settings = dict(presets.lookup("sac", env_id).agent_config)
    if settings.pop("lr_anneal_fraction", 0) > 0:
        settings["lr_anneal_steps"] = max(steps - settings.get("learning_starts", 100), 1)
    return settings


# rlkit's names for rl-zoo's DDPG settings (see docs/ddpg.md)
DDPG_RLKIT = dict(
    gamma=0.98, buffer_size=200_000, learning_starts=10_000, noise="gaussian", noise_scale=0.1,
    actor_learning_rate=1e-3, critic_learning_rate=1e-3, actor_hidden_sizes=(400, 300),
    critic_hidden_sizes=(400, 300), batch_size=256, tau=0.005, train_freq=1, gradient_steps=1,
)  # fmt: skip
# rl-zoo's per-episode schedule on Pendulum's fixed 200-step episodes
DDPG_EPISODE_RLKIT = dict(train_freq=200, gradient_steps=200, learning_starts=10_001)


#: a child's program: one of this module's run functions, its result as the last line
CHILD = (
    "import json, sys; sys.path.insert(0, {root!r}); "
    "from benchmarks.compare_sb3 import {fn}; print(json.dumps({fn}(*{args!r})))"
)


def in_subprocess(python: str, fn: str, *args, env: dict[str, str] | None = None) -> dict:
    """``fn(*args)`` in a fresh process of ``python`` (with ``env`` added to its environment
    variables), run in a scratch folder (MuJoCo writes a log file where it runs); its
    returned dict."""
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [python, "-c", CHILD.format(root=str(ROOT), fn=fn, args=args)],
            capture_output=True, text=True, cwd=scratch, env={**os.environ, **(env or {})},
        )  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"{python} {fn}{args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def parse_threads(text: str) -> list[int]:
    """``"1,2"`` -> [1, 2]; exits 2 with one line on anything but counts >= 0."""
    try:
        threads = [int(t) for t in text.split(",")]
    except ValueError:
        threads = [-1]
    if any(t < 0 for t in threads):
        print(f"compare_sb3: error: thread counts are whole numbers >= 0, got {text!r}",
              file=sys.stderr)  # fmt: skip
        sys.exit(2)
    return threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algo", default="dqn", help=f"comma-separated, of {', '.join(STEPS)}"
                        ", or all")  # fmt: skip
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--torch-threads", default="1,2", help="SB3 thread settings to run")
    parser.add_argument("--tf-threads", default="0", help="rlkit's TF threads (0: TF default)")
    parser.add_argument("--threads", help="both --torch-threads and --tf-threads")
    parser.add_argument("--steps", type=int, help="override the step count (quick checks)")
    parser.add_argument("--learning-starts", type=int, help="HalfCheetah's (SB3's count)")
    parser.add_argument("--omp-passive", action="store_true",
                        help="OMP_WAIT_POLICY=PASSIVE in every run (torch's OpenMP threads "
                        "sleep instead of spinning: see the docstring)")  # fmt: skip
    parser.add_argument("--sb3-venv", default=os.environ.get("RLKIT_SB3_VENV", "/work/venv-sb3"))
    args = parser.parse_args()
    torch_threads = parse_threads(args.threads or args.torch_threads)
    tf_threads = parse_threads(args.threads or args.tf_threads)
    algos = list(STEPS) if args.algo == "all" else args.algo.split(",")
    unknown = [a for a in algos if a not in STEPS]
    if unknown:
        print(f"compare_sb3: error: unknown --algo {unknown[0]!r}; one of {', '.join(STEPS)}, "
              "or all", file=sys.stderr)  # fmt: skip
        sys.exit(2)
    sb3_python = Path(args.sb3_venv) / "bin" / "python"
    if not sb3_python.is_file():
        print(f"compare_sb3: error: {sb3_python} is missing; make SB3's venv with: "
              f"{MAKE_SB3.format(venv=args.sb3_venv)}", file=sys.stderr)  # fmt: skip
        sys.exit(2)
    omp = {"OMP_WAIT_POLICY": "PASSIVE"} if args.omp_passive else {}
    print(f"rlkit: TF threads {tf_threads} (0 = TF's default: all {os.cpu_count()} cores); "
          f"SB3 ({sb3_python}): torch threads {torch_threads}; "
          f"{omp or 'OMP_WAIT_POLICY unset'}; load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    summary = {}
    for algo in algos:
        steps = args.steps or STEPS[algo]
        extra = (args.learning_starts,) if algo in HALFCHEETAH else ()
        rows: dict[str, list[dict]] = {f"rlkit-tf{t}": [] for t in tf_threads}
        rows |= {f"sb3-torch{t}": [] for t in torch_threads}
        for rep in range(args.reps):
            order = list(rows) if rep % 2 == 0 else list(reversed(rows))
            for name in order:
                lib, kind = name.split("-")
                threads = int(kind.removeprefix("tf").removeprefix("torch"))
                python = sys.executable if lib == "rlkit" else str(sb3_python)
                fn = f"run_{lib}"
                result = in_subprocess(python, fn, algo, rep, steps, threads, *extra, env=omp)
                result["load"] = os.getloadavg()[0]  # other jobs on the machine show here
                rows[name].append(result)
                print(f"{algo} rep {rep} {name:<12} {result['seconds']:7.1f} s "
                      f"{result['sps']:7.1f} steps/s  eval {result['eval']:8.1f}  "
                      f"{result['updates']} updates, CPU/wall {result['cpu_per_wall']:.2f}, "
                      f"RSS {result['rss_mb']:.0f} MB ({result['threads']}; load "
                      f"{result['load']:.2f} at its end)\n    {split_line(result)}",
                      flush=True)  # fmt: skip
        print(f"\n{algo}: medians over {args.reps} repetitions, {steps} steps; load average "
              f"{os.getloadavg()[0]:.2f}")  # fmt: skip
        summary[algo] = rows
        for name, results in rows.items():
            sps = statistics.median(r["sps"] for r in results)
            phase = common_phase(rows)
            learn = statistics.median(r["phases"][phase]["sps"] for r in results)
            cpu = statistics.median(r["phases"][phase]["cpu_ms"] for r in results)
            wall = statistics.median(r["seconds"] for r in results)
            ev = statistics.median(r["eval"] for r in results)
            print(f"  {name:<12} {wall:8.1f} s {sps:8.1f} steps/s, {phase} {learn:7.1f} "
                  f"steps/s, CPU {cpu:6.2f} ms/step  eval {ev:8.1f}"
                  f"{ratios(name, rows, phase)}")  # fmt: skip
    print(json.dumps({a: {n: [r["sps"] for r in rs] for n, rs in v.items()}
                      for a, v in summary.items()}))  # fmt: skip


if __name__ == "__main__":
    main()
