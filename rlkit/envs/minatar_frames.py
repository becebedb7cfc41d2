"""MinAtar's own colour rendering, scaled up, for videos of ``MinAtar/*`` environments.

The ``minatar`` package's gymnasium environments render ``rgb_array`` frames as 10x10
float images in [0, 1], which a video writer reads as an almost black 10x10 picture, and
gymnasium's environment checker warns about them (float frames, no ``render_fps``).
:class:`MinAtarFrames` renders instead what MinAtar's own display shows (each channel in
its colour of seaborn's ``cubehelix`` palette, black where no channel is set: as
``minatar.Environment.display_state``), as ``uint8`` enlarged ``scale`` times by
nearest neighbour, so each cell of the game is a square block of pixels.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

SCALE = 16  # 10x10 cells -> 160x160 pixels
FPS = 15


def minatar_palette(n_channels: int) -> np.ndarray:
    """MinAtar's colours as ``uint8 [n_channels + 1, 3]``: black (no channel set), then
    seaborn's ``cubehelix`` palette, one colour per channel (``minatar.Environment``'s)."""
    import seaborn as sns  # a dependency of the minatar package

    colours = [(0.0, 0.0, 0.0), *sns.color_palette("cubehelix", n_channels)]
    return np.round(np.asarray(colours) * 255).astype(np.uint8)


def minatar_frame(state: np.ndarray, scale: int = SCALE) -> np.ndarray:
    """The RGB picture of a MinAtar state ``[H, W, channels]`` (bool), ``uint8 [H*scale,
    W*scale, 3]``: each cell in the colour of the last channel set in it (MinAtar's rule),
    black where none is, enlarged ``scale`` times by nearest neighbour."""
    if scale < 1:
        raise ValueError(f"scale must be >= 1, got {scale}")
    state = np.asarray(state)
    n_channels = state.shape[-1]
    cells = np.amax(state * np.arange(1, n_channels + 1).reshape(1, 1, -1), axis=2)
    image = minatar_palette(n_channels)[cells.astype(np.intp)]
    return np.repeat(np.repeat(image, scale, axis=0), scale, axis=1)


class MinAtarFrames(gym.Wrapper):
    """A MinAtar environment whose ``render()`` returns :func:`minatar_frame` of its state
    (``render_mode`` ``"rgb_array"``). The wrapped environment is never asked to render."""

    def __init__(self, env: gym.Env, scale: int = SCALE) -> None:
        super().__init__(env)
        self.scale = scale
        self.metadata = {**env.metadata, "render_modes": ["rgb_array"], "render_fps": FPS}

    @property
    def render_mode(self) -> str:  # type: ignore[override]  # read-only, as gymnasium's Wrapper
        return "rgb_array"

    def render(self) -> np.ndarray:
        """The current state as MinAtar shows it, scaled up (``uint8 [H, W, 3]``)."""
        minatar_env: Any = self.env.unwrapped  # (minatar's gymnasium env: untyped, has .game)
        return minatar_frame(minatar_env.game.state(), self.scale)


def make_minatar(env_id: str, **kwargs: Any) -> gym.Env:
    """``gymnasium.make(env_id, **kwargs)`` for a ``MinAtar/*`` id; with ``render_mode``
    ``"rgb_array"``, wrapped in :class:`MinAtarFrames` (the base environment is made
    without a render mode, so gymnasium's checker has no float frame to warn about)."""
    if kwargs.get("render_mode") != "rgb_array":
        return gym.make(env_id, **kwargs)
    kwargs = {k: v for k, v in kwargs.items() if k != "render_mode"}
    return MinAtarFrames(gym.make(env_id, **kwargs))
