"""DQN's whole training loop as one XLA-compiled program, for rlkit's TensorFlow environments.

:class:`DQNProgram` is the :class:`~rlkit.run.compiled_program.CompiledProgram` of a DQN
agent: each vector step does what the Python loop does,

- acting at step ``t`` (the count before the vector step) epsilon-greedy on the online
  network with the run's epsilon schedule at ``t``; a vector step adds ``N`` to the count;
- ``blocks_due(before, now, train_freq, max(learning_starts, batch_size))`` blocks of
  ``gradient_steps`` updates once a minibatch is stored, each on a fresh uniform minibatch
  through the learner's own update step (its loss, gradient transforms and optimizer), the
  learning rate set from its schedule at ``now``;
- a hard copy when the count passes a multiple of ``target_update`` and the online network
  changed since the last copy (Polyak averaging inside each update with ``target_tau``).
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.agents.dqn_config import anneal_start
from rlkit.envs.tf.base import split_seed
from rlkit.run.compiled_program import CompiledProgram, blocks_due, linear


class DQNProgram(CompiledProgram):
    """The compiled loop of a :class:`~rlkit.agents.dqn.DQN` agent (see
    :class:`~rlkit.run.compiled_program.CompiledProgram` for the arguments)."""

    def __init__(self, agent, env, num_envs: int, seed: int, chunk: int) -> None:
        super().__init__(agent, env, num_envs, seed, chunk)
        self.target_stale = tf.Variable(False, trainable=False, name="target_stale")

    def own_variables(self) -> dict[str, tf.Variable]:
        return {"target_stale": self.target_stale}

    def act(self, obs, step, seed):
        """Epsilon-greedy actions int32 ``[N]`` at env step ``step`` (the run's schedule)."""
        cfg = self.config
        epsilon = linear(step, cfg.eps_start, cfg.eps_end, cfg.eps_anneal_steps,
                         anneal_start(cfg))  # fmt: skip
        greedy = tf.argmax(self.learner.q.model(obs), axis=-1, output_type=tf.int32)
        coin_seed, action_seed = tf.unstack(split_seed(seed, 2))
        explore = tf.random.stateless_uniform([self.num_envs], coin_seed, dtype=tf.float64)
        num_actions = self.agent.num_actions
        random = tf.random.stateless_uniform(
            [self.num_envs], action_seed, minval=0, maxval=num_actions, dtype=tf.int32
        )
        return tf.where(explore < epsilon, random, greedy)

    def learn(self, before, now, seed):
        """The blocks of updates due between step counts ``before`` and ``now``, then the
        target copy due: ``(metric sums [3], updates int64)``."""
        cfg, learner = self.config, self.learner
        start = max(cfg.learning_starts, cfg.batch_size)
        blocks = blocks_due(before, now, cfg.train_freq, start)
        blocks = tf.where(self.replay.size >= cfg.batch_size, blocks, tf.zeros_like(blocks))
        per_block = cfg.train_freq if cfg.gradient_steps == -1 else cfg.gradient_steps
        updates = blocks * per_block
        if cfg.learning_rate_end >= 0:  # DQN3.0's annealed rate, at the step count ``now``
            rate = linear(now, cfg.learning_rate, cfg.learning_rate_end, cfg.lr_anneal_steps,
                          anneal_start(cfg))  # fmt: skip
            learner.pipeline.optimizer.learning_rate.assign(tf.cast(rate, tf.float32))

        def update(k, sums):
            batch_seed = tf.random.experimental.stateless_fold_in(seed, k)
            obs, actions, rewards, next_obs, terminated = self.replay.sample(
                cfg.batch_size, batch_seed
            )
            pcont = cfg.gamma * (1.0 - terminated)
            ones = tf.ones([cfg.batch_size])  # made here, not captured: one HLO for every seed
            metrics, _ = learner.update_step(obs, actions, rewards, next_obs, pcont, ones)
            return k + 1, sums + tf.stack(metrics)

        _, sums = tf.while_loop(
            lambda k, sums: k < updates, update, (tf.constant(0, tf.int64), tf.zeros([3]))
        )
        if cfg.target_tau == 0:
            stale = tf.logical_or(self.target_stale, updates > 0)
            copy = tf.logical_and(stale, now // cfg.target_update > before // cfg.target_update)

            def hard_copy():
                learner.hard_copy.update()
                return tf.constant(False)

            self.target_stale.assign(tf.cond(copy, hard_copy, lambda: stale))
        return sums, updates
