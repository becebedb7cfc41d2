"""DDPG's and TD3's whole training loop as one XLA-compiled program, for rlkit's continuous
TensorFlow environments (``rlkit/Pendulum-v1``, ``rlkit/MountainCarContinuous-v0``).

:class:`DDPGProgram` is the :class:`~rlkit.run.compiled.program.CompiledProgram` of a DDPG
agent (TD3 with ``td3 = true``): each vector step does what the Python loop does,

- acting at step ``t``: uniform actions in the box before ``learning_starts``, then
  ``clip(mu(s) + noise_scale * half_range * N(0, 1))`` (Gaussian noise; Ornstein-Uhlenbeck
  noise runs in the Python loop only);
- ``blocks_due(before, now, train_freq, max(learning_starts, batch_size))`` blocks of
  ``gradient_steps`` updates, each a critic step on a fresh minibatch (TD3's target
  smoothing noise drawn in the graph) and, every ``policy_delay`` critic steps counted over
  the run, an actor step with the EMA target update: the learner's own steps, losses and
  optimizers, the learning rates scaled by their schedule at ``now``. The minibatches are
  uniform, or with ``prioritized`` drawn by priority for a whole block before it and the
  first critic's TD errors written back after it; with ``n_step > 1`` the replay's n-step
  view (:meth:`~rlkit.run.compiled.program.CompiledProgram.prioritized_block`,
  :meth:`~rlkit.run.compiled.program.CompiledProgram.gather`), as the Python loop does.

Its metric sums are ``(critic_loss, actor_loss * policy_delay where an actor step ran,
q)``: divided by the updates, the second is the mean over actor steps.

Its in-graph twins live beside their originals, each tied by a test: the exploring action
(:func:`rlkit.agents.ddpg.acting.graph_noisy_action`) and TD3's smoothing noise
(:meth:`rlkit.agents.ddpg.td3.LearnerTerms.graph_smoothing_noise`); the actor steps'
places and count are :class:`~rlkit.agents.ddpg.td3.LearnerTerms`' own, shared with
the Python loop's learner.
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.agents.ddpg.acting import graph_noisy_action
from rlkit.core.schedules import graph_blocks_due, graph_linear
from rlkit.envs.tf.base import split_seed
from rlkit.run.compiled.program import CompiledProgram


class DDPGProgram(CompiledProgram):
    """The compiled loop of a :class:`~rlkit.agents.ddpg.agent.DDPG` agent (see
    :class:`~rlkit.run.compiled.program.CompiledProgram` for the arguments)."""

    metric_names = ("critic_loss", "actor_loss", "q")

    def __init__(self, agent, env, num_envs: int, seed: int, chunk: int) -> None:
        super().__init__(agent, env, num_envs, seed, chunk)
        self.bounds = agent.bounds
        #: critic updates over the run (places TD3's delayed actor steps)
        self.updates_done = tf.Variable(tf.constant(0, tf.int64), trainable=False, name="updates")

    def own_variables(self) -> dict[str, tf.Variable]:
        return {"updates_done": self.updates_done}

    def after_chunk(self, updates: int) -> None:
        """The learner's counters (critic and actor updates); acting's numpy copy is taken
        from the variables afresh."""
        learner = self.learner
        before = learner.num_updates
        learner.num_updates += updates
        learner.num_actor_updates += learner.terms.actor_updates(before, learner.num_updates)
        learner.weights_changed()
        self.check_priorities()

    def act(self, obs, step, seed):
        """float32 ``[N, act_dim]`` actions in the box: uniform before ``learning_starts``,
        else the actor's plus Gaussian noise, clipped."""
        cfg, mu = self.config, self.learner.actor.model(obs)
        return graph_noisy_action(mu, step, seed, self.bounds, cfg.noise_scale,
                                  cfg.learning_starts)  # fmt: skip

    def learn(self, before, now, seed):
        """The blocks of critic (and delayed actor) updates due: ``(metric sums [3],
        updates int64)``."""
        cfg, learner = self.config, self.learner
        start = max(cfg.learning_starts, cfg.batch_size)
        blocks = graph_blocks_due(before, now, cfg.train_freq, start)
        blocks = tf.where(self.replay.size >= cfg.batch_size, blocks, tf.zeros_like(blocks))
        per_block = cfg.train_freq if cfg.gradient_steps == -1 else cfg.gradient_steps
        updates = blocks * per_block
        if cfg.lr_end_fraction >= 0:
            scale = tf.cast(graph_linear(now, 1.0, cfg.lr_end_fraction, cfg.lr_anneal_steps,
                                   cfg.learning_starts), tf.float32)  # fmt: skip
            learner.actor_pipeline.optimizer.learning_rate.assign(cfg.actor_learning_rate * scale)
            learner.critic_pipeline.optimizer.learning_rate.assign(cfg.critic_learning_rate * scale)
        terms, delay = learner.terms, learner.terms.policy_delay
        half_range = tf.constant(self.bounds.half_range)

        def critic_and_actor(batch, smooth_seed, sums):
            obs, actions, rewards, next_obs, pcont, weights = batch
            shape = [cfg.batch_size, self.bounds.dim]
            smoothing = terms.graph_smoothing_noise(smooth_seed, shape, half_range)
            critic_loss, q, td_error = learner.critic_step(obs, actions, rewards, next_obs,
                                                           pcont, weights, smoothing)  # fmt: skip
            self.updates_done.assign_add(1)
            if delay > 1:
                due = terms.actor_due(self.updates_done)
                actor_loss = tf.cond(
                    due, lambda: learner.actor_step(obs) * delay, lambda: tf.constant(0.0)
                )
            else:
                actor_loss = learner.actor_step(obs)
            return sums + tf.stack([critic_loss, actor_loss, q]), td_error

        def update(k, sums):
            batch_seed, smooth_seed = tf.unstack(
                split_seed(tf.random.experimental.stateless_fold_in(seed, k), 2)
            )
            sums, _ = critic_and_actor(self.minibatch(batch_seed), smooth_seed, sums)
            return k + 1, sums

        def prioritized_block(j, sums):
            block_seed, smooth_key = tf.unstack(
                split_seed(tf.random.experimental.stateless_fold_in(seed, j), 2)
            )

            def block_update(batch, k, sums):
                smooth_seed = tf.random.experimental.stateless_fold_in(smooth_key, k)
                return critic_and_actor(batch, smooth_seed, sums)

            return j + 1, self.prioritized_block(block_seed, now, per_block, block_update, sums)

        sums = self.run_updates(updates, update, blocks, prioritized_block)
        return sums, updates
