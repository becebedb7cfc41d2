"""The whole training loop of an off-policy agent as one XLA-compiled program, for rlkit's
TensorFlow environments: what every agent's program shares.

One call of :meth:`CompiledProgram.run_chunk` runs up to ``chunk`` vector steps of ``N``
copies of the environment inside one ``tf.function(jit_compile=True)``: the agent's acting
(:meth:`CompiledProgram.act`), the environment's batched step with autoreset
(:mod:`rlkit.envs.tf`), the replay write (:class:`~rlkit.replay.in_graph.GraphReplay`), the
episode accounting, and the agent's updates due (:meth:`CompiledProgram.learn`). The agents'
programs are the ones the registry names (``AgentSpec.compiled_program``).

Every random number is stateless, keyed by the run's seed and the vector step's index, and
every piece of state lives in variables (:meth:`CompiledProgram.state_dict`), so a run cut
into chunks in any way, or stopped and resumed at a chunk boundary, takes the same steps.
Its random numbers are not the Python loop's (numpy's generators): the two loops learn
alike, not identically.

What it shares with the Python loop it calls as in-graph twins kept beside their originals,
each tied to its original by a test (same inputs, same outputs): the rewards' clip and
prioritized replay's beta (:func:`rlkit.agents.off_policy.graph_clip_rewards`,
:func:`~rlkit.agents.off_policy.graph_importance_exponent`), one-step pcont
(:func:`rlkit.replay.nstep.graph_pcont`), the n-step walk and the prioritized sampler
(:mod:`rlkit.replay.in_graph`, :mod:`rlkit.replay.graph_priorities`) and the schedules
(:func:`rlkit.core.schedules.graph_linear`, :func:`~rlkit.core.schedules.graph_blocks_due`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import tensorflow as tf

from rlkit.agents.off_policy import graph_clip_rewards, graph_importance_exponent
from rlkit.envs.tf.base import EnvState, TFEnv, split_seed
from rlkit.networks.patch_conv import convolutions_as_patches
from rlkit.replay.graph_priorities import GraphPrioritized
from rlkit.replay.in_graph import GraphReplay
from rlkit.replay.nstep import graph_pcont
from rlkit.run.run import TrainingDiverged

#: a word for the seed stream of the compiled loop (its stateless keys)
SEED_STREAM = 0x636F6D70


class ChunkOutput(NamedTuple):
    """What one chunk returns (numpy).

    steps: vector steps run (fewer than asked when the episode cap was reached).
    done: bool ``[steps, N]``, where an episode ended at each vector step.
    returns, lengths: ``[steps, N]``, the ended episodes' return and length (read where done).
    metric_sums: float ``[len(metric_names)]``, the sums of the updates' metrics (the
        off-policy programs': loss, mean Q(s, a) and mean |delta|).
    updates: updates run.
    """

    steps: int
    done: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray
    metric_sums: np.ndarray
    updates: int


class CompiledProgram:
    """The compiled loop of an off-policy agent on ``num_envs`` copies of a TensorFlow env;
    a subclass gives the agent's acting (:meth:`act`) and learning (:meth:`learn`).

    Args:
        agent: the agent (its networks, optimizers and config are used and updated in place).
        env: the :class:`~rlkit.envs.tf.base.TFEnv`.
        num_envs: ``N``, copies stepped together.
        seed: the run's seed (the stateless keys and the first reset).
        chunk: the most vector steps one call runs (a compile-time size).
    """

    def __init__(self, agent, env: TFEnv, num_envs: int, seed: int, chunk: int) -> None:
        cfg = self.config = agent.config
        self.agent, self.learner, self.env = agent, agent.learner, env
        self.num_envs, self.chunk = int(num_envs), int(chunk)
        words = np.random.SeedSequence([int(seed), SEED_STREAM]).generate_state(2)
        # a variable, not a constant: the program's XLA code is then the same for every seed
        # of one configuration, and a persistent compilation cache (xla_cache) reuses it
        self.seed = tf.Variable(
            words.astype(np.int64) & 0x7FFFFFFF, dtype=tf.int32, trainable=False, name="seed"
        )
        self.priorities: GraphPrioritized | None = None
        self.make_memory()
        state, _ = env.reset(split_seed(self.seed, 1)[0], self.num_envs)
        n = self.num_envs

        def variable(value, name):
            return tf.Variable(value, trainable=False, name=name)

        self.physics = variable(state.physics, "env_physics")
        self.time = variable(state.time, "env_time")
        self.num_steps = variable(tf.constant(agent.num_steps, tf.int64), "num_steps")
        self.episode_return = variable(tf.zeros([n], tf.float64), "episode_return")
        self.episode_length = variable(tf.zeros([n], tf.int32), "episode_length")
        self.episodes = variable(tf.constant(0, tf.int64), "episodes")
        self._run = tf.function(
            self._chunk,
            jit_compile=True,
            input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.int64)],
            autograph=needs_autograph(cfg),
        )

    # -- what Python calls -------------------------------------------------------------------
    def run_chunk(self, vector_steps: int, episode_cap: int | None = None) -> ChunkOutput:
        """Run ``vector_steps`` (at most ``chunk``) vector steps, or until the program's
        episode count reaches ``episode_cap``; the first call compiles."""
        if not 0 < vector_steps <= self.chunk:
            raise ValueError(f"vector_steps must be in 1..{self.chunk}, got {vector_steps}")
        cap = np.iinfo(np.int64).max if episode_cap is None else int(episode_cap)
        out = self._run(tf.constant(vector_steps, tf.int32), tf.constant(cap, tf.int64))
        steps = int(out[0])
        return ChunkOutput(
            steps, out[1].numpy()[:steps], out[2].numpy()[:steps], out[3].numpy()[:steps],
            out[4].numpy(), int(out[5]),
        )  # fmt: skip

    def compile(self) -> None:
        """Compile the program now (its first call would): a call of no steps."""
        self._run(tf.constant(0, tf.int32), tf.constant(0, tf.int64))

    def variables(self) -> dict[str, tf.Variable]:
        """The program's own state by name (the agent's weights and optimizer are the agent's)."""
        own = ("physics", "time", "num_steps", "episode_return", "episode_length", "episodes")
        named = {name: getattr(self, name) for name in own}
        named.update(self.own_variables())
        named.update(self.memory_variables())
        return named

    def state_dict(self) -> dict[str, np.ndarray]:
        """Every variable of :meth:`variables` as an array (a checkpoint keeps them)."""
        return {name: v.numpy() for name, v in self.variables().items()}

    def load_state_dict(self, arrays: dict[str, np.ndarray]) -> None:
        """Put back :meth:`state_dict`'s arrays; ValueError on a missing name or a shape."""
        for name, variable in self.variables().items():
            if name not in arrays:
                raise ValueError(f"the compiled loop's state lacks {name}")
            value = np.asarray(arrays[name])
            if tuple(value.shape) != tuple(variable.shape):
                raise ValueError(f"{name} has shape {value.shape}, not {tuple(variable.shape)}")
            variable.assign(value)

    # -- the experience memory: replay here, an on-policy program's rollout in its own ----
    def make_memory(self) -> None:
        """Build the replay (:class:`~rlkit.replay.in_graph.GraphReplay`) and, with
        ``prioritized``, its priorities."""
        cfg, env = self.config, self.env
        action_shape = () if env.discrete_actions is not None else (1,)
        obs_shape = env.obs_shape or (env.obs_dim,)  # MinAtar's boards stay bool
        self.replay = GraphReplay(
            cfg.buffer_size, obs_shape, action_shape, env.obs_dtype,
            n_step=getattr(cfg, "n_step", 1), streams=self.num_envs,
        )  # fmt: skip
        if getattr(cfg, "prioritized", False):
            self.priorities = GraphPrioritized(
                cfg.buffer_size, cfg.priority_exponent, cfg.priority_epsilon
            )

    def memory_variables(self) -> dict[str, tf.Variable]:
        """The memory's variables by name (``replay/...``)."""
        named = {f"replay/{k}": v for k, v in self.replay.variables().items()}
        if self.priorities is not None:
            named.update({f"replay/{k}": v for k, v in self.priorities.variables().items()})
        return named

    def store(self, obs, actions, out) -> None:
        """Keep a vector step: ``obs`` and ``actions`` as :meth:`act` gave them, ``out`` the
        environment's :class:`~rlkit.envs.tf.base.Transition`; the rewards clipped as the
        Python loop clips them (``reward_clip``), the slots written given their priority."""
        rewards = graph_clip_rewards(tf.cast(out.reward, tf.float32), self.config.reward_clip)
        slots = self.replay.add(obs, actions, rewards, out.final_obs, out.terminated, out.truncated)
        self.written(slots)

    def env_actions(self, actions: tf.Tensor) -> tf.Tensor:
        """The actions :meth:`act` chose as the environment takes them (these themselves;
        PPO's Gaussian samples are clipped to the bounds here and stored unclipped)."""
        return actions

    # -- what a subclass gives -------------------------------------------------------------
    #: what the metric sums of a chunk are, each divided by its updates
    metric_names: tuple[str, ...] = ("loss", "q", "abs_delta")

    def after_chunk(self, updates: int) -> None:
        """The learner's counters after a chunk that ran ``updates`` updates."""
        self.learner.num_updates += updates
        self.check_priorities()

    def check_priorities(self) -> None:
        """TrainingDiverged when a TD error of the chunk was not finite (prioritized replay
        left its slot's priority as it was; the Python loop stops at once)."""
        if self.priorities is not None and int(self.priorities.nonfinite.numpy()) > 0:
            raise TrainingDiverged("a TD error was not finite (it cannot become a priority)")

    def own_variables(self) -> dict[str, tf.Variable]:
        """The subclass's own state variables by name (a checkpoint keeps them)."""
        return {}

    def written(self, slots: tf.Tensor) -> None:
        """The replay just wrote a vector step's transitions to ``slots`` (int32 ``[N]``):
        with prioritized replay they get the largest priority recorded."""
        if self.priorities is not None:
            self.priorities.written(slots)

    def act(self, obs: tf.Tensor, step: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
        """Exploring actions for ``obs`` ``[N, obs_dim]`` (MinAtar's bool ``[N, 10, 10, C]``)
        at env step ``step`` (int64), from the stateless ``seed``: int32 ``[N]`` or float32
        ``[N, act_dim]``."""
        raise NotImplementedError

    def learn(self, before: tf.Tensor, now: tf.Tensor, seed: tf.Tensor):
        """The updates due between step counts ``before`` and ``now``: ``(metric sums
        float32 [len(metric_names)], updates int64)``."""
        raise NotImplementedError

    # -- sampling, for the subclasses' updates -------------------------------------------
    def minibatch(self, seed):
        """A uniform minibatch from the stateless ``seed``: ``(obs, actions, rewards,
        next_obs, pcont, weights)`` as the learners' update steps take them."""
        cfg, replay = self.config, self.replay
        if replay.horizon == 1:
            obs, actions, rewards, next_obs, terminated = replay.sample(cfg.batch_size, seed)
            ones = tf.ones([cfg.batch_size])  # made here, not captured: one HLO for every seed
            return obs, actions, rewards, next_obs, graph_pcont(terminated, cfg.gamma), ones
        return self.gather(replay.indices(cfg.batch_size, seed), tf.ones([cfg.batch_size]))

    def gather(self, slots, weights):
        """The minibatch at ``slots`` (int32 ``[B]``) with importance ``weights`` ``[B]``;
        with ``n_step > 1`` the replay's n-step view."""
        cfg, replay = self.config, self.replay
        obs, actions = tf.gather(replay.obs, slots), tf.gather(replay.actions, slots)
        if replay.horizon == 1:
            rewards, terminated = (tf.gather(v, slots) for v in (replay.rewards, replay.terminated))
            last, pcont = slots, graph_pcont(terminated, cfg.gamma)
        else:
            last, rewards, pcont = replay.n_step(slots, cfg.gamma)
        return obs, actions, rewards, tf.gather(replay.next_obs, last), pcont, weights

    def prioritized_block(self, seed, now, minibatches: int, update, sums):
        """One block of ``minibatches`` updates on prioritized minibatches, as the Python
        loop runs it: all drawn before the block (from the stateless ``seed``, beta at step
        count ``now``), then ``update(batch, k, sums) -> (sums, td_errors [B])`` on each
        (``sums``: the metric sums so far, returned with the block's added), the block's TD
        errors written back as priorities after it."""
        cfg, priorities = self.config, self.priorities
        if priorities is None:
            raise ValueError("prioritized_block: the replay is not prioritized (no priorities)")
        slots, weights = priorities.sample(
            cfg.batch_size, seed, self.replay.size, self.importance_exponent(now), minibatches
        )
        td_errors = tf.TensorArray(tf.float32, size=minibatches, element_shape=[cfg.batch_size])

        def body(k, sums, td_errors):
            sums, td_error = update(self.gather(slots[k], weights[k]), k, sums)
            return k + 1, sums, td_errors.write(k, td_error)

        _, sums, td_errors = tf.while_loop(
            lambda k, *_: k < minibatches, body, (tf.constant(0), sums, td_errors)
        )
        priorities.update(tf.reshape(slots, [-1]), tf.reshape(td_errors.stack(), [-1]))
        return sums

    def run_updates(self, updates, update, blocks, prioritized_block):
        """The metric sums [3] of a vector step's updates: ``update(k, sums)`` for each of
        ``updates`` on uniform minibatches, or with prioritized replay
        ``prioritized_block(j, sums)`` for each of ``blocks`` (:meth:`prioritized_block`)."""
        start = (tf.constant(0, tf.int64), tf.zeros([3]))
        if self.priorities is None:
            return tf.while_loop(lambda k, sums: k < updates, update, start)[1]
        return tf.while_loop(lambda j, sums: j < blocks, prioritized_block, start)[1]

    def importance_exponent(self, now):
        """Prioritized replay's beta at step count ``now`` (float64): the graph twin
        :func:`rlkit.agents.off_policy.graph_importance_exponent`."""
        return graph_importance_exponent(now, self.config)

    # -- the program -----------------------------------------------------------------------
    def _chunk(self, vector_steps, episode_cap):
        with convolutions_as_patches():  # XLA's convolution gradient is slow on a CPU
            return self._chunk_graph(vector_steps, episode_cap)

    def _chunk_graph(self, vector_steps, episode_cap):
        n = self.num_envs
        logs = (
            tf.TensorArray(tf.bool, size=self.chunk, element_shape=[n]),
            tf.TensorArray(tf.float64, size=self.chunk, element_shape=[n]),
            tf.TensorArray(tf.int32, size=self.chunk, element_shape=[n]),
        )

        def cond(i, sums, updates, done_log, return_log, length_log):
            return tf.logical_and(i < vector_steps, self.episodes < episode_cap)

        def body(i, sums, updates, done_log, return_log, length_log):
            done, returns, lengths, step_sums, step_updates = self._vector_step()
            return (
                i + 1, sums + step_sums, updates + step_updates, done_log.write(i, done),
                return_log.write(i, returns), length_log.write(i, lengths),
            )  # fmt: skip

        start = (tf.constant(0), tf.zeros([len(self.metric_names)]), tf.constant(0, tf.int64),
                 *logs)  # fmt: skip
        i, sums, updates, done_log, return_log, length_log = tf.while_loop(
            cond, body, start, maximum_iterations=self.chunk
        )
        return i, done_log.stack(), return_log.stack(), length_log.stack(), sums, updates

    def _vector_step(self):
        """One step of the ``N`` copies, its replay write and the updates due: ``(done [N],
        returns [N], lengths [N], metric sums [len(metric_names)], updates)``."""
        before, now, sample_seed, done, returns, lengths = self._env_step()
        sums, updates = self.learn(before, now, sample_seed)
        return done, returns, lengths, sums, updates

    def step_seeds(self, before: tf.Tensor) -> tf.Tensor:
        """The stateless seeds of the vector step that starts at step count ``before``
        (int64): int32 ``[3, 2]``, for acting, the environment's resets and the updates."""
        key = tf.random.experimental.stateless_fold_in(self.seed, before // self.num_envs)
        return split_seed(key, 3)

    def _env_step(self, store=None):
        """One step of the ``N`` copies and its write to the memory (``store(obs, actions,
        out)``, :meth:`store` unless given), no update: ``(step count before, step count
        after, the step's seed for updates [2], done [N], returns [N], lengths [N])``."""
        n, env = self.num_envs, self.env
        before = self.num_steps.read_value()
        act_seed, env_seed, sample_seed = tf.unstack(self.step_seeds(before))
        state = EnvState(self.physics.read_value(), self.time.read_value())
        obs = env.observe(state.physics)
        actions = self.act(obs, before, act_seed)
        out = env.step(state, self.env_actions(actions), env_seed)
        (self.store if store is None else store)(obs, actions, out)
        now = before + n
        self.num_steps.assign(now)
        self.physics.assign(out.state.physics)
        self.time.assign(out.state.time)
        returns = self.episode_return + out.reward
        lengths = self.episode_length + 1
        done = tf.logical_or(out.terminated, out.truncated)
        self.episode_return.assign(tf.where(done, tf.zeros_like(returns), returns))
        self.episode_length.assign(tf.where(done, tf.zeros_like(lengths), lengths))
        self.episodes.assign_add(tf.reduce_sum(tf.cast(done, tf.int64)))
        return before, now, sample_seed, done, returns, lengths


def needs_autograph(config) -> bool:
    """Whether tracing the program needs AutoGraph: only for code of the user's own in the
    config (a loss of one's own, say), which may branch on tensors in Python. rlkit's own
    code in the program writes its control flow as ``tf.while_loop``/``tf.cond``/``tf.where``,
    so AutoGraph would only rewrite it to the same graph: its source transformation of every
    function the program calls was ~3/4 of tracing, and tracing ~40% of the compile time
    (labs/many_seeds/compile_time.py)."""
    plain = (str, int, float, bool, type(None))
    for value in vars(config).values():
        items = value if isinstance(value, list | tuple) else (value,)
        if not all(isinstance(item, plain) for item in items):
            return True
    return False
