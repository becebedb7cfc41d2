"""PPO's observation normalisation and reward scaling (SB3's ``VecNormalize``: rl-zoo's
``normalize: true`` is ``norm_obs`` and ``norm_reward`` both on), on
:class:`~rlkit.learn.normalization.RunningMeanStd`.

Observations: the running statistics take in every observation training sees (each step's
next observations, the final ones included, and each reset's); the statistics *in use*
(acting, the update, greedy evaluation, the export) are frozen at each update, so that a
rollout is acted on, evaluated and trained on with one normalisation (its first minibatch's
ratio is exactly 1). SB3 normalises each step's observations with the statistics of that
step instead. The frozen mean and variance are variables saved with the weights (a saved
model acts as the trained one); the running ones are part of a checkpoint (exact resume).

Rewards: each stream's discounted return ``R = gamma R + r`` (0 again after an episode
ends) feeds a running variance, and the stored reward is ``clip(r / sqrt(var + 1e-8),
+-clip_reward)``, as SB3's.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rlkit.learn.normalization import EPSILON, RunningMeanStd, normalize


class ObservationNormalizer:
    """``clip((x - mean) / sqrt(var + 1e-8), +-clip)`` of encoded observations ``[..., D]``
    with the frozen statistics; :meth:`observe` feeds the running ones, :meth:`freeze`
    puts them in use.

    Attributes:
        mean, var: the statistics in use, float64 variables ``[D]`` (saved with the weights).
        running: the :class:`RunningMeanStd` (a checkpoint's ``memory/obs_rms``).
    """

    def __init__(self, size: int, clip: float) -> None:
        self.running = RunningMeanStd((size,))
        self.mean = tf.Variable(np.zeros(size), dtype=tf.float64, name="obs_norm_mean")
        self.var = tf.Variable(np.ones(size), dtype=tf.float64, name="obs_norm_var")
        self.clip = float(clip)
        self.refresh()

    def refresh(self) -> None:
        """Read the variables again (after a load)."""
        self._mean, self._var = self.mean.numpy(), self.var.numpy()

    def observe(self, rows: np.ndarray) -> None:
        """Encoded observations ``[B, D]`` seen in training."""
        self.running.update(rows)

    def freeze(self) -> None:
        """Use the running statistics from now on (after an update)."""
        self.mean.assign(self.running.mean)
        self.var.assign(self.running.var)
        self.refresh()

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return normalize(x, self._mean, self._var, self.clip)

    def graph(self, x: tf.Tensor) -> tf.Tensor:
        """The same in TensorFlow (float64 inside, as numpy's), for the export."""
        mean, var = tf.constant(self._mean), tf.constant(self._var)
        out = (tf.cast(x, tf.float64) - mean) / tf.sqrt(var + EPSILON)
        return tf.cast(tf.clip_by_value(out, -self.clip, self.clip), tf.float32)

    def variables(self) -> list[tf.Variable]:
        return [self.mean, self.var]

    def state_dict(self) -> dict[str, np.ndarray]:
        return self.running.state_dict()

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        self.running.load_state_dict(state)


class RewardScaler:
    """Rewards divided by the running std of each stream's discounted return, clipped.

    Args:
        gamma: the return's discount.
        clip: the bound of the scaled rewards.
    """

    def __init__(self, gamma: float, clip: float) -> None:
        self.gamma, self.clip = float(gamma), float(clip)
        self.rms = RunningMeanStd(())
        self.returns = np.zeros(0, np.float64)  # [N], sized by the first call

    def __call__(self, rewards: np.ndarray, ended: np.ndarray) -> np.ndarray:
        """Scaled rewards ``[N]`` float32 of one step of ``N`` streams (``ended``: ``[N]``
        bool, the episodes that ended at it)."""
        rewards = np.asarray(rewards, np.float64).reshape(-1)
        if self.returns.shape != rewards.shape:
            self.returns = np.zeros_like(rewards)
        self.returns = self.returns * self.gamma + rewards
        self.rms.update(self.returns)
        scaled = np.clip(rewards / np.sqrt(self.rms.var + EPSILON), -self.clip, self.clip)
        self.returns[np.asarray(ended, bool).reshape(-1)] = 0.0
        return scaled.astype(np.float32)

    def state_dict(self) -> dict[str, np.ndarray]:
        rms = {f"rms_{k}": v for k, v in self.rms.state_dict().items()}
        return {**rms, "returns": self.returns.copy()}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        self.rms.load_state_dict({k[4:]: v for k, v in state.items() if k.startswith("rms_")})
        self.returns = np.array(state["returns"], np.float64)
