"""The on-policy rollout held in ``tf.Variable``\\ s: the in-graph twin of
:class:`~rlkit.replay.rollout.Rollout`, written and read inside a compiled program.

The same layout as the Python store: ``n_steps`` rows of ``N`` streams, ``[T, N, ...]`` in
time order; a row is one vector step of the ``N`` copies (the compiled loop's copies advance
together, so one counter ``filled`` serves every stream). Each step keeps its observation,
its action as the agent stores it (PPO's unclipped Gaussian sample), its reward,
``terminated`` and ``truncated`` apart, and its next observation (the final one where an
episode ended: the environments' ``final_obs``), which GAE reads where an episode was
truncated and at the rollout's last step. ``tests/unit/agents/test_ppo_twins.py`` feeds
both stores the same steps and compares what they hand to an update.

    rollout = GraphRollout(128, 4, (4,))              # CartPole: T = 128, N = 4
    rollout = GraphRollout(128, 8, (10, 10, 4), (), tf.bool)   # MinAtar's Breakout boards
    rollout.add(obs, actions, rewards, final_obs, terminated, truncated)  # in tf.function
    rollout.put(start, count, rows)       # or a segment of steps at once (rows [T, N, ...])
    if rollout.full: ... rollout.batch() ... rollout.clear()
"""

from __future__ import annotations

import tensorflow as tf

from rlkit.replay.rollout import RolloutBatch


class GraphRollout:
    """``n_steps`` vector steps of ``num_streams`` copies in variables.

    Args:
        n_steps: ``T``.
        num_streams: ``N``.
        obs_shape: one observation's shape.
        action_shape: ``()`` for a discrete action (int32), ``(A,)`` for a Box one (float32).
        obs_dtype: the observations' dtype (float32 vectors; MinAtar's bool boards stay bool,
            1 byte a cell, as the Python store keeps its observations' own dtype).

    Attributes:
        filled: int32 scalar variable, the rows written since the last :meth:`clear`.
    """

    #: the variables, by the name a checkpoint keeps them under
    NAMES = (*RolloutBatch._fields, "filled")

    def __init__(
        self, n_steps: int, num_streams: int, obs_shape: tuple[int, ...],
        action_shape: tuple[int, ...] = (), obs_dtype: tf.DType = tf.float32,
    ) -> None:  # fmt: skip
        if n_steps < 1 or num_streams < 1:
            raise ValueError(f"n_steps and num_streams must be >= 1, got {n_steps}, "
                             f"{num_streams}")  # fmt: skip
        self.n_steps, self.num_streams = int(n_steps), int(num_streams)
        t, n = self.n_steps, self.num_streams
        action_dtype = tf.int32 if action_shape == () else tf.float32

        def variable(shape, dtype, name):
            return tf.Variable(tf.zeros(shape, dtype), trainable=False, name=f"rollout_{name}")

        self.obs = variable([t, n, *obs_shape], obs_dtype, "obs")
        self.actions = variable([t, n, *action_shape], action_dtype, "actions")
        self.rewards = variable([t, n], tf.float32, "rewards")
        self.next_obs = variable([t, n, *obs_shape], obs_dtype, "next_obs")
        self.terminated = variable([t, n], tf.bool, "terminated")
        self.truncated = variable([t, n], tf.bool, "truncated")
        self.filled = variable([], tf.int32, "filled")

    def add(self, obs, actions, rewards, next_obs, terminated, truncated) -> tf.Tensor:
        """Write one vector step (each argument ``[N, ...]``) as the next row; returns the
        rows filled afterwards (int32). A full rollout is not written to (clear it first)."""
        row = [[tf.minimum(self.filled, self.n_steps - 1)]]
        for variable, value in zip(
            self.fields(), (obs, actions, rewards, next_obs, terminated, truncated), strict=True
        ):
            variable.scatter_nd_update(row, tf.cast(value, variable.dtype)[None])
        filled = tf.minimum(self.filled + 1, self.n_steps)
        self.filled.assign(filled)
        return filled

    def put(self, start, count, rows) -> None:
        """Write ``count`` vector steps at once as the rows from ``start`` (the rows filled),
        as ``count`` calls of :meth:`add` would: ``rows`` the six fields of :meth:`add`,
        each ``[T, N, ...]`` with the new steps at rows ``start .. start + count - 1`` (a
        compiled loop's segment of steps, stacked; the other rows are not read)."""
        t = tf.range(self.n_steps)
        new = tf.logical_and(t >= start, t < start + count)
        for variable, value in zip(self.fields(), rows, strict=True):
            where = tf.reshape(new, [-1] + [1] * (variable.shape.rank - 1))
            variable.assign(tf.where(where, tf.cast(value, variable.dtype), variable))
        self.filled.assign(tf.minimum(start + count, self.n_steps))

    def fields(self) -> tuple[tf.Variable, ...]:
        """The variables :meth:`add` writes, in its arguments' order."""
        return (self.obs, self.actions, self.rewards, self.next_obs, self.terminated,
                self.truncated)  # fmt: skip

    @property
    def full(self) -> tf.Tensor:
        """Every stream has its ``n_steps`` steps (a bool tensor)."""
        return tf.equal(self.filled, self.n_steps)

    def batch(self) -> RolloutBatch:
        """The rollout as tensors ``[T, N, ...]`` (what :meth:`Rollout.batch` hands)."""
        return RolloutBatch(*(getattr(self, name).read_value() for name in RolloutBatch._fields))

    def clear(self) -> None:
        """Empty the rollout (after an update)."""
        self.filled.assign(0)

    def variables(self) -> dict[str, tf.Variable]:
        """The variables by name (:data:`NAMES`)."""
        return {name: getattr(self, name) for name in self.NAMES}
