"""A fingerprint of a short seeded PPO (and A2C) run in the Python loop: to show that a speed
change to the loop left its behaviour bit for bit as it was.

Each run trains the preset (``ppo/CartPole-v1``, ``a2c/CartPole-v1``) on 8 gymnasium
CartPole-v1 envs for ``--steps`` steps with one TensorFlow thread, and hashes (SHA-256)
every update's metrics (each float's exact bits), every episode's end step, return and
length, the final weights of both networks, the optimizer's variables and the final
rollout's arrays. Run it before and after a change, on the same machine, and compare the
lines::

    python -m labs.ppo_loop_fingerprint --steps 10240

(Bit for bit holds on one machine: numpy's BLAS kernels, chosen by CPU, round acting's
matrix products; tests/integration/test_pinned.py says more.)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
import sys


def fingerprint(agent_name: str, steps: int, seed: int = 0) -> tuple[str, int, int]:
    """``(sha256 hex, updates, episodes)`` of a ``steps``-step run of ``agent_name``'s
    CartPole-v1 preset (lr schedule over ``steps``) with ``seed``."""
    import numpy as np

    import rlkit
    from benchmarks.compare_sb3_onpolicy import rlkit_settings
    from rlkit.envs.make import make_vector_env

    num_envs, settings = rlkit_settings(f"{agent_name}-cartpole", steps)
    env = make_vector_env("CartPole-v1", num_envs)
    cls = rlkit.agents.PPO if agent_name == "ppo" else rlkit.agents.A2C
    agent = cls.from_env(env, seed=seed, **settings)
    history = rlkit.train(agent, env, steps=steps, seed=seed)
    digest = hashlib.sha256()
    for step, metrics in history.updates:
        digest.update(struct.pack("<q", int(step)))
        for key in sorted(metrics):
            digest.update(key.encode() + struct.pack("<d", float(metrics[key])))
    for step, ret, length in zip(history.episode_end_steps, history.episode_returns,
                                 history.episode_lengths, strict=True):  # fmt: skip
        digest.update(struct.pack("<qdq", int(step), float(ret), int(length)))
    for group in agent.checkpoint_variables().values():
        for v in group:
            digest.update(np.asarray(v.numpy()).tobytes())
    for v in agent.learner.pipeline.optimizer.variables:
        digest.update(np.asarray(v.numpy()).tobytes())
    for array in agent.rollout.state_dict().values():
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest(), len(history.updates), len(history.episode_returns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_240)
    parser.add_argument("--agents", default="ppo,a2c")
    args = parser.parse_args()
    if args.steps <= 0:
        print(f"ppo_loop_fingerprint: error: --steps must be > 0, got {args.steps}",
              file=sys.stderr)  # fmt: skip
        sys.exit(2)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    for name in args.agents.split(","):
        sha, updates, episodes = fingerprint(name, args.steps)
        print(f"{name} CartPole-v1 {args.steps} steps: {updates} updates, {episodes} episodes, "
              f"sha256 {sha}")  # fmt: skip


if __name__ == "__main__":
    main()
