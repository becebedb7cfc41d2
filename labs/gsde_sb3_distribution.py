"""rlkit's gSDE formulas (rlkit.learn.gsde, SACLearner.sde_sample's squashed log-density)
against Stable-Baselines3's own ``StateDependentNoiseDistribution`` on the same latent,
mean, log std and exploration matrices (issues 52 and 53).

For each setting (``full_std`` on/off, ``use_expln`` on/off, squashed as SAC's actor or not
as PPO's policy) it builds SB3's distribution, puts the same ``log_std`` ``[L, A]`` (or
``[L, 1]``) into both, sets SB3's exploration matrices to ``sigma * N(0, 1)`` draws that
rlkit also takes, and prints the largest absolute difference of:

- the action's std per state (SB3's ``distribution.stddev``; rlkit's
  ``sqrt((z^2) @ (sigma^2) + 1e-6)``);
- the noise ``z . E_n`` of a batch with one matrix per row (SB3's ``get_noise`` with
  ``exploration_matrices``; rlkit's ``numpy_gsde_noise``);
- ``log pi`` of actions (SB3's ``log_prob``; rlkit's ``gsde_log_prob``, less the squash
  correction when squashed) and the entropy (unsquashed only: SB3 has none for SAC's);
- the gradient of ``sum log pi`` in ``log_std`` (squashed: of the reparameterised sample
  with one matrix for the batch, SB3's ``log_prob_from_params`` after ``sample_weights``).

Needs torch and stable-baselines3 beside TensorFlow (the ``bench`` extra):

    python -m labs.gsde_sb3_distribution
"""

from __future__ import annotations

import itertools

import numpy as np
import tensorflow as tf
import torch as th
from stable_baselines3.common.distributions import StateDependentNoiseDistribution

from rlkit.learn import gsde
from rlkit.learn.max_entropy import log_one_minus_tanh_squared

B, L, A = 16, 8, 3


def compare(full_std: bool, use_expln: bool, squash: bool, seed: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    log_std = rng.normal(-0.5, 0.8, (L, A if full_std else 1))
    latent = np.tanh(rng.normal(size=(B, L)))
    mean = rng.normal(0, 0.5, (B, A))
    normal = rng.standard_normal((B, L, A))
    dist = StateDependentNoiseDistribution(A, full_std=full_std, use_expln=use_expln,
                                           squash_output=squash, learn_features=True)  # fmt: skip
    dist.latent_sde_dim = L
    log_std_t = th.tensor(log_std, requires_grad=True)
    std_t = dist.get_std(log_std_t)
    dist.exploration_matrices = (std_t * th.tensor(normal)).detach()
    dist.exploration_mat = (std_t * th.tensor(normal[0])).detach()
    dist.proba_distribution(th.tensor(mean), log_std_t, th.tensor(latent))
    # rlkit
    std = gsde.numpy_gsde_std(log_std, A, use_expln)
    variance = gsde.gsde_variance(tf.constant(latent), tf.constant(std)).numpy()
    out = {
        "std": np.abs(dist.distribution.stddev.detach().numpy() - np.sqrt(variance + 1e-6)).max(),
        "noise": np.abs(dist.get_noise(th.tensor(latent)).detach().numpy()
                        - gsde.numpy_gsde_noise(latent, std * normal)).max(),
    }  # fmt: skip
    u = mean + 0.7 * rng.normal(size=(B, A))
    actions = np.tanh(u) if squash else u
    sb3 = dist.log_prob(th.tensor(actions)).detach().numpy()
    ours = gsde.gsde_log_prob(tf.constant(u), tf.constant(mean), tf.constant(variance)).numpy()
    if squash:
        ours = ours - tf.reduce_sum(log_one_minus_tanh_squared(tf.constant(u)), -1).numpy()
    else:
        entropy = gsde.gsde_entropy(tf.constant(variance)).numpy()
        out["entropy"] = np.abs(dist.entropy().detach().numpy() - entropy).max()
    out["log_prob"] = np.abs(sb3 - ours).max()
    # the gradient in log_std of the reparameterised sample's log pi, one matrix for the batch
    dist.proba_distribution(th.tensor(mean), log_std_t, th.tensor(latent))
    noise_t = th.tensor(latent) @ (dist.get_std(log_std_t) * th.tensor(normal[0]))
    sample = dist.distribution.mean + noise_t
    sample = th.tanh(sample) if squash else sample
    dist.log_prob(sample).sum().backward()
    log_std_v = tf.Variable(log_std)
    with tf.GradientTape() as tape:
        s = gsde.gsde_std(log_std_v, A, use_expln)
        z = tf.constant(latent)
        u_t = tf.constant(mean) + tf.matmul(z, s * tf.constant(normal[0]))
        lp = gsde.gsde_log_prob(u_t, tf.constant(mean), gsde.gsde_variance(z, s))
        if squash:
            lp -= tf.reduce_sum(log_one_minus_tanh_squared(u_t), -1)
        total = tf.reduce_sum(lp)
    grad = tape.gradient(total, log_std_v).numpy()
    out["grad_log_std"] = np.abs(log_std_t.grad.numpy() - grad).max()
    out["grad_scale"] = np.abs(grad).max()
    return out


def main() -> None:
    print(f"B={B} L={L} A={A}, float64; largest absolute differences, SB3 - rlkit")
    for full_std, use_expln, squash in itertools.product([True, False], repeat=3):
        row = compare(full_std, use_expln, squash)
        cells = "  ".join(f"{k} {v:.1e}" for k, v in row.items())
        print(f"full_std={full_std!s:5} use_expln={use_expln!s:5} squash={squash!s:5}  {cells}")


if __name__ == "__main__":
    main()
