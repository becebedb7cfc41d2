"""PPO's acting rule, in numpy: sample from the policy's snapshot, or act greedily.

Discrete actions are drawn with the Gumbel-max trick (``argmax(logits + Gumbel noise)``,
an exact sample from ``softmax(logits)``), MultiDiscrete ones the same way in each
dimension's slice of the logits (:func:`multi_discrete_sample`: one draw of Gumbel noise
over all ``sum(nvec)`` logits); Box actions from the diagonal Gaussian
``mean + std * noise`` in the action's own units (SB3's and CleanRL's: no rescaling), the
*unclipped* sample kept for the rollout (its log-probability is then exact) and clipped to
the bounds only on its way to the environment. Greedy: ``argmax`` of the logits (each
dimension's for MultiDiscrete), or the mean (clipped). No TensorFlow call per step for the
tanh MLPs, MinAtar's torso and a user's Dense stack: their numpy snapshot is refreshed after
each update; the Nature CNN (and other networks of one's own) acts through one compiled call
per (batched) step, reading the live weights
(:class:`~rlkit.agents.ppo.networks.ConvActorCritic`).

MultiDiscrete actions have no compiled loop (no rlkit TensorFlow environment has them).

The compiled loop's acting is :func:`graph_ppo_action` (and :func:`graph_clip_action` on
the way to the environment), whose draws go through :func:`graph_discrete_sample` and
:func:`graph_gaussian_sample`, the twins of :func:`discrete_sample` and
:func:`gaussian_sample` here, tied by ``tests/unit/agents/test_ppo_twins.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import tensorflow as tf
from gymnasium import spaces

from rlkit.agents.parts import Acting
from rlkit.core.errors import UsageError
from rlkit.envs.action_masks import check_action_masks
from rlkit.learn.gsde import (
    ExplorationMatrices,
    HeldNoise,
    graph_held_noise,
    numpy_gsde_noise,
)
from rlkit.learn.gumbel import gumbel_from_uniform

if TYPE_CHECKING:
    from rlkit.agents.ppo.learner import PolicySnapshot


def discrete_sample(logits: np.ndarray, gumbel: np.ndarray) -> np.ndarray:
    """``argmax(logits + gumbel)`` over the last axis (``[..., n] -> [...]``, int64): with
    standard Gumbel noise an exact sample of ``softmax(logits)``; with zeros the greedy
    action."""
    return np.argmax(logits + gumbel, axis=-1)


def multi_discrete_sample(logits: np.ndarray, gumbel: np.ndarray,
                          nvec: tuple[int, ...]) -> np.ndarray:  # fmt: skip
    """``argmax`` of ``logits + gumbel`` within each dimension's slice of the last axis
    (``[..., sum(nvec)] -> [..., D]``, int64, each counted from 0): with standard Gumbel
    noise an exact sample of each dimension's softmax, independently; with zeros the
    per-dimension greedy action."""
    cuts = np.cumsum(nvec)[:-1]
    parts = np.split(logits + gumbel, cuts, axis=-1)
    return np.stack([np.argmax(part, axis=-1) for part in parts], axis=-1)


def gaussian_sample(mean: np.ndarray, std: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """``mean + std * noise`` (``[..., A]``; ``noise`` standard normal): the unclipped
    sample the rollout keeps."""
    return mean + std * noise


def graph_discrete_sample(logits: tf.Tensor, gumbel: tf.Tensor) -> tf.Tensor:
    """The twin of :func:`discrete_sample`: int32 ``[...]``."""
    return tf.argmax(logits + gumbel, axis=-1, output_type=tf.int32)


def graph_gaussian_sample(mean: tf.Tensor, std: tf.Tensor, noise: tf.Tensor) -> tf.Tensor:
    """The twin of :func:`gaussian_sample` (float32)."""
    return mean + std * noise


def graph_ppo_action(out: tf.Tensor, seed: tf.Tensor, log_std: tf.Variable | None = None):
    """Exploring actions of the compiled loop from the policy network's output ``out``
    (logits ``[N, n]``, or the Gaussian's mean ``[N, A]`` with its ``log_std [A]``) and the
    stateless ``seed`` (int32 ``[2]``): int32 ``[N]`` counted from 0, or the unclipped float32
    sample ``[N, A]`` (clip it for the environment with :func:`graph_clip_action`)."""
    if log_std is None:
        tiny = float(np.finfo(np.float32).tiny)
        uniform = tf.random.stateless_uniform(tf.shape(out), seed, minval=tiny, maxval=1.0)
        return graph_discrete_sample(out, -tf.math.log(-tf.math.log(uniform)))
    noise = tf.random.stateless_normal(tf.shape(out), seed)
    return graph_gaussian_sample(out, tf.exp(log_std), noise)


def graph_ppo_sde_action(
    latent: tf.Tensor, mean: tf.Tensor, std: tf.Tensor, held: HeldNoise, rollout: tf.Tensor,
    sample_freq: int, seed: tf.Tensor,
) -> tuple[tf.Tensor, HeldNoise]:  # fmt: skip
    """:meth:`PPOActing.sde_sample` (exploring) in the graph: the unclipped sample ``mean +
    z . E_n`` ``[N, A]`` and the held matrices after, for the policy's ``latent [N, L]`` and
    ``mean [N, A]``, the matrices' ``std [L, A]`` and their state ``held``. ``rollout``: the
    int64 number of the rollout this act belongs to; a new one draws new matrices, as the
    Python agent's update restarts them (SB3's ``reset_noise`` when a rollout begins), and
    so does every ``sample_freq``-th act within it (:func:`~rlkit.learn.gsde.graph_held_noise`;
    the normals a stateless draw of ``seed``)."""
    noise, after = graph_held_noise(latent, std, held, rollout, sample_freq, seed)
    return mean + noise, after


def graph_clip_action(raw: tf.Tensor, low: np.ndarray, high: np.ndarray) -> tf.Tensor:
    """A Gaussian sample ``[N, A]`` clipped to the Box's flattened bounds, as
    :meth:`PPOActing.act` sends it."""
    return tf.clip_by_value(raw, low.astype(np.float32), high.astype(np.float32))


class PPOActing(Acting):
    """Sample ``a ~ pi(.|s)`` from the snapshot last given to :meth:`follow`.

    Args:
        action_space: ``Discrete(n)``, ``MultiDiscrete(nvec)`` or ``Box``.
        encode: observations -> what the policy takes: float32 ``[obs_dim]`` / ``[N,
            obs_dim]``, or images ``[(N,) H, W, C]`` in their own dtype.
        rng: the generator of the draws (one draw of the output's shape per call).
        gsde: gSDE's held exploration matrices (``use_sde``; else None).
    """

    def __init__(self, action_space, encode, rng: np.random.Generator,
                 gsde: ExplorationMatrices | None = None) -> None:  # fmt: skip
        self.action_space = action_space
        self.encode = encode
        self.rng = rng
        self.gsde = gsde
        self.discrete = isinstance(action_space, spaces.Discrete)
        self.nvec: tuple[int, ...] | None = None
        if self.discrete:
            self.action_start = int(action_space.start)
        elif isinstance(action_space, spaces.MultiDiscrete):
            self.nvec = tuple(int(n) for n in np.asarray(action_space.nvec).reshape(-1))
            self._starts = np.asarray(action_space.start, np.int64).reshape(-1)
        else:
            self._low = np.asarray(action_space.low, np.float64).reshape(-1)
            self._high = np.asarray(action_space.high, np.float64).reshape(-1)
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # (sent, unclipped) of a draw
        self.snapshot: PolicySnapshot

    def follow(self, policy: PolicySnapshot) -> None:  # type: ignore[override]
        """Act from ``policy`` from now on (its ``forward`` and, for Box actions, ``std``)."""
        self.policy = policy
        self.snapshot = policy

    def act(self, obs, explore: bool = True, step: int = 0, masks=None,
            rng: np.random.Generator | None = None) -> int | np.ndarray:  # fmt: skip
        """An action for one observation (an int or ``[*shape]``) or ``N`` actions for a
        batch (``[N]`` / ``[N, *shape]``): sampled (``explore``) or greedy. ``masks``: the
        valid actions (bool ``[(N,) outputs]``, Discrete and MultiDiscrete: checked by
        :func:`~rlkit.envs.action_masks.check_action_masks`), the others' logits made
        ``-inf`` (never drawn, never greedy). ``rng``: draw from this generator instead of
        the agent's (sampled evaluation; nothing of the rollout's is kept)."""
        if self.gsde is not None:
            raw, lead = self.sde_sample(self.encode(obs), explore, rng)
            return self._send(raw, lead, explore and rng is None)
        out = self.snapshot.forward(self.encode(obs))
        if masks is not None:
            rows = None if out.ndim == 1 else out.shape[0]
            masks = check_action_masks(masks, out.shape[-1], rows, nvec=self.nvec)
            out = np.where(masks, out, -np.inf)
        draws = self.rng if rng is None else rng
        if self.discrete:
            gumbel = draws.gumbel(size=out.shape) if explore else np.zeros(out.shape)
            action = discrete_sample(out, gumbel) + self.action_start
            return int(action) if out.ndim == 1 else action
        if self.nvec is not None:
            gumbel = draws.gumbel(size=out.shape) if explore else np.zeros(out.shape)
            chosen = multi_discrete_sample(out, gumbel, self.nvec) + self._starts
            shape = (*out.shape[:-1], *self.action_space.shape)
            return chosen.reshape(shape).astype(self.action_space.dtype)
        std = self.snapshot.std
        assert std is not None  # (Box actions)
        raw = gaussian_sample(out, std, draws.standard_normal(out.shape)) if explore else out
        return self._send(raw, out.shape[:-1], explore and rng is None)

    def sde_sample(
        self, x: np.ndarray, explore: bool, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, tuple[int, ...]]:
        """gSDE's unclipped action: ``mean + z . E_n`` (each stream's held matrix, drawn anew
        when a rollout starts and every ``sde_sample_freq`` steps:
        :class:`~rlkit.learn.gsde.ExplorationMatrices`), or the mean when greedy; and the
        batch's leading shape (``()`` for one observation). With ``rng`` (a sampled
        evaluation) each act draws matrices of its own from it, the rollout's held ones
        untouched: each action is still a draw of ``pi(.|s)``."""
        assert self.gsde is not None and self.snapshot.std is not None
        rows = np.asarray(x).reshape(-1, np.shape(x)[-1])
        latent, mean = self.snapshot.forward(rows)
        lead = tuple(np.shape(x)[:-1])
        if explore and rng is None:
            mean = mean + self.gsde.noise(latent, self.snapshot.std, self.rng)
        elif explore and rng is not None:
            shape = (len(rows), self.gsde.latent_dim, self.gsde.action_dim)
            matrices = np.asarray(self.snapshot.std, np.float64) * rng.standard_normal(shape)
            mean = mean + numpy_gsde_noise(latent, matrices)
        return mean.reshape(*lead, -1), lead

    def _send(self, raw: np.ndarray, lead: tuple[int, ...], explore: bool) -> np.ndarray:
        """The Gaussian's sample ``raw`` clipped to the bounds in the space's shape; the
        unclipped one kept for :meth:`stored_actions` when ``explore`` (a rollout's act)."""
        raw = raw.astype(np.float32)
        sent = np.clip(raw, self._low, self._high).astype(self.action_space.dtype)
        sent = sent.reshape(*lead, *self.action_space.shape)
        if explore:
            self._last = (sent, raw)
        return sent

    def noise_spec(self, width: int) -> tuple[str, int]:
        """What :meth:`act_with_noise` takes per observation: ``("uniform", width)`` (one
        uniform in (0, 1) per logit: Discrete, MultiDiscrete) or ``("normal", width)`` (one
        standard normal per action dimension: Box); ``width`` is the policy's outputs."""
        return ("normal" if self.snapshot.std is not None else "uniform"), int(width)

    def act_with_noise(self, obs, noise, masks=None) -> int | np.ndarray:
        """The action :meth:`act` samples, drawn from the given noise instead of the
        generator (nothing of the agent's changes): Discrete and MultiDiscrete
        ``argmax(logits + gumbel)`` (each dimension's), ``gumbel`` the Gumbel noise of the
        uniforms ``noise [(N,) outputs]`` (:func:`gumbel_from_uniform`); Box
        ``clip(mean + std * noise)``, ``noise [(N,) A]`` standard normal. What the
        export's ``sample`` signature computes, and the check compares it with."""
        out = self.snapshot.forward(self.encode(obs))
        noise = np.asarray(noise)
        if noise.shape != out.shape:
            raise UsageError(f"noise of shape {noise.shape} for policy outputs {out.shape}: "
                             "one number per output of each observation")  # fmt: skip
        if masks is not None:  # (the invalid actions' logits -inf: never drawn)
            rows = None if out.ndim == 1 else out.shape[0]
            masks = check_action_masks(masks, out.shape[-1], rows, nvec=self.nvec)
            out = np.where(masks.reshape(out.shape), out, -np.inf)
        if self.discrete:
            action = discrete_sample(out, gumbel_from_uniform(noise)) + self.action_start
            return int(action) if out.ndim == 1 else action
        if self.nvec is not None:
            chosen = multi_discrete_sample(out, gumbel_from_uniform(noise), self.nvec)
            shape = (*out.shape[:-1], *self.action_space.shape)
            return (chosen + self._starts).reshape(shape).astype(self.action_space.dtype)
        std = self.snapshot.std
        assert std is not None  # (Box actions)
        raw = gaussian_sample(out, std, noise.astype(np.float64)).astype(np.float32)
        sent = np.clip(raw, self._low, self._high).astype(self.action_space.dtype)
        return sent.reshape(*out.shape[:-1], *self.action_space.shape)

    def stored_actions(self, actions) -> np.ndarray:
        """Actions as the rollout keeps them: Discrete counted from 0 (int64); MultiDiscrete
        flattened ``[(N,) D]``, each dimension counted from 0 (int64); Box as the unclipped
        Gaussian sample ``[(N,) A]`` float32 when ``actions`` are those the last draw sent,
        else ``actions`` themselves, flattened."""
        if self.discrete:
            return np.asarray(actions, np.int64) - self.action_start
        actions = np.asarray(actions)
        if self.nvec is not None:
            rows = (-1,) if actions.shape == self.action_space.shape else (len(actions), -1)
            return actions.astype(np.int64).reshape(rows) - self._starts
        if self._last is not None and np.array_equal(actions, self._last[0]):
            return self._last[1]
        flat = actions.reshape(-1) if actions.shape == self.action_space.shape else (
            actions.reshape(len(actions), -1))  # fmt: skip
        return flat.astype(np.float32)
