"""PPO's and A2C's networks of one's own, where rlkit's go (:mod:`rlkit.agents.ppo.networks`).

Given as DDPG's are (:mod:`rlkit.networks.custom`): a Keras model, a builder
``(observation_space, action_space) -> keras.Model``, or the name of an importable builder
``"package.module:function"`` (the config keys ``actor``, ``critic`` and ``torso``, so that
``config.toml`` records them and resume, evaluate and sweeps rebuild them). The networks take
the encoded observation (float32 ``[B, obs_dim]`` vectors, normalised with ``norm_obs``;
one-hot ``[B, n]`` for a ``Discrete`` observation; images ``[B, H, W, C]`` as stored, uint8
undivided):

- ``actor``: the whole policy, ``[B, obs] -> [B, outputs]``: logits (``Discrete(n)``: ``n``;
  ``MultiDiscrete(nvec)``: ``sum(nvec)``, dimension ``d``'s slice after the first ``d``'s;
  a linear output, rlkit applies the softmax) or the Gaussian's mean in the action's own
  units (``Box``: ``A``; the log std stays rlkit's state-independent variable).
- ``critic``: the whole value network, ``[B, obs] -> [B]`` or ``[B, 1]``.
- ``torso``: one torso shared by rlkit's two heads (the policy's, gain 0.01, and the value's,
  gain 1: :class:`TorsoActorCritic`), ``[B, obs] -> [B, D]``, in place of the Nature or
  MinAtar CNN; not with ``actor`` or ``critic``.

Either of ``actor`` and ``critic`` alone keeps rlkit's tanh MLP for the other (vector
observations; rlkit's image network is one torso under both heads, so images take both, or
a torso). An actor that is a plain Dense stack (ReLU hidden layers, a linear output; tanh
too for ``Box``) acts through a numpy copy refreshed after each update, as rlkit's MLP does;
any other actor, and a torso, through one compiled call per (batched) step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import keras
import numpy as np
from gymnasium import spaces as gym_spaces

from rlkit.agents.ppo.distributions import BOX, ActionHead
from rlkit.agents.ppo.networks import (
    ConvActorCritic,
    NetworkView,
    NumpyTanhMLP,
    SeparateMLPs,
    TanhMLP,
    _compiled_call,
    _dense,
    config_init,
    make_networks,
)
from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.spaces import IMAGE, ObservationFormat
from rlkit.networks.custom import build_model, check_output, network_source
from rlkit.networks.policy import KerasPolicyNetwork
from rlkit.networks.user_torso import check_torso, is_user_torso

#: the config keys of the networks of one's own
KEYS = ("actor", "critic", "torso")


def given_networks(cfg: Any) -> list[str]:
    """The keys of ``cfg`` that name a network of one's own (``torso``: not rlkit's kinds)."""
    mine = [key for key in ("actor", "critic") if getattr(cfg, key, "")]
    return [*mine, "torso"] if is_user_torso(cfg.torso) else mine


class UserCritic:
    """A user's value network: ``model`` and ``variables``; :meth:`__call__` gives ``[B]``
    (a ``[B, 1]`` output squeezed)."""

    def __init__(self, model: keras.Model, squeeze: bool) -> None:
        self.model, self.squeeze = model, squeeze

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    def __call__(self, obs):
        out = self.model(obs, training=True)
        return out[:, 0] if self.squeeze else out


class SeparateNetworks:
    """A policy and a value network, either of them the user's (the other rlkit's tanh MLP,
    :class:`~rlkit.agents.ppo.networks.TanhMLP`): what the learner asks of its networks
    (:class:`~rlkit.agents.ppo.networks.SeparateMLPs` answers the same)."""

    shared = False

    def __init__(self, policy: TanhMLP | KerasPolicyNetwork, value: TanhMLP | UserCritic) -> None:
        self.policy_network, self.value_network = policy, value

    def groups(self) -> dict[str, list]:
        """``{"policy": [...], "value": [...]}`` (the learner appends the log std)."""
        return {"policy": list(self.policy_network.variables),
                "value": list(self.value_network.variables)}  # fmt: skip

    def forward(self, obs):
        """``(policy outputs [B, out_dim], values [B])``."""
        return self.policy_network.model(obs, training=True), self.value(obs)

    def value(self, obs):
        """``V(obs)`` ``[B]``."""
        if isinstance(self.value_network, UserCritic):
            return self.value_network(obs)
        return self.value_network.model(obs, training=True)[:, 0]

    def snapshot_tensors(self) -> list:
        """The policy's Dense weights acting's numpy copy is made of (none for a compiled
        actor: it reads the live weights)."""
        return self.policy_network.layer_weights()

    def acting_forward(self, arrays: Sequence[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        """The policy's outputs in numpy (or its compiled call)."""
        if isinstance(self.policy_network, TanhMLP):
            return NumpyTanhMLP(arrays, self.policy_network.activation)
        return self.policy_network.to_numpy(arrays)


class TorsoActorCritic:
    """rlkit's policy head and value head over a user's torso ``[B, obs] -> [B, D]``, as
    :class:`~rlkit.agents.ppo.networks.ConvActorCritic` over its CNN: one pass through the
    torso for both heads, orthogonal heads (gains 0.01 and 1; Glorot with ``ortho_init``
    false), zero biases. Acting: one compiled call of the policy per (batched) step.

    Attributes:
        torso: the user's model.
        policy_head, value_head: rlkit's Dense heads.
        model, policy_network, value_network: as ConvActorCritic's.
    """

    shared = True

    def __init__(self, torso: keras.Model, obs_format: ObservationFormat, out_dim: int,
                 seed: int, ortho: bool | str = True) -> None:  # fmt: skip
        self.torso = torso
        inputs = keras.Input(obs_format.shape, dtype=obs_format.dtype, name="obs")
        try:
            features = torso(inputs)
        except Exception as exc:  # the user's model: whatever it raises is one line here
            why = f"{type(exc).__name__}: {exc}".splitlines()[0]
            raise UsageError(f"the torso cannot be joined to rlkit's heads: {why}") from None
        base, width = seeding.network_seed(seed, "policy"), int(features.shape[-1])
        self.policy_head = _dense(out_dim, None, 0.01, base + 99, "policy_out", ortho, width)
        value_seed = seeding.network_seed(seed, "value") + 99
        self.value_head = _dense(1, None, 1.0, value_seed, "value_out", ortho, width)
        out, value = self.policy_head(features), self.value_head(features)
        self.model = keras.Model(inputs, [out, value], name="actor_critic")
        self.policy_network = NetworkView(keras.Model(inputs, out, name="policy"))
        self.value_network = NetworkView(keras.Model(inputs, value, name="value"))
        self._compiled: Callable[[np.ndarray], np.ndarray] | None = None

    def groups(self) -> dict[str, list]:
        """``torso`` (the user's variables), ``policy`` (its head; the learner appends the log
        std), ``value`` (its head)."""
        return {
            "torso": list(self.torso.trainable_variables),
            "policy": [self.policy_head.kernel, self.policy_head.bias],
            "value": [self.value_head.kernel, self.value_head.bias],
        }

    def forward(self, obs):
        """``(policy outputs [B, out_dim], values [B])``: one pass through the torso."""
        out, value = self.model(obs, training=True)
        return out, value[:, 0]

    def value(self, obs):
        """``V(obs)`` ``[B]``."""
        return self.forward(obs)[1]

    def snapshot_tensors(self) -> list:
        """None: acting calls the policy, reading the live weights."""
        return []

    def acting_forward(self, arrays: Sequence[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        """One compiled call of the policy per (batched) observation."""
        if self._compiled is None:
            self._compiled = _compiled_call(self.policy_network.model)
        return self._compiled


_softmax = keras.activations.softmax


def make_actor(source: Any, spaces: tuple[Any, Any], obs_format: ObservationFormat,
               head: ActionHead, seed: int) -> KerasPolicyNetwork:  # fmt: skip
    """The user's policy, checked: it takes the observation and returns ``[B, out_dim]``
    (logits: a final softmax is refused)."""
    model = build_model(source, *spaces, "actor", seeding.network_seed(seed, "policy"))
    last = model.layers[-1] if model.layers else None
    if head.kind != BOX and isinstance(last, keras.layers.Dense) and last.activation is _softmax:
        raise UsageError("actor returns softmax probabilities but needs logits (a linear output)")
    try:
        sample = check_output(model, obs_format, (head.out_dim,), "actor")
    except UsageError as exc:
        if " returns [" not in str(exc):
            raise
        raise UsageError(f"{exc}: {head.describe_output(spaces[1])}") from None
    outputs = ("linear", "tanh") if head.kind == BOX else ("linear",)
    return KerasPolicyNetwork(model, sample, outputs)


def make_critic(source: Any, spaces: tuple[Any, Any], obs_format: ObservationFormat,
                seed: int) -> UserCritic:  # fmt: skip
    """The user's value network, checked: ``[B, obs] -> [B]`` or ``[B, 1]``."""
    model = build_model(source, *spaces, "critic", seeding.network_seed(seed, "value"))
    sample = check_output(model, obs_format, (1,), "critic", ((),))
    return UserCritic(model, len(tuple(model(sample).shape)) == 2)


def refuse_half_image_network(mine: list[str]) -> None:
    """UsageError: rlkit's image network is one torso under both heads, so an actor or a
    critic of one's own alone cannot pair with it."""
    missing = "critic" if "actor" in mine else "actor"
    raise UsageError(
        f"rlkit's network for image observations is one torso under both heads: give "
        f"{'an' if missing == 'actor' else 'a'} {missing} of your own too "
        f"(--set {missing}=module:function), or a torso of your own instead "
        "(--set torso=module:function)"
    )


Networks = SeparateMLPs | ConvActorCritic | SeparateNetworks | TorsoActorCritic


def build_networks(obs_format: ObservationFormat, head: ActionHead, cfg: Any, seed: int,
                   spaces: tuple[Any, Any], given: dict[str, Any]) -> Networks:  # fmt: skip
    """PPO's networks: rlkit's (:func:`~rlkit.agents.ppo.networks.make_networks`) unless the
    config names networks of one's own (``actor``, ``critic``, ``torso``: a builder's name, or
    :data:`~rlkit.networks.custom.GIVEN_IN_PYTHON` with the object in ``given``).

    ``spaces``: (observation space, action space), the builders' arguments (an observation
    space of None: a ``Box`` of the encoded observation's shape)."""
    mine = given_networks(cfg)
    if not mine:
        return make_networks(obs_format, head.out_dim, cfg, seed)
    observation_space, action_space = spaces
    if observation_space is None:
        observation_space = gym_spaces.Box(-np.inf, np.inf, obs_format.shape, np.float32)
    spaces = (observation_space, action_space)
    if "torso" in mine:
        source = network_source("torso", cfg.torso, given.get("torso"))
        model = build_model(source, *spaces, "torso", seeding.network_seed(seed, "policy"))
        check_torso(model, obs_format, "torso", "the torso", "the policy and value heads")
        return TorsoActorCritic(model, obs_format, head.out_dim, seed, config_init(cfg))
    if obs_format.kind == IMAGE and len(mine) == 1:
        refuse_half_image_network(mine)
    size = obs_format.size
    policy: TanhMLP | KerasPolicyNetwork
    if cfg.actor:
        source = network_source("actor", cfg.actor, given.get("actor"))
        policy = make_actor(source, spaces, obs_format, head, seed)
    else:
        policy = TanhMLP(size, head.out_dim, cfg.hidden_sizes, 0.01, seed, "policy",
                         config_init(cfg), cfg.activation)  # fmt: skip
    value: TanhMLP | UserCritic
    if cfg.critic:
        value = make_critic(network_source("critic", cfg.critic, given.get("critic")), spaces,
                            obs_format, seed)  # fmt: skip
    else:
        value = TanhMLP(size, 1, cfg.value_hidden_sizes, 1.0, seed, "value", config_init(cfg),
                        cfg.activation)  # fmt: skip
    return SeparateNetworks(policy, value)
