"""Is rlkit's DQN update Dopamine's? Both agents on the same weights and the same minibatches.

Half 1 (Dopamine's venv) plays 4,000 Breakout steps through Dopamine's ``AtariPreprocessing``
on the lab's ``ale_shim`` (real frames; clipped rewards; game overs as terminals), builds
Dopamine 4.1.2's legacy-TF ``DQNAgent`` from ``dqn.gin`` (``tf_device = '/cpu:*'``) in a
one-thread session and runs ``--updates`` of its real train op (Huber loss averaged over the
batch, gin's ``tf.train.RMSPropOptimizer``) on fixed minibatches (28 uniform transitions, 2
rewarded, 2 terminal) fed into the replay's sampling tensors, with ``agent._sync_qt_ops``
after every ``--sync``-th update. It saves the initial online and (independently initialised)
target weights and, per update, the batch's online/target Q-values, the loss and gradients
(from ``minimize``'s own ``compute_gradients`` call), the weights and the ``rms``/``mg``
slots (big tensors through 65,536 fixed entries; whole at ``FULL_AT``, with the target and
slots at ``ANCHORS``).

Half 2 (rlkit's venv) builds rlkit's DQN as ``labs/atari_dopamine.py --network dopamine`` does
(dqn3 preset, Dopamine's schedule, "same" padding, Glorot), loads Dopamine's initial online
and target weights, and runs ``agent.learn`` on the same minibatches (``sync_target()`` where
Dopamine synced) in three variants: as is; with RMSprop's mean square starting at B^2 (TF1's
``rms`` slot starts at 1 and rlkit's gradient is the batch sum, B times Dopamine's mean); and
with that plus epsilon 1e-5 * B^2 (Dopamine's epsilon on the sum scale; rlkit's is 0.01).
Then one update from Dopamine's whole state (weights, target, slots) at each anchor.

Result (2026-11-24): Q-values, loss/B, gradient/B and target syncs agree to float32 (<1e-6
relative). rlkit's update departs from Dopamine's only in the optimizer: (1) TF1's mean
square starts at 1, so Dopamine's first updates are ~270x smaller than rlkit's (x87 at update
10, x13 at 100, x1.8 at 200), after 300 updates rlkit has moved 1.57x as far; (2) epsilon 0.01
vs 0.01024 (1e-5 * 32^2): steps up to 1.2% larger (1.1% at update 300). With both mimicked,
rlkit's trajectory equals Dopamine's to ~1e-5 relative for 150 updates, and one update from
Dopamine's state at 101/201/300 to <4e-5: rlkit's update is Dopamine's update.

From the repository root (about 4 minutes on one core; files in /tmp/compare_update):

    TF_CPP_MIN_LOG_LEVEL=3 PYTHONPATH=. taskset -c 0 ../dopamine-venv/bin/python \\
        labs/dopamine_dqn/compare_update.py --half dopamine
    TF_CPP_MIN_LOG_LEVEL=3 PYTHONPATH=. taskset -c 0 ../venv/bin/python \\
        labs/dopamine_dqn/compare_update.py --half rlkit
"""

from __future__ import annotations

import os

for _var in ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS",
             "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # fmt: skip
    os.environ[_var] = "1"
os.environ["CUDA_VISIBLE_DEVICES"] = ""
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
BATCH = 32
LAYERS = ("conv0/kernel", "conv0/bias", "conv1/kernel", "conv1/bias", "conv2/kernel",
          "conv2/bias", "dense/kernel", "dense/bias", "out/kernel", "out/bias")  # fmt: skip
FULL_AT = (1, 2, 10, 100, 101, 200, 201, 299, 300)  # updates after which all weights are saved
ANCHORS = (100, 200, 299)  # ... and the whole state (weights, target, slots): one-update checks
FOLLOWED = 65_536  # entries of a big tensor followed at every update
REPORT_AT = (1, 2, 3, 5, 10, 20, 50, 100, 101, 150, 200, 250, 300, 400, 500, 600)


def followed(shape) -> np.ndarray:
    """Fixed flat indices of a tensor's entries followed per update (all for small ones)."""
    size = int(np.prod(shape))
    if size <= FOLLOWED:
        return np.arange(size)
    return np.sort(np.random.default_rng(size).choice(size, FOLLOWED, replace=False))


def pick(arrays) -> list[np.ndarray]:
    return [a.ravel()[followed(a.shape)].astype(np.float32) for a in arrays]


def stacked(per_update: list[list[np.ndarray]]) -> dict[str, np.ndarray]:
    """[updates][layer] -> {layer_i: [updates, entries]}."""
    return {f"{i}": np.stack([u[i] for u in per_update]) for i in range(len(LAYERS))}


# -- half 1: Dopamine --------------------------------------------------------------------------
def collect_pool(steps: int, seed: int):
    """Breakout transitions through Dopamine's AtariPreprocessing and its agent's 4-frame
    stack: stacks [M, 84, 84, 4] uint8 and (state index, action, clipped reward, next state
    index, game over) per agent step."""
    from compare_env import DopamineSide, tracker

    import_dopamine()  # atari_lib needs the baselines stand-in and jax before TF
    from dopamine.discrete_domains import atari_lib

    side, rng = DopamineSide(seed, atari_lib), np.random.default_rng(seed)
    stacks, rows, game = [side.reset()], [], 0
    for _ in range(steps):
        if game % 2 == 0 or rng.random() < 0.25:
            action = int(rng.integers(4))
        else:
            action = tracker(side.ale, rng)
        state, reward, over, _, _ = side.step(action)
        stacks.append(state)
        rows.append((len(stacks) - 2, action, min(reward, 1.0), len(stacks) - 1, over))
        if over:
            stacks.append(side.reset())
            game += 1
    s, a, r, s2, t = (np.array(c) for c in zip(*rows, strict=True))
    return np.stack(stacks), s, a, r.astype(np.float32), s2, t.astype(np.uint8), game


def minibatch_indices(rewards, terminals, updates: int, seed: int) -> np.ndarray:
    """[updates, B] transition indices: B-4 uniform, 2 rewarded, 2 terminal."""
    rng = np.random.default_rng(seed)
    rewarded, ends = np.flatnonzero(rewards > 0), np.flatnonzero(terminals)
    return np.stack([
        np.concatenate([rng.integers(len(rewards), size=BATCH - 4),
                        rng.choice(rewarded, 2), rng.choice(ends, 2)])
        for _ in range(updates)
    ])  # fmt: skip


def import_dopamine():
    sys.path.insert(0, str(HERE))  # importing run_breakout sets TF_USE_LEGACY_KERAS=1
    from run_breakout import import_dopamine as run_breakout_import

    return run_breakout_import()


def dopamine_half(out: Path, updates: int, sync: int, seed: int, steps: int) -> None:
    tf, run_experiment, dqn_agent = import_dopamine()
    stacks, s, a, r, s2, t, games = collect_pool(steps, seed)
    idx = minibatch_indices(r, t, updates, seed)
    print(f"pool: {len(s)} transitions of {games} games, {int((r > 0).sum())} rewarded")
    run_experiment.load_gin_configs(
        [str(HERE / "dqn.gin")],
        ['DQNAgent.tf_device = "/cpu:*"', "WrappedReplayBuffer.replay_capacity = 1000"],
    )
    tf.compat.v1.disable_v2_behavior()  # as DQNAgent does, but before the graph's seed is set
    tf.compat.v1.set_random_seed(seed)
    recorded = {}
    base = tf.compat.v1.train.Optimizer
    original = base.compute_gradients

    def recording(self, loss, *args, **kwargs):  # what minimize() differentiates and applies
        grads_and_vars = original(self, loss, *args, **kwargs)
        recorded.update(loss=loss, grads_and_vars=grads_and_vars)
        return grads_and_vars

    base.compute_gradients = recording
    config = tf.compat.v1.ConfigProto(
        intra_op_parallelism_threads=1, inter_op_parallelism_threads=1
    )
    sess = tf.compat.v1.Session("", config=config)
    try:
        agent = dqn_agent.DQNAgent(sess, num_actions=4, summary_writer=None)
    finally:
        base.compute_gradients = original
    opt = agent.optimizer
    print("optimizer:", type(opt).__name__, {k: getattr(opt, "_" + k) for k in
          ("learning_rate", "decay", "momentum", "epsilon", "centered")})  # fmt: skip
    online = tf.compat.v1.trainable_variables("Online")
    target = tf.compat.v1.trainable_variables("Target")
    grads = dict((v.ref(), g) for g, v in recorded["grads_and_vars"] if g is not None)
    grads = [grads[v.ref()] for v in online]
    slots = [opt.get_slot(v, name) for name in ("rms", "mg") for v in online]
    print("online variables:", [(v.name, v.shape.as_list()) for v in online])
    w0, target0 = sess.run(online), sess.run(target)
    print("initial target == initial online (Dopamine initialises them independently; the first "
          "sync is at the first multiple of target_update_period after learning starts):",
          all(np.array_equal(x, y) for x, y in zip(w0, target0, strict=True)))  # fmt: skip
    tr = agent._replay.transition
    q_op, qt_op = agent._replay_net_outputs.q_values, agent._replay_next_target_net_outputs.q_values
    rec = {k: [] for k in ("loss", "q", "qt", "grads", "weights", "rms", "mg")}
    full = {}
    for k in range(1, updates + 1):
        i = idx[k - 1]
        feed = {tr["state"]: stacks[s[i]], tr["action"]: a[i].astype(np.int32),
                tr["reward"]: r[i], tr["next_state"]: stacks[s2[i]],
                tr["terminal"]: t[i]}  # fmt: skip
        _, loss, q, qt, g = sess.run([agent._train_op, recorded["loss"], q_op, qt_op, grads], feed)
        if k % sync == 0:
            sess.run(agent._sync_qt_ops)
        w, sl = sess.run(online), sess.run(slots)
        for key, value in (("loss", loss), ("q", q), ("qt", qt), ("grads", pick(g)),
                           ("weights", pick(w)), ("rms", pick(sl[: len(online)])),
                           ("mg", pick(sl[len(online):]))):  # fmt: skip
            rec[key].append(value)
        if k in FULL_AT:
            full.update({f"full{k}_{j}": x for j, x in enumerate(w)})
            if k == 1:
                full.update({f"grad1_{j}": x for j, x in enumerate(g)})
        if k in ANCHORS:
            state = zip(("target", "rms", "mg"), (sess.run(target), sl[: len(online)],
                        sl[len(online):]), strict=True)  # fmt: skip
            full.update({f"{name}{k}_{j}": x for name, xs in state for j, x in enumerate(xs)})
        if k % sync == 0:  # the sync copied every online weight into the target
            assert all(np.array_equal(x, y) for x, y in zip(w, sess.run(target), strict=True))
    np.savez(out / "pool.npz", stacks=stacks, s=s, a=a, r=r, s2=s2, t=t, idx=idx, sync=sync)
    arrays = {f"{key}_{j}": v for key in ("grads", "weights", "rms", "mg")
              for j, v in stacked(rec[key]).items()}  # fmt: skip
    np.savez(out / "dopamine.npz", loss=np.array(rec["loss"]), q=np.stack(rec["q"]),
             qt=np.stack(rec["qt"]), **{f"w0_{j}": x for j, x in enumerate(w0)},
             **{f"target0_{j}": x for j, x in enumerate(target0)}, **arrays, **full)  # fmt: skip
    print(f"saved {updates} updates of Dopamine's DQNAgent to {out}")


# -- half 2: rlkit -----------------------------------------------------------------------------
def build_rlkit(w0, target0, slot_init: bool, epsilon: float | None):
    import gymnasium as gym

    from labs.atari_dopamine import DOPAMINE_SCHEDULE, NETWORKS
    from rlkit.agents import DQN
    from rlkit.config import presets

    config = {**presets.lookup("dqn", "dqn3").agent_config, **DOPAMINE_SCHEDULE,
              **NETWORKS["dopamine"], "buffer_size": 1000}  # fmt: skip
    obs = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    agent = DQN(obs, gym.spaces.Discrete(4), seed=0, **config)
    for net, weights in ((agent.q, w0), (agent.q_target, target0)):
        for v, x in zip(net.variables, weights, strict=True):
            assert tuple(v.shape) == x.shape, (v.name, v.shape, x.shape)
            v.assign(x)
    opt = agent.pipeline.optimizer
    if slot_init:  # TF1's rms slot starts at 1 on Dopamine's mean scale: B^2 on the sum's
        for velocity in opt._velocities:
            velocity.assign(np.full(velocity.shape, BATCH**2, np.float32))
    if epsilon is not None:
        opt.epsilon = epsilon
    return agent


def rlkit_half(out: Path, updates: int) -> None:
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    pool, dop = dict(np.load(out / "pool.npz")), dict(np.load(out / "dopamine.npz"))
    stacks, idx, sync = pool["stacks"], pool["idx"], int(pool["sync"])
    n = len(LAYERS)
    w0 = [dop[f"w0_{j}"] for j in range(n)]
    target0 = [dop[f"target0_{j}"] for j in range(n)]
    updates = min(updates, len(idx))
    print(
        f"{updates} updates, target sync after every {sync}-th; layers "
        + ", ".join(f"{name} {w.shape}" for name, w in zip(LAYERS, w0, strict=True))
    )
    variants = {
        "rlkit as is (Keras RMSprop: mean square from 0, epsilon 0.01 on the sum)": (False, None),
        "rlkit, mean square from B^2 (TF1's slot init)": (True, None),
        "rlkit, mean square from B^2 and epsilon 1e-5*B^2 (= Dopamine's)": (True, 1e-5 * BATCH**2),
    }
    d_w0 = pick(w0)
    probe = stacks[pool["s"][::8]]  # 500 states of the pool
    for title, (slot_init, epsilon) in variants.items():
        agent = build_rlkit(w0, target0, slot_init, epsilon)
        opt = agent.pipeline.optimizer
        print(f"\n== {title}")
        print(
            " update | loss/B rel | Q online max|d| | Q target max|d| | grad/B rel (worst "
            "layer) | displacement rel (worst layer) | rms/B^2 rel | weights max|d| | "
            "step size ratio | distance ratio"
        )
        worst = {"loss": 0.0, "q": 0.0, "grad": 0.0, "disp": 0.0}
        prev_r, prev_d = d_w0, d_w0
        for k in range(1, updates + 1):
            batch = minibatch(pool, stacks, idx[k - 1])
            q = agent.q.model(batch.obs).numpy()
            qt = agent.q_target.model(batch.next_obs).numpy()
            grads = [g.numpy() / BATCH for g in agent.gradients(batch)]  # sum -> mean scale
            metrics = agent.learn(block(batch))
            if k % sync == 0:
                agent.sync_target()
            loss_rel = abs(metrics["loss"] / BATCH - dop["loss"][k - 1]) / dop["loss"][k - 1]
            q_d = np.abs(q - dop["q"][k - 1]).max()
            qt_d = np.abs(qt - dop["qt"][k - 1]).max()
            w_r = pick([x.numpy() for x in agent.q.variables])
            w_dop = [dop[f"weights_{j}"][k - 1] for j in range(n)]
            g_dop = [dop[f"grads_{j}"][k - 1] for j in range(n)]
            rms_dop = [dop[f"rms_{j}"][k - 1] for j in range(n)]
            g_rel = [rel(g, d) for g, d in zip(pick(grads), g_dop, strict=True)]
            disp_rel = [rel(w - s0, d - s0) for w, d, s0 in zip(w_r, w_dop, d_w0, strict=True)]
            velocities = pick([v.numpy() / BATCH**2 for v in opt._velocities])
            rms_rel = [rel(v, d) for v, d in zip(velocities, rms_dop, strict=True)]
            w_d = max(np.abs(w - d).max() for w, d in zip(w_r, w_dop, strict=True))
            step_ratio = norm(w_r, prev_r) / norm(w_dop, prev_d)
            distance_ratio = norm(w_r, d_w0) / norm(w_dop, d_w0)
            prev_r, prev_d = w_r, w_dop
            for key, value in (("loss", loss_rel), ("q", q_d), ("grad", max(g_rel)),
                               ("disp", max(disp_rel))):  # fmt: skip
                worst[key] = max(worst[key], value)
            if k in REPORT_AT:
                print(f" {k:6d} | {loss_rel:10.2e} | {q_d:15.2e} | {qt_d:15.2e} | "
                      f"{max(g_rel):9.2e} ({LAYERS[int(np.argmax(g_rel))]:12s}) | "
                      f"{max(disp_rel):9.2e} ({LAYERS[int(np.argmax(disp_rel))]:12s}) | "
                      f"{max(rms_rel):9.2e} | {w_d:.2e} | {step_ratio:8.3f} | "
                      f"{distance_ratio:8.3f}")  # fmt: skip
            if k in FULL_AT:
                full = [dop[f"full{k}_{j}"] for j in range(n)]
                mine = [x.numpy() for x in agent.q.variables]
                print(
                    f"        all weights after update {k}: displacement rel per layer "
                    + " ".join(
                        f"{rel(m - a0, f - a0):.1e}"
                        for m, f, a0 in zip(mine, full, w0, strict=True)
                    )
                )
            if k == 1:
                g1 = [dop[f"grad1_{j}"] for j in range(n)]
                print(
                    "        whole gradient of update 1 (rlkit sum / B vs Dopamine's mean): "
                    "rel per layer "
                    + " ".join(f"{rel(m, f):.1e}" for m, f in zip(grads, g1, strict=True))
                )
        print(
            f" worst over {updates} updates: loss/B rel {worst['loss']:.2e}, Q online max|d| "
            f"{worst['q']:.2e}, grad/B rel {worst['grad']:.2e}, displacement rel "
            f"{worst['disp']:.2e}"
        )
        print(f" after {updates} updates: {activity(agent, probe)}")
    if f"full{updates}_0" in dop:
        final = [dop[f"full{updates}_{j}"] for j in range(n)]
        print(
            f"\n Dopamine after {updates} updates: "
            f"{activity(build_rlkit(final, final, False, None), probe)}"
        )
        print(f" initial network (both): {activity(build_rlkit(w0, w0, False, None), probe)}")
    print("\n== one update from Dopamine's whole state after update k (online, target, rms, mg;")
    print("   rlkit's slots = Dopamine's x B^2, x B): the step's relative difference per layer")
    for k in (k for k in ANCHORS if f"full{k + 1}_0" in dop and k < updates):
        start = [dop[f"full{k}_{j}"] for j in range(n)]
        for title, epsilon in (("epsilon 0.01", None), ("epsilon 1e-5*B^2", 1e-5 * BATCH**2)):
            agent = build_rlkit(start, [dop[f"target{k}_{j}"] for j in range(n)], False, epsilon)
            opt = agent.pipeline.optimizer
            for j in range(n):
                opt._velocities[j].assign(dop[f"rms{k}_{j}"] * BATCH**2)
                opt._average_gradients[j].assign(dop[f"mg{k}_{j}"] * BATCH)
            agent.learn(block(minibatch(pool, stacks, idx[k])))
            steps = zip(agent.q.variables, start, [dop[f"full{k + 1}_{j}"] for j in range(n)],
                        strict=True)  # fmt: skip
            print(
                f"  update {k + 1}, {title:16s}: "
                + " ".join(f"{rel(m.numpy() - a0, d - a0):.1e}" for m, a0, d in steps)
            )


def activity(agent, states) -> str:
    """Dead units (channels of each convolution, units of the dense layer: zero on every probe
    state) and the Q-values' mean and mean spread (max - min over actions) on the probe."""
    import keras

    layers = [*agent.q.convs, *agent.q.hidden]
    outs = keras.Model(agent.q.model.inputs[0], [x.output for x in layers])(states)
    dead = [np.all(o.numpy().reshape(-1, o.shape[-1]) <= 0, axis=0).mean() for o in outs]
    q = agent.q.model(states).numpy()
    return (f"dead units per layer {' '.join(f'{d:.0%}' for d in dead)}; Q mean "
            f"{q.mean():.4f}, spread {np.mean(q.max(1) - q.min(1)):.4f}")  # fmt: skip


def minibatch(pool, stacks, i):
    from rlkit.replay.memory import Batch

    return Batch(obs=stacks[pool["s"][i]], actions=pool["a"][i].astype(np.int64),
                 rewards=pool["r"][i], next_obs=stacks[pool["s2"][i]],
                 terminated=pool["t"][i].astype(bool), truncated=np.zeros(BATCH, bool))  # fmt: skip


def block(batch):
    """A ``[1, B]`` block: what ``DQN.learn`` takes."""
    return batch.as_block()


def rel(a: np.ndarray, b: np.ndarray) -> float:
    """||a - b|| / ||b||."""
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def norm(a: list[np.ndarray], b: list[np.ndarray]) -> float:
    """||a - b|| over all layers' followed entries."""
    return float(np.sqrt(sum(np.sum((x - y) ** 2) for x, y in zip(a, b, strict=True))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("dopamine", "rlkit"), required=True)
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--sync", type=int, default=100, help="target sync every N updates")
    parser.add_argument("--steps", type=int, default=4000, help="agent steps of play (pool)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/compare_update"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.half == "dopamine":
        dopamine_half(args.out, args.updates, args.sync, args.seed, args.steps)
    else:
        rlkit_half(args.out, args.updates)


if __name__ == "__main__":
    main()
