"""DDPG's networks, rlkit's or the user's, and what differs for ``Dict`` and ``Tuple``
observations.

``Box`` and ``Discrete`` observations reach the networks flat, float32 ``[B, obs_dim]``:
rlkit's MLP actor and critics (:mod:`rlkit.networks.actor_critic`), or the user's
(``actor=``, ``critic=``, :mod:`rlkit.networks.custom`). A ``Dict`` or ``Tuple``
observation reaches them as its structure, each part ``[B, *part_shape]`` in its own dtype
(an uint8 image part stays uint8): a dict keyed as the space, or a tuple. It needs both
networks of one's own: the actor takes the structure and returns ``[B, act_dim]`` in the
action's units; the critic takes ``[structure, action [B, act_dim]]`` and returns ``[B]`` or
``[B, 1]`` (:func:`rlkit.networks.structured.critic_sample`). The actor then acts through
one compiled call per (batched) step.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from rlkit.core import seeding
from rlkit.core.errors import UsageError
from rlkit.core.spaces import ObservationFormat
from rlkit.core.structure import describe
from rlkit.networks.actor_critic import ActionBounds, Actor, Critic
from rlkit.networks.custom import KerasActor, KerasCritic, make_actor, make_critics, network_source


def refuse_builtin_networks(obs_format: ObservationFormat, config: Any) -> None:
    """UsageError: rlkit's own actor and critic take flat vectors or one-hot observations."""
    missing = " and ".join(key for key in ("actor", "critic") if not getattr(config, key))
    raise UsageError(
        f"ddpg's built-in {missing} cannot take a "
        f"{describe(obs_format.kind, obs_format.parts)} observation: "
        "pass an actor and a critic of your own that take it, DDPG(..., actor=build_actor, "
        "critic=build_critic) in Python or --set actor=module:function --set "
        "critic=module:function on the command line"
    )


def networks(
    config: Any,
    obs_format: ObservationFormat,
    spaces: tuple[Any, Any],
    bounds: ActionBounds,
    given: dict[str, Any],
    critics: int,
    seed: int,
) -> tuple[Actor | KerasActor, list[Critic | KerasCritic]]:
    """The actor and ``critics`` critics (TD3's two), rlkit's or the user's; for a ``Dict``
    or ``Tuple`` observation only the user's (UsageError else).

    ``config``: a :class:`~rlkit.agents.ddpg.config.DDPGConfig`; ``spaces``: the
    (observation, action) spaces; ``given``: ``{"actor": ..., "critic": ...}``, the networks
    given to the agent as Python objects (None where not).
    """
    cfg, fmt = config, obs_format
    if fmt.parts and not (cfg.actor and cfg.critic):
        refuse_builtin_networks(fmt, cfg)
    init = {"init": cfg.init, "output_scale": cfg.output_init_scale}
    actor: Actor | KerasActor
    if cfg.actor:
        source = network_source("actor", cfg.actor, given["actor"])
        actor_seed = seeding.network_seed(seed, "actor")
        actor = make_actor(source, spaces, fmt, bounds.dim, actor_seed)
    else:
        actor = Actor(fmt.size, bounds, cfg.actor_hidden_sizes, seed, "actor", **init)
    if cfg.critic:
        source = network_source("critic", cfg.critic, given["critic"])
        seeds = [seeding.network_seed(seed, "critic", k) for k in range(critics)]
        critics_given: list[Critic | KerasCritic] = [
            *make_critics(source, spaces, fmt, bounds.dim, seeds)
        ]
        return actor, critics_given
    return actor, [
        Critic(fmt.size, bounds, cfg.critic_hidden_sizes, seed, f"critic{k}", k, **init)
        for k in range(critics)
    ]


def obs_tensors(obs_format: ObservationFormat, obs: Any) -> Any:
    """Encoded observations (any leading axes) as tensors: float32 ``[..., obs_dim]``, or a
    ``Dict``'s or ``Tuple``'s structure of tensors, each part in its own dtype."""
    if obs_format.parts:
        return tf.nest.map_structure(tf.convert_to_tensor, obs)
    return tf.convert_to_tensor(obs, tf.float32)


def row(obs: Any, k: Any) -> Any:
    """``obs[k]`` of a tensor ``[K, B, ...]``, or of each part of a structure of them."""
    return tf.nest.map_structure(lambda t: t[k], obs)
