"""Recording a trained agent's episodes to a video file."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np

from rlkit.core.errors import UsageError

#: the file names a video is written to: moviepy picks the codec from the suffix (.avi,
#: for one, has none by default); .gif through moviepy's GIF writer
VIDEO_SUFFIXES = (".mp4", ".mkv", ".mov", ".webm", ".ogv", ".gif")


def record_frames(
    agent,
    env_id: str,
    episodes: int = 1,
    seed: int = 0,
    env_kwargs: dict | None = None,
) -> tuple[list[np.ndarray], list[float]]:
    """Play ``episodes`` greedy episodes of ``agent`` on ``env_id`` rendered as
    ``rgb_array``; return every frame (the first of each episode included) and the
    episode returns. ``MinAtar/*`` ids give MinAtar's own colours, scaled up
    (:mod:`rlkit.envs.minatar_frames`)."""
    import gymnasium as gym

    # off-screen rendering: no window, no sound device (pygame/SDL would complain)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    from rlkit.envs.make import make_env

    env = make_env(env_id, training=False, render_mode="rgb_array", **(env_kwargs or {}))
    frames, returns = [], []
    obs, _ = env.reset(seed=seed)
    try:
        for _ in range(episodes):
            total, done = 0.0, False
            frames.append(np.asarray(env.render()))
            while not done:
                obs, reward, terminated, truncated, _ = env.step(agent.act(obs, explore=False))
                total += float(reward)
                done = terminated or truncated
                frames.append(np.asarray(env.render()))
            returns.append(total)
            obs, _ = env.reset()
    except gym.error.DependencyNotInstalled as exc:
        raise UsageError(f"rendering {env_id} needs an extra package: {exc}") from None
    finally:
        env.close()
    return frames, returns


def record_video(
    agent,
    env_id: str,
    path: Path,
    episodes: int = 1,
    seed: int = 0,
    fps: int = 30,
    env_kwargs: dict | None = None,
) -> list[float]:
    """Play ``episodes`` greedy episodes and write them to one video (e.g. ``out.mp4``).

    Needs ``moviepy`` (and ``pygame`` for gymnasium's classic-control renderers):
    ``pip install ".[video]"`` from a clone of rlkit. Returns the episode returns.
    """
    if importlib.util.find_spec("moviepy") is None:
        raise UsageError(
            "recording video needs moviepy and pygame: from a clone of rlkit, "
            "pip install '.[video]' (or pip install moviepy pygame)"
        )
    if Path(path).suffix.lower() not in VIDEO_SUFFIXES:
        raise UsageError(f"cannot write video {path}: its name must end with one of "
                         f"{', '.join(VIDEO_SUFFIXES)}")  # fmt: skip
    frames, returns = record_frames(agent, env_id, episodes, seed, env_kwargs)
    from moviepy import ImageSequenceClip

    clip = ImageSequenceClip(frames, fps=fps)
    try:
        if Path(path).suffix.lower() == ".gif":
            clip.write_gif(str(path), logger=None)
        else:
            clip.write_videofile(str(path), logger=None)
    except Exception as exc:  # a missing ffmpeg codec surfaces here
        raise UsageError(f"cannot write video {path}: {exc}".splitlines()[0]) from None
    return returns
