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
from rlkit.learn.gsde import NumpyLatentMLP, numpy_gsde_std
from rlkit.networks.actor_critic import ActionBounds, Critic
from rlkit.networks.builders import NumpyMLP, apply_layers, dense, layer_weights, mlp_layers
from rlkit.networks.custom import KerasActor, KerasCritic, make_actor, make_critics, network_source


class GaussianActor:
    """``[B, obs_dim] -> [B, 2 A]``: ReLU hidden layers, then one linear head (mean, raw log
    std). Initialised by ``init`` (:func:`rlkit.networks.builders.dense`; SB3's PyTorch
    default with ``"torch"``).

    With ``sde`` (gSDE, :mod:`rlkit.learn.gsde`; SB3's SAC actor with ``use_sde``) the head
    gives the mean alone, clipped to ``[-clip_mean, clip_mean]`` (SB3's Hardtanh; 0: not):
    ``model`` is ``[B, obs_dim] -> [B, A]``, and ``log_std`` is the exploration matrix's
    ``[L, A]`` (``full_std``) or ``[L, 1]`` variable from ``log_std_init``, ``L`` the last
    hidden layer's width (the latent).
    """

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        hidden_sizes: Sequence[int],
        seed: int = 0,
        init: str = "torch",
        name: str = "actor",
        sde: bool = False,
        log_std_init: float = -3.0,
        full_std: bool = True,
        clip_mean: float = 2.0,
        use_expln: bool = False,
    ) -> None:
        self.action_dim = int(action_dim)
        self.sde, self.clip_mean, self.use_expln = sde, clip_mean, use_expln
        base = network_seed(seed, "actor")
        self.hidden = mlp_layers(hidden_sizes, base, name, init, obs_dim, seed_stride=2)
        fan_in = hidden_sizes[-1] if hidden_sizes else obs_dim
        self.latent_dim = fan_in
        width = self.action_dim if sde else 2 * self.action_dim
        self.head = dense(width, None, base + 998, f"{name}_out", 0.0, init, fan_in)
        inputs = keras.Input((obs_dim,), name=f"{name}_obs")
        out = self.head(apply_layers(inputs, self.hidden))
        if sde and clip_mean > 0:
            out = keras.ops.clip(out, -clip_mean, clip_mean)
        self.model = keras.Model(inputs, out, name=name)
        self.log_std = None
        if sde:
            columns = self.action_dim if full_std else 1
            self.log_std = keras.Variable(np.full((fan_in, columns), log_std_init, np.float32),
                                          name=f"{name}_log_std")  # fmt: skip

    @property
    def variables(self) -> list:
        weights = list(self.model.trainable_variables)
        return weights if self.log_std is None else [*weights, self.log_std]

    def latent_and_mean(self, obs):
        """gSDE: ``(latent [B, L], mean [B, A])``, one pass through the layers."""
        latent = apply_layers(obs, self.hidden)
        mean = self.head(latent)
        if self.clip_mean > 0:
            mean = keras.ops.clip(mean, -self.clip_mean, self.clip_mean)
        return latent, mean

    def snapshot_weights(self) -> list:
        """What acting's copy is made of: :meth:`layer_weights`, then gSDE's ``log_std``."""
        weights = self.layer_weights()
        return weights if self.log_std is None else [*weights, self.log_std]

    def layer_weights(self) -> list:
        """``[kernel_0, bias_0, ..., kernel_out, bias_out]``, the order :meth:`to_numpy` takes."""
        return layer_weights([*self.hidden, self.head])

    def to_numpy(self, arrays: Sequence[np.ndarray]) -> NumpyMLP | NumpyLatentMLP:
        """The numpy policy network (``[N, obs_dim] -> [N, 2 A]``) from :meth:`layer_weights`'
        arrays; with gSDE from :meth:`snapshot_weights`' arrays, ``[N, obs_dim] -> (latent
        [N, L], mean [N, A])`` with the exploration matrix's ``std`` ``[L, A]``."""
        if not self.sde:
            return NumpyMLP.from_arrays(arrays)
        std = numpy_gsde_std(arrays[-1], self.action_dim, self.use_expln)
        return NumpyLatentMLP(arrays[:-1], "relu", self.clip_mean, std)

    def numpy_snapshot(self) -> NumpyMLP | NumpyLatentMLP:
        """A numpy copy of the current weights."""
        if self.sde:
            return self.to_numpy([np.asarray(w.numpy()) for w in self.snapshot_weights()])
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
        actor = GaussianActor(obs_format.size, dim, cfg.actor_hidden_sizes, seed, cfg.init,
                              sde=cfg.use_sde, log_std_init=cfg.log_std_init,
                              full_std=cfg.full_std, clip_mean=cfg.clip_mean,
                              use_expln=cfg.use_expln)  # fmt: skip
    if cfg.critic:
        source = network_source("critic", cfg.critic, given.get("critic"))
        seeds = [seeding.network_seed(seed, "critic", k) for k in range(2)]
        return actor, [*make_critics(source, spaces, obs_format, dim, seeds)]
    return actor, [*twin_critics(obs_format.size, bounds, cfg.critic_hidden_sizes, seed, cfg.init)]
