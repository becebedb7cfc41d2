"""DQN's whole training loop as one XLA-compiled program, for rlkit's TensorFlow environments.

:class:`DQNProgram` is the :class:`~rlkit.run.compiled.program.CompiledProgram` of a DQN
agent: each vector step does what the Python loop does,

- acting at step ``t`` (the count before the vector step) epsilon-greedy on the online
  network with the run's epsilon schedule at ``t``; a vector step adds ``N`` to the count;
- ``blocks_due(before, now, train_freq, max(learning_starts, batch_size))`` blocks of
  ``gradient_steps`` updates once a minibatch is stored, each on a fresh uniform minibatch
  through the learner's own update step (its loss, gradient transforms and optimizer), the
  learning rate set from its schedule at ``now``;
- a hard copy when the count passes a multiple of ``target_update`` and the online network
  changed since the last copy (Polyak averaging inside each update with ``target_tau``).

The DQN family's learners with a value head of their own (C51, QR-DQN, Rainbow) run the same
program: acting reads each action's expected value through the head (a noisy network's with
fresh noise on every step, as the Python loop acts); with ``n_step > 1`` the
minibatch is the replay's n-step view (:meth:`~rlkit.replay.in_graph.GraphReplay.n_step`);
with ``prioritized`` the slots are drawn by priority and weighted
(:class:`~rlkit.replay.graph_priorities.GraphPrioritized`), new transitions get the largest
priority recorded, and as in the Python loop a block's ``gradient_steps`` minibatches are
drawn before it and its TD errors written back as priorities after it (beta annealed from
``importance_exponent`` to 1 over ``importance_anneal_steps`` after ``learning_starts``, or
fixed); the random numbers are the program's own. A TD error that is not finite leaves its
slot's priority as it was and stops the run after the chunk (``TrainingDiverged``; the last
checkpoint is kept), where the Python loop stops at once.

Its in-graph twins live beside their originals, each tied by a test: the epsilon-greedy
choice (:func:`rlkit.agents.dqn.acting.graph_epsilon_greedy`) and the target copy's
cadence (:func:`rlkit.agents.dqn.target_copy.graph_target_copy_due`).
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.agents.dqn.acting import graph_epsilon_greedy
from rlkit.agents.dqn.config import anneal_start
from rlkit.agents.dqn.target_copy import graph_target_copy_due
from rlkit.core.schedules import graph_blocks_due, graph_linear
from rlkit.run.compiled.program import CompiledProgram


class DQNProgram(CompiledProgram):
    """The compiled loop of a :class:`~rlkit.agents.dqn.agent.DQN` agent (see
    :class:`~rlkit.run.compiled.program.CompiledProgram` for the arguments)."""

    def __init__(self, agent, env, num_envs: int, seed: int, chunk: int) -> None:
        super().__init__(agent, env, num_envs, seed, chunk)
        self.target_stale = tf.Variable(False, trainable=False, name="target_stale")

    def own_variables(self) -> dict[str, tf.Variable]:
        return {"target_stale": self.target_stale}

    def act(self, obs, step, seed):
        """Epsilon-greedy actions int32 ``[N]`` at env step ``step`` (the run's schedule;
        a noisy network's greedy ones on fresh noise)."""
        cfg = self.config
        epsilon = graph_linear(step, cfg.eps_start, cfg.eps_end, cfg.eps_anneal_steps,
                         anneal_start(cfg))  # fmt: skip
        # a noisy network explores by its noise: a fresh draw on every step (its config has
        # epsilon 0), one for the N copies, as the Python loop's exploring policy does
        outputs = (
            self.learner.q.model(obs, training=True) if cfg.noisy else self.learner.q.model(obs)
        )
        q_values = self.learner.head.q_values_graph(outputs)
        return graph_epsilon_greedy(q_values, epsilon, seed, self.agent.num_actions)

    def learn(self, before, now, seed):
        """The blocks of updates due between step counts ``before`` and ``now``, then the
        target copy due: ``(metric sums [3], updates int64)``."""
        cfg, learner = self.config, self.learner
        start = max(cfg.learning_starts, cfg.batch_size)
        blocks = graph_blocks_due(before, now, cfg.train_freq, start)
        blocks = tf.where(self.replay.size >= cfg.batch_size, blocks, tf.zeros_like(blocks))
        per_block = cfg.train_freq if cfg.gradient_steps == -1 else cfg.gradient_steps
        updates = blocks * per_block
        if cfg.learning_rate_end >= 0:  # DQN3.0's annealed rate, at the step count ``now``
            rate = graph_linear(now, cfg.learning_rate, cfg.learning_rate_end, cfg.lr_anneal_steps,
                          anneal_start(cfg))  # fmt: skip
            learner.pipeline.optimizer.learning_rate.assign(tf.cast(rate, tf.float32))

        def update(k, sums):
            batch_seed = tf.random.experimental.stateless_fold_in(seed, k)
            metrics, _ = learner.update_step(*self.minibatch(batch_seed))
            return k + 1, sums + tf.stack(metrics)

        def block_update(batch, k, sums):
            metrics, td_error = learner.update_step(*batch)
            return sums + tf.stack(metrics), td_error

        def prioritized_block(j, sums):
            block_seed = tf.random.experimental.stateless_fold_in(seed, j)
            return j + 1, self.prioritized_block(block_seed, now, per_block, block_update, sums)

        sums = self.run_updates(updates, update, blocks, prioritized_block)
        if cfg.target_tau == 0:
            stale = tf.logical_or(self.target_stale, updates > 0)
            copy = graph_target_copy_due(stale, before, now, cfg.target_update)

            def hard_copy():
                learner.hard_copy.update()
                return tf.constant(False)

            self.target_stale.assign(tf.cond(copy, hard_copy, lambda: stale))
        return sums, updates
