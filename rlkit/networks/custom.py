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

from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.spaces import ObservationFormat
from rlkit.core.structure import describe
from rlkit.learn.compiled import CompiledFunction
from rlkit.networks.builders import NumpyMLP, layer_weights
from rlkit.networks.output_checks import check_input_dtype, check_q_outputs
from rlkit.networks.structured import (
    Sample,
    critic_sample,
    first_line,
    flat_sample,
    structured_policy,
    structured_sample,
)

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
        model = source(observation_space, _python_ints(action_space))
    except UsageError:
        raise
    except Exception as exc:  # the user's builder: whatever it raises is one line here
        raise UsageError(
            f"the {key} builder raised {type(exc).__name__}: {exc}".splitlines()[0]
        ) from None
    if not isinstance(model, keras.Model):
        raise UsageError(f"the {key} builder returned {type(model).__name__}, not a keras.Model")
    return model


def _python_ints(space: Any) -> Any:
    """A copy of a ``Discrete`` space whose ``n`` and ``start`` are Python ints (gymnasium
    keeps numpy int64s, which Keras 3 refuses as ``units``): a builder may write
    ``keras.layers.Dense(action_space.n)`` as users do. Other spaces as they are."""
    import copy

    n = getattr(space, "n", None)
    if type(space).__name__ != "Discrete" or isinstance(n, int):
        return space
    same = copy.copy(space)
    same.n, same.start = int(space.n), int(space.start)
    return same


def _batch_shape(shape: tuple) -> str:
    """``(3,)`` -> ``"[batch, 3]"``, ``()`` -> ``"[batch]"``."""
    return "[batch" + "".join(f", {d}" for d in shape) + "]"


def check_output(model: keras.Model, obs_format: ObservationFormat, needs: tuple, key: str,
                 also: tuple = ()) -> Sample:  # fmt: skip
    """Call ``model`` on a batch of two encoded observations; UsageError unless it accepts
    them and returns ``[2, *needs]`` (or ``[2, *shape]`` for a shape in ``also``). Returns
    that batch ``[2, *obs_format.shape]`` (a ``Dict`` or ``Tuple`` observation: that
    structure of ``[2, *part_shape]`` arrays, see :mod:`rlkit.networks.structured`)."""
    sample: Sample
    if obs_format.parts:
        sample, got = structured_sample(model, obs_format, key)
    else:
        sample = np.zeros((2, *obs_format.shape), obs_format.dtype)
        shape = ", ".join(map(str, obs_format.shape))
        declared = getattr(model, "inputs", None)  # (a functional or Sequential model's Input)
        if declared and len(declared) == 1 and tuple(declared[0].shape[1:]) != obs_format.shape:
            takes = ", ".join(map(str, declared[0].shape[1:]))
            raise UsageError(
                f"{key} takes [batch, {takes}] but the observation is [batch, {shape}]"
            )
        if declared and len(declared) == 1:
            check_input_dtype(declared[0].dtype, obs_format.dtype, key)
        got = f"[batch, {shape}] ({np.dtype(obs_format.dtype).name})"
    try:
        out = np.asarray(model(sample))
    except Exception as exc:  # a model that cannot take the observation
        raise UsageError(
            f"{key} does not accept the observation {got}: {type(exc).__name__}: {first_line(exc)}"
        ) from None
    if out.shape[1:] not in (tuple(needs), *map(tuple, also)) or out.shape[:1] != (2,):
        want = " or ".join(_batch_shape(fit) for fit in (needs, *also))
        raise UsageError(f"{key} returns {_batch_shape(out.shape[1:])} but needs {want}")
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


#: output activations a Dense stack's numpy copy reproduces: Keras' function -> numpy's
_OUTPUTS = {"linear": None, "tanh": np.tanh}


def dense_stack(model: keras.Model, sample: np.ndarray, outputs=("linear",)) -> tuple | None:
    """``(layers, output)`` when the model is a plain stack of Dense layers (ReLU hidden
    layers, an output activation among ``outputs``) that a :class:`NumpyMLP` reproduces on
    ``sample``-shaped inputs (``output``: numpy's form of the output activation, None for
    linear); None otherwise."""
    layers = [layer for layer in model.layers if not isinstance(layer, keras.layers.InputLayer)]
    if not layers or not all(type(layer) is keras.layers.Dense for layer in layers):
        return None
    if any(layer.activation is not keras.activations.relu for layer in layers[:-1]):
        return None
    last = next((name for name in outputs
                 if layers[-1].activation is getattr(keras.activations, name)), None)  # fmt: skip
    if last is None:
        return None
    output = _OUTPUTS[last]
    probe = np.random.default_rng(0).normal(size=sample.shape).astype(np.float32)
    mirror = NumpyMLP.from_layers(layers[:-1], layers[-1:], output=output)
    if not np.allclose(mirror(probe), np.asarray(model(probe)), rtol=1e-4, atol=1e-5):
        return None  # e.g. layers not applied in sequence
    return layers, output


def compiled_policy(model: keras.Model, obs_rank: int) -> Callable[[np.ndarray], np.ndarray]:
    """``obs -> model(obs)`` through one compiled call per (batched) call; it reads the
    live weights."""
    compiled = CompiledFunction(lambda obs: model(obs))

    def forward(obs: np.ndarray) -> np.ndarray:
        single = obs.ndim == obs_rank
        out = compiled(obs[None] if single else obs).numpy()
        return out[0] if single else out

    return forward


class UserNetwork:
    """What every wrapper of a user's model shares: the model, its trainable variables, and
    whether acting goes through a numpy copy of a Dense stack (``layers``)."""

    model: keras.Model
    layers: list | None = None

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    @property
    def fast_path(self) -> bool:
        """Does acting go through a numpy copy (a plain Dense stack)?"""
        return self.layers is not None


class KerasQNetwork(UserNetwork):
    """A user's Keras model in the place of :class:`~rlkit.networks.q_network.QNetwork`: the same
    ``model``, ``variables`` and ``policy()``."""

    def __init__(self, model: keras.Model, sample: Sample, parts: tuple = ()) -> None:
        """``parts``: those of a ``Dict`` or ``Tuple`` observation (``sample`` is then that
        structure): no fast path, one compiled call taking the structure."""
        self.model = model
        self.convs: list = []
        self.parts = parts
        flat = None if parts else flat_sample(sample)
        stack = None if flat is None else dense_stack(model, flat)
        self.layers = None if stack is None else stack[0]
        self.obs_rank = 0 if flat is None else flat.ndim - 1
        self._compiled: Callable | None = None

    def mirror_weights(self) -> list:
        """The Dense stack's ``[kernel_0, bias_0, ...]`` (empty: no numpy mirror)."""
        return [] if self.layers is None else layer_weights(self.layers)

    def mirror(self, arrays) -> NumpyMLP:
        """The numpy mirror from arrays of :meth:`mirror_weights`."""
        return NumpyMLP.from_arrays(list(arrays))

    def policy(self) -> Callable[[np.ndarray], np.ndarray]:
        """``obs -> Q(s, .)``: a numpy copy of a Dense stack (re-take it after each update),
        else one compiled call per batch."""
        if self.layers is not None:
            return NumpyMLP.from_layers(self.layers[:-1], self.layers[-1:])
        if self._compiled is None and self.parts:
            self._compiled = structured_policy(self.model, self.parts)
        elif self._compiled is None:
            self._compiled = compiled_policy(self.model, self.obs_rank)
        return self._compiled


class KerasActor(UserNetwork):
    """A user's Keras model in the place of DDPG's :class:`~rlkit.networks.actor_critic.Actor`:
    ``[B, obs_dim] -> [B, act_dim]`` in the action's own units (acting clips to the bounds).

    A Dense stack with a linear or tanh output acts through a numpy copy refreshed after
    each block of updates; any other model through one compiled call per step."""

    def __init__(self, model: keras.Model, sample: Sample, parts: tuple = ()) -> None:
        """``parts``: those of a ``Dict`` or ``Tuple`` observation (``sample`` is then that
        structure of ``[2, *part_shape]`` arrays): no fast path, one compiled call taking it."""
        self.model = model
        flat = None if parts else flat_sample(sample)
        stack = None if flat is None else dense_stack(model, flat, outputs=("linear", "tanh"))
        self.layers, self._output = (None, None) if stack is None else stack
        self._compiled: Callable[[np.ndarray], np.ndarray] | None = None
        if flat is None:
            self._compiled = structured_policy(model, parts)
        elif stack is None:
            self._compiled = compiled_policy(model, flat.ndim - 1)

    def layer_weights(self) -> list:
        """The Dense stack's ``[kernel_0, bias_0, ...]`` (empty for a compiled actor)."""
        if self.layers is None:
            return []
        return [w for layer in self.layers for w in (layer.kernel, layer.bias)]

    def to_numpy(self, arrays) -> Callable[[np.ndarray], np.ndarray]:
        """What acting reads, from the arrays of :meth:`layer_weights`."""
        if self._compiled is not None:  # (set exactly when there is no Dense stack)
            return self._compiled
        return NumpyMLP.from_arrays(list(arrays), output=self._output)

    def numpy_snapshot(self) -> Callable[[np.ndarray], np.ndarray]:
        return self.to_numpy([w.numpy() for w in self.layer_weights()])


class KerasCritic(UserNetwork):
    """A user's Keras model with two inputs ``[observation, action]`` in the place of DDPG's
    :class:`~rlkit.networks.actor_critic.Critic`; an output ``[B, 1]`` is squeezed to ``[B]``
    (a functional model around the user's, sharing its variables). ``nested``: the
    observation is a ``Dict`` or ``Tuple`` (the wrapper keeps the model's input structure,
    ``[observation structure, action]``)."""

    def __init__(self, model: keras.Model, squeeze: bool, nested: bool = False) -> None:
        self.user_model = model
        if squeeze:
            inputs = model.input if nested else model.inputs
            model = keras.Model(inputs, keras.ops.squeeze(model.outputs[0], axis=-1))
        self.model = model


def check_critic(model: keras.Model, obs_format: ObservationFormat, act_dim: int,
                 key: str) -> bool:  # fmt: skip
    """Call a critic on ``[observations, actions]`` of a batch of two; UsageError unless it
    returns ``[2]`` or ``[2, 1]``. Returns whether the output needs squeezing. (A ``Dict`` or
    ``Tuple`` observation: its structure, see :func:`rlkit.networks.structured.critic_sample`.)"""
    if obs_format.parts:
        inputs, needs = critic_sample(model, obs_format, act_dim, key)
    else:
        obs_dim = obs_format.size
        needs = f"[observation [batch, {obs_dim}], action [batch, {act_dim}]]"
        declared = getattr(model, "inputs", None)  # (a functional model's Inputs)
        if declared and len(declared) != 2:
            raise UsageError(f"{key} takes {len(declared)} input(s) but needs two: {needs}")
        inputs = [np.zeros((2, obs_dim), np.float32), np.zeros((2, act_dim), np.float32)]
    try:
        out = np.asarray(model(inputs))
    except Exception as exc:  # a model that cannot take [observation, action]
        raise UsageError(
            f"{key} does not accept {needs}: {type(exc).__name__}: {first_line(exc)}"
        ) from None
    if out.shape not in ((2,), (2, 1)):
        got = ", ".join(map(str, out.shape[1:]))
        raise UsageError(f"{key} returns [batch, {got}] but needs [batch] or [batch, 1]")
    if out.shape == (2, 1) and not getattr(model, "inputs", None):
        raise UsageError(f"{key}: a subclassed critic must return [batch]; this one returns "
                         "[batch, 1]")  # fmt: skip
    return out.shape == (2, 1)


def network_source(key: str, named: str, given: Any) -> Any:
    """What to build a network from: the builder ``named`` in the config, or the Python
    object ``given`` to the agent (config value :data:`GIVEN_IN_PYTHON`), which a loaded
    agent must be given again."""
    if named != GIVEN_IN_PYTHON:
        return resolve_builder(named, key)
    if given is None or isinstance(given, str):
        raise UsageError(
            f"this agent was made with {'an' if key[0] in 'aeiou' else 'a'} {key} of your own "
            "(a Python object): give it "
            f"again, e.g. rlkit.load(path, {key}=build)"
        )
    return given


def make_actor(source: Any, spaces: tuple[Any, Any], obs_format: ObservationFormat, act_dim: int,
               seed: int) -> KerasActor:  # fmt: skip
    """DDPG's actor from a user's model or builder, checked: ``[B, obs] -> [B, act_dim]``
    (a ``Dict`` or ``Tuple`` observation: that structure of ``[B, *part_shape]`` in)."""
    model = build_model(source, *spaces, "actor", seed)
    sample = check_output(model, obs_format, (act_dim,), "actor")
    return KerasActor(model, sample, obs_format.parts)


def make_critics(source: Any, spaces: tuple[Any, Any], obs_format: ObservationFormat, act_dim: int,
                 seeds: list[int]) -> list[KerasCritic]:  # fmt: skip
    """One critic per seed (TD3: two) from a user's builder, each built with its own seed
    (a model instance: cloned for the second), each checked: ``[observation, action] ->
    [B]`` or ``[B, 1]``."""
    critics: list[KerasCritic] = []
    for seed in seeds:
        if not critics or not isinstance(source, keras.Model):
            model = build_model(source, *spaces, "critic", seed)
        else:
            model = twin(critics[0].user_model, source, *spaces, "critic")
        squeeze = check_critic(model, obs_format, act_dim, "critic")
        critics.append(KerasCritic(model, squeeze, bool(obs_format.parts)))
    return critics


def custom_networks(
    named: str,
    given: Any,
    spaces: tuple[Any, Any],
    obs_format: ObservationFormat,
    seed: int,
    num_outputs: int,
) -> tuple[KerasQNetwork, KerasQNetwork]:
    """The user's Q-network (``[B, ...] -> [B, num_outputs]``: ``A`` Q-values, or ``A * N``
    for a distributional head) and its target twin (same architecture, copied weights);
    ``spaces``: (observation space, action space)."""
    source = network_source("q_network", named, given)
    model = build_model(source, *spaces, "q_network", seeding.network_seed(seed, "q"))
    sample = check_output(model, obs_format, (num_outputs,), "q_network")
    check_q_outputs(model, sample, num_outputs, int(getattr(spaces[1], "n", num_outputs)))
    target = twin(model, source, *spaces, "q_network")
    check_output(target, obs_format, (num_outputs,), "q_network")
    parts = obs_format.parts
    return KerasQNetwork(model, sample, parts), KerasQNetwork(target, sample, parts)


def refuse_builtin_network(obs_format: ObservationFormat) -> None:
    """UsageError: rlkit's own networks take vectors, images or one-hot observations."""
    raise UsageError(
        f"dqn's built-in networks cannot take a {describe(obs_format.kind, obs_format.parts)} "
        "observation: pass a network of your own that takes it, DQN(..., q_network=build) in "
        "Python or --set q_network=module:function on the command line"
    )
