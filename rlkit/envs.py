"""Making gymnasium environments with clear errors for unknown ids."""

from __future__ import annotations

import difflib

from rlkit.errors import UsageError


def make_env(env_id: str, **kwargs):
    """``gymnasium.make(env_id)``; an unknown id raises UsageError with close matches."""
    import gymnasium as gym

    if env_id not in gym.registry:
        known = list(gym.registry)
        close = difflib.get_close_matches(env_id, known, n=3, cutoff=0.5)
        lowered = {k.lower(): k for k in known}
        if env_id.lower() in lowered:
            close = [lowered[env_id.lower()]]
        hint = (
            f"did you mean {' or '.join(close)}?" if close else "see gymnasium's registry for ids"
        )
        raise UsageError(f"unknown environment {env_id!r}; {hint}")
    try:
        return gym.make(env_id, **kwargs)
    except gym.error.DependencyNotInstalled as exc:
        raise UsageError(f"environment {env_id!r} needs an extra package: {exc}") from None
