"""gSDE for PPO's and A2C's Gaussian policy (:mod:`rlkit.learn.gsde`; SB3's
``ActorCriticPolicy`` with ``use_sde``): the policy's tanh MLP gives the latent ``z`` (its
last hidden layer) and the mean (its head); the action ``u = mean + z . E`` is stored
unclipped, its log-probability and entropy those of ``N(mean, (z^2) @ (sigma^2) + eps)``
per state, ``sigma`` from the learner's ``log_std`` ``[L, A]`` (or ``[L, 1]``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import tensorflow as tf
from gymnasium import spaces

from rlkit.agents.ppo.networks import TanhMLP
from rlkit.core.errors import UsageError
from rlkit.core.spaces import IMAGE, ObservationFormat
from rlkit.learn import gsde
from rlkit.networks.builders import apply_layers


def gsde_policy(networks: Any, obs_format: ObservationFormat, action_space: Any,
                cfg: Any) -> TanhMLP | None:  # fmt: skip
    """With ``use_sde``, the policy's :class:`~rlkit.agents.ppo.networks.TanhMLP` (its
    ``hidden`` layers give gSDE's latent, its ``head`` the mean); None without. Refuses
    (UsageError) what gSDE cannot take: other than Box actions, images, a network of one's
    own."""
    if not cfg.use_sde:
        return None
    if not isinstance(action_space, spaces.Box):
        raise UsageError(
            f"use_sde: gSDE perturbs a Gaussian's mean, and {action_space} is not a Box (a "
            "softmax policy samples its actions); leave use_sde out"
        )
    policy = getattr(networks, "policy_network", None)
    if obs_format.kind == IMAGE or not isinstance(policy, TanhMLP):
        raise UsageError(
            "use_sde: gSDE reads the last hidden layer of rlkit's tanh policy MLP (vector "
            "observations, no actor or torso of one's own); leave use_sde out"
        )
    return policy


def sde_log_prob_entropy(policy: TanhMLP, log_std: tf.Variable, obs: tf.Tensor,
                         actions: tf.Tensor, cfg: Any) -> tuple[tf.Tensor, tf.Tensor]:  # fmt: skip
    """``log pi(a|s)`` and the entropy, both ``[B]``: ``obs [B, obs_dim]``, ``actions [B, A]``
    (unclipped samples), the latent without a gradient unless ``cfg.learn_features``."""
    hidden = apply_layers(obs, policy.hidden)
    mean = policy.head(hidden)
    std = gsde.gsde_std(log_std, int(mean.shape[-1]), cfg.use_expln)
    variance = gsde.gsde_variance(gsde.latent_input(hidden, cfg.learn_features), std)
    return gsde.gsde_log_prob(actions, mean, variance), gsde.gsde_entropy(variance)


def initial_log_std(policy: TanhMLP | None, obs_format: ObservationFormat, out_dim: int,
                    cfg: Any) -> np.ndarray:  # fmt: skip
    """The learner's ``log_std`` at ``log_std_init``: ``[A]`` without gSDE; with it the
    exploration matrix's ``[L, A]`` (``[L, 1]`` without ``full_std``), ``L`` the policy's
    last hidden width (the observation's without hidden layers)."""
    if policy is None:
        return np.full(out_dim, cfg.log_std_init, np.float32)
    latent = policy.hidden[-1].units if policy.hidden else obs_format.size
    return np.full((latent, out_dim if cfg.full_std else 1), cfg.log_std_init, np.float32)


def sde_snapshot(
    arrays: Sequence[np.ndarray], n: int, cfg: Any
) -> tuple[gsde.NumpyLatentMLP, np.ndarray]:
    """Acting's copy from the snapshot's arrays (the policy's ``n``, then ``log_std``):
    ``obs -> (latent, mean)`` and the exploration matrix's std ``[L, A]``."""
    width = int(np.shape(arrays[n - 1])[-1])  # (the head's bias: A)
    return (gsde.NumpyLatentMLP(arrays[:n], cfg.activation),
            gsde.numpy_gsde_std(arrays[n], width, cfg.use_expln))  # fmt: skip
