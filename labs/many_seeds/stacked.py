"""S seeds of DQN in one XLA program, each seed's weights stacked on a leading axis.

The lab's batched design (not rlkit's product code): PureJaxRL's settings on
``rlkit/CartPole-v1`` (10 envs a seed, replay 10k, batch 128, 120x84 ReLU MLP, Adam 2.5e-4,
an update every vector step after 10k steps, target copy every 500 steps, epsilon 1 -> 0.05
over 250k steps from the start, squared error), written once for ``S`` seeds:

- weights ``[S, in, out]`` and biases ``[S, out]`` (Keras' Dense initialisation per seed), the
  forward pass an ``einsum('sbi,sio->sbo')``; the target network the same shapes;
- Adam's moments per seed in the weights' shapes (Keras' Adam: bias-corrected, eps 1e-7);
- ``S * N`` copies of the environment stepped as one batch, replay ``[S, capacity, ...]``
  written at the same slots for every seed (the seeds run in lockstep: the same config
  gives the same update cadence), sampled per seed (``tf.gather(..., batch_dims=1)``).

The loss is the sum over seeds of each seed's mean squared TD error, so each seed's
gradient is its own. The random numbers are drawn for all seeds at once from one key
(``[S, ...]`` shapes): seed ``k`` here is not seed ``k`` of a single run (a product would key
each seed's draws by its own seed). Everything else is the work one seed's program does.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rlkit.envs.tf import make_tf_env
from rlkit.envs.tf.base import EnvState, split_seed

SETTINGS = {
    "num_envs": 10, "buffer_size": 10_000, "batch_size": 128, "hidden": (120, 84),
    "learning_rate": 2.5e-4, "learning_starts": 10_000, "train_freq": 10,
    "target_update": 500, "gamma": 0.99, "eps_start": 1.0, "eps_end": 0.05,
    "eps_anneal": 250_000,
}  # fmt: skip


def _var(value, dtype=None):
    return tf.Variable(tf.cast(value, dtype) if dtype else value, trainable=False)


class StackedDQN:
    """``num_seeds`` DQN runs of :data:`SETTINGS` on ``env_id`` in one compiled program.

    Args:
        num_seeds: ``S``.
        seed: the base seed (initial weights ``seed + k``; one key for every draw).
        chunk: vector steps per compiled call.
    """

    def __init__(self, num_seeds: int, seed: int = 0, env_id: str = "rlkit/CartPole-v1",
                 chunk: int = 2000) -> None:  # fmt: skip
        cfg = self.cfg = dict(SETTINGS)
        s, n = self.num_seeds, self.num_envs = int(num_seeds), cfg["num_envs"]
        self.chunk = int(chunk)
        self.env = env = make_tf_env(env_id)
        self.num_actions = int(env.discrete_actions)
        sizes = (env.obs_dim, *cfg["hidden"], self.num_actions)
        self.params, self.target = [], []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            kernel = np.stack([
                np.random.default_rng(seed + k).uniform(-limit, limit, (fan_in, fan_out))
                for k in range(s)
            ]).astype(np.float32)  # fmt: skip
            for value in (kernel, np.zeros((s, fan_out), np.float32)):
                self.params.append(tf.Variable(value))
                self.target.append(_var(value))
        self.m = [_var(tf.zeros_like(p)) for p in self.params]
        self.v = [_var(tf.zeros_like(p)) for p in self.params]
        self.adam_steps = _var(0, tf.int64)
        self.key = tf.constant([seed, 0x5EED], tf.int32)
        state, _ = env.reset(split_seed(self.key, 1)[0], s * n)
        self.physics, self.time = _var(state.physics), _var(state.time)
        self.num_steps = _var(0, tf.int64)  # env steps of one seed
        self.episode_return = _var(tf.zeros([s * n], tf.float64))
        cap, d = cfg["buffer_size"], env.obs_dim
        self.r_obs, self.r_next = _var(tf.zeros([s, cap, d])), _var(tf.zeros([s, cap, d]))
        self.r_act = _var(tf.zeros([s, cap], tf.int32))
        self.r_rew, self.r_term = _var(tf.zeros([s, cap])), _var(tf.zeros([s, cap]))
        self.r_pos, self.r_size = _var(0, tf.int32), _var(0, tf.int32)
        self.run_chunk = tf.function(
            self._chunk, jit_compile=True, input_signature=[tf.TensorSpec([], tf.int32)]
        )

    def forward(self, weights, obs):
        """Q-values ``[S, B, A]`` of ``obs`` ``[S, B, obs_dim]`` under stacked ``weights``."""
        x = obs
        layers = len(weights) // 2
        for i in range(layers):
            x = tf.einsum("sbi,sio->sbo", x, weights[2 * i]) + weights[2 * i + 1][:, None, :]
            if i < layers - 1:
                x = tf.nn.relu(x)
        return x

    def _update(self, seed):
        cfg, s = self.cfg, self.num_seeds
        idx = tf.random.stateless_uniform([s, cfg["batch_size"]], seed, 0,
                                          tf.maximum(self.r_size, 1), tf.int32)  # fmt: skip
        obs, nxt = (tf.gather(v, idx, batch_dims=1) for v in (self.r_obs, self.r_next))
        act, rew, term = (tf.gather(v, idx, batch_dims=1)
                          for v in (self.r_act, self.r_rew, self.r_term))  # fmt: skip
        target = rew + cfg["gamma"] * (1.0 - term) * tf.reduce_max(
            self.forward(self.target, nxt), -1
        )
        with tf.GradientTape() as tape:
            tape.watch(self.params)
            q = tf.gather(self.forward(self.params, obs), act, batch_dims=2)
            per_seed = tf.reduce_mean(tf.square(q - tf.stop_gradient(target)), axis=1)
            loss = tf.reduce_sum(per_seed)
        grads = tape.gradient(loss, self.params)
        self.adam_steps.assign_add(1)
        t = tf.cast(self.adam_steps, tf.float32)
        rate = cfg["learning_rate"] * tf.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m.assign_add((g - m) * 0.1)
            v.assign_add((tf.square(g) - v) * 0.001)
            p.assign_sub(rate * m / (tf.sqrt(v) + 1e-7))
        return tf.reduce_mean(per_seed)

    def _vector_step(self):
        cfg, s, n, env = self.cfg, self.num_seeds, self.num_envs, self.env
        before = self.num_steps.read_value()
        key = tf.random.experimental.stateless_fold_in(self.key, before // n)
        coin, pick, env_seed, sample_seed = tf.unstack(split_seed(key, 4))
        obs = env.observe(self.physics)
        past = tf.cast(before, tf.float64)
        eps = cfg["eps_end"] + tf.maximum(
            tf.constant(0.0, tf.float64),
            (cfg["eps_start"] - cfg["eps_end"]) * (cfg["eps_anneal"] - past) / cfg["eps_anneal"],
        )
        q = self.forward(self.params, tf.reshape(obs, [s, n, -1]))
        greedy = tf.reshape(tf.argmax(q, -1, output_type=tf.int32), [s * n])
        explore = tf.random.stateless_uniform([s * n], coin, dtype=tf.float64) < eps
        random = tf.random.stateless_uniform([s * n], pick, 0, self.num_actions, tf.int32)
        actions = tf.where(explore, random, greedy)
        out = env.step(EnvState(self.physics, self.time), actions, env_seed)
        cap = cfg["buffer_size"]
        slots = tf.math.floormod(self.r_pos + tf.range(n), cap)
        where = tf.stack(tf.meshgrid(tf.range(s), slots, indexing="ij"), -1)  # [S, N, 2]
        self.r_obs.scatter_nd_update(where, tf.reshape(obs, [s, n, -1]))
        self.r_next.scatter_nd_update(where, tf.reshape(out.final_obs, [s, n, -1]))
        self.r_act.scatter_nd_update(where, tf.reshape(actions, [s, n]))
        self.r_rew.scatter_nd_update(where, tf.reshape(tf.cast(out.reward, tf.float32), [s, n]))
        term = tf.reshape(tf.cast(out.terminated, tf.float32), [s, n])
        self.r_term.scatter_nd_update(where, term)
        self.r_pos.assign(tf.math.floormod(self.r_pos + n, cap))
        self.r_size.assign(tf.minimum(self.r_size + n, cap))
        now = before + n
        self.num_steps.assign(now)
        self.physics.assign(out.state.physics)
        self.time.assign(out.state.time)
        done = tf.logical_or(out.terminated, out.truncated)
        returns = self.episode_return + out.reward
        self.episode_return.assign(tf.where(done, tf.zeros_like(returns), returns))
        learn = tf.logical_and(now >= cfg["learning_starts"],
                               now // cfg["train_freq"] > before // cfg["train_freq"])  # fmt: skip
        loss = tf.cond(learn, lambda: self._update(sample_seed), lambda: tf.constant(0.0))
        copy = now // cfg["target_update"] > before // cfg["target_update"]

        def hard_copy():
            for t, p in zip(self.target, self.params, strict=True):
                t.assign(p)
            return tf.constant(0)

        tf.cond(copy, hard_copy, lambda: tf.constant(0))
        return done, returns, tf.cast(learn, tf.int64), loss

    def _chunk(self, vector_steps):
        s, n = self.num_seeds, self.num_envs
        done_log = tf.TensorArray(tf.bool, size=self.chunk, element_shape=[s * n])
        return_log = tf.TensorArray(tf.float64, size=self.chunk, element_shape=[s * n])

        def body(i, updates, done_log, return_log):
            done, returns, learned, _ = self._vector_step()
            return i + 1, updates + learned, done_log.write(i, done), return_log.write(i, returns)

        start = (tf.constant(0), tf.constant(0, tf.int64), done_log, return_log)
        i, updates, done_log, return_log = tf.while_loop(
            lambda i, *_: i < vector_steps, body, start, maximum_iterations=self.chunk
        )
        return i, updates, done_log.stack(), return_log.stack()
