"""Action noise for deterministic policies (DDPG, TD3), in numpy with a seeded generator.

Both processes return noise in units of the *standard deviation* ``sigma`` given
to them; the agent scales it to the action bounds (``sigma`` is a fraction of the
half-range ``(high - low) / 2``) and clips the noisy action to the bounds.
Resetting at episode boundaries is the agent's business (``reset()``).
"""

from __future__ import annotations

import numpy as np


class GaussianNoise:
    """Independent ``N(0, sigma^2)`` noise each step.

    Args:
        shape: shape of one noise sample (one action), e.g. ``(act_dim,)``.
        sigma: standard deviation.
        rng: the generator drawn from (seeded by the caller).
    """

    def __init__(self, shape: tuple[int, ...], sigma: float, rng: np.random.Generator) -> None:
        self.shape = tuple(shape)
        self.sigma = float(sigma)
        self.rng = rng

    def __call__(self, batch: int | None = None) -> np.ndarray:
        """One sample of ``shape`` (or ``[batch, *shape]``), float32."""
        shape = self.shape if batch is None else (batch, *self.shape)
        return (self.sigma * self.rng.standard_normal(shape)).astype(np.float32)

    def reset(self, rows=None) -> None:
        """Nothing to forget: the samples are independent."""


class OrnsteinUhlenbeckNoise:
    """Temporally correlated noise (the DDPG paper's exploration).

    ``x <- x + theta * (mu - x) * dt + sigma * sqrt(dt) * N(0, 1)``, starting from
    ``x = mu`` (0) after each :meth:`reset`. With ``theta = 0.15, dt = 0.01`` the
    process is close to a random walk over a 200-step episode.

    Args:
        shape: shape of one sample (one action).
        sigma: scale of the increments.
        rng: the generator drawn from.
        theta: mean-reversion rate; dt: time step.
    """

    def __init__(
        self,
        shape: tuple[int, ...],
        sigma: float,
        rng: np.random.Generator,
        theta: float = 0.15,
        dt: float = 1e-2,
    ) -> None:
        self.shape = tuple(shape)
        self.sigma = float(sigma)
        self.theta = float(theta)
        self.dt = float(dt)
        self.rng = rng
        self.state = np.zeros(self.shape, np.float64)

    def __call__(self, batch: int | None = None) -> np.ndarray:
        """Advance the process one step and return its state (``[batch, *shape]`` if batched).

        A batched call keeps one process per row; a change of batch size restarts them.
        """
        shape = self.shape if batch is None else (batch, *self.shape)
        if self.state.shape != shape:
            self.state = np.zeros(shape, np.float64)
        self.state = (
            self.state
            - self.theta * self.state * self.dt
            + self.sigma * np.sqrt(self.dt) * self.rng.standard_normal(shape)
        )
        return self.state.astype(np.float32)

    def reset(self, rows=None) -> None:
        """Restart the process at its mean (call at the start of each episode).

        ``rows``: restart only these rows of a batched process (vector environments).
        """
        if rows is None or self.state.ndim == len(self.shape):
            self.state = np.zeros_like(self.state)
        else:
            self.state[rows] = 0.0


def make_noise(
    kind: str,
    shape: tuple[int, ...],
    sigma: float,
    rng: np.random.Generator,
    theta: float = 0.15,
    dt: float = 1e-2,
) -> GaussianNoise | OrnsteinUhlenbeckNoise:
    """``"gaussian"`` or ``"ou"`` noise of standard deviation / scale ``sigma``."""
    if kind == "gaussian":
        return GaussianNoise(shape, sigma, rng)
    if kind == "ou":
        return OrnsteinUhlenbeckNoise(shape, sigma, rng, theta, dt)
    raise ValueError(f"unknown noise {kind!r}; choose gaussian or ou")
