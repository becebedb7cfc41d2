"""One SAC update in rlkit against Stable-Baselines3's own ``SAC.train``, on the same weights,
batch and Gaussian noise (issue 52).

SB3's SAC is built on Pendulum-v1 with a small ``net_arch``; its weights are copied into an
rlkit SAC of the same sizes: the actor's latent layers, its two heads ``mu`` and
``log_std`` (rlkit's one head of ``2 A`` units is ``[mu | log_std]``), both critics, both
critic targets (moved away from the critics first, so that the copy is exercised) and
``log_ent_coef`` (set to log 0.3 first). Both then take one gradient step on one minibatch
(``--updates K``: K steps on K minibatches, rlkit's as one block, SB3's as one ``train``):

- actions: SB3's replay holds them rescaled to ``[-1, 1]`` and its critics see them so;
  rlkit's holds them in the environment's units and its critics rescale them
  (``ActionBounds.to_unit``). The batch's actions are multiples of 1/64 in ``[-1, 1]``, so
  that ``a_env = 2 a`` (Pendulum's bounds are +-2) and rlkit's rescaling back are exact;
- noise: SB3's squashed Gaussian draws its ``rsample`` noise from torch's generator; here its
  ``sample`` is replaced by ``loc + eps scale`` with the same ``eps`` rlkit's learner takes
  from its generator (``[K, B, 2, A]``: index 0 for the current states, 1 for the next;
  SB3 draws in that order too: the current states' sample first, then the next states');
- rlkit runs SB3's temperature loss (``temperature_loss="log_alpha"``), Adam with the same
  learning rate and epsilon, its shipped XLA-compiled update.

Three settings, each its own pair of fresh models:

- ``shipped``: both as they ship (SB3's squash correction ``log(1 - tanh(u)^2 + 1e-6)``,
  PyTorch's Adam epsilon 1e-8; rlkit's ``adam_epsilon`` 1e-8);
- ``squash-eps-0``: SB3's squash epsilon set to 0 (rlkit computes the correction exactly);
- ``matched``: also rlkit's ``adam_epsilon`` set to ``1e-8 sqrt(1 - beta2)``. Keras' Adam adds
  its epsilon to ``sqrt(v_t)``, PyTorch's to ``sqrt(v_t / (1 - beta2^t))``, so Keras' epsilon
  ``e`` is PyTorch's ``e / sqrt(1 - beta2^t)``: 31.6 times larger at the first update, the
  same only as t grows. No constant matches every update; this one matches the first.

The first Adam step is ``-lr g / (|g| + e)``, about ``-lr sign(g)``: it hardly tests the
gradients' sizes. ``--updates 10`` does (Adam's later steps weigh each gradient against the
earlier ones).

Printed per setting: the largest absolute difference of each group of weights after the
update, that difference over the group's largest step (``max|w - w0|`` in SB3), and the
losses. Needs the ``bench`` extra (stable-baselines3, torch).

    python -m labs.sac_sb3_update
    python -m labs.sac_sb3_update --updates 10 --settings matched
    python -m labs.sac_sb3_update --hidden 8 --batch-size 32 --learning-rate 1e-3
"""

from __future__ import annotations

import argparse
import math
import os

import numpy as np

#: Adam's beta2, PyTorch's and Keras' default
BETA2 = 0.999
SETTINGS = {
    "shipped": {"squash_epsilon": 1e-6, "adam_epsilon": 1e-8},
    "squash-eps-0": {"squash_epsilon": 0.0, "adam_epsilon": 1e-8},
    "matched": {"squash_epsilon": 0.0, "adam_epsilon": 1e-8 * math.sqrt(1 - BETA2)},
}


def pendulum_batches(count: int, size: int, seed: int) -> dict[str, np.ndarray]:
    """``count`` minibatches of Pendulum-like transitions, each field ``[K, B, ...]``:
    observations ``[cos, sin, thdot]``, actions in ``[-1, 1]`` as multiples of 1/64 (exact
    in both units), rewards, a few terminals, and standard normal noise ``[K, B, 2, A]``."""
    rng = np.random.default_rng(seed)
    shape = (count, size)

    def observations():
        theta, speed = rng.uniform(-np.pi, np.pi, shape), rng.uniform(-8, 8, shape)
        return np.stack([np.cos(theta), np.sin(theta), speed], -1).astype(np.float32)

    unit = rng.integers(-64, 65, (*shape, 1)).astype(np.float32) / 64
    return {
        "obs": observations(),
        "next_obs": observations(),
        "unit_actions": unit,
        "rewards": -rng.uniform(0, 16, shape).astype(np.float32),
        "terminated": rng.random(shape) < 0.2,
        "noise": rng.standard_normal((*shape, 2, 1)).astype(np.float32),
    }


def build_sb3(hidden: list[int], learning_rate: float, seed: int, squash_epsilon: float):
    """SB3's SAC on Pendulum-v1, its targets moved off the critics, alpha at 0.3."""
    import gymnasium as gym
    import torch as th
    from stable_baselines3 import SAC
    from stable_baselines3.common.logger import Logger

    model = SAC("MlpPolicy", gym.make("Pendulum-v1"), learning_rate=learning_rate, seed=seed,
                policy_kwargs={"net_arch": hidden}, device="cpu")  # fmt: skip
    model.set_logger(Logger(folder=None, output_formats=[]))
    model.actor.action_dist.epsilon = squash_epsilon
    generator = th.Generator().manual_seed(seed + 1)
    with th.no_grad():
        for p in model.critic_target.parameters():
            p.add_(0.05 * th.randn(p.shape, generator=generator))
        model.log_ent_coef.fill_(math.log(0.3))
    return model


def sb3_weights(model) -> dict[str, list[np.ndarray]]:
    """SB3's weights in rlkit's layout: Keras kernels ``[in, out]``, the actor's head
    ``[mu | log_std]`` split into its two groups."""

    def linears(seq):
        return [m for m in seq if hasattr(m, "weight")]

    def arrays(layers):
        return [a for m in layers for a in (m.weight.detach().numpy().T, m.bias.detach().numpy())]

    actor = model.actor
    out = {"actor latent": arrays(linears(actor.latent_pi)), "actor mu": arrays([actor.mu]),
           "actor log_std": arrays([actor.log_std]),
           "log_alpha": [model.log_ent_coef.detach().numpy().reshape(())]}  # fmt: skip
    for k in (0, 1):
        out[f"critic{k}"] = arrays(linears(model.critic.q_networks[k]))
        out[f"critic{k}_target"] = arrays(linears(model.critic_target.q_networks[k]))
    return {name: [np.array(a, np.float32) for a in group] for name, group in out.items()}


def layer_arrays(layers) -> list[np.ndarray]:
    """``[kernel_0, bias_0, kernel_1, ...]`` of Keras Dense ``layers``, as numpy arrays."""
    return [np.asarray(v) for layer in layers for v in (layer.kernel, layer.bias)]


def rlkit_weights(learner) -> dict[str, list[np.ndarray]]:
    """rlkit's weights in the groups of :func:`sb3_weights` (kernel, bias per layer)."""
    actor, dim = learner.actor, learner.bounds.dim
    head_kernel, head_bias = layer_arrays([actor.head])
    out = {
        "actor latent": layer_arrays(actor.hidden),
        "actor mu": [head_kernel[:, :dim], head_bias[:dim]],
        "actor log_std": [head_kernel[:, dim:], head_bias[dim:]],
        "log_alpha": [np.asarray(learner.log_alpha)],
    }
    for k, critic in enumerate(learner.critics):
        layers = [*critic.hidden, critic.head]
        out[f"critic{k}"] = layer_arrays(layers)
        shadow = dict(zip((id(v) for v in critic.variables), learner.critic_target_variables(k),
                          strict=True))  # fmt: skip
        out[f"critic{k}_target"] = [shadow[id(v)].numpy() for layer in layers
                                    for v in (layer.kernel, layer.bias)]  # fmt: skip
    return out


def load_into_rlkit(learner, weights: dict[str, list[np.ndarray]]) -> None:
    """Copy :func:`sb3_weights` into rlkit's learner (the actor's two heads as one)."""
    actor = learner.actor
    latent = iter(weights["actor latent"])
    for layer in actor.hidden:
        layer.kernel.assign(next(latent))
        layer.bias.assign(next(latent))
    (mu_k, mu_b), (ls_k, ls_b) = weights["actor mu"], weights["actor log_std"]
    actor.head.kernel.assign(np.concatenate([mu_k, ls_k], axis=1))
    actor.head.bias.assign(np.concatenate([mu_b, ls_b]))
    learner.log_alpha.assign(weights["log_alpha"][0])
    for k, critic in enumerate(learner.critics):
        layers = [*critic.hidden, critic.head]
        online = iter(weights[f"critic{k}"])
        target = dict(zip([id(v) for layer in layers for v in (layer.kernel, layer.bias)],
                          weights[f"critic{k}_target"], strict=True))  # fmt: skip
        for layer in layers:
            layer.kernel.assign(next(online))
            layer.bias.assign(next(online))
        for v, shadow in zip(critic.variables, learner.critic_target_variables(k), strict=True):
            shadow.assign(target[id(v)])
    learner.weights_changed()


class FixedNormal:
    """Stands in for the learner's generator: ``standard_normal`` gives the array it holds."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def standard_normal(self, shape) -> np.ndarray:
        assert tuple(shape) == self.values.shape, (shape, self.values.shape)
        return self.values


def sb3_update(model, batches: dict[str, np.ndarray]) -> dict[str, float]:
    """``model.train`` for ``K`` gradient steps on ``batches`` with their noise; SB3's logged
    losses (averaged over the steps)."""
    import torch as th
    from stable_baselines3.common.type_aliases import ReplayBufferSamples

    def tensor(a):
        return th.as_tensor(np.asarray(a, np.float32))

    count, size = batches["rewards"].shape
    samples = iter([ReplayBufferSamples(
        observations=tensor(batches["obs"][k]), actions=tensor(batches["unit_actions"][k]),
        next_observations=tensor(batches["next_obs"][k]),
        dones=tensor(batches["terminated"][k][:, None]),
        rewards=tensor(batches["rewards"][k][:, None]),
    ) for k in range(count)])  # fmt: skip
    model.replay_buffer.sample = lambda batch_size, env=None: next(samples)
    dist = model.actor.action_dist
    draws = iter([tensor(batches["noise"][k, :, j]) for k in range(count) for j in (0, 1)])

    def sample():  # Normal.rsample with the given noise: loc + eps * scale
        eps = next(draws)
        dist.gaussian_actions = dist.distribution.loc + eps * dist.distribution.scale
        return th.tanh(dist.gaussian_actions)

    dist.sample = sample
    model.train(gradient_steps=count, batch_size=size)
    logged = model.logger.name_to_value
    return {"critic_loss": logged["train/critic_loss"], "actor_loss": logged["train/actor_loss"],
            "alpha_loss": logged["train/ent_coef_loss"],
            "alpha": logged["train/ent_coef"]}  # fmt: skip


def rlkit_update(learner, batches: dict[str, np.ndarray]) -> dict[str, float]:
    """One block of ``K`` rlkit updates on ``batches`` with their noise; rlkit's losses
    (averaged over the block)."""
    from rlkit.replay.memory import Batch

    shape = batches["rewards"].shape
    block = Batch(obs=batches["obs"], actions=2.0 * batches["unit_actions"],
                  rewards=batches["rewards"], next_obs=batches["next_obs"],
                  terminated=batches["terminated"], truncated=np.zeros(shape, bool))  # fmt: skip
    learner.rng = FixedNormal(batches["noise"])
    metrics, _ = learner.learn(block, step=0)
    return {k: metrics[k] for k in ("critic_loss", "actor_loss", "alpha_loss", "alpha")}


def compare(setting: str, hidden: list[int], batch_size: int, learning_rate: float,
            seed: int = 0, updates: int = 1) -> dict:  # fmt: skip
    """``updates`` updates (one by default) of each on copies of the same weights, under
    ``setting`` (:data:`SETTINGS`).

    Returns ``{"before": max |diff| of the networks' outputs on the batch before the update,
    "groups": {group: (max |diff| after, that over SB3's largest step in the group)},
    "losses": {name: (rlkit, SB3)}}``."""
    import gymnasium as gym
    import tensorflow as tf
    import torch as th

    import rlkit

    th.set_num_threads(1)
    spec = SETTINGS[setting]
    model = build_sb3(hidden, learning_rate, seed, spec["squash_epsilon"])
    agent = rlkit.agents.SAC.from_env(
        gym.make("Pendulum-v1"), seed=seed, actor_hidden_sizes=tuple(hidden),
        critic_hidden_sizes=tuple(hidden), learning_rate=learning_rate,
        adam_epsilon=spec["adam_epsilon"], temperature_loss="log_alpha", ent_coef="auto",
        batch_size=batch_size, learning_starts=0,
    )  # fmt: skip
    learner = agent.learner
    start = sb3_weights(model)
    load_into_rlkit(learner, start)
    batches = pendulum_batches(updates, batch_size, seed)
    obs, unit = batches["obs"][0], batches["unit_actions"][0]
    with th.no_grad():
        sb3_out = np.concatenate([model.actor.mu(model.actor.latent_pi(th.as_tensor(obs))),
                                  model.actor.log_std(model.actor.latent_pi(th.as_tensor(obs)))],
                                 axis=1)  # fmt: skip
        sb3_q = np.concatenate(model.critic(th.as_tensor(obs), th.as_tensor(unit)), axis=1)
    rl_out = learner.actor.model(tf.constant(obs)).numpy()
    rl_q = np.stack([c.model([obs, 2.0 * unit]).numpy() for c in learner.critics], 1)
    before = max(np.abs(sb3_out - rl_out).max(), np.abs(sb3_q - rl_q).max())
    theirs, mine = sb3_update(model, batches), rlkit_update(learner, batches)
    after_sb3, after_rlkit = sb3_weights(model), rlkit_weights(learner)
    groups = {}
    for name, group in after_sb3.items():
        diff = max(np.abs(a - b).max() for a, b in zip(group, after_rlkit[name], strict=True))
        step = max(np.abs(a - b).max() for a, b in zip(group, start[name], strict=True))
        groups[name] = (float(diff), float(diff / step) if step > 0 else float("nan"))
    losses = {k: (float(mine[k]), float(theirs[k])) for k in theirs}
    return {"before": float(before), "groups": groups, "losses": losses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, nargs="+", default=[8], help="net_arch, both nets")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--updates", type=int, default=1, help="gradient steps (one block)")
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS))
    args = parser.parse_args()
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    for setting in args.settings:
        result = compare(setting, args.hidden, args.batch_size, args.learning_rate, args.seed,
                         args.updates)  # fmt: skip
        print(f"\n{setting}: {SETTINGS[setting]}; net_arch {args.hidden}, batch "
              f"{args.batch_size}, lr {args.learning_rate:g}, {args.updates} update(s); outputs "
              f"before differ by at most {result['before']:.1e}")  # fmt: skip
        print(f"  {'group':<16} {'max |diff|':>10} {'/ max step':>10}")
        for name, (diff, rel) in result["groups"].items():
            print(f"  {name:<16} {diff:10.1e} {rel:10.1e}")
        for name, (mine, theirs) in result["losses"].items():
            print(f"  {name:<16} rlkit {mine:+.7e}  SB3 {theirs:+.7e}  "
                  f"diff {abs(mine - theirs):.1e}")  # fmt: skip


if __name__ == "__main__":
    main()
