"""SAC's networks: the Gaussian policy and, from :mod:`rlkit.networks.actor_critic`, the
twin critics.

:class:`GaussianActor` maps ``[B, obs_dim]`` to ``[B, 2 A]``: the mean and the raw log std
of ``u`` side by side (one linear head of ``2 A`` units is SB3's two heads ``mu`` and
``log_std`` of ``A`` units each, concatenated). Bounding the log std, sampling and the
tanh squashing are :mod:`rlkit.learn.max_entropy`'s (in the graph) and
:mod:`rlkit.agents.sac.acting`'s (numpy), so the model itself is a plain MLP that acting
mirrors in numpy (:meth:`GaussianActor.numpy_snapshot`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras
import numpy as np

from rlkit.core import seeding
from rlkit.core.seeding import network_seed
from rlkit.core.spaces import ObservationFormat
from rlkit.networks.actor_critic import ActionBounds, Critic
from rlkit.networks.builders import NumpyMLP, apply_layers, dense, layer_weights, mlp_layers
from rlkit.networks.custom import KerasActor, KerasCritic, make_actor, make_critics, network_source


class GaussianActor:
    """``[B, obs_dim] -> [B, 2 A]``: ReLU hidden layers, then one linear head (mean, raw log
    std). Initialised by ``init`` (:func:`rlkit.networks.builders.dense`; SB3's PyTorch
    default with ``"torch"``)."""

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        hidden_sizes: Sequence[int],
        seed: int = 0,
        init: str = "torch",
        name: str = "actor",
    ) -> None:
        self.action_dim = int(action_dim)
        base = network_seed(seed, "actor")
        self.hidden = mlp_layers(hidden_sizes, base, name, init, obs_dim, seed_stride=2)
        fan_in = hidden_sizes[-1] if hidden_sizes else obs_dim
        self.head = dense(2 * self.action_dim, None, base + 998, f"{name}_out", 0.0, init,
                          fan_in)  # fmt: skip
        inputs = keras.Input((obs_dim,), name=f"{name}_obs")
        self.model = keras.Model(inputs, self.head(apply_layers(inputs, self.hidden)), name=name)

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    def layer_weights(self) -> list:
        """``[kernel_0, bias_0, ..., kernel_out, bias_out]``, the order :meth:`to_numpy` takes."""
        return layer_weights([*self.hidden, self.head])

    def to_numpy(self, arrays: Sequence[np.ndarray]) -> NumpyMLP:
        """The numpy policy network (``[N, obs_dim] -> [N, 2 A]``) from :meth:`layer_weights`'
        arrays."""
        return NumpyMLP.from_arrays(arrays)

    def numpy_snapshot(self) -> NumpyMLP:
        """A numpy copy of the current weights."""
        return NumpyMLP.from_layers(self.hidden, [self.head])


def twin_critics(
    obs_dim: int,
    bounds: ActionBounds,
    hidden_sizes: Sequence[int],
    seed: int,
    init: str,
    count: int = 2,
) -> list[Critic]:
    """``count`` critics ``Q_j(s, a)`` (actions in the bounds' units), each started apart,
    their output layers initialised as their hidden ones (SB3's)."""
    return [
        Critic(obs_dim, bounds, hidden_sizes, seed, f"critic{k}", k, init=init, output_scale=0.0)
        for k in range(count)
    ]


def networks(
    config: Any,
    obs_format: ObservationFormat,
    spaces: tuple[Any, Any],
    bounds: ActionBounds,
    given: dict[str, Any],
    seed: int,
) -> tuple[GaussianActor | KerasActor, list[Critic | KerasCritic]]:
    """The policy network and the twin critics, rlkit's or the user's (``config.actor`` /
    ``config.critic``: a builder's name, or :data:`~rlkit.networks.custom.GIVEN_IN_PYTHON`
    with the object in ``given``). A user's policy maps ``[B, obs]`` to ``[B, 2 A]`` (mean,
    raw log std); a user's critic ``[observation, action] -> [B]`` or ``[B, 1]``, the action
    in the bounds' units (as DDPG's)."""
    cfg, dim = config, bounds.dim
    actor: GaussianActor | KerasActor
    if cfg.actor:
        source = network_source("actor", cfg.actor, given.get("actor"))
        actor = make_actor(source, spaces, obs_format, 2 * dim, network_seed(seed, "actor"))
    else:
        actor = GaussianActor(obs_format.size, dim, cfg.actor_hidden_sizes, seed, cfg.init)
    if cfg.critic:
        source = network_source("critic", cfg.critic, given.get("critic"))
        seeds = [seeding.network_seed(seed, "critic", k) for k in range(2)]
        return actor, [*make_critics(source, spaces, obs_format, dim, seeds)]
    return actor, [*twin_critics(obs_format.size, bounds, cfg.critic_hidden_sizes, seed, cfg.init)]
