"""Invalid-action masks read from an environment, for agents that act with them (PPO and A2C
with ``action_masks = true``).

Two conventions, tried in this order:

1. an ``action_masks()`` method on the environment (or a wrapper under it, through
   gymnasium's ``get_wrapper_attr``; a vector env's sub-environments through ``call``):
   sb3-contrib's ``MaskablePPO`` convention;
2. ``info["action_mask"]`` of the last ``reset`` or ``step``: gymnasium's (``Taxi-v4``
   gives it; a vector env stacks it ``[N, width]``, and under ``SAME_STEP`` autoreset a reset
   sub-environment's row is its new episode's mask).

A mask is ``width`` booleans (any numbers: non-zero is valid) per observation, True where
the action is valid: ``n`` for ``Discrete(n)``, ``sum(nvec)`` for ``MultiDiscrete(nvec)``
(each dimension's in its slice, as sb3-contrib flattens them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlkit.core.errors import UsageError

#: where a mask is read from, for the messages
CONVENTIONS = ("an action_masks() method (sb3-contrib's MaskablePPO) or info['action_mask'] "
               "(gymnasium's, as Taxi-v4 gives it)")  # fmt: skip


def _method_masks(env: Any, vector: bool) -> Any:
    """The masks of ``env``'s ``action_masks()`` (a vector env's: each sub-environment's),
    or None when it has no such method."""
    try:
        if vector:
            return np.stack([np.asarray(m) for m in env.call("action_masks")])
        getter = getattr(env, "get_wrapper_attr", None)
        method = getter("action_masks") if getter else env.action_masks
    except AttributeError:
        return None
    return method() if callable(method) else None


def read_action_masks(env: Any, info: dict[str, Any] | None, width: int, vector: bool = False,
                      name: str = "the environment", nvec: tuple[int, ...] | None = None
                      ) -> np.ndarray:  # fmt: skip
    """The masks of what ``env`` gives the agent next: bool ``[width]`` (one environment) or
    ``[N, width]`` (a vector env), from its ``action_masks()`` or ``info["action_mask"]``
    (``info``: the last reset's or step's); UsageError in one line when it gives none or one
    that does not fit (:func:`check_action_masks`)."""
    masks = _method_masks(env, vector)
    if masks is None and info is not None and "action_mask" in info:
        masks = info["action_mask"]
    if masks is None:
        raise UsageError(f"action_masks is on but {name} gives no action mask: give it "
                         f"{CONVENTIONS}, or set action_masks = false")  # fmt: skip
    count = getattr(env, "num_envs", 1) if vector else None
    return check_action_masks(masks, width, count, name, nvec)


def check_action_masks(masks: Any, width: int, count: int | None = None,
                       name: str = "the environment", nvec: tuple[int, ...] | None = None
                       ) -> np.ndarray:  # fmt: skip
    """``masks`` as bool ``[width]`` (``count`` None) or ``[count, width]``; UsageError in one
    line for another shape or a row with no valid action (each dimension's slice of a
    MultiDiscrete's, ``nvec``)."""
    try:
        array = np.asarray(masks)
        valid = array.astype(bool)
    except (TypeError, ValueError):
        raise UsageError(f"{name}'s action mask is not an array of booleans: {masks!r:.60}"
                         ) from None  # fmt: skip
    want = (width,) if count is None else (count, width)
    if valid.shape != want and not (count is None and valid.shape == (1, width)):
        raise UsageError(
            f"{name}'s action mask has shape {array.shape}, expected {want}: one boolean per "
            "action (a MultiDiscrete's: sum(nvec), each dimension's in its slice)"
        )
    rows = valid.reshape(-1, width)
    slices = np.split(rows, np.cumsum(nvec)[:-1], axis=-1) if nvec else [rows]
    for d, part in enumerate(slices):
        empty = np.flatnonzero(~part.any(axis=-1))
        if len(empty):
            where = f" of dimension {d}" if nvec and len(nvec) > 1 else ""
            row = f" (row {empty[0]})" if rows.shape[0] > 1 else ""
            raise UsageError(f"{name}'s action mask{where} allows no action{row}: at least one "
                             "action must be valid in every state")  # fmt: skip
    return valid.reshape(want)
