"""The DQN family in the compiled loop: prioritized blocks drawn as the Python loop draws
them, beta's schedule equal to the agent's, and each value learner (C51, QR-DQN, DQN with
prioritized n-step replay) running its program on a TensorFlow environment."""

import numpy as np
import pytest
import tensorflow as tf

CARTPOLE = "rlkit/CartPole-v1"
SMALL = {"hidden_sizes": [16], "batch_size": 8, "buffer_size": 200, "learning_starts": 32,
         "train_freq": 4, "target_update": 40, "eps_anneal_steps": 100}  # fmt: skip


def _trainer(agent, tmp_path, **overrides):
    from rlkit.run import experiment
    from rlkit.run.compiled.trainer import CompiledTrainer

    plan = experiment.plan(agent, CARTPOLE, steps=400, seed=1, num_envs=2, eval_every=0,
                           checkpoint_every=0, overrides={**SMALL, **overrides})  # fmt: skip
    trainer = experiment.start(plan, tmp_path, tensorboard=False)
    assert isinstance(trainer, CompiledTrainer)
    return trainer


@pytest.mark.slow
def test_a_prioritized_block_draws_its_minibatches_before_any_priority_changes(tmp_path):
    trainer = _trainer("dqn", tmp_path, prioritized=True, n_step=2, gradient_steps=3,
                       importance_exponent=0.4, importance_anneal_steps=1000)  # fmt: skip
    trainer.run(200)
    program, learner = trainer.program, trainer.agent.learner
    tree = program.priorities.tree
    before_block = tree.nodes.numpy()
    seen = []
    update_step = learner.update_step

    def spy(*batch):
        seen.append(batch[5].numpy())  # the importance weights of each minibatch
        return update_step(*batch)

    learner.update_step = spy
    seed, step = tf.constant([5, 6], tf.int32), tf.constant(200, tf.int64)
    program.learn(step, step + 4, seed)  # one block of 3 updates is due
    trainer.close()
    assert len(seen) == 3
    after_block = tree.nodes.numpy()
    assert not np.array_equal(after_block, before_block)  # the TD errors were written back
    tree.nodes.assign(before_block)  # what the block drew from the priorities before it
    beta = program.importance_exponent(step + 4)
    block_seed = tf.random.experimental.stateless_fold_in(seed, tf.constant(0, tf.int64))
    _, expected = program.priorities.sample(8, block_seed, program.replay.size, beta, 3)
    np.testing.assert_array_equal(np.stack(seen), expected.numpy())


@pytest.mark.parametrize("anneal", [0, 1000])
def test_beta_in_the_program_is_the_agents_at_every_step(tmp_path, anneal):
    trainer = _trainer("dqn", tmp_path, prioritized=True, importance_exponent=0.4,
                       importance_anneal_steps=anneal)  # fmt: skip
    for step in (0, 31, 32, 33, 500, 1031, 1032, 5000):
        in_graph = float(trainer.program.importance_exponent(tf.constant(step, tf.int64)))
        assert in_graph == pytest.approx(trainer.agent.importance_exponent(step), abs=1e-15)
    trainer.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    "agent, overrides",
    [("c51", {"n_step": 3, "prioritized": True, "gradient_steps": 2}),
     ("qrdqn", {"num_quantiles": 8, "gradient_steps": 1}),
     ("dqn", {"n_step": 3, "prioritized": True, "gradient_steps": 2})],
)  # fmt: skip
def test_each_value_learner_runs_its_program(tmp_path, agent, overrides):
    trainer = _trainer(agent, tmp_path, **overrides)
    trainer.run(400)
    trainer.close()
    learner = trainer.agent.learner
    blocks = 400 // 4 - 31 // 4  # a block at each multiple of 4 from step 32 on
    assert learner.num_updates == blocks * trainer.agent.config.gradient_steps
    assert trainer.history.episode_returns  # episodes ended and were recorded
    weights = learner.q.model.get_weights()
    assert all(np.all(np.isfinite(w)) for w in weights)
    if trainer.program.priorities is not None:
        assert int(trainer.program.priorities.nonfinite.numpy()) == 0


@pytest.mark.slow
def test_rainbow_with_noisy_networks_draws_noise_each_step_and_resumes_exactly(tmp_path):
    from rlkit.run import experiment

    noisy = {"hidden_sizes": [16], "batch_size": 8, "buffer_size": 200, "learning_starts": 32,
             "train_freq": 4, "gradient_steps": 1, "target_update": 40}  # fmt: skip
    straight = _trainer("rainbow", tmp_path / "a", **noisy)  # noisy, dueling, double, PER, 3-step
    config = straight.agent.config
    assert config.noisy and config.dueling and config.prioritized and config.n_step == 3
    straight.run(400)
    straight.close()
    learner = straight.agent.learner
    # the online network's generators: one draw a vector step (acting) and one per update
    # for the online pass (plus Double DQN's at the next state)
    draws = [int(v.numpy()[1]) for v in learner.q.noise_variables]
    assert min(draws) >= 400 // 2 + learner.num_updates

    plan = experiment.plan("rainbow", CARTPOLE, steps=400, seed=1, num_envs=2, eval_every=0,
                           checkpoint_every=100, overrides={**SMALL, **noisy})  # fmt: skip
    stopped = experiment.start(plan, tmp_path / "b", tensorboard=False)
    stopped.run(200)
    stopped.close()
    resumed, _ = experiment.resume(stopped.run_dir)
    resumed.run(400)
    resumed.close()
    for a, b in zip(learner.q.model.get_weights(), resumed.agent.learner.q.model.get_weights(),
                    strict=True):  # fmt: skip
        np.testing.assert_array_equal(a, b)
    rows = (straight.run_dir / "metrics.csv").read_text().splitlines()
    assert rows == (resumed.run_dir / "metrics.csv").read_text().splitlines() and len(rows) > 5


@pytest.mark.slow
def test_td3_with_prioritized_n_step_replay_runs_its_program_and_resumes_exactly(tmp_path):
    from rlkit.run import experiment
    from rlkit.run.compiled.trainer import CompiledTrainer

    overrides = {"td3": True, "prioritized": True, "n_step": 3, "gradient_steps": 2,
                 "batch_size": 16, "buffer_size": 300, "learning_starts": 64,
                 "actor_hidden_sizes": [16], "critic_hidden_sizes": [16]}  # fmt: skip

    def plan(checkpoint_every):
        return experiment.plan("ddpg", "rlkit/Pendulum-v1", steps=400, seed=2, num_envs=2,
                               eval_every=0, checkpoint_every=checkpoint_every,
                               overrides=overrides)  # fmt: skip

    straight = experiment.start(plan(0), tmp_path / "a", tensorboard=False)
    assert isinstance(straight, CompiledTrainer) and straight.program.replay.horizon == 3
    straight.run(400)
    straight.close()
    program = straight.program
    size = int(program.replay.size.numpy())
    leaves = program.priorities.tree.get(tf.range(size)).numpy()
    assert np.all(leaves > 0) and len(np.unique(leaves)) > 50  # the critic's TD errors
    stopped = experiment.start(plan(100), tmp_path / "b", tensorboard=False)
    stopped.run(200)
    stopped.close()
    resumed, _ = experiment.resume(stopped.run_dir)
    resumed.run(400)
    resumed.close()
    for name, value in program.state_dict().items():
        np.testing.assert_array_equal(resumed.program.state_dict()[name], value, err_msg=name)
    for a, b in zip(straight.agent.learner.actor.model.get_weights(),
                    resumed.agent.learner.actor.model.get_weights(), strict=True):  # fmt: skip
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow
@pytest.mark.parametrize(
    "env_id, overrides",
    [("rlkit/Pendulum-v1", {"prioritized": True, "n_step": 3, "temperature_loss": "log_alpha",
                            "target_update_interval": 2}),
     ("rlkit/MountainCarContinuous-v0", {"use_sde": True, "sde_sample_freq": 3})],
)  # fmt: skip
def test_sac_runs_its_program_and_resumes_exactly(tmp_path, env_id, overrides):
    """SAC in the compiled loop: alpha learned, a run stopped at a checkpoint and resumed ends
    where the uninterrupted one does, bit for bit (discrete SAC's program differs only in its
    acting twin, tied by tests/unit/agents/test_sac_twins.py, and runs in
    tests/unit/agents/test_sac_discrete.py's rlkit/CartPole-v1 case)."""
    from rlkit.run import experiment
    from rlkit.run.compiled.trainer import CompiledTrainer

    settings = {"batch_size": 16, "buffer_size": 300, "learning_starts": 64, "train_freq": 4,
                "gradient_steps": 2, "actor_hidden_sizes": [16], "critic_hidden_sizes": [16],
                **overrides}  # fmt: skip

    def plan(checkpoint_every):
        return experiment.plan("sac", env_id, steps=400, seed=3, num_envs=2, eval_every=0,
                               checkpoint_every=checkpoint_every, overrides=settings)  # fmt: skip

    straight = experiment.start(plan(0), tmp_path / "a", tensorboard=False)
    assert isinstance(straight, CompiledTrainer)
    straight.run(400)
    straight.close()
    assert straight.agent.num_updates > 0 and straight.agent.alpha != 1.0
    stopped = experiment.start(plan(100), tmp_path / "b", tensorboard=False)
    stopped.run(200)
    stopped.close()
    resumed, _ = experiment.resume(stopped.run_dir)
    resumed.run(400)
    resumed.close()
    state = straight.program.state_dict()
    assert ("gsde_matrices" in state) == bool(overrides.get("use_sde"))  # (held across a stop)
    for name, value in state.items():
        np.testing.assert_array_equal(resumed.program.state_dict()[name], value, err_msg=name)
    for group, variables in straight.agent.checkpoint_variables().items():
        for a, b in zip(variables, resumed.agent.checkpoint_variables()[group], strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=group)


@pytest.mark.slow
def test_discrete_sac_runs_its_program(tmp_path):
    """Discrete SAC's program on rlkit/CartPole-v1: it acts, learns and moves alpha."""
    from rlkit.run import experiment
    from rlkit.run.compiled.trainer import CompiledTrainer

    settings = {"batch_size": 16, "buffer_size": 300, "learning_starts": 64, "train_freq": 4,
                "gradient_steps": 2, "actor_hidden_sizes": [16], "critic_hidden_sizes": [16],
                "target_update_interval": 2}  # fmt: skip
    plan = experiment.plan("sac", CARTPOLE, steps=200, seed=3, num_envs=2, eval_every=0,
                           checkpoint_every=0, overrides=settings)  # fmt: skip
    trainer = experiment.start(plan, tmp_path, tensorboard=False)
    assert isinstance(trainer, CompiledTrainer) and trainer.agent.discrete
    trainer.run(200)
    trainer.close()
    assert trainer.agent.num_updates > 0 and trainer.agent.alpha != 1.0
    assert int(trainer.program.updates_done.numpy()) == trainer.agent.num_updates
