"""Are rlkit's DQN-family building blocks Dopamine's? Each op against a numpy transcription.

JAX is not installed here, so Dopamine's functions are transcribed to numpy below, line for
line, from google/dopamine at commit 5873f5494ee0c2d7c016d0ab2ad530354fec59d0 (2026-03-24),
each citing its file and lines; then rlkit's op and the transcription run on the same random
inputs and the largest difference is printed. The finding is in docs/dqn-family.md,
"Building blocks".

    python -m labs.dopamine_family_ops
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rlkit.learn import distributional as dist
from rlkit.replay.prioritized import PrioritizedSampler
from rlkit.replay.sum_tree import SumTree

# -- Dopamine, transcribed -----------------------------------------------------------------------


def dopamine_project_distribution(supports, weights, target_support):
    """dopamine/jax/agents/rainbow/rainbow_agent.py lines 493-533 (one example: jnp -> np)."""
    v_min, v_max = target_support[0], target_support[-1]
    num_dims = target_support.shape[0]
    delta_z = (v_max - v_min) / (num_dims - 1)
    clipped_support = np.clip(supports, v_min, v_max)
    numerator = np.abs(clipped_support - target_support[:, None])
    quotient = 1 - (numerator / delta_z)
    clipped_quotient = np.clip(quotient, 0, 1)
    inner_prod = clipped_quotient * weights
    return np.squeeze(np.sum(inner_prod, -1))


def dopamine_c51_loss(logits, actions, next_probs, rewards, terminals, support, gamma):
    """rainbow_agent.py lines 132-142 (target_distribution, vmapped: a loop here, the argmax
    replaced by the given next-state probabilities) and lines 76-84 (loss_fn), with
    dopamine/jax/losses.py line 50 (softmax_cross_entropy_loss_with_logits)."""
    losses = []
    for b in range(len(rewards)):
        is_terminal_multiplier = 1.0 - float(terminals[b])
        gamma_with_terminal = gamma * is_terminal_multiplier
        target_support = rewards[b] + gamma_with_terminal * support
        target = dopamine_project_distribution(target_support, next_probs[b], support)
        chosen = logits[b, actions[b]]
        log_softmax = chosen - np.log(np.sum(np.exp(chosen - chosen.max()))) - chosen.max()
        losses.append(-np.sum(target * log_softmax))
    return np.array(losses)


def dopamine_qr_loss(chosen_action_logits, target, kappa, num_atoms):
    """dopamine/jax/agents/quantile/quantile_agent.py lines 92-113 (loss_fn, per example)."""
    bellman_errors = target[:, None, :] - chosen_action_logits[:, :, None]
    huber_loss = (np.abs(bellman_errors) <= kappa).astype(np.float32) * 0.5 * bellman_errors**2 + (
        np.abs(bellman_errors) > kappa
    ).astype(np.float32) * kappa * (np.abs(bellman_errors) - 0.5 * kappa)
    tau_hat = (np.arange(num_atoms, dtype=np.float32) + 0.5) / num_atoms
    tau_bellman_diff = np.abs(tau_hat[None, :, None] - (bellman_errors < 0).astype(np.float32))
    quantile_huber_loss = tau_bellman_diff * huber_loss
    return np.sum(np.mean(quantile_huber_loss, 2), 1)


def dopamine_iqn_loss(chosen_action_quantile_values, quantiles, target_quantile_vals, kappa):
    """dopamine/jax/agents/implicit_quantile/implicit_quantile_agent.py lines 139-181, per
    example (before its final jnp.mean over the batch). Shapes as there: values
    [B, N, 1], quantiles [B, N, 1], targets [B, N', 1]."""
    num_tau_prime_samples = target_quantile_vals.shape[1]
    bellman_errors = (
        target_quantile_vals[:, :, None, :] - chosen_action_quantile_values[:, None, :, :]
    )
    huber_loss_case_one = (
        (np.abs(bellman_errors) <= kappa).astype(np.float32) * 0.5 * (bellman_errors**2)
    )
    huber_loss_case_two = (
        (np.abs(bellman_errors) > kappa).astype(np.float32)
        * kappa
        * (np.abs(bellman_errors) - 0.5 * kappa)
    )
    huber_loss = huber_loss_case_one + huber_loss_case_two
    quantiles = np.tile(quantiles[:, None, :, :], [1, num_tau_prime_samples, 1, 1])
    quantile_huber_loss = (
        np.abs(quantiles - (bellman_errors < 0).astype(np.float32)) * huber_loss
    ) / kappa
    loss = np.sum(quantile_huber_loss, axis=2)
    loss = np.mean(loss, axis=1)
    return loss[:, 0]


def dopamine_cosine_features(quantiles, quantile_embedding_dim):
    """dopamine/jax/networks.py lines 411-417 (ImplicitQuantileNetwork, before the Dense)."""
    quantile_net = np.tile(quantiles, [1, quantile_embedding_dim])
    quantile_net = (
        np.arange(1, quantile_embedding_dim + 1, 1).astype(np.float32) * np.pi * quantile_net
    )
    return np.cos(quantile_net)


class DopamineSumTree:
    """dopamine/jax/replay_memory/sum_tree.py lines 29-37 (init), 48-79 (set), 108-155
    (query): the array version, transcribed without its overloads and assertions."""

    def __init__(self, capacity):
        self._depth = int(np.ceil(np.log2(capacity))) + 1
        self._first_leaf_offset = (2 ** (self._depth - 1)) - 1
        self._nodes = np.zeros((2**self._depth) - 1, dtype=np.float64)

    def set(self, indices, values):
        node_indices = self._first_leaf_offset + indices
        delta_values = values - self._nodes[node_indices]
        node_indices, unique_idx = np.unique(node_indices, return_index=True)
        delta_values = delta_values[unique_idx]
        for _ in reversed(range(self._depth - 1)):
            np.add.at(self._nodes, node_indices, delta_values)
            node_indices = (node_indices - 1) // 2
        np.add.at(self._nodes, node_indices, delta_values)

    def query(self, targets):
        node_indices = np.zeros_like(targets, dtype=np.int32)
        while (traversal_mask := node_indices < self._first_leaf_offset).any():
            left_node_indices = 2 * node_indices + 1
            left_node_sums = self._nodes[left_node_indices]
            right_node_indices = left_node_indices + 1
            node_indices = np.where(
                traversal_mask,
                np.where(targets < left_node_sums, left_node_indices, right_node_indices),
                node_indices,
            )
            targets = np.where(targets < left_node_sums, targets, targets - left_node_sums)
        return node_indices - self._first_leaf_offset


# -- the comparisons -----------------------------------------------------------------------------


def compare_c51(rng: np.random.Generator) -> tuple[float, float]:
    batch, actions, atoms_n, gamma = 256, 4, 51, 0.99**3
    support = np.linspace(-10.0, 10.0, atoms_n).astype(np.float32)
    next_probs = rng.dirichlet(np.ones(atoms_n), size=batch).astype(np.float32)
    rewards = (rng.normal(size=batch) * 6).astype(np.float32)  # many land outside [-10, 10]
    terminals = rng.random(batch) < 0.3
    pcont = (gamma * (1.0 - terminals)).astype(np.float32)
    ours = dist.categorical_projection(support, next_probs, rewards, pcont).numpy()
    theirs = np.stack(
        [
            dopamine_project_distribution(rewards[b] + pcont[b] * support, next_probs[b], support)
            for b in range(batch)
        ]
    )
    logits = rng.normal(size=(batch, actions, atoms_n)).astype(np.float32)
    taken = rng.integers(actions, size=batch)
    next_actions = np.zeros(batch, np.int32)
    target_logits = np.log(next_probs)[:, None, :].repeat(actions, axis=1)
    out = dist.categorical_q_learning(
        logits, taken, rewards, pcont, target_logits, support, next_actions
    )
    theirs_loss = dopamine_c51_loss(logits, taken, next_probs, rewards, terminals, support, gamma)
    return float(np.abs(ours - theirs).max()), float(np.abs(out.loss.numpy() - theirs_loss).max())


def compare_quantile(rng: np.random.Generator) -> dict[str, float]:
    batch, n = 128, 32
    chosen = rng.normal(size=(batch, n)).astype(np.float32) * 3
    target = rng.normal(size=(batch, n)).astype(np.float32) * 3
    found = {}
    for kappa in (1.0, 2.0):
        ours = dist.quantile_huber_loss(chosen, target, dist.quantile_midpoints(n), kappa)
        theirs = dopamine_qr_loss(chosen, target, kappa, n)
        found[f"QR-DQN kappa={kappa}: max |ours - dopamine|"] = float(
            np.abs(ours.numpy() - theirs).max()
        )
        found[f"QR-DQN kappa={kappa}: max |kappa * ours - dopamine|"] = float(
            np.abs(kappa * ours.numpy() - theirs).max()
        )
    taus = rng.random((batch, n)).astype(np.float32)
    target_prime = rng.normal(size=(batch, 24)).astype(np.float32) * 3  # N' = 24
    for kappa in (1.0, 2.0):
        ours = dist.quantile_huber_loss(chosen, target_prime, taus, kappa).numpy()
        theirs = dopamine_iqn_loss(
            chosen[:, :, None], taus[:, :, None], target_prime[:, :, None], kappa
        )
        found[f"IQN kappa={kappa}: max |ours - dopamine|"] = float(np.abs(ours - theirs).max())
    emb = dist.iqn_cosine_embedding(taus, 64, first_index=1).numpy()
    theirs_emb = np.stack([dopamine_cosine_features(taus[b][:, None], 64) for b in range(batch)])
    found["cosine features, first_index=1: max |ours - dopamine|"] = float(
        np.abs(emb - theirs_emb).max()
    )
    return found


def compare_sum_tree(rng: np.random.Generator) -> dict[str, float]:
    capacity = 1000
    ours, theirs = SumTree(capacity), DopamineSumTree(capacity)
    for _ in range(500):  # updates without repeated indices within a call
        idx = rng.choice(capacity, size=32, replace=False)
        values = rng.random(32) * 5
        ours.set(idx, values)
        theirs.set(idx, values)
    leaves = theirs._nodes[theirs._first_leaf_offset : theirs._first_leaf_offset + capacity]
    targets = rng.random(100_000) * min(ours.total, theirs._nodes[0])
    found = {
        "leaves: max |ours - dopamine|": float(np.abs(ours.values() - leaves).max()),
        "root after 500 calls: |ours - dopamine|": abs(ours.total - theirs._nodes[0]),
        "find: share of 100k targets on the same leaf": float(
            np.mean(ours.find(targets) == theirs.query(targets))
        ),
    }
    # a slot repeated in one call: Dopamine keeps the first value, rlkit the last
    ours_d, theirs_d = SumTree(4), DopamineSumTree(4)
    ours_d.set(np.array([1, 1]), np.array([3.0, 5.0]))
    theirs_d.set(np.array([1, 1]), np.array([3.0, 5.0]))
    found["slot 1 set to 3 then 5 in one call: ours"] = float(ours_d.get(np.array([1]))[0])
    found["slot 1 set to 3 then 5 in one call: dopamine"] = float(theirs_d._nodes[3 + 1])
    return found


def compare_weights(rng: np.random.Generator) -> float:
    """rlkit's weights at beta 0.5 against Dopamine's rainbow_agent.py lines 431-434."""
    sampler = PrioritizedSampler(500, priority_exponent=0.5, importance_exponent=0.5)
    sampler.written(np.arange(500))
    loss = rng.exponential(size=500)
    sampler.update_priorities(np.arange(500), loss)
    # Dopamine's priorities: rainbow_agent.py line 465, sqrt(loss + 1e-10)
    np.testing.assert_allclose(sampler.tree.values(), np.sqrt(loss + 1e-10), rtol=1e-12)
    indices, weights = sampler.sample(rng, 500, (32,))
    probs = sampler.tree.get(indices) / sampler.tree.total
    loss_weights = 1.0 / np.sqrt(probs + 1e-10)
    loss_weights /= np.max(loss_weights)
    return float(np.abs(weights - loss_weights).max())


def main() -> None:
    rng = np.random.default_rng(0)
    tf.random.set_seed(0)
    projection, c51 = compare_c51(rng)
    print(
        f"C51 projection (256 x 51 atoms, 30% terminal): max |ours - dopamine| = {projection:.3g}"
    )
    print(f"C51 cross-entropy loss: max |ours - dopamine| = {c51:.3g}")
    for name, value in {**compare_quantile(rng), **compare_sum_tree(rng)}.items():
        print(f"{name} = {value:.6g}")
    print(f"PER weights at beta 0.5: max |ours - dopamine| = {compare_weights(rng):.3g}")


if __name__ == "__main__":
    main()
