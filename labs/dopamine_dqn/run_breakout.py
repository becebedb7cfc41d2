"""Dopamine 4.1.2's legacy-TensorFlow DQN (its published baseline's agent) on Breakout.

Runs Dopamine's own ``dopamine.tf.agents.dqn.dqn_agent.DQNAgent`` with its own ``dqn.gin``
(copied verbatim beside this file) through Dopamine's own ``run_experiment.TrainRunner``
(training phases only: the baseline curves are training returns), on Breakout emulated by
ale-py 0.12 (``ale_shim.py``: BreakoutNoFrameskip-v0's semantics under Dopamine's
AtariPreprocessing). One CPU thread, no GPU. The Runner checkpoints after every iteration
(250k agent steps) and resumes from BASE_DIR's newest checkpoint when started again (the
iteration that was in progress is run again from its start).

Every game is appended to BASE_DIR/metrics.csv as it ends (rlkit's columns, see
to_metrics.py), so ``python -m benchmarks.atari_curve BASE_DIR --lives 1`` reads the run at any
time; at start-up metrics.csv is rebuilt from Dopamine's own log of the completed
iterations.

Run it with the venv of README.md (Dopamine is no dependency of rlkit's):

    nice -n 5 ../dopamine-venv/bin/python labs/dopamine_dqn/run_breakout.py \
        --seed 0 --base-dir runs/dopamine-breakout-seed0 --iterations 5
"""

from __future__ import annotations

import os

# one thread everywhere, set before TensorFlow, NumPy's BLAS or OpenCV are loaded
for _var in (
    "TF_NUM_INTRAOP_THREADS",
    "TF_NUM_INTEROP_THREADS",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
):
    os.environ[_var] = "1"
os.environ["CUDA_VISIBLE_DEVICES"] = ""  # no GPU
# Dopamine's TF agents are written for Keras 2: tf.keras must be tf-keras, not Keras 3
os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import to_metrics  # noqa: E402

GIN_FILE = HERE / "dqn.gin"


def import_dopamine():
    """Imports Dopamine 4.1.2's modules, working around two packaging faults of its wheel:

    * ``dopamine.discrete_domains.atari_lib`` imports ``baselines.common.atari_wrappers``
      (OpenAI baselines, not among dopamine-rl's requirements) at module level, but uses it
      only for ``create_atari_environment(use_ppo_preprocessing=True)``, which this never
      calls: an empty stand-in module is registered when baselines is not installed;
    * ``run_experiment`` imports Dopamine's JAX agents as well as TensorFlow; jaxlib 0.4.35
      and tensorflow 2.21 both register ``xla/xla_data.proto`` with protobuf, which aborts
      the process when TensorFlow is imported first and works when jax is: jax is imported
      first (the TF agent never uses it);
    * ``dqn.gin`` imports ``gin.tf.external_configurables`` (to bind
      ``tf.train.RMSPropOptimizer``, i.e. tf.compat.v1's), and ``gin.tf`` defines a hook class
      on ``tf.estimator.SessionRunHook``; TensorFlow 2.16+ has no ``tf.estimator``: it is
      given one holding ``tf.compat.v1.train.SessionRunHook``, the very class it aliased.
    """
    try:
        import baselines.common.atari_wrappers  # noqa: F401
    except ImportError:
        for name in ("baselines", "baselines.common", "baselines.common.atari_wrappers"):
            sys.modules[name] = types.ModuleType(name)
        sys.modules["baselines"].common = sys.modules["baselines.common"]
        sys.modules["baselines.common"].atari_wrappers = sys.modules[
            "baselines.common.atari_wrappers"
        ]
    import jax  # noqa: F401  (before tensorflow, see above)
    import tensorflow as tf

    if not hasattr(tf, "estimator"):
        tf.estimator = types.SimpleNamespace(SessionRunHook=tf.compat.v1.train.SessionRunHook)
    from dopamine.discrete_domains import run_experiment
    from dopamine.tf.agents.dqn import dqn_agent

    return tf, run_experiment, dqn_agent


def make_runner_class(run_experiment, tf):
    class LoggedTrainRunner(run_experiment.TrainRunner):
        """Dopamine's TrainRunner, unchanged, plus one metrics.csv row per game as it ends
        (and a progress line every 10k agent steps). The rows are taken from the very
        ``statistics.append`` calls with which Dopamine's ``_run_one_phase`` records each
        episode's length and return."""

        def __init__(self, base_dir, create_agent_fn, create_environment_fn, seed):
            super().__init__(base_dir, create_agent_fn, create_environment_fn)
            self._run_dir = Path(base_dir)
            self._seed = seed
            # metrics.csv := the completed iterations from Dopamine's own (checkpointed) log
            _, self._games = to_metrics.convert(
                self._run_dir, data=self._logger.data, keep_partial=False
            )
            self._total = sum(
                sum(int(n) for n in v.get("train_episode_lengths", []))
                for k, v in self._logger.data.items()
                if k.startswith("iteration_")
            )
            if self._start_iteration > 0:
                # a resumed run: fresh RNG streams, not a replay of iteration 0's
                import numpy as np

                derived = np.random.SeedSequence([seed, self._start_iteration])
                ale_seed, np_seed, py_seed = derived.generate_state(3)
                self._environment.environment.seed(int(ale_seed) % 2**31)
                np.random.seed(int(np_seed))
                random.seed(int(py_seed))
                print(
                    f"resumed at iteration {self._start_iteration} "
                    f"({self._total:,} agent steps, {self._games} games done)",
                    flush=True,
                )

        def _run_one_iteration(self, iteration):
            self._iteration = iteration
            self._inside = 0
            self._started = time.time()
            self._next_report = 10_000
            self._recent = []
            return super()._run_one_iteration(iteration)

        def _run_train_phase(self, statistics):
            return super()._run_train_phase(_GameLog(self, statistics))

        def _game_ended(self, length, score):
            self._inside += int(length)
            self._total += int(length)
            self._games += 1
            row = to_metrics.game_row(
                self._iteration,
                self._training_steps,
                self._inside,
                self._total,
                self._games,
                score,
                length,
            )
            with to_metrics.locked(self._run_dir):
                with open(self._run_dir / "metrics.csv", "a", newline="") as f:
                    import csv

                    csv.DictWriter(f, to_metrics.COLUMNS).writerow(row)
            self._recent = (self._recent + [float(score)])[-50:]
            if self._inside >= self._next_report:
                self._next_report += 10_000
                agent = self._agent
                eps = agent.epsilon_fn(
                    agent.epsilon_decay_period,
                    agent.training_steps,
                    agent.min_replay_history,
                    agent.epsilon_train,
                )
                rate = self._inside / (time.time() - self._started)
                print(
                    f"iteration {self._iteration}: {self._inside:,} steps "
                    f"(total {self._total:,}), {self._games} games, last 50 mean "
                    f"{sum(self._recent) / len(self._recent):.2f}, epsilon {eps:.3f}, "
                    f"{rate:.0f} steps/s",
                    flush=True,
                )

    class _GameLog:
        """Forwards to Dopamine's IterationStatistics; sees each episode's record."""

        def __init__(self, runner, statistics):
            self._runner, self._statistics = runner, statistics

        def append(self, data_pairs):
            if "train_episode_lengths" in data_pairs:
                self._runner._game_ended(
                    data_pairs["train_episode_lengths"], data_pairs["train_episode_returns"]
                )
            self._statistics.append(data_pairs)

        def __getattr__(self, name):
            return getattr(self._statistics, name)

    return LoggedTrainRunner


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--base-dir", type=Path, required=True)
    parser.add_argument(
        "--iterations", type=int, default=5, help="Runner.num_iterations (of 250k agent steps each)"
    )
    parser.add_argument("--game", default="breakout", help="ale-py ROM id")
    parser.add_argument(
        "--gin-binding",
        action="append",
        default=[],
        help="extra gin binding, after dqn.gin's (e.g. for a smoke test)",
    )
    args = parser.parse_args()

    if os.nice(0) < 5:
        os.nice(5 - os.nice(0))

    tf, run_experiment, dqn_agent = import_dopamine()
    import cv2
    import gin
    import numpy as np
    from absl import logging
    from ale_shim import create_breakout_environment

    cv2.setNumThreads(1)
    logging.set_verbosity(logging.INFO)
    tf.compat.v1.disable_v2_behavior()  # as dopamine/discrete_domains/train.py

    bindings = [
        'DQNAgent.tf_device = "/cpu:*"',  # dqn.gin: "use '/cpu:*' for non-GPU version"
        f"Runner.num_iterations = {args.iterations}",
        "Runner.fine_grained_print_to_console = False",  # a progress line per 10k instead
        f'atari_lib.create_atari_environment.game_name = "{args.game.title()}"',  # record
        *args.gin_binding,
    ]
    run_experiment.load_gin_configs([str(GIN_FILE)], bindings)

    random.seed(args.seed)
    np.random.seed(args.seed)
    tf.compat.v1.set_random_seed(args.seed)

    def create_agent(sess, environment, summary_writer=None):
        # run_experiment.create_agent(agent_name="dqn", debug_mode=False), with a
        # one-thread session instead of DQNAgent's default one (int(): gymnasium's n is np.int64)
        del sess, summary_writer
        config = tf.compat.v1.ConfigProto(
            allow_soft_placement=True,
            intra_op_parallelism_threads=1,
            inter_op_parallelism_threads=1,
        )
        session = tf.compat.v1.Session("", config=config)
        return dqn_agent.DQNAgent(
            session, num_actions=int(environment.action_space.n), summary_writer=None
        )

    base_dir = args.base_dir
    base_dir.mkdir(parents=True, exist_ok=True)
    training_steps = gin.query_parameter("Runner.training_steps")
    reference = base_dir / "reference.json"
    if not reference.is_file():
        versions = {
            p: metadata.version(p)
            for p in (
                "dopamine-rl",
                "ale-py",
                "tensorflow",
                "tf-keras",
                "jax",
                "gymnasium",
                "gym",
                "numpy",
                "opencv-python-headless",
                "gin-config",
            )
        }
        reference.write_text(
            json.dumps(
                {
                    "library": "dopamine 4.1.2 (legacy TF DQNAgent)",
                    "env": f"ALE/{args.game.title()}-v5",
                    "emulator": f"ale_py.env.AtariEnv('{args.game}', frameskip=1, "
                    "repeat_action_probability=0.25, full_action_space=False, no frame "
                    "cap) = NoFrameskip-v0 semantics, under Dopamine's AtariPreprocessing "
                    "(frame_skip 4, max-pool of last 2 frames, 84x84, no life-loss "
                    "terminal); games capped at 27000 agent steps by the Runner",
                    "seed": args.seed,
                    "training_steps": training_steps,
                    "schedule": {
                        "eps_end": gin.query_parameter("DQNAgent.epsilon_train"),
                        "eps_anneal_steps": gin.query_parameter("DQNAgent.epsilon_decay_period"),
                        "learning_starts": gin.query_parameter("DQNAgent.min_replay_history"),
                        "target_update": gin.query_parameter("DQNAgent.target_update_period"),
                    },
                    "gin_file": "labs/dopamine_dqn/dqn.gin (google/dopamine d6a6fb0, v4.1.2)",
                    "gin_bindings": bindings,
                    "versions": versions,
                },
                indent=2,
            )
            + "\n"
        )

    runner_class = make_runner_class(run_experiment, tf)
    runner = runner_class(
        str(base_dir),
        create_agent,
        functools.partial(create_breakout_environment, args.seed, args.game),
        args.seed,
    )
    print(
        f"Dopamine DQN on {args.game}, seed {args.seed}: iterations "
        f"{runner._start_iteration}..{args.iterations - 1} of {training_steps:,} agent "
        f"steps -> {base_dir}",
        flush=True,
    )
    runner.run_experiment()
    print("done", flush=True)


if __name__ == "__main__":
    main()
