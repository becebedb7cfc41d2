"""A user's own Keras network where rlkit's built-in one would go.

A network is given as a Keras model, a builder ``(observation_space, action_space) ->
keras.Model``, or the name of an importable builder ``"package.module:function"`` (a
config key, so that ``config.toml`` records it and resume, evaluate and sweeps rebuild
it). rlkit checks what it must (the model takes the encoded observation and returns the
shape the agent needs) and refuses a misfit with a :class:`UsageError` naming both shapes.

Acting costs nothing extra where the model is a plain stack of Dense layers (ReLU hidden
layers, a linear output): it goes through the same numpy copy as rlkit's own MLP, checked
against the model on a batch of observations. Any other model acts through one compiled
call per (batched) step.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import keras
import numpy as np

from rlkit.core.errors import UsageError
from rlkit.core.spaces import ObservationFormat
from rlkit.learn.compiled import CompiledFunction
from rlkit.networks.torso import NumpyMLP

#: what a config key holds when the network was given as a Python object (not recorded)
GIVEN_IN_PYTHON = "<python object>"


def resolve_builder(source: Any, key: str) -> Any:
    """``source`` as a model or a builder: a ``"module:function"`` name is imported."""
    if not isinstance(source, str):
        return source
    module, sep, attribute = source.partition(":")
    if not sep or not module or not attribute:
        raise UsageError(
            f"bad {key} {source!r}: expected an importable builder 'package.module:function'"
        )
    try:
        return getattr(importlib.import_module(module), attribute)
    except Exception as exc:  # the user's module: any error it raises while importing
        raise UsageError(
            f"cannot import {key} builder {source!r}: {type(exc).__name__}: {exc}".splitlines()[0]
        ) from None


def build_model(
    source: Any, observation_space, action_space, key: str, seed: int | None = None
) -> keras.Model:
    """A Keras model from a model or a builder; UsageError when a builder raises or returns
    something else. ``seed`` seeds Keras' initializers before the builder runs
    (``keras.utils.set_random_seed``), so that the same run seed builds the same weights."""
    if isinstance(source, keras.Model):
        return source
    if not callable(source):
        raise UsageError(f"{key} must be a keras.Model or a builder, got {type(source).__name__}")
    if seed is not None:
        keras.utils.set_random_seed(seed)
    try:
        model = source(observation_space, action_space)
    except UsageError:
        raise
    except Exception as exc:  # the user's builder: whatever it raises is one line here
        raise UsageError(
            f"the {key} builder raised {type(exc).__name__}: {exc}".splitlines()[0]
        ) from None
    if not isinstance(model, keras.Model):
        raise UsageError(f"the {key} builder returned {type(model).__name__}, not a keras.Model")
    return model


def check_output(model: keras.Model, obs_format: ObservationFormat, needs: tuple, key: str):
    """Call ``model`` on a batch of two encoded observations; UsageError unless it accepts
    them and returns ``[2, *needs]``."""
    sample = np.zeros((2, *obs_format.shape), obs_format.dtype)
    shape = ", ".join(map(str, obs_format.shape))
    declared = getattr(model, "inputs", None)  # (a functional or Sequential model's Input)
    if declared and len(declared) == 1 and tuple(declared[0].shape[1:]) != obs_format.shape:
        takes = ", ".join(map(str, declared[0].shape[1:]))
        raise UsageError(f"{key} takes [batch, {takes}] but the observation is [batch, {shape}]")
    try:
        out = np.asarray(model(sample))
    except Exception as exc:  # a model that cannot take the observation
        raise UsageError(
            f"{key} does not accept the observation [batch, {shape}] "
            f"({np.dtype(obs_format.dtype).name}): {type(exc).__name__}: {exc}".splitlines()[0]
        ) from None
    if out.shape != (2, *needs):
        got = ", ".join(map(str, out.shape[1:]))
        want = ", ".join(map(str, needs))
        raise UsageError(f"{key} returns [batch, {got}] but needs [batch, {want}]")
    return sample


def twin(model: keras.Model, source: Any, observation_space, action_space, key: str):
    """A second model of the same architecture (a target network, its weights to be
    copied): the builder called again, or a clone of a functional or Sequential model."""
    if not isinstance(source, keras.Model):
        return build_model(source, observation_space, action_space, key, seed=0)
    try:
        return keras.models.clone_model(model)
    except Exception:  # a subclassed model cannot be cloned
        raise UsageError(
            f"{key}: a subclassed model cannot be copied for a target network; "
            "pass a builder (observation_space, action_space) -> keras.Model instead"
        ) from None


def dense_stack(model: keras.Model, sample: np.ndarray) -> list | None:
    """The model's Dense layers when it is a plain stack (ReLU hidden, linear output) that
    a :class:`NumpyMLP` reproduces on ``sample``; None otherwise."""
    layers = [layer for layer in model.layers if not isinstance(layer, keras.layers.InputLayer)]
    if not layers or not all(type(layer) is keras.layers.Dense for layer in layers):
        return None
    relu, linear = keras.activations.relu, keras.activations.linear
    if any(layer.activation is not relu for layer in layers[:-1]):
        return None
    if layers[-1].activation is not linear:
        return None
    rng = np.random.default_rng(0)
    probe = rng.normal(size=sample.shape).astype(np.float32)
    mirror = NumpyMLP.from_layers(layers[:-1], layers[-1:])
    if not np.allclose(mirror(probe), np.asarray(model(probe)), rtol=1e-4, atol=1e-5):
        return None  # e.g. layers not applied in sequence
    return layers


class KerasQNetwork:
    """A user's Keras model in the place of :class:`~rlkit.networks.torso.QNetwork`: the same
    ``model``, ``variables`` and ``policy()``."""

    def __init__(self, model: keras.Model, sample: np.ndarray) -> None:
        self.model = model
        self.convs: list = []
        self.layers = dense_stack(model, sample)
        self.obs_rank = sample.ndim - 1
        self._compiled: Callable | None = None

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    @property
    def fast_path(self) -> bool:
        """Does acting go through a numpy copy (a plain Dense stack)?"""
        return self.layers is not None

    def policy(self) -> Callable[[np.ndarray], np.ndarray]:
        """``obs -> Q(s, .)``: a numpy copy of a Dense stack (re-take it after each update),
        else one compiled call per batch."""
        if self.layers is not None:
            return NumpyMLP.from_layers(self.layers[:-1], self.layers[-1:])
        if self._compiled is None:
            compiled = CompiledFunction(lambda obs: self.model(obs))

            def q_values(obs: np.ndarray) -> np.ndarray:
                single = obs.ndim == self.obs_rank
                out = compiled(obs[None] if single else obs).numpy()
                return out[0] if single else out

            self._compiled = q_values
        return self._compiled
