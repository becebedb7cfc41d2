"""rlkit's DQN under Dopamine's Atari protocol, to set against Dopamine's DQN baseline.

Dopamine's DQN (legacy TensorFlow, the agent of its published baseline curves) differs
from DQN3.0 in its schedules and its environment, not in its update (docs/atari.md: the
dqn3 update *is* Dopamine's). This trains the dqn3 preset with everything of Dopamine's
``dqn.gin``: epsilon 1 -> 0.01 over 250k agent steps after 20k, target copy every 8k,
sticky actions (0.25), whole games (a lost life is not terminal), no no-op starts; with
``--network dopamine`` also Dopamine's network ("same" padding, Glorot init). The run
folder reads like any other: ``benchmarks/atari_curve.py RUN_DIR --lives 1`` prints it
per Dopamine iteration next to Dopamine's curve (episodes are whole games here).

    python -m labs.atari_dopamine --steps 500000 --out runs/atari-dopamine-protocol
    python -m labs.atari_dopamine --resume RUN_DIR --steps 1250000   # go on (Ctrl-C
                                                        # stops a run with a checkpoint)

A resumed run goes on in the game it stopped in (rlkit.envs.resumable keeps the emulator).
"""

from __future__ import annotations

import argparse
import signal
import time
from pathlib import Path

DOPAMINE_SCHEDULE = {
    "eps_end": 0.01,
    "eps_anneal_steps": 250_000,
    "learning_starts": 20_000,
    "target_update": 8_000,
}
DOPAMINE_ENV = {"life_loss_terminal": False, "noop_max": 0, "repeat_action_probability": 0.25}
#: Dopamine's Nature network (legacy TF and JAX): "same" padding, Glorot-uniform kernels,
#: zero biases; DQN3.0's (the dqn3 preset's) pads the first convolution's input by one
#: pixel and starts from Torch7's init; "valid" pads nothing (SB3's, and the dqn3 preset's
#: before 2026-11-22: the runs in docs/atari.md)
NETWORKS = {
    "dqn3": {},
    "valid": {"conv_padding": "valid"},
    "dopamine": {"conv_padding": "same", "init": "glorot"},
}


def start_like_tf1_rmsprop(agent, slots: bool = True) -> None:
    """Dopamine's optimizer (``tf.compat.v1.train.RMSPropOptimizer``, centred) starts its mean
    square at 1 and adds epsilon 1e-5 inside the root, on the batch *mean* of the Huber
    gradient; rlkit's dqn3 update sums over the batch (B times the mean, B^2 times its
    square), so the same optimizer here starts at B^2 with epsilon 1e-5 B^2. A resumed run
    (``slots=False``) keeps its checkpoint's slots and gets the epsilon again."""
    import numpy as np

    optimizer = agent.pipeline.optimizer
    batch = agent.config.batch_size
    if slots:
        for velocity in optimizer._velocities:
            velocity.assign(np.full(velocity.shape, batch**2, np.float32))
    optimizer.epsilon = 1e-5 * batch**2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="ALE/Breakout-v5")
    parser.add_argument("--steps", type=int, default=1_250_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--network", choices=sorted(NETWORKS), default="dqn3")
    parser.add_argument(
        "--tf1-rmsprop",
        action="store_true",
        help="start RMSProp as Dopamine's tf.compat.v1 optimizer does: its mean square at 1 "
        "on Dopamine's batch-mean scale (B^2 on rlkit's summed gradient) and epsilon 1e-5 "
        "(1e-5 B^2 here); labs/dopamine_dqn/compare_update.py shows these are the only "
        "differences between the two updates",
    )
    parser.add_argument("--eval-every", type=int, default=250_000)
    parser.add_argument("--checkpoint-every", type=int, default=250_000)
    parser.add_argument("--out", type=Path, default=Path("runs/atari-dopamine-protocol"))
    parser.add_argument(
        "--resume", type=Path, metavar="RUN_DIR", help="continue this run to --steps"
    )
    args = parser.parse_args()

    from rlkit.agents import DQN
    from rlkit.config import presets
    from rlkit.core.errors import UsageError
    from rlkit.envs.atari import make_atari
    from rlkit.envs.resumable import resumable
    from rlkit.run.folder import RunFolder
    from rlkit.run.loop import Trainer
    from rlkit.run.resume import resume_trainer

    if args.resume:
        try:
            env_id = RunFolder.open(args.resume).read_config()[0].env
            trainer = resume_trainer(
                args.resume,
                lambda: make_atari(env_id, training=False, **DOPAMINE_ENV),
                lambda: resumable(make_atari(env_id, training=True, **DOPAMINE_ENV)),
                eval_every=args.eval_every,
                checkpoint_every=args.checkpoint_every,
            )
        except UsageError as exc:
            parser.error(str(exc))
        run_dir = args.resume
        if args.tf1_rmsprop:
            start_like_tf1_rmsprop(trainer.agent, slots=False)
        print(f"resuming {run_dir} at step {trainer.step:,} ({env_id}, Dopamine's protocol)")
    else:
        env = resumable(make_atari(args.env, training=True, **DOPAMINE_ENV))
        eval_env = make_atari(args.env, training=False, **DOPAMINE_ENV)
        preset = presets.lookup("dqn", "dqn3").agent_config
        config = {**preset, **DOPAMINE_SCHEDULE, **NETWORKS[args.network]}
        agent = DQN.from_env(env, seed=args.seed, **config)
        if args.tf1_rmsprop:
            start_like_tf1_rmsprop(agent)
        run_name = f"dqn-{args.env.replace('/', '_')}-{args.seed}-{time.strftime('%Y%m%d-%H%M%S')}"
        run_dir = args.out / run_name
        trainer = Trainer(
            agent,
            env,
            run_dir=run_dir,
            eval_env=eval_env,
            eval_every=args.eval_every,
            checkpoint_every=args.checkpoint_every,
        )
        optimizer = ", TF1's RMSProp start" if args.tf1_rmsprop else ""
        print(f"training dqn (dqn3 preset, Dopamine's schedule and environment, {args.network} "
              f"network{optimizer}) -> {run_dir}")  # fmt: skip
    signal.signal(signal.SIGINT, lambda *_: trainer.request_stop())  # stop with a checkpoint
    history = trainer.run(args.steps)
    print(f"{history.steps} steps in {history.seconds:.0f} s ({history.steps_per_second:.0f}/s)")


if __name__ == "__main__":
    main()
