"""Running statistics for observation normalisation and reward scaling (SB3's
``VecNormalize``, ``common/running_mean_std.py``), pure numpy.

:class:`RunningMeanStd` keeps the mean and the (population) variance of everything it was
given, batch by batch, with the parallel form of Welford's update (Chan et al. 1979)::

    delta = mean_b - mean;  n' = n + n_b
    mean' = mean + delta n_b / n'
    var'  = (var n + var_b n_b + delta^2 n n_b / n') / n'

starting, as SB3's, from mean 0, variance 1 and a count of ``epsilon`` (1e-4).
:func:`normalize` is ``clip((x - mean) / sqrt(var + 1e-8), -clip, clip)``.
"""

from __future__ import annotations

import numpy as np

#: added to the variance before its square root (SB3's ``VecNormalize.epsilon``)
EPSILON = 1e-8


class RunningMeanStd:
    """Mean and variance ``[*shape]`` (float64) of every row given to :meth:`update`.

    Args:
        shape: one row's shape (``()`` for scalars such as returns).
        epsilon: the count it starts from (with mean 0 and variance 1).
    """

    def __init__(self, shape: tuple[int, ...] = (), epsilon: float = 1e-4) -> None:
        self.mean = np.zeros(shape, np.float64)
        self.var = np.ones(shape, np.float64)
        self.count = float(epsilon)

    def update(self, rows: np.ndarray) -> None:
        """Take in a batch ``[B, *shape]``."""
        rows = np.asarray(rows, np.float64)
        if len(rows) == 0:
            return
        batch_mean, batch_var, batch_count = rows.mean(axis=0), rows.var(axis=0), len(rows)
        delta = batch_mean - self.mean
        total = self.count + batch_count
        self.mean = self.mean + delta * batch_count / total
        m2 = self.var * self.count + batch_var * batch_count
        self.var = (m2 + np.square(delta) * self.count * batch_count / total) / total
        self.count = total

    def state_dict(self) -> dict[str, np.ndarray]:
        """``mean``, ``var`` and ``count`` (for checkpoints)."""
        return {"mean": self.mean.copy(), "var": self.var.copy(),
                "count": np.array(self.count, np.float64)}  # fmt: skip

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`state_dict` returned; ValueError where shapes do not fit."""
        if np.shape(state["mean"]) != self.mean.shape:
            raise ValueError(f"statistics of shape {np.shape(state['mean'])}, "
                             f"expected {self.mean.shape}")  # fmt: skip
        self.mean = np.array(state["mean"], np.float64)
        self.var = np.array(state["var"], np.float64)
        self.count = float(state["count"])


def normalize(x: np.ndarray, mean: np.ndarray, var: np.ndarray, clip: float) -> np.ndarray:
    """``clip((x - mean) / sqrt(var + 1e-8), -clip, clip)`` as float32 (``x`` ``[..., *shape]``)."""
    out = (np.asarray(x, np.float64) - mean) / np.sqrt(var + EPSILON)
    return np.clip(out, -clip, clip).astype(np.float32)
