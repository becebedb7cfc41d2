"""SAC's whole training loop as one XLA-compiled program, for rlkit's TensorFlow environments:
``rlkit/Pendulum-v1`` and ``rlkit/MountainCarContinuous-v0`` (SAC), ``rlkit/CartPole-v1``,
``rlkit/Acrobot-v1``, ``rlkit/MountainCar-v0`` and MinAtar's games (discrete SAC).

:class:`SACProgram` is the :class:`~rlkit.run.compiled.program.CompiledProgram` of a
:class:`~rlkit.agents.sac.agent.SAC` agent: each vector step does what the Python loop does,

- acting at step ``t``: uniform actions before ``learning_starts``, then a sample of the
  policy (:func:`rlkit.agents.sac.acting.graph_sac_action`, the squashed Gaussian;
  :func:`rlkit.agents.sac.discrete.graph_categorical_action`, the categorical; with gSDE
  :func:`rlkit.agents.sac.acting.graph_sac_sde_action`, each copy's exploration matrix held
  in the program's variables as acting's ``ExplorationMatrices`` holds it), the in-graph
  twins of the Python loop's acting, tied to it by ``tests/unit/agents/test_sac_twins.py``;
- ``blocks_due(before, now, train_freq, max(learning_starts, batch_size))`` blocks of
  ``gradient_steps`` updates, each the learner's own ``update_step`` (temperature, critics,
  actor, EMA targets) on a fresh minibatch, its standard normal draws stateless; uniform or
  prioritized minibatches, n-step returns, as the program's other agents.

Its metric sums are ``(critic_loss, actor_loss, alpha)``.
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.agents.sac.acting import graph_sac_action, graph_sac_sde_action
from rlkit.agents.sac.discrete import graph_categorical_action
from rlkit.core.schedules import graph_blocks_due, graph_linear
from rlkit.envs.tf.base import split_seed
from rlkit.learn.gsde import HeldNoise, gsde_std
from rlkit.run.compiled.program import CompiledProgram


class SACProgram(CompiledProgram):
    """The compiled loop of a :class:`~rlkit.agents.sac.agent.SAC` agent (see
    :class:`~rlkit.run.compiled.program.CompiledProgram` for the arguments)."""

    metric_names = ("critic_loss", "actor_loss", "alpha")

    def __init__(self, agent, env, num_envs: int, seed: int, chunk: int) -> None:
        super().__init__(agent, env, num_envs, seed, chunk)
        self.discrete = agent.discrete
        #: updates over the run (places the target updates of target_update_interval)
        self.updates_done = tf.Variable(tf.constant(0, tf.int64), trainable=False, name="updates")
        self.held: HeldNoise | None = None
        if self.config.use_sde:  # gSDE's matrices, one per copy, as acting's ExplorationMatrices
            shape = [self.num_envs, agent.learner.actor.latent_dim, agent.bounds.dim]
            self.held = HeldNoise(
                tf.Variable(tf.zeros(shape), trainable=False, name="gsde_matrices"),
                tf.Variable(tf.constant(-1, tf.int64), trainable=False, name="gsde_clock"),
                tf.Variable(tf.constant(-1, tf.int64), trainable=False, name="gsde_mark"),
            )

    def own_variables(self) -> dict[str, tf.Variable]:
        held = {} if self.held is None else {f"gsde_{k}": v for k, v in self.held._asdict().items()}
        return {"updates_done": self.updates_done, **held}

    def after_chunk(self, updates: int) -> None:
        self.learner.num_updates += updates
        self.learner.weights_changed()
        self.check_priorities()

    def act(self, obs, step, seed):
        """Exploring actions for ``obs``: int32 ``[N]`` (discrete) or float32 ``[N, A]``."""
        cfg, actor = self.config, self.learner.actor
        if self.held is not None:
            latent, mean = actor.latent_and_mean(obs)
            std = gsde_std(actor.log_std, self.agent.bounds.dim, cfg.use_expln)
            held = HeldNoise(*(v.read_value() for v in self.held))
            actions, after = graph_sac_sde_action(latent, mean, std, held, step, seed,
                                                  self.agent.bounds, cfg)  # fmt: skip
            for variable, value in zip(self.held, after, strict=True):
                variable.assign(value)
            return actions
        out = actor.model(obs)
        if self.discrete:
            return graph_categorical_action(out, step, seed, cfg.learning_starts)
        return graph_sac_action(out, step, seed, self.agent.bounds, cfg)

    def learn(self, before, now, seed):
        """The blocks of updates due: ``(metric sums [3], updates int64)``."""
        cfg, learner = self.config, self.learner
        start = max(cfg.learning_starts, cfg.batch_size)
        blocks = graph_blocks_due(before, now, cfg.train_freq, start)
        blocks = tf.where(self.replay.size >= cfg.batch_size, blocks, tf.zeros_like(blocks))
        per_block = cfg.train_freq if cfg.gradient_steps == -1 else cfg.gradient_steps
        updates = blocks * per_block
        if cfg.lr_end_fraction >= 0:
            scale = graph_linear(now, 1.0, cfg.lr_end_fraction, cfg.lr_anneal_steps,
                                 cfg.learning_starts)  # fmt: skip
            rate = cfg.learning_rate * tf.cast(scale, tf.float32)
            for pipeline in (learner.actor_pipeline, learner.critic_pipeline,
                             learner.alpha_pipeline):  # fmt: skip
                pipeline.optimizer.learning_rate.assign(rate)

        def one_update(batch, noise_seed, sums):
            obs, actions, rewards, next_obs, pcont, weights = batch
            index = self.updates_done.read_value()
            if self.discrete:
                out = learner.update_step(obs, tf.cast(actions, tf.int32), rewards, next_obs,
                                          pcont, weights, index)  # fmt: skip
            elif self.held is not None:  # one exploration matrix an update, for s and s'
                shape = [learner.actor.latent_dim, self.agent.bounds.dim]
                noise = tf.random.stateless_normal(shape, noise_seed)
                out = learner.update_step(obs, actions, rewards, next_obs, pcont, weights,
                                          noise, noise, index)  # fmt: skip
            else:
                shape = [cfg.batch_size, 2, self.agent.bounds.dim]
                noise = tf.random.stateless_normal(shape, noise_seed)
                out = learner.update_step(obs, actions, rewards, next_obs, pcont, weights,
                                          noise[:, 0], noise[:, 1], index)  # fmt: skip
            critic_loss, actor_loss, _, alpha, _, _, td_error = out
            self.updates_done.assign_add(1)
            return sums + tf.stack([critic_loss, actor_loss, alpha]), td_error

        def update(k, sums):
            batch_seed, noise_seed = tf.unstack(
                split_seed(tf.random.experimental.stateless_fold_in(seed, k), 2)
            )
            sums, _ = one_update(self.minibatch(batch_seed), noise_seed, sums)
            return k + 1, sums

        def prioritized_block(j, sums):
            block_seed, noise_key = tf.unstack(
                split_seed(tf.random.experimental.stateless_fold_in(seed, j), 2)
            )

            def block_update(batch, k, sums):
                return one_update(batch, tf.random.experimental.stateless_fold_in(noise_key, k),
                                  sums)  # fmt: skip

            return j + 1, self.prioritized_block(block_seed, now, per_block, block_update, sums)

        sums = self.run_updates(updates, update, blocks, prioritized_block)
        return sums, updates
