"""IQN's network (Dabney et al. 2018b): ``Z_tau(s, a)`` for sampled fractions ``tau``.

``(obs [B, *shape], taus [B, N]) -> [B, N, A]``: a torso's features ``psi(s)`` ``[B, D]``
(rlkit's :func:`~rlkit.networks.builders.torso`, or a Keras model of one's own giving ``[B, D]``),
multiplied by the fraction embedding ``phi(tau)`` (:class:`~rlkit.networks.quantile.
QuantileEmbedding`, ``[B, N, D]``), then ReLU hidden layers and a linear output of ``A``
values per fraction (or a dueling pair, combined per fraction). As Dopamine's
``ImplicitQuantileNetwork`` (``dopamine/jax/networks.py``): the Nature CNN, ``D = 3136``,
one hidden layer of 512, cosines ``i = 1 .. 64`` (the embedding's kernel Dopamine's
``variance_scaling(1/sqrt(3), fan_in, uniform)``; the other layers rlkit's ``init``).
"""

from __future__ import annotations

from collections.abc import Sequence

import keras
import tensorflow as tf

from rlkit.core.spaces import ObservationFormat
from rlkit.networks.builders import apply_layers, dense, mlp_layers, torso
from rlkit.networks.quantile import QuantileEmbedding
from rlkit.networks.user_torso import features_width

#: what IQN's messages about a torso of one's own say: who gives the features, what takes them
IQN_TORSO, EMBEDDING = "iqn's q_network is a torso", "the fraction embedding to multiply"


class IQNNetwork:
    """``Z(s, tau)``: ``([B, *obs_shape], [B, N]) -> [B, N, A]``.

    Args:
        obs_format: how observations reach the network.
        num_actions: ``A``.
        hidden_sizes: ReLU layers after the embedding product (Dopamine's Atari: ``[512]``;
            Revisiting Rainbow's MinAtar: none).
        embedding_dim: the cosines ``n`` of the fraction embedding (64).
        dueling: ``Z = V + A - mean_a A`` per fraction.
        seed, name, init, torso_kind, conv_padding: as :class:`~rlkit.networks.q_network.QNetwork`
            (the embedding's kernel is always Dopamine's variance scaling).
        user_torso: a Keras model ``[B, *obs_shape] -> [B, D]`` used instead of rlkit's torso.

    Attributes:
        model: the Keras model taking ``[obs, taus]``.
        convs: rlkit's convolutions (empty for vectors or a torso of one's own).
    """

    def __init__(
        self, obs_format: ObservationFormat, num_actions: int, hidden_sizes: Sequence[int],
        embedding_dim: int = 64, dueling: bool = False, seed: int = 0, name: str = "q",
        init: str = "glorot", torso_kind: str = "auto", conv_padding: str = "valid",
        user_torso: keras.Model | None = None,
    ) -> None:  # fmt: skip
        base = seed * 1000
        self.convs: list = []
        if user_torso is None:
            obs, features, width, self.convs = torso(obs_format, base, name, init,
                                                     torso_kind, conv_padding)  # fmt: skip
        else:
            obs = keras.Input(obs_format.shape, dtype=obs_format.dtype, name=f"{name}_obs")
            features = user_torso(obs)
            width = features_width(features.shape, IQN_TORSO, EMBEDDING)
        taus = keras.Input((None,), dtype="float32", name=f"{name}_taus")
        embedding = QuantileEmbedding(embedding_dim, first_index=1,
                                      seed=base + 400,
                                      name=f"{name}_tau_embedding")  # fmt: skip
        x = embedding(features, taus)  # [B, N, D]
        self.hidden = mlp_layers(hidden_sizes, base, name, init, fan_in=width)
        x = apply_layers(x, self.hidden)
        last = hidden_sizes[-1] if hidden_sizes else width
        sizes = [(1, 998, "value"), (num_actions, 999, "advantage")] if dueling else [
            (num_actions, 999, "out")]  # fmt: skip
        self.heads = [dense(units, None, base + offset, f"{name}_{part}", init=init,
                            fan_in=last) for units, offset, part in sizes]  # fmt: skip
        if dueling:
            value, advantage = self.heads[0](x), self.heads[1](x)
            outputs = value + advantage - keras.ops.mean(advantage, axis=-1, keepdims=True)
        else:
            outputs = self.heads[0](x)
        self.model = keras.Model([obs, taus], outputs, name=name)

    @property
    def variables(self) -> list:
        return self.model.trainable_variables

    def mirror_weights(self) -> list:
        """Empty: IQN has no numpy mirror (acting samples fractions through a compiled call),
        so an update block returns no weights for one."""
        return []

    def values(self, obs, taus: tf.Tensor, training: bool = False) -> tf.Tensor:
        """``Z`` at ``taus``: ``[B, N, A]``."""
        return self.model([obs, taus], training=training)
