"""Does acting's numpy mirror of MinAtar's networks choose TensorFlow's greedy actions?

The mirror (:mod:`rlkit.networks.numpy_conv`) sums in another order than TensorFlow's
kernels, so its values may differ in the last bits; a greedy action can then differ only
where the best two actions' values are that close. This counts, on real MinAtar boards (all
five games, boards met by a random policy, sticky actions as training has them), for the
networks of the DQN, C51/Rainbow and QR-DQN MinAtar presets at several initialisations:
boards, the largest value difference numpy vs TensorFlow, the smallest gap between the best
two actions (TensorFlow's values), the boards whose gap is within that difference (where a
flip is possible), and the greedy actions that actually differ.

    OPENBLAS_CORETYPE=Haswell python -m labs.numpy_mirror_agreement --boards 2000 --seeds 3

The finding is in docs/dqn-family.md ("Acting without TensorFlow").
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

GAMES = ("Asterix", "Breakout", "Freeway", "Seaquest", "SpaceInvaders")
#: preset -> (per_action, hidden sizes, padding, init, head)
NETWORKS = {
    "dqn/minatar (valid, 128)": (1, [128], "valid", "torch", "scalar"),
    "rainbow/minatar (C51, same)": (51, [], "same", "glorot", "categorical"),
    "qrdqn/minatar (200, same)": (200, [], "same", "glorot", "quantile"),
}


def boards(game: str, count: int, seed: int):
    import numpy as np

    from rlkit.envs.make import make_env

    env = make_env(f"MinAtar/{game}-v0")
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    seen = []
    for _ in range(count):
        seen.append(obs)
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            obs, _ = env.reset()
    return np.stack(seen), int(env.action_space.n)


def main() -> None:
    import numpy as np

    from rlkit.agents.dqn.heads import CategoricalHead, QuantileHead, ScalarHead
    from rlkit.core.spaces import observation_format
    from rlkit.networks.q_network import QNetwork

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=2000, help="boards per game")
    parser.add_argument("--seeds", type=int, default=3, help="initialisations per network")
    args = parser.parse_args()
    heads = {"scalar": ScalarHead(), "categorical": CategoricalHead(51, -100.0, 100.0),
             "quantile": QuantileHead(200, 1.0)}  # fmt: skip
    print(f"{'network':30s} {'game':14s} {'boards':>7s} {'max |np - tf|':>14s} "
          f"{'min gap':>10s} {'gap <= diff':>11s} {'differ':>7s}")  # fmt: skip
    totals = {"boards": 0, "close": 0, "differ": 0}
    for game in GAMES:
        obs, actions = boards(game, args.boards, seed=0)
        import gymnasium as gym

        space = gym.spaces.Box(0, 1, obs.shape[1:], bool)
        fmt = observation_format(space, images=True)
        for name, (per_action, hidden, padding, init, head_name) in NETWORKS.items():
            head = heads[head_name]
            for seed in range(args.seeds):
                q = QNetwork(fmt, actions * per_action, hidden, seed=seed, init=init,
                             torso_kind="minatar", conv_padding=padding,
                             per_action=per_action)  # fmt: skip
                mine = head.acting(q.numpy_snapshot())(obs)
                theirs = head.acting(lambda x, q=q: q.model(x).numpy())(obs)
                diff = float(np.abs(mine - theirs).max())
                top2 = np.sort(theirs, axis=-1)[:, -2:]
                gap = top2[:, 1] - top2[:, 0]
                close = int((gap <= diff).sum())
                differ = int((mine.argmax(-1) != theirs.argmax(-1)).sum())
                totals["boards"] += len(obs)
                totals["close"] += close
                totals["differ"] += differ
                print(f"{name:30s} {game:14s} {len(obs):7d} {diff:14.3g} {gap.min():10.3g} "
                      f"{close:11d} {differ:7d}", flush=True)  # fmt: skip
    print(
        f"\nall: {totals['boards']} boards x networks, {totals['close']} with the best two "
        f"actions within the numpy/TF difference, {totals['differ']} greedy actions differ"
    )


if __name__ == "__main__":
    main()
