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
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.agents.dqn_config import anneal_start
from rlkit.envs.tf.base import split_seed
from rlkit.replay.graph_priorities import GraphPrioritized
from rlkit.run.compiled_program import CompiledProgram, blocks_due, linear
from rlkit.run.life import TrainingDiverged


class DQNProgram(CompiledProgram):
    """The compiled loop of a :class:`~rlkit.agents.dqn.DQN` agent (see
    :class:`~rlkit.run.compiled_program.CompiledProgram` for the arguments)."""

    def __init__(self, agent, env, num_envs: int, seed: int, chunk: int) -> None:
        super().__init__(agent, env, num_envs, seed, chunk)
        self.target_stale = tf.Variable(False, trainable=False, name="target_stale")
        cfg = self.config
        self.priorities = None
        if getattr(cfg, "prioritized", False):
            self.priorities = GraphPrioritized(
                cfg.buffer_size, cfg.priority_exponent, cfg.priority_epsilon
            )

    def own_variables(self) -> dict[str, tf.Variable]:
        named = {"target_stale": self.target_stale}
        if self.priorities is not None:
            named.update({f"replay/{k}": v for k, v in self.priorities.variables().items()})
        return named

    def after_chunk(self, updates: int) -> None:
        super().after_chunk(updates)
        if self.priorities is not None and int(self.priorities.nonfinite.numpy()) > 0:
            raise TrainingDiverged("a TD error was not finite (it cannot become a priority)")

    def written(self, slots):
        if self.priorities is not None:
            self.priorities.written(slots)

    def act(self, obs, step, seed):
        """Epsilon-greedy actions int32 ``[N]`` at env step ``step`` (the run's schedule;
        a noisy network's greedy ones on fresh noise)."""
        cfg = self.config
        epsilon = linear(step, cfg.eps_start, cfg.eps_end, cfg.eps_anneal_steps,
                         anneal_start(cfg))  # fmt: skip
        # a noisy network explores by its noise: a fresh draw on every step (its config has
        # epsilon 0), one for the N copies, as the Python loop's exploring policy does
        outputs = (
            self.learner.q.model(obs, training=True) if cfg.noisy else self.learner.q.model(obs)
        )
        q_values = self.learner.head.q_values_graph(outputs)
        greedy = tf.argmax(q_values, axis=-1, output_type=tf.int32)
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
            metrics, _ = learner.update_step(*self.minibatch(batch_seed))
            return k + 1, sums + tf.stack(metrics)

        def prioritized_block(j, sums):
            # as the Python loop: the block's minibatches are drawn on the priorities before
            # it, and its TD errors are written back after it
            block_seed = tf.random.experimental.stateless_fold_in(seed, j)
            slots, weights = self.priorities.sample(
                cfg.batch_size, block_seed, self.replay.size, self.importance_exponent(now),
                minibatches=per_block,
            )  # fmt: skip
            td_errors = tf.TensorArray(tf.float32, size=per_block, element_shape=[cfg.batch_size])

            def block_update(k, sums, td_errors):
                metrics, td_error = learner.update_step(*self.gather(slots[k], weights[k]))
                return k + 1, sums + tf.stack(metrics), td_errors.write(k, td_error)

            _, sums, td_errors = tf.while_loop(
                lambda k, *_: k < per_block, block_update, (tf.constant(0), sums, td_errors)
            )
            self.priorities.update(tf.reshape(slots, [-1]), tf.reshape(td_errors.stack(), [-1]))
            return j + 1, sums

        start_sums = (tf.constant(0, tf.int64), tf.zeros([3]))
        if self.priorities is None:
            _, sums = tf.while_loop(lambda k, sums: k < updates, update, start_sums)
        else:
            _, sums = tf.while_loop(lambda j, sums: j < blocks, prioritized_block, start_sums)
        if cfg.target_tau == 0:
            stale = tf.logical_or(self.target_stale, updates > 0)
            copy = tf.logical_and(stale, now // cfg.target_update > before // cfg.target_update)

            def hard_copy():
                learner.hard_copy.update()
                return tf.constant(False)

            self.target_stale.assign(tf.cond(copy, hard_copy, lambda: stale))
        return sums, updates

    def minibatch(self, seed):
        """A uniform minibatch from the stateless ``seed``: ``(obs, actions, rewards,
        next_obs, pcont, weights)`` as the learner's ``update_step`` takes them."""
        cfg, replay = self.config, self.replay
        if replay.horizon == 1:
            obs, actions, rewards, next_obs, terminated = replay.sample(cfg.batch_size, seed)
            ones = tf.ones([cfg.batch_size])  # made here, not captured: one HLO for every seed
            return obs, actions, rewards, next_obs, cfg.gamma * (1.0 - terminated), ones
        return self.gather(replay.indices(cfg.batch_size, seed), tf.ones([cfg.batch_size]))

    def gather(self, slots, weights):
        """The minibatch at ``slots`` (int32 ``[B]``) with importance ``weights`` ``[B]``,
        as ``update_step`` takes it; with ``n_step > 1`` the replay's n-step view."""
        cfg, replay = self.config, self.replay
        obs, actions = tf.gather(replay.obs, slots), tf.gather(replay.actions, slots)
        if replay.horizon == 1:
            rewards, terminated = (tf.gather(v, slots) for v in (replay.rewards, replay.terminated))
            last, pcont = slots, cfg.gamma * (1.0 - terminated)
        else:
            last, rewards, pcont = replay.n_step(slots, cfg.gamma)
        return obs, actions, rewards, tf.gather(replay.next_obs, last), pcont, weights

    def importance_exponent(self, now):
        """Prioritized replay's beta at step count ``now`` (float64), as
        :meth:`rlkit.agents.off_policy.OffPolicyAgent.importance_exponent`."""
        cfg = self.config
        beta = tf.constant(cfg.importance_exponent, tf.float64)
        if cfg.importance_anneal_steps == 0:
            return beta
        past = tf.cast(tf.maximum(now - cfg.learning_starts, 0), tf.float64)
        progress = tf.minimum(past / cfg.importance_anneal_steps, 1.0)
        return beta + (1.0 - beta) * progress
