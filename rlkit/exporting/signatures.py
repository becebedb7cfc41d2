"""An agent's greedy policy as a ``tf.Module`` with serving signatures (the SavedModel's).

Every signature takes a batch of observations in the environment's own terms, one named
input per part:

- a ``Box``: ``observation`` ``[B, *shape]`` in the space's dtype (cast to float32 and
  flattened inside; an image ``[B, H, W, C]`` uint8 goes in as it is and the network divides
  it by 255);
- a ``Discrete``: ``observation`` ``[B]`` int64 (one-hot inside, ``start`` counted);
- a ``Dict``: one input per key (the key, with anything but letters, digits and ``_`` made
  ``_``); a ``Tuple``: ``part_0``, ``part_1``...

Signatures (outputs are dicts of tensors):

- ``action``: the greedy action in the environment's terms (``[B]`` int64 for ``Discrete``,
  ``start`` added; ``[B, *shape]`` in the action space's dtype for a ``Box``, rescaled to the
  bounds and clipped inside the graph);
- DQN ``q_values`` ``[B, A]``; DDPG/TD3 ``value``: the (first) critic's ``Q(s, action)``
  ``[B]``; REINFORCE ``logits`` ``[B, A]`` (Discrete) or ``distribution`` (``mean`` and
  ``std`` ``[B, *shape]`` in action units, Box), and ``sample`` (the inputs plus a ``seed``
  int64 scalar: the same seed and observations give the same actions); PPO and A2C
  ``sample`` (the inputs plus ``noise`` float32 ``[B, width]``: uniforms for a categorical,
  standard normals for a Gaussian; no random op, so TFLite takes it too:
  :func:`ppo_module`) and SAC ``sample`` (the same inputs: :func:`sac_module`), neither
  under gSDE;
- ``metadata``: no inputs, ``json``: the export's metadata as one JSON string.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import tensorflow as tf
from gymnasium import spaces

from rlkit.core.errors import UsageError
from rlkit.exporting.inputs import encoder, input_specs
from rlkit.exporting.module import (
    PolicyModule,
    action_box,
    mask_input,
    network,
    noise_input,
    to_space,
)

#: signatures that TFLite takes (random ops and strings stay in the SavedModel)
TFLITE_SIGNATURES = ("action", "q_values", "value", "logits", "distribution")


def dqn_module(agent, specs, encode, frozen: bool = False) -> PolicyModule:
    """DQN (C51, QR-DQN, Rainbow, M-DQN): ``action`` (argmax + start) and ``q_values`` (a
    distributional head's expected values, as its acting reads them; noisy layers at their
    mean weights, as greedy evaluation acts)."""
    q, start = agent.learner.q.model, int(agent.action_space.start)
    module = PolicyModule({"q": q})
    model, head = network(q, frozen), agent.learner.head

    def q_values(inputs):
        return {"q_values": head.q_values_graph(model(encode(inputs)))}

    def action(inputs):
        q = head.q_values_graph(model(encode(inputs)))
        return {"action": tf.argmax(q, axis=-1, output_type=tf.int64) + start}

    module.add("action", action, specs)
    module.add("q_values", q_values, specs)
    return module


def iqn_module(agent, specs, encode, frozen: bool = False) -> PolicyModule:
    """IQN: ``action`` and ``q_values`` as DQN's, ``Q(s, .)`` the mean of ``Z`` over the
    ``K`` fixed fractions of ``agent.export_fractions()`` (the midpoints ``(2k + 1) / 2K``,
    constants of the graph and listed in the metadata); training's fresh draws are not
    exported."""
    q, start = agent.learner.q.model, int(agent.action_space.start)
    module = PolicyModule({"q": q})
    model = network(q, frozen)
    fractions = tf.constant(agent.export_fractions()[None, :])  # [1, K]

    def values(inputs):
        x = encode(inputs)
        taus = tf.tile(fractions, [tf.shape(x)[0], 1])
        return tf.reduce_mean(model([x, taus]), axis=1)

    def q_values(inputs):
        return {"q_values": values(inputs)}

    def action(inputs):
        return {"action": tf.argmax(values(inputs), axis=-1, output_type=tf.int64) + start}

    module.add("action", action, specs)
    module.add("q_values", q_values, specs)
    return module


def ddpg_module(agent, specs, encode, frozen: bool = False) -> PolicyModule:
    """DDPG/TD3: ``action`` (the actor's, clipped to the bounds) and ``value`` (critic 0)."""
    models = {"actor": agent.learner.actor.model, "critic": agent.learner.critics[0].model}
    module = PolicyModule(models)
    actor, critic = (network(models[k], frozen) for k in ("actor", "critic"))
    space = agent.action_space
    low, high, _, _ = action_box(space)

    def flat_action(x):
        out = tf.reshape(tf.cast(actor(x), tf.float32), [-1, low.shape[0]])
        return tf.clip_by_value(out, low, high)

    def action(inputs):
        return {"action": to_space(flat_action(encode(inputs)), space)}

    def value(inputs):
        x = encode(inputs)
        return {"value": tf.reshape(critic([x, flat_action(x)]), [-1])}

    module.add("action", action, specs)
    module.add("value", value, specs)
    return module


def sac_module(agent, specs, encode, frozen: bool = False) -> PolicyModule:
    """SAC: ``action``, the greedy action ``tanh(mean)`` rescaled to the bounds, as acting's
    (:func:`rlkit.agents.sac.acting.squashed_action` without noise), clipped to them;
    discrete SAC's: the most probable action.

    ``sample``: the observations and ``noise`` float32 ``[B, width]`` give a draw of the
    policy (:meth:`~rlkit.agents.sac.agent.SAC.act_with_noise`): Box
    ``clip(from_unit(tanh(mean + exp(log_std) noise)))``, the log std bounded as training
    bounds it, ``noise`` standard normal, one per action dimension; discrete
    ``argmax(logits + gumbel)`` of uniforms in (0, 1), one per action. No random op (TFLite
    takes it too). Not with gSDE (``use_sde``): its draws need matrices held across steps."""
    from rlkit.learn.gumbel import graph_gumbel_from_uniform
    from rlkit.learn.max_entropy import bound_log_std

    models = {"actor": agent.learner.actor.model}
    module = PolicyModule(models)
    actor = network(models["actor"], frozen)
    noise = noise_input(agent)
    noise_name, described = noise if noise is not None else ("", {"shape": []})
    noise_spec = {noise_name: tf.TensorSpec(described["shape"], tf.float32, name=noise_name)}
    if agent.discrete:

        def greedy(inputs):
            logits = actor(encode(inputs))
            return {"action": tf.argmax(logits, axis=-1, output_type=tf.int64)}

        def sample(inputs):
            logits = tf.cast(actor(encode(inputs)), tf.float32)
            perturbed = logits + graph_gumbel_from_uniform(inputs[noise_name])
            return {"action": tf.argmax(perturbed, axis=-1, output_type=tf.int64)}

        module.add("action", greedy, specs)
        module.add("sample", sample, specs, noise_spec)
        return module
    bounds, space, cfg = agent.bounds, agent.action_space, agent.config
    low, high, half = (tf.constant(a, tf.float32) for a in (bounds.low, bounds.high,
                                                               bounds.half_range))  # fmt: skip

    def squashed(u):
        flat = (tf.tanh(u) + 1.0) * half + low
        return {"action": to_space(tf.clip_by_value(flat, low, high), space)}

    def action(inputs):
        out = tf.cast(actor(encode(inputs)), tf.float32)
        return squashed(out[:, : bounds.dim])

    def sample_box(inputs):
        out = tf.cast(actor(encode(inputs)), tf.float32)
        log_std = bound_log_std(out[:, bounds.dim :], cfg.log_std_min, cfg.log_std_max,
                                cfg.log_std_bounding)  # fmt: skip
        return squashed(out[:, : bounds.dim] + tf.exp(log_std) * inputs[noise_name])

    module.add("action", action, specs)
    if noise is not None:
        module.add("sample", sample_box, specs, noise_spec)
    return module


def reinforce_module(agent, specs, encode, frozen: bool = False) -> PolicyModule:
    """REINFORCE: ``action`` (argmax of the logits, or the Gaussian's mean clipped),
    ``logits`` or ``distribution``, and ``sample`` (seeded)."""
    policy, space = agent.learner.policy_network.model, agent.action_space
    log_std = agent.learner.log_std
    module = PolicyModule({"policy": policy} if log_std is None else
                          {"policy": policy, "log_std": log_std})  # fmt: skip
    model = network(policy, frozen)
    if frozen and log_std is not None:
        log_std = tf.constant(log_std.numpy())
    seed_spec = {"seed": tf.TensorSpec([], tf.int64, name="seed")}
    if isinstance(space, spaces.Discrete):
        start = int(space.start)

        def logits(inputs):
            return {"logits": model(encode(inputs))}

        def action(inputs):
            out = model(encode(inputs))
            return {"action": tf.argmax(out, axis=-1, output_type=tf.int64) + start}

        def sample(inputs):
            out = model(encode(inputs))
            seed = tf.stack([inputs["seed"], tf.constant(0, tf.int64)])
            drawn = tf.random.stateless_categorical(out, 1, seed, dtype=tf.int64)
            return {"action": drawn[:, 0] + start}

        module.add("action", action, specs)
        module.add("logits", logits, specs)
        module.add("sample", sample, specs, seed_spec)
        return module
    # as Sampling.act: centre + half-range * raw in float64, clipped (float32 for TFLite,
    # whose built-in kernels take no float64: within its check's tolerance)
    wide = tf.float32 if frozen else tf.float64
    _, _, center, half = action_box(space)
    center, half = tf.constant(center, wide), tf.constant(half, wide)
    low = tf.constant(np.asarray(space.low, np.float64).reshape(-1), wide)
    high = tf.constant(np.asarray(space.high, np.float64).reshape(-1), wide)

    def to_action(raw):
        return tf.clip_by_value(center + half * tf.cast(raw, wide), low, high)

    def mean(inputs):
        return tf.cast(model(encode(inputs)), tf.float32)

    def action(inputs):  # type: ignore[no-redef]  # (Box actions; Discrete returned above)
        return {"action": to_space(to_action(mean(inputs)), space)}

    def distribution(inputs):
        out = mean(inputs)
        std = tf.exp(log_std) * tf.ones_like(out)
        return {"mean": to_space(center + half * tf.cast(out, wide), space),
                "std": to_space(half * tf.cast(std, wide), space)}  # fmt: skip

    def sample(inputs):  # type: ignore[no-redef]  # (Box actions; Discrete returned above)
        out = mean(inputs)
        seed = tf.stack([inputs["seed"], tf.constant(0, tf.int64)])
        raw = out + tf.exp(log_std) * tf.random.stateless_normal(tf.shape(out), seed)
        return {"action": to_space(to_action(raw), space)}

    module.add("action", action, specs)
    module.add("distribution", distribution, specs)
    module.add("sample", sample, specs, seed_spec)
    return module


def ppo_module(agent, specs, encode, frozen: bool = False) -> PolicyModule:
    """PPO: ``action``, the greedy action: ``argmax`` of the logits (each dimension's for a
    MultiDiscrete; ``start`` added), or the Gaussian's mean clipped to the bounds, as acting's
    greedy; with ``norm_obs`` the observations normalised first (the statistics in use).

    ``sample``: the observations and ``noise`` float32 ``[B, width]`` give a draw of the
    policy (:meth:`~rlkit.agents.ppo.acting.PPOActing.act_with_noise`): Discrete and
    MultiDiscrete ``argmax(logits + gumbel)`` (each dimension's), ``gumbel = -log(-log u)``
    of the uniforms ``u = noise`` in (0, 1) (clipped into the float32 range where it is
    finite), one per logit; Box ``clip(mean + exp(log_std) * noise)``, ``noise`` standard
    normal, one per action dimension. No random op: the caller owns the randomness, and the
    SavedModel and TFLite give the same action for the same inputs.

    An agent made with ``action_masks``: both take ``action_mask`` too, bool ``[B, width]``
    (:func:`~rlkit.exporting.module.mask_input`), the invalid actions' logits ``-inf`` (never
    greedy, never drawn), as acting's masks."""
    from rlkit.learn.gumbel import graph_gumbel_from_uniform

    models = {"policy": agent.learner.policy_network.model}
    log_std = agent.learner.log_std
    if log_std is not None:
        models["log_std"] = log_std
    module = PolicyModule(models)
    policy, space, norm = network(models["policy"], frozen), agent.action_space, agent.obs_norm
    if frozen and log_std is not None:
        log_std = tf.constant(log_std.numpy())
    x_of = encode if norm is None else (lambda inputs: norm.graph(encode(inputs)))
    noise = noise_input(agent)  # (None: a gSDE policy, whose export has no ``sample``)
    noise_name, described = noise if noise is not None else ("", {"shape": []})
    noise_spec = {noise_name: tf.TensorSpec(described["shape"], tf.float32, name=noise_name)}
    mask = mask_input(agent)  # (action_masks: a bool input, the invalid logits -inf)
    if mask is not None:
        mask_name, width = mask
        specs = {**specs, mask_name: tf.TensorSpec([None, width], tf.bool, name=mask_name)}
    if isinstance(space, spaces.Discrete | spaces.MultiDiscrete):

        def logits_of(x, inputs):
            out = tf.cast(policy(x), tf.float32)
            return out if mask is None else tf.where(inputs[mask_name], out, float("-inf"))

        if isinstance(space, spaces.Discrete):
            start = int(space.start)

            def choose(out):
                return tf.argmax(out, axis=-1, output_type=tf.int64) + start

        else:  # each dimension's argmax, start added
            head, starts = agent.learner.head, np.asarray(space.start, np.int64).reshape(-1)

            def choose(out):
                return to_space(head.graph_greedy(out) + starts, space)

        def greedy(inputs):
            return {"action": choose(logits_of(x_of(inputs), inputs))}

        def sample(inputs):
            out = logits_of(x_of(inputs), inputs)
            return {"action": choose(out + graph_gumbel_from_uniform(inputs[noise_name]))}

        module.add("action", greedy, specs)
        if noise is not None:
            module.add("sample", sample, specs, noise_spec)
        return module
    low, high, _, _ = action_box(space)

    def mean(inputs):
        return tf.reshape(tf.cast(policy(x_of(inputs)), tf.float32), [-1, low.shape[0]])

    def action(inputs):
        return {"action": to_space(tf.clip_by_value(mean(inputs), low, high), space)}

    def sample_box(inputs):
        raw = mean(inputs) + tf.exp(log_std) * inputs[noise_name]
        return {"action": to_space(tf.clip_by_value(raw, low, high), space)}

    module.add("action", action, specs)
    if noise is not None:
        module.add("sample", sample_box, specs, noise_spec)
    return module


#: the signatures each builder serves besides ``metadata`` (None: by the action space)
SIGNATURES: dict[Any, tuple[str, ...] | None] = {
    dqn_module: ("action", "q_values"),
    iqn_module: ("action", "q_values"),
    ddpg_module: ("action", "value"),
    sac_module: ("action", "sample"),
    reinforce_module: None,
    ppo_module: ("action", "sample"),
}


def builder(agent):
    """The function that builds ``agent``'s :class:`PolicyModule` (the registry's
    ``export_builder``); UsageError when its agent has none."""
    agents = agent.registry()  # (read through the agent: the registry is a floor above)
    spec = agents.get(agent.name)
    if spec is None or not spec.export_builder:
        exportable = sorted(n for n, s in agents.items() if s.export_builder)
        raise UsageError(f"cannot export a {agent.name} agent (rlkit exports "
                         f"{', '.join(exportable)})")  # fmt: skip
    return spec.export_function()


def signature_names(agent, format: str = "saved_model") -> list[str]:
    """The signatures an export of ``agent`` serves (TFLite: those it takes)."""
    served = SIGNATURES.get(builder(agent))
    if served is None:
        discrete = isinstance(agent.action_space, spaces.Discrete)
        served = ("action", "logits" if discrete else "distribution", "sample")
    noise = noise_input(agent) is not None
    if hasattr(agent, "sample_noise_spec") and not noise:  # (gSDE: no sample from noise)
        served = tuple(n for n in served if n != "sample")
    names = [*served, "metadata"]
    if format != "tflite":
        return names
    # a sample from given noise has no random op: TFLite takes it (REINFORCE's seeded one not)
    return [n for n in names if n in TFLITE_SIGNATURES or (noise and n == "sample")]


def policy_module(agent, metadata: dict[str, Any], frozen: bool = False) -> PolicyModule:
    """The :class:`PolicyModule` of ``agent`` (its registry entry's ``export_builder``) with
    its signatures and ``metadata`` (a JSON-able dict) as the ``metadata`` signature;
    ``frozen``: the weights as constants (for TFLite, see :func:`network`)."""
    build = builder(agent)
    specs = input_specs(agent.observation_space)
    encode = encoder(agent.observation_space, agent.obs_format)
    module = build(agent, specs, encode, frozen)
    text = json.dumps(metadata, sort_keys=True, allow_nan=False)
    module.add("metadata", lambda inputs: {"json": tf.constant(text)}, {})
    return module
