"""A torso of one's own under rlkit's head: ``[B, *obs_shape] -> [B, D]`` features.

DQN and its family (C51, QR-DQN, Rainbow: ``torso = "package.module:function"``, or
``torso=build`` from Python) put rlkit's hidden layers and head on it (dueling, noisy layers,
``num_atoms`` or ``num_quantiles`` values per action); IQN puts its fraction embedding on it
(its ``q_network``). The torso takes the observation as stored (uint8 images undivided) and
must give features ``[batch, D]``; anything else is refused in one line naming the shape.
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np

from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.spaces import ObservationFormat
from rlkit.networks.builders import TORSOS
from rlkit.networks.custom import build_model, network_source, twin

#: the kinds of rlkit's own torsos (``torso`` names a builder of one's own otherwise)
BUILT_IN_TORSOS = ("auto", *TORSOS)


def is_user_torso(torso: str) -> bool:
    """Whether a config's ``torso`` names a torso of one's own (a builder or a Python object)."""
    return torso not in BUILT_IN_TORSOS


def features_width(shape: tuple, who: str, feeds: str) -> int:
    """``D`` of features ``[B, D]``; UsageError naming the shape otherwise.

    ``who`` says what gave them (``"the torso"``), ``feeds`` what takes them (``"the head"``).
    """
    if len(shape) != 2 or shape[-1] is None:
        dims = ", ".join("None" if d is None else str(d) for d in shape[1:])
        raise UsageError(
            f"{who}: it must return features [batch, D] for {feeds}, but returns "
            f"[batch, {dims}] (flatten it)"
        )
    return int(shape[-1])


def check_torso(model: keras.Model, obs_format: ObservationFormat, key: str, who: str,
                feeds: str) -> int:  # fmt: skip
    """UsageError unless ``model`` takes a batch of observations and gives ``[B, D]``;
    returns ``D``."""
    sample = np.zeros((2, *obs_format.shape), obs_format.dtype)
    try:
        out = model(sample)
    except Exception as exc:  # the user's model: any error is one line
        shape = ", ".join(map(str, obs_format.shape))
        raise UsageError(
            f"{key} does not accept the observation [batch, {shape}]: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        ) from None
    return features_width((None, *tuple(out.shape)[1:]), who, feeds)


def user_torsos(named: str, given: Any, spaces: tuple[Any, Any], obs_format: ObservationFormat,
                seed: int, key: str = "torso") -> tuple[keras.Model, keras.Model]:  # fmt: skip
    """The online network's torso and the target's (same architecture; the target's weights
    are copied from the online network's when the learner starts), built from the builder
    ``named`` in the config or the Python object ``given``, each checked to give ``[B, D]``.
    ``spaces``: (observation space, action space)."""
    if obs_format.parts:
        raise UsageError(
            f"a {key} of your own takes one observation array; for a Dict or Tuple observation "
            "give a whole network of your own (q_network) that takes its structure"
        )
    source = network_source(key, named, given)
    model = build_model(source, *spaces, key, seeding.network_seed(seed, "q"))
    check_torso(model, obs_format, key, f"the {key}", "the head")
    target = twin(model, source, *spaces, key)
    check_torso(target, obs_format, key, f"the {key}", "the head")
    return model, target
