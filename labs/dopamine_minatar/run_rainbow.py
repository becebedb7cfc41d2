"""Dopamine 4.1.2's own JAX Rainbow on a MinAtar game, with its own MinAtar gin.

Runs ``dopamine.jax.agents.rainbow.rainbow_agent.JaxRainbowAgent`` built by Dopamine's own
``run_experiment.create_agent`` from Dopamine's own ``rainbow_<game>.gin`` (copied verbatim
beside this file from google/dopamine d6a6fb0, the commit of version 4.1.2) through
Dopamine's own ``run_experiment.TrainRunner`` (the gin's ``create_runner.schedule =
'continuous_train'``) on Dopamine's own ``minatar_env.create_minatar_env``. The Runner
checkpoints after every iteration and resumes from BASE_DIR's newest checkpoint when started
again (an iteration that was cut off is run again from its start).

Note: Dopamine's JAX agents sample their replay **uniformly** whatever the gin says
(``JaxDQNAgent.__init__`` overwrites ``_replay_scheme`` with ``'uniform'``; Dopamine issue
#230): this is the Rainbow Dopamine runs, not the prioritized one its gin asks for.

Every episode is appended to BASE_DIR/metrics.csv as it ends (rlkit's columns, see
to_metrics.py); at start-up metrics.csv is rebuilt from Dopamine's own log of the completed
iterations. Run it with the venv of README.md (Dopamine is no dependency of rlkit's):

    nice -n 19 ../dopamine-venv/bin/python labs/dopamine_minatar/run_rainbow.py \
        --game breakout --seed 0 --base-dir /work/bench/dopamine/rainbow-breakout-seed0 \
        --steps 2000000
"""

from __future__ import annotations

import os
import sys

if "--one-thread" in sys.argv:  # before jax / TensorFlow are loaded
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"
    os.environ["TF_NUM_INTRAOP_THREADS"] = os.environ["TF_NUM_INTEROP_THREADS"] = "1"
    os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
os.environ["CUDA_VISIBLE_DEVICES"] = ""  # no GPU
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["TF_USE_LEGACY_KERAS"] = "1"  # dopamine-rl's TF code is Keras 2 (tf-keras)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import argparse  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import to_metrics  # noqa: E402

GINS = {game: HERE / f"rainbow_{game}.gin" for game in to_metrics.ENV_IDS}
VERSIONS = ("dopamine-rl", "jax", "jaxlib", "flax", "optax", "minatar", "numpy", "gin-config")


def import_dopamine() -> types.SimpleNamespace:
    """Imports Dopamine 4.1.2's modules around two packaging faults of its wheel (as
    labs/dopamine_dqn/run_breakout.py): ``atari_lib`` imports OpenAI baselines (no
    requirement of dopamine-rl's) at module level, used only for PPO preprocessing: an empty
    stand-in is registered; jaxlib 0.4.35 and TensorFlow 2.21 both register
    ``xla/xla_data.proto``, which aborts the process if TensorFlow is imported first: jax is."""
    try:
        import baselines.common.atari_wrappers  # noqa: F401
    except ImportError:
        for name in ("baselines", "baselines.common", "baselines.common.atari_wrappers"):
            sys.modules[name] = types.ModuleType(name)
        sys.modules["baselines"].common = sys.modules["baselines.common"]
        sys.modules["baselines.common"].atari_wrappers = sys.modules[
            "baselines.common.atari_wrappers"
        ]
    import jax  # noqa: F401  (before TensorFlow, see above)
    from dopamine.discrete_domains import run_experiment

    return types.SimpleNamespace(jax=jax, run_experiment=run_experiment)


def make_runner_class(run_experiment):
    class LoggedTrainRunner(run_experiment.TrainRunner):
        """Dopamine's TrainRunner, unchanged, plus one metrics.csv row per episode as it
        ends and a progress line every ``report_every`` steps. The rows come from the very
        ``statistics.append`` calls with which Dopamine's ``_run_one_phase`` records each
        episode's length and return."""

        def __init__(self, base_dir, create_agent_fn, seed, report_every):
            super().__init__(base_dir, create_agent_fn)  # environment: the gin's
            self._run_dir = Path(base_dir)
            self._report_every = report_every
            # metrics.csv := the completed iterations, from Dopamine's own (checkpointed) log
            to_metrics.convert(self._run_dir, data=self._logger.data, keep_partial=False)
            logged = to_metrics.rows_from_log(self._logger.data)
            self._total = logged[-1]["step"] if logged else 0
            self._episodes = len(logged)
            import numpy as np

            derived = np.random.SeedSequence([seed, self._start_iteration])
            env_seed, agent_seed = (int(s) % 2**31 for s in derived.generate_state(2))
            # Dopamine's MinAtarEnv makes minatar.Environment unseeded: seed it here
            self._environment.env.seed(seed if self._start_iteration == 0 else env_seed)
            if self._start_iteration > 0:
                # a resumed run: fresh action-selection stream, not a replay of iteration 0's
                self._agent._rng = run_experiment.jax_dqn_agent.jax.random.PRNGKey(agent_seed)
                print(
                    f"resumed at iteration {self._start_iteration} "
                    f"({self._total:,} steps, {self._episodes} episodes done)",
                    flush=True,
                )

        def _run_one_iteration(self, iteration):
            self._iteration = iteration
            self._inside = 0
            self._started = time.time()
            self._next_report = self._report_every
            self._recent: list[float] = []
            return super()._run_one_iteration(iteration)

        def _run_train_phase(self, statistics):
            return super()._run_train_phase(_EpisodeLog(self, statistics))

        def _episode_ended(self, length, score):
            self._inside += int(length)
            self._total += int(length)
            self._episodes += 1
            row = to_metrics.episode_row(
                self._iteration, self._total, self._episodes, score, length
            )
            with to_metrics.locked(self._run_dir):
                with open(self._run_dir / "metrics.csv", "a", newline="") as f:
                    csv.DictWriter(f, to_metrics.COLUMNS).writerow(row)
            self._recent = (self._recent + [float(score)])[-100:]
            if self._inside >= self._next_report:
                self._next_report += self._report_every
                rate = self._inside / (time.time() - self._started)
                print(
                    f"iteration {self._iteration}: {self._inside:,} steps "
                    f"(total {self._total:,}), {self._episodes} episodes, last 100 mean "
                    f"{sum(self._recent) / len(self._recent):.2f}, training_steps "
                    f"{self._agent.training_steps:,}, {rate:.0f} steps/s",
                    flush=True,
                )

    class _EpisodeLog:
        """Forwards to Dopamine's IterationStatistics; sees each episode's record."""

        def __init__(self, runner, statistics):
            self._runner, self._statistics = runner, statistics

        def append(self, data_pairs):
            if "train_episode_lengths" in data_pairs:
                self._runner._episode_ended(
                    data_pairs["train_episode_lengths"], data_pairs["train_episode_returns"]
                )
            self._statistics.append(data_pairs)

        def __getattr__(self, name):
            return getattr(self._statistics, name)

    return LoggedTrainRunner


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GINS), default="breakout")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--base-dir", type=Path, required=True)
    parser.add_argument(
        "--steps",
        type=int,
        default=10_000_000,
        help="total agent steps: Runner.num_iterations = steps / iteration-steps (default: "
        "the gin's 10 x 1M)",
    )
    parser.add_argument(
        "--iteration-steps",
        type=int,
        default=1_000_000,
        help="Runner.training_steps (the gin's 1M); the Runner checkpoints after each",
    )
    parser.add_argument("--report-every", type=int, default=10_000, help="progress line period")
    parser.add_argument("--one-thread", action="store_true", help="XLA and TF on one thread")
    parser.add_argument(
        "--gin-binding", action="append", default=[], help="extra gin binding, after the gin's"
    )
    args = parser.parse_args()
    if args.steps % args.iteration_steps:
        parser.error("--steps must be a multiple of --iteration-steps")

    dopamine = import_dopamine()
    run_experiment = dopamine.run_experiment
    from absl import logging

    logging.set_verbosity(logging.WARNING)
    bindings = [
        # The gin sizes the replay with OutOfGraphPrioritizedReplayBuffer (the TF replay), which
        # the JAX agent does not use; 4.1.2's JAX ReplayBuffer and its sampler have no
        # defaults for these and fail without them (Dopamine's own Atari rainbow.gin binds
        # them): the MinAtar gin's own values, on the buffer the agent builds
        "ReplayBuffer.max_capacity = 100000",
        "ReplayBuffer.batch_size = 32",
        "PrioritizedSamplingDistribution.max_capacity = 100000",
        f"JaxRainbowAgent.seed = {args.seed}",  # unseeded (the clock) otherwise
        f"Runner.num_iterations = {args.steps // args.iteration_steps}",
        f"Runner.training_steps = {args.iteration_steps}",
        "Runner.fine_grained_print_to_console = False",  # a progress line instead
        *args.gin_binding,
    ]
    run_experiment.load_gin_configs([str(GINS[args.game])], bindings)

    base_dir = args.base_dir
    base_dir.mkdir(parents=True, exist_ok=True)
    reference = base_dir / "reference.json"
    if not reference.is_file():
        reference.write_text(
            json.dumps(
                {
                    "library": "dopamine 4.1.2 (JaxRainbowAgent, sampling uniform: issue #230)",
                    "game": args.game,
                    "env": to_metrics.ENV_IDS[args.game],
                    "seed": args.seed,
                    "total_steps": args.steps,
                    "iteration_steps": args.iteration_steps,
                    "gin_file": f"labs/dopamine_minatar/{GINS[args.game].name} "
                    "(google/dopamine d6a6fb0, v4.1.2)",
                    "gin_bindings": bindings,
                    "versions": {p: metadata.version(p) for p in VERSIONS},
                },
                indent=2,
            )
            + "\n"
        )
    to_metrics.write_config(base_dir, args.game, args.seed, args.steps)

    runner = make_runner_class(run_experiment)(
        str(base_dir), run_experiment.create_agent, args.seed, args.report_every
    )
    print(
        f"Dopamine JaxRainbowAgent on MinAtar {args.game}, seed {args.seed}: iterations "
        f"{runner._start_iteration}..{args.steps // args.iteration_steps - 1} of "
        f"{args.iteration_steps:,} steps -> {base_dir}",
        flush=True,
    )
    runner.run_experiment()
    print("done", flush=True)


if __name__ == "__main__":
    main()
