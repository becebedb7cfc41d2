"""A replay memory held in ``tf.Variable``\\ s: written and sampled inside a compiled program.

What the compiled training loop (:mod:`rlkit.run.compiled.program`) stores its experience in:
a ring of ``capacity`` transitions ``(obs, action, reward, next_obs, terminated)``, each
with its own ``next_obs`` (the observation the step led to, before any autoreset), so that
any slot is a whole transition and sampling needs no episode bookkeeping. ``add`` writes
``N`` transitions (one vector step) at the write position; ``sample`` draws ``B`` slots
uniformly from those filled, from a stateless seed (the same seed gives the same slots).
Truncation is not stored: a transition cut by a time limit bootstraps (``terminated``
false), as :class:`~rlkit.replay.memory.ReplayMemory` does.

With ``n_step > 1`` the ring also keeps whether each transition ended its episode
(terminated or truncated), and :meth:`GraphReplay.n_step` walks from a sampled slot along its
stream (the ``streams`` copies of a vector step write consecutive slots, so a stream's next
transition is ``streams`` slots on) as :func:`rlkit.replay.nstep.n_step` walks the Python
replay's links: at most ``n - 1`` steps, stopping at an episode's end and at the stream's
newest transition.

    replay = GraphReplay(10_000, obs_dim=4)                       # CartPole's vectors
    boards = GraphReplay(100_000, (10, 10, 4), obs_dtype=tf.bool)  # MinAtar's boards
    replay.add(obs, actions, rewards, next_obs, terminated)       # inside tf.function
    obs, actions, rewards, next_obs, terminated = replay.sample(128, seed)
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


class GraphReplay:
    """A ring of ``capacity`` transitions in ``tf.Variable``\\ s.

    Args:
        capacity: transitions kept (the oldest are overwritten).
        obs_dim: length of an observation (a vector), or an observation's shape
            (MinAtar's ``(10, 10, C)``).
        action_shape: ``()`` for a discrete action (int32), ``(k,)`` for a continuous one
            (float32).
        obs_dtype: how observations are kept and sampled: float32 (vectors) or bool
            (MinAtar's boards: a byte a cell, a quarter of float32's memory).

    Attributes:
        position: int32 scalar variable, the next slot written.
        size: int32 scalar variable, slots filled (at most ``capacity``).
    """

    #: the variables, by the name a checkpoint keeps them under (``ended`` too with n-step)
    NAMES = ("obs", "actions", "rewards", "next_obs", "terminated", "position", "size")

    def __init__(
        self, capacity: int, obs_dim: int | tuple[int, ...], action_shape: tuple[int, ...] = (),
        obs_dtype: tf.DType = tf.float32, n_step: int = 1, streams: int = 1,
    ) -> None:  # fmt: skip
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        if n_step < 1 or streams < 1:
            raise ValueError(f"n_step and streams must be at least 1, got {n_step}, {streams}")
        self.capacity = int(capacity)
        self.horizon, self.streams = int(n_step), int(streams)
        obs_shape = (int(obs_dim),) if isinstance(obs_dim, int) else tuple(obs_dim)
        action_dtype = tf.int32 if action_shape == () else tf.float32

        def zeros(shape, dtype, name):
            return tf.Variable(tf.zeros(shape, dtype), trainable=False, name=f"replay_{name}")

        self.obs = zeros([capacity, *obs_shape], obs_dtype, "obs")
        self.actions = zeros([capacity, *action_shape], action_dtype, "actions")
        self.rewards = zeros([capacity], tf.float32, "rewards")
        self.next_obs = zeros([capacity, *obs_shape], obs_dtype, "next_obs")
        self.terminated = zeros([capacity], tf.float32, "terminated")
        self.position = tf.Variable(0, dtype=tf.int32, trainable=False, name="replay_position")
        self.size = tf.Variable(0, dtype=tf.int32, trainable=False, name="replay_size")
        self.names: tuple[str, ...] = self.NAMES
        if self.horizon > 1:
            self.ended = zeros([capacity], tf.bool, "ended")
            self.names = (*self.NAMES, "ended")

    def add(self, obs, actions, rewards, next_obs, terminated, truncated=None) -> tf.Tensor:
        """Store ``N`` transitions (leading shape ``[N]``; ``N <= capacity``) in the slots
        ``position, position + 1, ...`` (mod capacity); returns those slots, int32 ``[N]``.
        ``terminated``, ``truncated``: bool ``[N]`` (``truncated`` is kept with n-step only,
        as the end of the walk)."""
        n = tf.shape(rewards)[0]
        slots = tf.math.floormod(self.position + tf.range(n), self.capacity)[:, None]
        if self.horizon > 1:
            ended = tf.cast(terminated, tf.bool)
            if truncated is not None:
                ended = tf.logical_or(ended, tf.cast(truncated, tf.bool))
            self.ended.scatter_nd_update(slots, ended)
        self.obs.scatter_nd_update(slots, tf.cast(obs, self.obs.dtype))
        self.actions.scatter_nd_update(slots, tf.cast(actions, self.actions.dtype))
        self.rewards.scatter_nd_update(slots, tf.cast(rewards, tf.float32))
        self.next_obs.scatter_nd_update(slots, tf.cast(next_obs, self.next_obs.dtype))
        self.terminated.scatter_nd_update(slots, tf.cast(terminated, tf.float32))
        self.position.assign(tf.math.floormod(self.position + n, self.capacity))
        self.size.assign(tf.minimum(self.size + n, self.capacity))
        return slots[:, 0]

    def indices(self, batch_size: int, seed: tf.Tensor) -> tf.Tensor:
        """int32 ``[batch_size]`` slots drawn uniformly (with replacement) from the filled
        ones, from a stateless ``seed`` (int32 ``[2]``)."""
        return tf.random.stateless_uniform(
            [batch_size], seed, minval=0, maxval=tf.maximum(self.size, 1), dtype=tf.int32
        )

    def gather(self, indices: tf.Tensor) -> tuple[tf.Tensor, ...]:
        """``(obs [B, *obs_shape], actions [B], rewards [B], next_obs [B, *obs_shape],
        terminated [B])`` at ``indices`` (observations in ``obs_dtype``, ``terminated``
        float32 0/1)."""
        return tuple(
            tf.gather(v, indices)
            for v in (self.obs, self.actions, self.rewards, self.next_obs, self.terminated)
        )

    def sample(self, batch_size: int, seed: tf.Tensor) -> tuple[tf.Tensor, ...]:
        """:meth:`gather` of :meth:`indices`: a uniform minibatch of ``batch_size``."""
        return self.gather(self.indices(batch_size, seed))

    def n_step(self, slots: tf.Tensor, gamma: float) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """The n-step view of ``slots`` (int32 ``[B]``): ``(last, returns, discount)``, each
        ``[B]``: the slot of the walk's last step (whose ``next_obs`` the target bootstraps
        from), the float32 discounted reward sum over the ``k`` steps walked, and
        ``gamma ** k`` (0 where the last step terminated). As
        :func:`rlkit.replay.nstep.n_step`, in float32."""
        g = tf.constant(gamma, tf.float32)
        last = slots
        returns = tf.gather(self.rewards, slots)
        scale = tf.ones_like(returns)  # gamma ** (steps walked - 1)
        for _ in range(self.horizon - 1):
            # the stream's next transition was written after ``last`` (it is not the newest)
            newer = tf.math.floormod(self.position - 1 - last, self.capacity) >= self.streams
            walking = tf.logical_and(newer, tf.logical_not(tf.gather(self.ended, last)))
            last = tf.where(walking, tf.math.floormod(last + self.streams, self.capacity), last)
            scale = tf.where(walking, scale * g, scale)
            returns = returns + tf.where(walking, scale * tf.gather(self.rewards, last), 0.0)
        terminal = tf.gather(self.terminated, last) > 0.0
        return last, returns, tf.where(terminal, tf.zeros_like(scale), scale * g)

    @property
    def nbytes(self) -> int:
        """Bytes the variables take (all allocated at once)."""
        return sum(int(np.prod(v.shape)) * v.dtype.size for v in self.variables().values())

    # -- checkpoints ----------------------------------------------------------------------
    def variables(self) -> dict[str, tf.Variable]:
        """The variables by name (:data:`NAMES`, and ``ended`` with n-step)."""
        return {name: getattr(self, name) for name in self.names}

    def state_dict(self) -> dict[str, np.ndarray]:
        """What a checkpoint keeps: every variable as an array (the filled slots and the
        rest: a ring that wrapped needs all of them)."""
        return {name: v.numpy() for name, v in self.variables().items()}

    def load_state_dict(self, arrays: dict[str, np.ndarray]) -> None:
        """Put back what :meth:`state_dict` returned; ValueError on another shape."""
        for name, variable in self.variables().items():
            value = np.asarray(arrays[name])
            if tuple(value.shape) != tuple(variable.shape):
                raise ValueError(
                    f"replay {name} has shape {value.shape}, this replay {tuple(variable.shape)}"
                )
            variable.assign(value)
