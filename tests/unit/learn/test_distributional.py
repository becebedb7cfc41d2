"""C51's projection and loss, the quantile Huber loss, QR-DQN and IQN, against hand-computed
values (the arithmetic is in the comments)."""

import numpy as np
import pytest
import tensorflow as tf

from rlkit.learn import distributional as dist

ATOMS = dist.categorical_atoms(-2.0, 2.0, 5)  # -2, -1, 0, 1, 2; dz = 1


def project(rewards, pcont, probs, atoms=ATOMS):
    return dist.categorical_projection(
        atoms,
        tf.constant(probs, tf.float32),
        tf.constant(rewards, tf.float32),
        tf.constant(pcont, tf.float32),
    ).numpy()


def test_atoms_and_their_validation():
    np.testing.assert_allclose(ATOMS.numpy(), [-2, -1, 0, 1, 2])
    np.testing.assert_allclose(dist.categorical_atoms(0, 10, 11).numpy(), np.arange(11.0))
    with pytest.raises(ValueError, match="v_min"):
        dist.categorical_atoms(1.0, 1.0, 5)
    with pytest.raises(ValueError, match="num_atoms"):
        dist.categorical_atoms(-1.0, 1.0, 1)


def test_projection_inside_the_support():
    # r 0.5, pcont 1, all mass on z = 0 -> 0.5: half to atom 0, half to atom 1
    np.testing.assert_allclose(project([0.5], [1.0], [[0, 0, 1, 0, 0]]), [[0, 0, 0.5, 0.5, 0]])
    # r 1, pcont 0.5, uniform 0.2: shifted atoms 1 + 0.5 z = 0, 0.5, 1, 1.5, 2
    # 0 -> 0.2 at atom 0; 0.5 -> 0.1 at 0, 0.1 at 1; 1 -> 0.2 at 1; 1.5 -> 0.1 at 1, 0.1 at 2;
    # 2 -> 0.2 at 2: total [0, 0, 0.3, 0.4, 0.3]
    np.testing.assert_allclose(
        project([1.0], [0.5], [[0.2] * 5]), [[0, 0, 0.3, 0.4, 0.3]], atol=1e-6
    )


def test_projection_clips_atoms_outside_the_support():
    # above: r 3, pcont 1: shifted 1, 2, 3, 4, 5 -> clipped 1, 2, 2, 2, 2
    # p = 0.1, 0.2, 0.3, 0.2, 0.2 -> atom 1 gets 0.1, atom 2 gets 0.9
    np.testing.assert_allclose(
        project([3.0], [1.0], [[0.1, 0.2, 0.3, 0.2, 0.2]]), [[0, 0, 0, 0.1, 0.9]], atol=1e-6
    )
    # below: r -2.5, pcont 0.9: shifted -4.3, -3.4, -2.5, -1.6, -0.7 -> clipped -2, -2, -2, -1.6,
    # -0.7; p 0.2 each: -2 gets 0.6; -1.6 splits 0.6/0.4 -> 0.12 to -2, 0.08 to -1;
    # -0.7 splits 0.7/0.3 -> 0.14 to -1, 0.06 to 0: [0.72, 0.22, 0.06, 0, 0]
    np.testing.assert_allclose(
        project([-2.5], [0.9], [[0.2] * 5]), [[0.72, 0.22, 0.06, 0, 0]], atol=1e-6
    )


def test_projection_of_terminal_transitions():
    # pcont 0: every atom moves to r. r 0.25 -> 0.75 at atom 0, 0.25 at atom 1, whatever p is
    np.testing.assert_allclose(
        project([0.25], [0.0], [[0.5, 0.1, 0.1, 0.1, 0.2]]), [[0, 0, 0.75, 0.25, 0]], atol=1e-6
    )
    # r beyond v_max: all mass on the last atom; r exactly on an atom: all mass on it
    np.testing.assert_allclose(project([7.0], [0.0], [[0.2] * 5]), [[0, 0, 0, 0, 1]], atol=1e-6)
    np.testing.assert_allclose(project([-1.0], [0.0], [[0.2] * 5]), [[0, 1, 0, 0, 0]], atol=1e-6)


def test_projection_keeps_mass_that_lands_exactly_on_an_atom():
    # Bellemare et al.'s Alg. 1 loses it where floor(b) == ceil(b): r 1, pcont 1, mass at -1
    # moves to 0 exactly -> all of it stays at atom 0
    np.testing.assert_allclose(project([1.0], [1.0], [[0, 1, 0, 0, 0]]), [[0, 0, 1, 0, 0]])


def test_projection_is_per_example_and_sums_to_one():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(11), size=6).astype(np.float32)
    rewards = rng.normal(size=6) * 5
    pcont = np.array([0.99, 0.0, 0.5, 0.99**3, 1.0, 0.0])
    atoms = dist.categorical_atoms(-10.0, 10.0, 11)
    whole = project(rewards, pcont, probs, atoms)
    np.testing.assert_allclose(whole.sum(axis=1), np.ones(6), atol=1e-5)
    for b in range(6):  # one example at a time gives the same row
        row = project(rewards[b : b + 1], pcont[b : b + 1], probs[b : b + 1], atoms)
        np.testing.assert_allclose(row[0], whole[b], atol=1e-6)
    # the mean of the projection is the clipped mean of r + pcont Z' where nothing is clipped
    inside = np.abs(rewards) + pcont * 10 <= 10
    mean = rewards + pcont * (probs @ atoms.numpy())
    np.testing.assert_allclose((whole @ atoms.numpy())[inside], mean[inside], atol=1e-4)


def test_categorical_q_learning_value_and_gradient():
    # atoms -1, 0, 1; two actions; the taken action 1 has uniform online logits (p = 1/3 each)
    atoms = dist.categorical_atoms(-1.0, 1.0, 3)
    logits = tf.Variable([[[5.0, -5.0, 0.0], [0.0, 0.0, 0.0]]])
    # target: next action 0 has probabilities 0.25, 0.5, 0.25; next action 1 is a decoy
    target_logits = tf.Variable(
        [[np.log([0.25, 0.5, 0.25]).tolist(), np.log([0.9, 0.05, 0.05]).tolist()]],
        dtype=tf.float32,
    )
    with tf.GradientTape(persistent=True) as tape:
        out = dist.categorical_q_learning(
            logits,
            tf.constant([1]),
            tf.constant([0.0]),
            tf.constant([1.0]),
            target_logits,
            atoms,
            tf.constant([0]),
        )
    # r 0, pcont 1: the projection is the identity -> m = 0.25, 0.5, 0.25;
    # cross-entropy against uniform = -sum m log(1/3) = log 3 = 1.098612
    np.testing.assert_allclose(out.loss.numpy(), [np.log(3.0)], rtol=1e-6)
    np.testing.assert_allclose(out.td_error.numpy(), out.loss.numpy())
    # d CE / d logits = softmax - m = 1/3 - 0.25, 1/3 - 0.5, 1/3 - 0.25 at the taken action only
    grad = tape.gradient(out.loss, logits).numpy()
    np.testing.assert_allclose(grad[0, 1], [1 / 12, -1 / 6, 1 / 12], atol=1e-6)
    np.testing.assert_array_equal(grad[0, 0], [0, 0, 0])
    assert tape.gradient(out.loss, target_logits) is None  # the target carries no gradient
    assert tape.gradient(out.td_error, logits) is None


def test_categorical_q_learning_terminal_and_next_action():
    atoms = dist.categorical_atoms(-1.0, 1.0, 3)
    logits = tf.zeros([2, 2, 3])
    target_logits = tf.constant(np.log([[[0.25, 0.5, 0.25], [0.9, 0.05, 0.05]]] * 2), tf.float32)
    out = dist.categorical_q_learning(
        logits,
        tf.constant([0, 1]),
        tf.constant([1.0, 0.0]),
        tf.constant([0.0, 1.0]),  # example 0 terminal with r 1: target all on atom 1
        target_logits,
        atoms,
        tf.constant([0, 1]),  # example 1 bootstraps from action 1: 0.9, 0.05, 0.05
    )
    # example 0: -log(1/3); example 1: -(0.9 + 0.05 + 0.05) log(1/3) = log 3 as well, but a
    # non-uniform online distribution separates them: see the next case
    np.testing.assert_allclose(out.loss.numpy(), [np.log(3.0)] * 2, rtol=1e-6)
    online = tf.constant(np.log([[[0.5, 0.25, 0.25]] * 2] * 2), tf.float32)
    out = dist.categorical_q_learning(
        online,
        tf.constant([0, 1]),
        tf.constant([1.0, 0.0]),
        tf.constant([0.0, 1.0]),
        target_logits,
        atoms,
        tf.constant([0, 1]),
    )
    # example 0: -log 0.25 = 1.386294; example 1: -(0.9 log 0.5 + 0.1 log 0.25) = 0.762386
    expected = [-np.log(0.25), -(0.9 * np.log(0.5) + 0.1 * np.log(0.25))]
    np.testing.assert_allclose(out.loss.numpy(), expected, rtol=1e-5)


def test_greedy_actions_use_the_expected_value():
    atoms = dist.categorical_atoms(-1.0, 1.0, 3)
    # action 0: mass on +1 with 0.6, -1 with 0.4 -> mean 0.2; action 1: all on 0 -> 0
    # action 2: mean 0.6 * (-1) + 0.4 * 1 = -0.2
    probs = np.array([[[0.4, 0.0, 0.6], [0.0, 1.0, 0.0], [0.6, 0.0, 0.4]]]) + 1e-9
    logits = tf.constant(np.log(probs), tf.float32)
    assert dist.categorical_greedy_actions(logits, atoms).numpy().tolist() == [0]
    quantiles = tf.constant([[[0.0, 3.0], [1.0, 1.5], [-5.0, 10.0]]])  # means 1.5, 1.25, 2.5
    assert dist.quantile_greedy_actions(quantiles).numpy().tolist() == [2]


def qhl(quantiles, targets, taus, kappa):
    return dist.quantile_huber_loss(
        tf.constant(quantiles, tf.float32), tf.constant(targets, tf.float32), taus, kappa
    ).numpy()


def test_quantile_huber_loss_one_quantile_hand_computed():
    # theta 0, targets 2 and -0.5, tau 0.25
    # kappa 1: u = 2 -> L = 1 * (2 - 0.5) = 1.5, weight tau = 0.25 -> 0.375;
    #          u = -0.5 -> L = 0.125, weight |0.25 - 1| = 0.75 -> 0.09375; mean 0.234375
    assert qhl([[0.0]], [[2.0, -0.5]], tf.constant([0.25]), 1.0) == pytest.approx([0.234375])
    # kappa 2: u = 2 -> L = 2 / 2 (divided by kappa) = 1 -> 0.25; u = -0.5 -> 0.0625 * 0.75
    #          = 0.046875; mean 0.1484375
    assert qhl([[0.0]], [[2.0, -0.5]], tf.constant([0.25]), 2.0) == pytest.approx([0.1484375])
    # kappa 0: the quantile loss |tau - 1{u<0}| |u|: 0.25 * 2 = 0.5, 0.75 * 0.5 = 0.375 -> 0.4375
    assert qhl([[0.0]], [[2.0, -0.5]], tf.constant([0.25]), 0.0) == pytest.approx([0.4375])


def test_quantile_huber_loss_gradient_hand_computed():
    # d rho / d theta = -|tau - 1{u<0}| clip(u, -kappa, kappa) / kappa, averaged over targets
    # kappa 1: u = 2 -> -0.25 * 1 = -0.25; u = -0.5 -> -0.75 * -0.5 = 0.375; mean 0.0625
    # kappa 0: u = 2 -> -tau = -0.25; u = -0.5 -> 1 - tau = 0.75; mean 0.25
    for kappa, expected in [(1.0, 0.0625), (0.0, 0.25), (2.0, (-0.25 + 0.1875) / 2)]:
        theta = tf.Variable([[0.0]])
        targets = tf.Variable([[2.0, -0.5]])
        with tf.GradientTape(persistent=True) as tape:
            loss = dist.quantile_huber_loss(theta, targets, tf.constant([0.25]), kappa)
        assert tape.gradient(loss, theta).numpy()[0, 0] == pytest.approx(expected)
        assert tape.gradient(loss, targets) is None  # the target carries no gradient


def test_quantile_huber_loss_sums_over_quantiles_and_averages_over_targets():
    # theta 0, 1 at tau 0.25, 0.75; targets 0.5, 2; kappa 1
    # i=0: u=0.5 -> 0.125*0.25 = 0.03125; u=2 -> 1.5*0.25 = 0.375; mean 0.203125
    # i=1: u=-0.5 -> 0.125*|0.75-1| = 0.03125; u=1 -> 0.5*0.75 = 0.375; mean 0.203125
    # sum 0.40625
    taus = tf.constant([0.25, 0.75])
    assert qhl([[0.0, 1.0]], [[0.5, 2.0]], taus, 1.0) == pytest.approx([0.40625])
    # the same taus given per example [B, N] give the same
    assert qhl([[0.0, 1.0]], [[0.5, 2.0]], tf.constant([[0.25, 0.75]]), 1.0) == pytest.approx(
        [0.40625]
    )


def test_quantile_loss_closed_form_for_one_quantile():
    # N = 1, kappa 0: loss(theta) = mean_j tau (T_j - theta)^+ + (1 - tau) (theta - T_j)^+,
    # minimised at the tau-quantile of the targets: check values and the minimiser
    rng = np.random.default_rng(3)
    targets = rng.normal(size=(1, 101)).astype(np.float32)
    tau = 0.3
    grid = np.linspace(-3, 3, 601).astype(np.float32)
    losses = np.array([qhl([[t]], targets, tf.constant([tau]), 0.0)[0] for t in grid[::20]])
    u = targets[0][None, :] - grid[::20, None]
    closed = np.mean(tau * np.maximum(u, 0) + (1 - tau) * np.maximum(-u, 0), axis=1)
    np.testing.assert_allclose(losses, closed, rtol=1e-5)
    batch = dist.quantile_huber_loss(
        tf.constant(grid[:, None]), tf.constant(np.repeat(targets, 601, 0)), [tau], 0.0
    ).numpy()
    best = grid[np.argmin(batch)]
    assert abs(best - np.quantile(targets, tau, method="inverted_cdf")) < 0.011


def test_qr_dqn_uses_midpoints_and_pcont():
    # N = 2: midpoints 0.25, 0.75; online at the taken action: 0, 1
    # target raw -1, 2 at next action; r 1, pcont 0.5 -> T = 0.5, 2: as the hand case, 0.40625
    quantiles = tf.constant([[[9.0, 9.0], [0.0, 1.0]]])
    target = tf.constant([[[-1.0, 2.0], [100.0, 100.0]]])
    out = dist.quantile_q_learning(
        quantiles, tf.constant([1]), tf.constant([1.0]), tf.constant([0.5]), target, [0]
    )
    assert out.loss.numpy() == pytest.approx([0.40625])
    np.testing.assert_allclose(dist.quantile_midpoints(4).numpy(), [0.125, 0.375, 0.625, 0.875])
    with pytest.raises(ValueError, match="num_quantiles"):
        dist.quantile_midpoints(1)
    with pytest.raises(ValueError, match="kappa"):
        dist.quantile_huber_loss(tf.zeros([1, 2]), tf.zeros([1, 2]), [0.25, 0.75], -1.0)


def test_iqn_loss_over_n_by_n_prime_pairs_with_per_example_taus():
    # example 0: online 0, 1 at sampled taus 0.1, 0.8; three target values (N' = 3)
    # r 0, pcont 0 (terminal): T = 0, 0, 0
    # i=0 (tau 0.1): u = 0 for all -> 0; i=1 (tau 0.8): u = -1 -> L = 0.5, weight 0.2 -> 0.1
    # loss 0.1. Example 1: the same values, taus 0.5, 0.3, r 2, pcont 1, raw 0, 1, -1 ->
    # T = 2, 3, 1. i=0 (theta 0, tau 0.5): u = 2, 3, 1 -> L = 1.5, 2.5, 0.5 * 0.5 -> mean 0.75
    # i=1 (theta 1, tau 0.3): u = 1, 2, 0 -> L = 0.5, 1.5, 0 * 0.3 -> mean 0.2; total 0.95
    quantiles = tf.constant([[[0.0, 1.0]], [[0.0, 1.0]]])
    target = tf.constant([[[5.0, 5.0, 5.0]], [[0.0, 1.0, -1.0]]])
    taus = tf.constant([[0.1, 0.8], [0.5, 0.3]])
    out = dist.quantile_q_learning(
        quantiles,
        tf.constant([0, 0]),
        tf.constant([0.0, 2.0]),
        tf.constant([0.0, 1.0]),
        target,
        tf.constant([0, 0]),
        kappa=1.0,
        taus=taus,
    )
    np.testing.assert_allclose(out.loss.numpy(), [0.1, 0.95], rtol=1e-6)


def test_cosine_embedding_paper_and_dopamine_indices():
    taus = tf.constant([[0.5, 1 / 3]])
    paper = dist.iqn_cosine_embedding(taus, embedding_dim=4).numpy()
    assert paper.shape == (1, 2, 4)
    # i = 0..3: cos(0), cos(pi/2), cos(pi), cos(3pi/2) at 0.5; 1, 0.5, -0.5, -1 at 1/3
    np.testing.assert_allclose(paper[0], [[1, 0, -1, 0], [1, 0.5, -0.5, -1]], atol=1e-6)
    dopamine = dist.iqn_cosine_embedding(taus, embedding_dim=4, first_index=1).numpy()
    np.testing.assert_allclose(dopamine[0, :, :3], paper[0, :, 1:], atol=1e-6)
    np.testing.assert_allclose(dopamine[0, :, 3], [1.0, -0.5], atol=1e-6)  # cos(2pi), cos(4pi/3)
    assert dist.iqn_cosine_embedding(tf.zeros([3, 8])).shape == (3, 8, 64)


@pytest.mark.slow
def test_ops_run_inside_xla():
    atoms = dist.categorical_atoms(-10.0, 10.0, 51)

    @tf.function(jit_compile=True)
    def both(logits, quantiles, taus):
        a = tf.zeros([4], tf.int32)
        c51 = dist.categorical_q_learning(logits, a, tf.ones([4]), tf.ones([4]), logits, atoms, a)
        iqn = dist.quantile_q_learning(
            quantiles, a, tf.ones([4]), tf.ones([4]), quantiles, a, 1.0, taus
        )
        return c51.loss, iqn.loss, dist.iqn_cosine_embedding(taus)

    c51, iqn, emb = both(tf.zeros([4, 3, 51]), tf.zeros([4, 3, 8]), tf.fill([4, 8], 0.5))
    assert c51.shape == iqn.shape == (4,) and emb.shape == (4, 8, 64)


def test_dopamine_transcriptions_agree():
    # tests/fixtures/dopamine_reference.py: Dopamine's project_distribution, C51 loss, QR-DQN
    # and IQN losses and cosine features transcribed to numpy (labs/dopamine_family_ops.py
    # prints the same comparisons); docs/dqn-family.md has the numbers
    from tests.fixtures import dopamine_reference as lab

    rng = np.random.default_rng(0)
    projection, c51 = lab.compare_c51(rng)
    assert projection < 1e-6 and c51 < 1e-5
    found = lab.compare_quantile(rng)
    assert found["QR-DQN kappa=1.0: max |ours - dopamine|"] < 1e-4
    assert found["QR-DQN kappa=2.0: max |ours - dopamine|"] > 1.0  # Dopamine's has no 1/kappa
    assert found["QR-DQN kappa=2.0: max |kappa * ours - dopamine|"] < 1e-4
    assert found["IQN kappa=2.0: max |ours - dopamine|"] < 1e-4
    assert found["cosine features, first_index=1: max |ours - dopamine|"] < 1e-5
    # and the replay side: Dopamine's JAX sum tree and Rainbow's weights (numpy already)
    tree = lab.compare_sum_tree(rng)
    assert tree["leaves: max |ours - dopamine|"] < 1e-12  # Dopamine adds deltas: it drifts
    assert tree["find: share of 100k targets on the same leaf"] > 0.999
    assert tree["slot 1 set to 3 then 5 in one call: ours"] == 5.0
    assert tree["slot 1 set to 3 then 5 in one call: dopamine"] == 3.0
    assert lab.compare_weights(rng) < 1e-6
