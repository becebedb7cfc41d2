"""What a user's network gives checked before rlkit trains it: an input dtype that keeps the
observation's kind, and Q-values rather than probabilities (:mod:`rlkit.networks.custom`
builds the networks and calls these)."""

from __future__ import annotations

import warnings
from typing import Any

import keras
import numpy as np

from rlkit.core.errors import RlkitWarning, UsageError


def check_input_dtype(taken: Any, given: Any, key: str) -> None:
    """UsageError when a model declares an input dtype the observation's does not cast to
    without losing its kind (numpy's ``same_kind``): an ``int32`` input for a ``float32``
    observation would have Keras truncate every observation to whole numbers, silently.
    A wider or float input for integer frames (``uint8``) is fine. A dtype numpy does not
    know (``bfloat16``) is left alone."""
    try:
        taken, given = np.dtype(str(taken)), np.dtype(given)
    except TypeError:
        return
    if np.can_cast(given, taken, "same_kind"):
        return
    lost = ("its fractions truncated to whole numbers" if given.kind == "f"
            else "its values cast to another kind")  # fmt: skip
    raise UsageError(
        f"{key} takes {taken.name} input but the observation is {given.name}: Keras would feed "
        f'it {lost}; declare keras.Input(shape, dtype="{given.name}") (or leave dtype out)'
    )


#: output activations that bound a Q-value: Keras' name -> the range they leave
BOUNDED_OUTPUTS = {
    "sigmoid": "(0, 1)", "hard_sigmoid": "[0, 1]", "tanh": "(-1, 1)", "relu": "[0, inf)",
    "softplus": "(0, inf)", "elu": "(-1, inf)",
}  # fmt: skip


def output_activation(model: keras.Model) -> str | None:
    """The name of the activation a functional or Sequential model's output ends in
    (``"softmax"``, ``"linear"``...); None where the model does not say (a subclassed one)."""
    layer = None
    outputs = getattr(model, "outputs", None)
    if outputs and len(outputs) == 1:
        history = getattr(outputs[0], "_keras_history", None)
        layer = history[0] if history else None
    if layer is None and isinstance(model, keras.Sequential) and model.layers:
        layer = model.layers[-1]
    if layer is None:
        return None
    if isinstance(layer, keras.layers.Softmax):
        return "softmax"
    if isinstance(layer, keras.layers.ReLU):
        return "relu"
    return getattr(getattr(layer, "activation", None), "__name__", None)


def check_q_outputs(model: keras.Model, sample: Any, num_outputs: int, num_actions: int,
                    key: str = "q_network") -> None:  # fmt: skip
    """A Q-network's outputs are Q-values (or, ``num_outputs`` = ``A * N``, a distributional
    head's logits, whose softmax rlkit takes itself): UsageError in one line for a model
    whose outputs are probabilities (a final softmax, by its last layer or by its outputs on
    random observations: non-negative, each row or each action's atoms summing to 1); an
    :class:`RlkitWarning` for a Q-value head that ends in a bounded activation (a sigmoid
    cannot reach a return above 1)."""
    activation = output_activation(model)
    if activation == "softmax" or _sums_to_one(model, sample, num_outputs, num_actions):
        how = "it ends in a softmax" if activation == "softmax" else "each row sums to 1"
        raise UsageError(
            f"{key} outputs probabilities ({how}), but rlkit reads its outputs as Q-values, "
            "returns of any size (a distributional head's as logits, whose softmax rlkit takes "
            f"itself): end it with a linear layer of {num_outputs} units"
        )
    if activation in BOUNDED_OUTPUTS and num_outputs == num_actions:
        warnings.warn(
            f"{key} ends in a {activation}: its Q-values lie in {BOUNDED_OUTPUTS[activation]}, "
            "and returns outside it cannot be learned; a linear output layer is the usual",
            RlkitWarning,
            stacklevel=2,
        )


def _sums_to_one(model: keras.Model, sample: Any, num_outputs: int, num_actions: int) -> bool:
    """Are the model's outputs on 8 random observations probabilities: non-negative, each
    row (or each action's ``N`` atoms) summing to 1? (A ``Dict`` or ``Tuple`` observation's
    model is not probed: False.)"""
    if not isinstance(sample, np.ndarray):
        return False
    rng = np.random.default_rng(0)
    shape = (8, *sample.shape[1:])
    if np.issubdtype(sample.dtype, np.floating):
        probe = rng.normal(size=shape).astype(sample.dtype)
    else:
        probe = rng.integers(0, 2, size=shape).astype(sample.dtype)
    try:
        out = np.asarray(model(probe), dtype=np.float64).reshape(8, -1)
    except Exception:  # (check_output called it already; a model that refuses 8 rows: no)
        return False
    if out.shape[1] != num_outputs or out.shape[1] < 2 or np.any(out < -1e-6):
        return False
    if np.allclose(out.sum(-1), 1.0, atol=1e-4):
        return True
    groups = num_outputs // num_actions if num_outputs % num_actions == 0 else 1
    return groups > 1 and np.allclose(out.reshape(8, num_actions, groups).sum(-1), 1.0, atol=1e-4)
