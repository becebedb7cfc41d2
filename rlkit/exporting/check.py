"""The export's proof: the exported policy acts as the agent does, checked before success.

Observations come from the environment (seeded episodes, each step the agent's greedy
action or, one step in four, a random one, so that the states are those the policy
visits and some beyond), from the agent's replay memory where there is one, or, with
neither, drawn from the observation space. On all of them:

- Discrete actions (DQN, REINFORCE): the export's action equals the agent's greedy ``act``
  exactly (IQN's: the argmax of its own network's mean over the export's fixed fractions,
  ``agent.export_q_values``, since its ``act`` draws fresh ones). A different action is
  tolerated only where the two actions' values (Q-values or logits, as the export computes
  them) are equal to float32 rounding, a tie that either side may break (counted and
  reported; none in practice).
- Box actions (DDPG/TD3, REINFORCE): numpy (acting's copy of the network) and TensorFlow
  sum the matrix products in different orders, so the last bit can differ: the check
  counts bit-identical actions and requires the largest difference within ``1e-5`` of the
  action range (it is ~1e-7 in practice).

A TFLite model is checked on the same observations; float32 must pass the same test with
a tolerance of 1e-4, a quantised one reports its agreement and its largest value
difference only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from gymnasium import spaces

from rlkit.core.structure import take_rows

#: (SavedModel, float32 TFLite) tolerances, relative to the values' scale
TOLERANCE = {"saved_model": 1e-5, "tflite": 1e-4}


@dataclass
class CheckResult:
    """What the check compared and found."""

    observations: int = 0
    sources: list[str] = field(default_factory=list)
    equal: int = 0  # actions equal bit for bit
    ties: int = 0  # discrete actions that differ on a tie
    largest_difference: float = 0.0  # of Box actions, or the value gap where discrete differ
    value_difference: float | None = None  # the largest of the values behind discrete actions
    value_kind: str = ""  # "Q-value" or "probability"
    passed: bool = True
    lines: list[str] = field(default_factory=list)


def greedy_actions(agent, batch, masks: np.ndarray | None = None) -> np.ndarray:
    """The agent's greedy actions for a batch of raw observations, without drawing from any
    of its generators (a DQN with ``eval_epsilon``: the argmax acting would take; IQN: at
    the export's fixed fractions); ``masks``: an agent made with action masks, its valid
    actions (:func:`random_masks`)."""
    if agent.evaluation_epsilon > 0 or hasattr(agent, "export_q_values"):  # (DQN's family)
        q = q_values(agent, batch)
        return np.argmax(q, axis=-1) + int(agent.action_space.start)
    greedy = getattr(agent, "greedy_actions", None)  # (PPO: evaluation may sample)
    if greedy is None:
        return np.asarray(agent.act(batch, explore=False))
    return np.asarray(greedy(batch) if masks is None else greedy(batch, masks))


def random_masks(agent, count: int, seed: int = 0) -> np.ndarray | None:
    """An agent made with invalid-action masks (``action_mask_width``): seeded masks bool
    ``[count, width]``, each action valid with probability 1/2 and at least one per row (per
    dimension's slice for a MultiDiscrete), so that the check sees masked choices; None for
    other agents."""
    width = int(getattr(agent, "action_mask_width", 0) or 0)
    if not width:
        return None
    rng = np.random.default_rng(seed)
    masks = rng.random((count, width)) < 0.5
    nvec = getattr(agent.action_space, "nvec", None)
    sizes = [width] if nvec is None else [int(n) for n in np.asarray(nvec).reshape(-1)]
    start = 0
    for size in sizes:  # (a slice with no valid action gets one, drawn)
        part = masks[:, start : start + size]
        empty = np.flatnonzero(~part.any(axis=-1))
        part[empty, rng.integers(size, size=len(empty))] = True
        start += size
    return masks


def q_values(agent, batch) -> np.ndarray:
    """The Q-values the agent's greedy act reads (IQN: its own network's at the export's
    fixed fractions, ``export_q_values``)."""
    fixed = getattr(agent, "export_q_values", None)
    return agent.q_values(batch) if fixed is None else fixed(batch)


def from_env(agent, env, count: int, seed: int = 0) -> object:
    """``count`` observations of ``env``'s seeded episodes (one step in four random)."""
    rng = np.random.default_rng(seed)
    env.action_space.seed(seed)
    obs, info = env.reset(seed=seed)
    seen, width = [], int(getattr(agent, "action_mask_width", 0) or 0)
    for _ in range(count):
        seen.append(obs)
        masks = None
        if width:  # (an agent made with action masks plays the valid actions only)
            from rlkit.envs.action_masks import read_action_masks

            masks = read_action_masks(env, info, width)[None]
        if rng.random() < 0.25:
            action = env.action_space.sample() if masks is None else valid_sample(
                env.action_space, masks[0], rng)  # fmt: skip
        else:
            action = greedy_actions(agent, stack([obs], agent.observation_space), masks)[0]
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            obs, info = env.reset()
    return stack(seen, agent.observation_space)


def valid_sample(space, mask: np.ndarray, rng: np.random.Generator):
    """A uniform draw among the actions ``mask`` (bool ``[width]``) allows: one index of a
    ``Discrete``'s (``start`` added), or one per dimension's slice of a ``MultiDiscrete``'s."""
    if isinstance(space, spaces.Discrete):
        return int(rng.choice(np.flatnonzero(mask))) + int(space.start)
    nvec = np.asarray(space.nvec).reshape(-1)
    parts = np.split(mask, np.cumsum(nvec)[:-1])
    chosen = [int(rng.choice(np.flatnonzero(part))) for part in parts]
    return (np.asarray(chosen) + np.asarray(space.start).reshape(-1)).reshape(space.shape)


def stack(observations: list, space: spaces.Space):
    """A list of raw observations as one batch (a dict or tuple of batches for structures)."""
    if isinstance(space, spaces.Dict):
        return {k: np.stack([o[k] for o in observations]) for k in space.spaces}
    if isinstance(space, spaces.Tuple):
        return tuple(np.stack([o[i] for o in observations]) for i in range(len(space.spaces)))
    return np.stack([np.asarray(o, space.dtype) for o in observations])


def from_replay(agent, count: int):
    """Up to ``count`` observations of the agent's replay memory in the environment's own
    terms, or None when it has none; the memory's generator is put back as it was."""
    memory = agent.replay_memory() if hasattr(agent, "replay_memory") else None
    if memory is None or len(memory) == 0:
        return None
    rng = getattr(memory, "rng", None)
    saved = None if rng is None else rng.bit_generator.state
    try:
        obs = memory.sample(min(count, len(memory))).obs
    finally:
        if rng is not None:  # (saved is its state)
            rng.bit_generator.state = saved
    return raw_observations(obs, agent.observation_space)


def raw_observations(encoded, space: spaces.Space):
    """Encoded observations (as replay stores them) back in the environment's terms."""
    if isinstance(space, (spaces.Dict, spaces.Tuple)):
        return encoded  # each part is kept as it is
    if isinstance(space, spaces.Discrete):
        return np.argmax(encoded, axis=-1).astype(np.int64) + int(space.start)
    assert space.shape is not None  # (a Box or MultiBinary space: shaped)
    return np.asarray(encoded).reshape(-1, *space.shape).astype(space.dtype)


def from_space(space: spaces.Space, count: int, seed: int = 0):
    """``count`` observations drawn from ``space`` (seeded)."""
    space.seed(seed)
    return stack([space.sample() for _ in range(count)], space)


def rows(batch) -> int:
    if isinstance(batch, dict):
        return len(next(iter(batch.values())))
    if isinstance(batch, tuple):
        return len(batch[0])
    return len(batch)


def concatenate(batches: list, space: spaces.Space):
    if isinstance(space, spaces.Dict):
        return {k: np.concatenate([b[k] for b in batches]) for k in space.spaces}
    if isinstance(space, spaces.Tuple):
        return tuple(np.concatenate([b[i] for b in batches]) for i in range(len(space.spaces)))
    return np.concatenate(batches)


def value_signature(exported) -> str | None:
    return next((s for s in ("q_values", "logits") if s in exported.signatures), None)


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def agent_values(agent, batch, signature: str) -> tuple[str, np.ndarray]:
    """``(kind, values)`` the agent acts on: DQN's Q-values, REINFORCE's probabilities."""
    if signature == "q_values":
        return "Q-value", q_values(agent, batch)
    return "probability", agent.action_probabilities(batch)


def compare(agent, exported, batch, quantized: bool = False) -> CheckResult:
    """The exported policy's actions on ``batch`` against the agent's greedy ones."""
    result = CheckResult(observations=rows(batch))
    masks = random_masks(agent, result.observations)
    want = greedy_actions(agent, batch, masks)
    got = np.asarray(exported.act(batch) if masks is None else
                     exported.act(batch, action_masks=masks))  # fmt: skip
    tolerance = TOLERANCE[exported.format]
    if isinstance(agent.action_space, spaces.Discrete):
        same = got == want
        result.equal = int(same.sum())
        name = value_signature(exported)
        values = exported.run(name, batch)[name] if name else None
        if name and values is not None:
            result.value_kind, mine = agent_values(agent, batch, name)
            theirs = values if name == "q_values" else softmax(values)
            result.value_difference = float(np.abs(theirs - mine).max())
        if values is not None and not same.all():
            index = np.flatnonzero(~same)
            gap = np.abs(values[index, got[index] - agent.action_space.start]
                         - values[index, want[index] - agent.action_space.start])  # fmt: skip
            scale = np.maximum(1.0, np.abs(values[index]).max(axis=-1))
            result.ties = int((gap <= tolerance * scale).sum())
            result.largest_difference = float(gap.max())
        result.passed = quantized or result.equal + result.ties == result.observations
        return result
    return array_agreement(result, got, want, agent.action_space, tolerance, quantized)


def array_agreement(result: CheckResult, got, want, space, tolerance: float,
                    quantized: bool) -> CheckResult:  # fmt: skip
    """``result`` with the rows where array actions ``got`` and ``want`` are equal bit for
    bit and their largest difference: MultiDiscrete passes when all rows are equal, a Box
    when the largest difference is within ``tolerance`` of the action range."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    result.equal = int(np.all(got == want, axis=tuple(range(1, got.ndim))).sum())
    result.largest_difference = float(np.abs(got - want).max()) if got.size else 0.0
    if isinstance(space, spaces.MultiDiscrete):  # (integers: equal, or not)
        result.passed = quantized or result.equal == result.observations
        return result
    span = np.asarray(space.high, np.float64) - space.low
    result.passed = quantized or result.largest_difference <= tolerance * max(1.0, span.max())
    return result


def sample_noise(agent, rows: int, seed: int = 0) -> np.ndarray:
    """Noise ``[rows, width]`` float32 for the agent's ``act_with_noise`` (uniforms in
    (0, 1) or standard normals: ``agent.sample_noise_spec()``), seeded."""
    distribution, width = agent.sample_noise_spec()
    rng = np.random.default_rng(seed)
    if distribution == "uniform":
        return rng.random((rows, width)).astype(np.float32)
    return rng.standard_normal((rows, width)).astype(np.float32)


def compare_sample(agent, exported, batch, quantized: bool = False) -> CheckResult:
    """The export's ``sample`` on ``batch`` and seeded noise against the agent's
    ``act_with_noise`` for the same noise: discrete draws equal, but where the two
    perturbed logits are equal to float32 rounding (a tie, counted); Box draws within the
    tolerance of :func:`compare` (the same rule)."""
    result = CheckResult(observations=rows(batch))
    noise = sample_noise(agent, result.observations)
    name = exported.metadata.get("sample_noise", {}).get("input", "noise")
    extra, masks = {name: noise}, random_masks(agent, result.observations, seed=1)
    if masks is not None:
        extra[exported.metadata["action_mask"]["input"]] = masks
    got = np.asarray(exported.run("sample", batch, **extra)["action"])
    want = np.asarray(agent.act_with_noise(batch, noise) if masks is None else
                      agent.act_with_noise(batch, noise, masks))  # fmt: skip
    tolerance = TOLERANCE[exported.format]
    space = agent.action_space
    if isinstance(space, spaces.Discrete | spaces.MultiDiscrete):
        same = np.all((got == want).reshape(len(got), -1), axis=-1)
        result.equal = int(same.sum())
        if not same.all():  # ties: the perturbed logits of the two actions, as the agent has them
            from rlkit.learn.gumbel import gumbel_from_uniform

            index = np.flatnonzero(~same)
            observed = take(batch, len(got))
            logits = (agent.noise_logits(observed) if masks is None else
                      agent.noise_logits(observed, masks))  # fmt: skip
            z = (logits + gumbel_from_uniform(noise))[index]
            offsets = _logit_offsets(space, got[index], want[index])
            gap = np.abs(np.take_along_axis(z, offsets[0], -1)
                         - np.take_along_axis(z, offsets[1], -1)).max(axis=-1)  # fmt: skip
            scale = np.maximum(1.0, np.abs(z).max(axis=-1))
            result.ties = int((gap <= tolerance * scale).sum())
            result.largest_difference = float(gap.max())
        result.passed = quantized or result.equal + result.ties == result.observations
        return result
    return array_agreement(result, got, want, space, tolerance, quantized)


def _logit_offsets(space, got: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns of the logits of actions ``got`` and ``want`` (``[K]`` Discrete, ``[K,
    *shape]`` MultiDiscrete): ``[K, 1]`` or ``[K, D]`` each."""
    if isinstance(space, spaces.Discrete):
        start = int(space.start)
        return (got - start)[:, None], (want - start)[:, None]
    nvec = np.asarray(space.nvec).reshape(-1)
    first = np.concatenate([[0], np.cumsum(nvec)[:-1]])
    starts = np.asarray(space.start).reshape(-1)
    k = len(got)
    return (got.reshape(k, -1) - starts + first, want.reshape(k, -1) - starts + first)


def describe_sample(result: CheckResult, exported) -> str:
    """One line: the ``sample`` signature against the agent's draw for the same noise."""
    what = "TFLite model's" if exported.format == "tflite" else "SavedModel's"
    n = result.observations
    ties = f", {result.ties} differ on ties" if result.ties else ""
    return (f"the {what} sample equals the agent's draw for the same noise on {result.equal} of "
            f"{n} ({result.equal / max(n, 1):.2%}){ties}, largest difference "
            f"{result.largest_difference:.3g}")  # fmt: skip


def describe(result: CheckResult, exported, discrete: bool) -> str:
    """One line: what was checked and what was found."""
    what = "TFLite model's" if exported.format == "tflite" else "SavedModel's"
    n, sources = result.observations, " and ".join(result.sources)
    head = f"checked {n} observations ({sources}): the {what} actions"
    share = f"{result.equal / max(n, 1):.2%}"
    if discrete:
        ties = f", {result.ties} differ on ties" if result.ties else ""
        line = f"{head} equal the agent's greedy act on {result.equal} of {n} ({share}){ties}"
        if result.value_difference is not None:
            line += f"; largest {result.value_kind} difference {result.value_difference:.3g}"
        if result.largest_difference:
            line += f" (gap where the actions differ up to {result.largest_difference:.3g})"
        return line
    return (f"{head} equal the agent's greedy act bit for bit on {result.equal} of {n} "
            f"({share}), largest difference {result.largest_difference:.3g}")  # fmt: skip


def take(batch, count: int):
    """The first ``count`` rows of a batch."""
    if isinstance(batch, (dict, tuple)):
        return take_rows(batch, list(range(min(count, rows(batch)))))
    return batch[:count]
