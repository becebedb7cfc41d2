"""An export's inputs: a batch of observations in the environment's own terms, one named
input per part (see :mod:`rlkit.exporting.signatures`), their specs, the graph encoding
that turns them into what the agent's networks take, and their description in the
metadata."""

from __future__ import annotations

import re
from typing import Any

import tensorflow as tf
from gymnasium import spaces

from rlkit.core.spaces import space_to_dict


def input_names(space: spaces.Space) -> list[tuple[Any, str]]:
    """``[(key, signature input name)]``: ``[(None, "observation")]`` for a ``Box`` or a
    ``Discrete``; one per key of a ``Dict`` or part of a ``Tuple``."""
    if isinstance(space, spaces.Dict):
        names, taken = [], set()
        for key in space.spaces:
            name = re.sub(r"[^A-Za-z0-9_]", "_", str(key))
            name = name if name[:1].isalpha() else f"part_{name}"
            while name in taken:
                name += "_"
            taken.add(name)
            names.append((key, name))
        return names
    if isinstance(space, spaces.Tuple):
        return [(i, f"part_{i}") for i in range(len(space.spaces))]
    return [(None, "observation")]


def _spec(space: spaces.Space, name: str) -> tf.TensorSpec:
    if isinstance(space, spaces.Discrete):
        return tf.TensorSpec([None], tf.int64, name=name)
    assert space.shape is not None  # (not Discrete: shaped)
    return tf.TensorSpec([None, *space.shape], tf.as_dtype(space.dtype), name=name)


def input_specs(space: spaces.Space) -> dict[str, tf.TensorSpec]:
    """``{input name: TensorSpec}`` of a batch of raw observations of ``space``."""
    subs = space.spaces if isinstance(space, (spaces.Dict, spaces.Tuple)) else None
    return {
        name: _spec(space if subs is None else subs[key], name) for key, name in input_names(space)
    }


def encoder(space: spaces.Space, obs_format) -> Any:
    """``{input name: tensor} -> what the agent's networks take``, as ``obs_format.encode``
    does in numpy: float32 ``[B, D]`` vectors, one-hot ``[B, n]``, images as they are, or
    the ``Dict``'s or ``Tuple``'s structure with each part in its own dtype."""
    names = input_names(space)
    if isinstance(space, (spaces.Dict, spaces.Tuple)):

        def structured(inputs):
            parts = [inputs[name] for _, name in names]
            if isinstance(space, spaces.Dict):
                return {key: part for (key, _), part in zip(names, parts, strict=True)}
            return tuple(parts)

        return structured
    if isinstance(space, spaces.Discrete):
        n, start = int(space.n), int(space.start)
        return lambda inputs: tf.one_hot(inputs["observation"] - start, n, dtype=tf.float32)
    if obs_format.kind == "image":
        return lambda inputs: inputs["observation"]
    size = obs_format.size
    return lambda inputs: tf.reshape(tf.cast(inputs["observation"], tf.float32), [-1, size])


def describe_inputs(space: spaces.Space) -> dict[str, dict[str, Any]]:
    """``{input name: {"key", "shape", "dtype", "space"}}`` for the metadata."""
    subs = space.spaces if isinstance(space, (spaces.Dict, spaces.Tuple)) else None
    described = {}
    for key, name in input_names(space):
        sub = space if subs is None else subs[key]
        spec = _spec(sub, name)
        described[name] = {
            "key": key,
            "shape": [None if d is None else int(d) for d in spec.shape],
            "dtype": spec.dtype.name,
            "space": space_to_dict(sub),
        }
    return described
