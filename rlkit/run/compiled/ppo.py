"""PPO's (and A2C's) whole training loop as one XLA-compiled program, for rlkit's TensorFlow
environments (``rlkit/CartPole-v1``, ``rlkit/Acrobot-v1``, ``rlkit/MountainCar-v0``,
``rlkit/Pendulum-v1``, ``rlkit/MountainCarContinuous-v0``, and MinAtar's games
``rlkit/MinAtar-Breakout-v0``, ...: bool boards through the shared convolutional torso).

:class:`PPOProgram` is the on-policy :class:`~rlkit.run.compiled.program.CompiledProgram`:
its memory is a :class:`~rlkit.replay.graph_rollout.GraphRollout` of ``n_steps`` vector
steps, and each vector step does what the Python loop does,

- acting at step ``t``: a sample of the policy
  (:func:`rlkit.agents.ppo.acting.graph_ppo_action`: Gumbel-max for Discrete actions; the
  diagonal Gaussian for Box actions, stored unclipped and clipped on the way to the
  environment; with gSDE :func:`~rlkit.agents.ppo.acting.graph_ppo_sde_action`, each copy's
  exploration matrix held in the program's variables, new ones when a rollout begins);
- the step written as the rollout's next row, observations in the environment's own shape
  and dtype (its final observation where an episode ended), rewards clipped with
  ``reward_clip`` (:func:`rlkit.agents.off_policy.graph_clip_rewards`, the Python loop's
  twin);
- when the rollout is full, one PPO update at the step count ``now``, all in the program:
  the values and log-probabilities of the rollout (:meth:`PPOLearner._evaluate_graph`),
  GAE with truncations bootstrapped from the final observation
  (:func:`rlkit.learn.advantages.graph_gae`), the learning rate and clip range of the
  schedule (:meth:`PPOLearner.graph_schedules`), a permutation per epoch
  (:meth:`PPOLearner.graph_minibatch_order`) and the learner's own minibatch steps
  (:meth:`PPOLearner._train_graph`, the ``target_kl`` stop included); then the rollout is
  cleared.

A chunk runs as rollout segments (:meth:`PPOProgram._chunk_graph`): the vector steps up to
the rollout's end in an inner loop, each step's row kept in ``TensorArray``\\ s and written
to the rollout at once after it (:meth:`GraphRollout.put`), then the update if the rollout
is full; the same steps and numbers as checking for the update after every step (the
generic chunk of :class:`~rlkit.run.compiled.program.CompiledProgram`, tied by
``tests/unit/run/test_compiled_ppo_segments.py``), at about half the cost a step
(docs/performance.md).

Each in-graph part is the Python loop's twin or the Python loop's own code, tied by
``tests/unit/agents/test_ppo_twins.py``; the random numbers are the program's own
(stateless, keyed by the run's seed and the vector step). The chunk's metrics are the
updates' means (policy and value loss, entropy, approximate KL, clip fraction, loss),
averaged over the chunk's updates. Observation normalisation and reward scaling are the
Python loop's (the compiled loop refuses them: :mod:`rlkit.run.compiled.choice`).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rlkit.agents.off_policy import graph_clip_rewards
from rlkit.agents.ppo.acting import graph_clip_action, graph_ppo_action, graph_ppo_sde_action
from rlkit.agents.ppo.learner import METRICS
from rlkit.core.errors import UsageError
from rlkit.learn.advantages import graph_gae
from rlkit.learn.gsde import HeldNoise, gsde_std
from rlkit.networks.builders import apply_layers
from rlkit.replay.graph_rollout import GraphRollout
from rlkit.run.compiled.choice import PYTHON_LOOP
from rlkit.run.compiled.program import CompiledProgram


class PPOProgram(CompiledProgram):
    """The compiled loop of a :class:`~rlkit.agents.ppo.agent.PPO` agent (see
    :class:`~rlkit.run.compiled.program.CompiledProgram` for the arguments)."""

    metric_names = METRICS

    def make_memory(self) -> None:
        """The rollout: ``n_steps`` vector steps of the ``N`` copies, observations as the
        environment gives them (float32 ``[obs_dim]``; MinAtar's bool ``[10, 10, C]``)."""
        learner = self.learner
        if learner.nvec is not None:  # (no rlkit/ TensorFlow env has MultiDiscrete actions)
            raise UsageError(f"the compiled loop has no MultiDiscrete actions "
                             f"({self.agent.action_space}); {PYTHON_LOOP}")  # fmt: skip
        if learner.config.action_masks:  # (masks come from a Python env's info or method)
            raise UsageError(f"the compiled loop takes no invalid-action masks "
                             f"(action_masks = true); {PYTHON_LOOP}")  # fmt: skip
        action_shape = () if learner.discrete else (int(learner.head.out_dim),)
        self.obs_shape = tuple(self.env.obs_shape or (self.env.obs_dim,))
        self.rollout = GraphRollout(self.config.n_steps, self.num_envs, self.obs_shape,
                                    action_shape, self.env.obs_dtype)  # fmt: skip
        if not learner.discrete:
            space = self.agent.action_space
            self._low = np.asarray(space.low, np.float64).reshape(-1)
            self._high = np.asarray(space.high, np.float64).reshape(-1)
        self.held: HeldNoise | None = None
        if learner.sde is not None:  # gSDE's matrices, one per copy, as acting's
            shape = [self.num_envs, *learner.log_std.shape[:1], learner.head.out_dim]
            self.held = HeldNoise(
                tf.Variable(tf.zeros(shape), trainable=False, name="gsde_matrices"),
                tf.Variable(tf.constant(-1, tf.int64), trainable=False, name="gsde_clock"),
                tf.Variable(tf.constant(-1, tf.int64), trainable=False, name="gsde_mark"),
            )

    def memory_variables(self) -> dict[str, tf.Variable]:
        named = {f"rollout/{k}": v for k, v in self.rollout.variables().items()}
        if self.held is not None:
            named.update({f"gsde_{k}": v for k, v in self.held._asdict().items()})
        return named

    def act(self, obs, step, seed):
        """Exploring actions: int32 ``[N]``, or the unclipped Gaussian sample ``[N, A]``
        (with gSDE from each copy's held matrix: :func:`graph_ppo_sde_action`)."""
        learner = self.learner
        if self.held is not None:
            latent = apply_layers(obs, learner.sde.hidden)
            std = gsde_std(learner.log_std, learner.head.out_dim, self.config.use_expln)
            rollout = step // (self.config.n_steps * self.num_envs)
            held = HeldNoise(*(v.read_value() for v in self.held))
            raw, after = graph_ppo_sde_action(latent, learner.sde.head(latent), std, held,
                                              rollout, self.config.sde_sample_freq,
                                              seed)  # fmt: skip
            for variable, value in zip(self.held, after, strict=True):
                variable.assign(value)
            return raw
        out = learner.policy_network.model(obs)
        return graph_ppo_action(out, seed, learner.log_std)

    def env_actions(self, actions):
        """Box actions clipped to the bounds (the rollout keeps them unclipped)."""
        if self.learner.discrete:
            return actions
        return graph_clip_action(actions, self._low, self._high)

    def store(self, obs, actions, out) -> None:
        """The vector step as the rollout's next row (:meth:`row`)."""
        self.rollout.add(*self.row(obs, actions, out))

    def row(self, obs, actions, out) -> tuple[tf.Tensor, ...]:
        """What the rollout keeps of a vector step, in :meth:`GraphRollout.add`'s order
        (rewards clipped as the Python loop clips them: ``reward_clip``)."""
        rewards = graph_clip_rewards(tf.cast(out.reward, tf.float32), self.config.reward_clip)
        return obs, actions, rewards, out.final_obs, out.terminated, out.truncated

    def after_chunk(self, updates: int) -> None:
        self.learner.num_updates += updates

    def learn(self, before, now, seed):
        """One update when the rollout is full: ``(the update's metric means [6], 1)``, else
        ``(zeros, 0)``."""
        zeros = tf.zeros([len(METRICS)])
        return tf.cond(
            self.rollout.full,
            lambda: (self._update(now, seed), tf.constant(1, tf.int64)),
            lambda: (zeros, tf.constant(0, tf.int64)),
        )

    def _chunk_graph(self, vector_steps, episode_cap):
        """The chunk as segments: each runs the vector steps up to the rollout's end (or
        the chunk's, or the episode cap), then the update when the rollout is full. The
        same steps, updates and numbers as one loop of :meth:`_vector_step` (an update
        checked after each step), without the update's ``tf.cond`` in the step's loop: XLA
        copied every weight and Adam moment out of that conditional at each step."""
        n, rollout = self.num_envs, self.rollout
        logs = (
            tf.TensorArray(tf.bool, size=self.chunk, element_shape=[n]),
            tf.TensorArray(tf.float64, size=self.chunk, element_shape=[n]),
            tf.TensorArray(tf.int32, size=self.chunk, element_shape=[n]),
        )

        def going(i, *_):
            return tf.logical_and(i < vector_steps, self.episodes < episode_cap)

        def segment(i, sums, updates, *logs):
            start = rollout.filled.read_value()
            room = tf.minimum(vector_steps - i, rollout.n_steps - start)
            rows = tuple(
                tf.TensorArray(v.dtype, size=rollout.n_steps, element_shape=v.shape[1:])
                for v in rollout.fields()
            )

            def step(j, done_log, return_log, length_log, *rows):
                row: list[tf.Tensor] = []
                *_, done, returns, lengths = self._env_step(
                    lambda obs, actions, out: row.extend(self.row(obs, actions, out))
                )
                k = i + j
                rows = tuple(
                    a.write(start + j, tf.cast(x, a.dtype)) for a, x in zip(rows, row, strict=True)
                )
                return (j + 1, done_log.write(k, done), return_log.write(k, returns),
                        length_log.write(k, lengths), *rows)  # fmt: skip

            j, *logs_rows = tf.while_loop(
                lambda j, *_: tf.logical_and(j < room, self.episodes < episode_cap),
                step, (tf.constant(0), *logs, *rows), maximum_iterations=rollout.n_steps,
            )  # fmt: skip
            logs, rows = logs_rows[:3], logs_rows[3:]
            rollout.put(start, j, [a.stack() for a in rows])
            now = self.num_steps.read_value()
            before = now - n
            step_sums, step_updates = self.learn(before, now, self.step_seeds(before)[2])
            return (i + j, sums + step_sums, updates + step_updates, *logs)

        start = (tf.constant(0), tf.zeros([len(METRICS)]), tf.constant(0, tf.int64), *logs)
        i, sums, updates, done_log, return_log, length_log = tf.while_loop(
            going, segment, start, maximum_iterations=self.chunk
        )
        return i, done_log.stack(), return_log.stack(), length_log.stack(), sums, updates

    def _update(self, now, seed):
        """PPO's update on the full rollout at step count ``now``: its metric means ``[6]``."""
        cfg, learner, rollout = self.config, self.learner, self.rollout
        batch = rollout.batch()
        steps, streams = rollout.n_steps, rollout.num_streams
        m = steps * streams
        obs = tf.reshape(batch.obs, [m, *self.obs_shape])  # row t N + n, as the learner's _flat
        next_obs = tf.reshape(batch.next_obs, [m, *self.obs_shape])
        actions = tf.reshape(batch.actions, [m] if learner.discrete else [m, -1])
        values, next_values, log_probs = learner._evaluate_graph(obs, next_obs, actions)
        values = tf.reshape(values, [steps, streams])
        terminated = batch.terminated
        if not cfg.bootstrap_truncated:
            terminated = tf.logical_or(terminated, batch.truncated)
        advantages, returns = graph_gae(
            batch.rewards, values, tf.reshape(next_values, [steps, streams]), terminated,
            batch.truncated, cfg.gamma, cfg.gae_lambda,
        )  # fmt: skip
        rate, clip_range = learner.graph_schedules(now)
        learner.pipeline.optimizer.learning_rate.assign(rate)
        order = learner.graph_minibatch_order(seed, m)
        sums, count, *_ = learner._train_graph(
            obs, actions, log_probs, tf.reshape(advantages, [m]), tf.reshape(returns, [m]),
            tf.reshape(values, [m]), order, clip_range,
        )  # fmt: skip
        rollout.clear()
        return sums / tf.cast(tf.maximum(count, 1), tf.float32)
