"""Networks bounded by the memory available, before anything is built (no TensorFlow).

What an agent's networks will take in memory, bounded before anything is built.

``--set num_atoms=100000000`` (or ``hidden_sizes=100000,100000``) asks for networks of
billions of weights: TensorFlow would fail after seconds with a ``ResourceExhaustedError``
traceback. :func:`check_network_memory` estimates the bytes from the config's size keys
and the spaces (no TensorFlow: :func:`rlkit.run.plan.plan` calls it before TensorFlow
loads, :class:`rlkit.agents.base.Agent` again before it builds) and refuses, in one line
naming the key, what does not fit in the memory available here.

The estimate counts each Dense stack a config's size keys describe (``hidden_sizes`` into
``A x num_atoms`` or ``A x num_quantiles`` outputs, an actor's, a critic's, a baseline's,
IQN's embedding) as float32 weights :data:`COPIES` times over (the online network, its
target, Adam's two slots and the gradients), and one minibatch's activations through them
(IQN: for each of its fraction samples) three times (forward, target, backward). A
convolutional torso is counted as a Dense layer on the flat observation, which is more than
it takes: the bound refuses only what cannot fit.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import Any

from rlkit.core.errors import UsageError

#: float32 weights, each kept this many times: online, target, Adam's m and v, gradient
COPIES = 5
#: each activation kept this many times: online and target forward passes, backward
ACTIVATION_COPIES = 3
BYTES = 4

#: config keys that set the networks' sizes (those a config has are estimated)
SIZE_KEYS = (
    "hidden_sizes", "actor_hidden_sizes", "critic_hidden_sizes", "value_hidden_sizes",
    "num_atoms", "num_quantiles", "quantile_embedding_dim", "num_tau_samples",
    "num_tau_prime_samples", "num_quantile_samples", "batch_size",
)  # fmt: skip


def available_memory() -> int | None:
    """Bytes of memory this process can still take: the kernel's ``MemAvailable``, or less
    where a cgroup (a container) limits it; None where neither says."""
    found = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text().strip()
        if limit != "max":
            found.append(max(int(limit) - int(used), 0))
    except (OSError, ValueError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            return None
    return min(found)


def _dense(widths: list[int]) -> int:
    """Weights and biases of Dense layers through ``widths``."""
    return sum(a * b + b for a, b in zip(widths, widths[1:], strict=False))


def _flat(space: Any) -> int:
    """A space's size as a flat vector (a Discrete space: one-hot); 0 when unknown."""
    try:
        from gymnasium.spaces import flatdim

        return int(flatdim(space))
    except Exception:  # (a space gymnasium cannot flatten: not estimated)
        return 0


def network_bytes(config: Any, observation_space: Any, action_space: Any) -> int:
    """Bytes the networks ``config`` describes take to train on these spaces (the module's
    docstring says what is counted)."""
    obs = _flat(observation_space)
    n = getattr(action_space, "n", None)
    actions = int(n) if n is not None else _flat(action_space)
    atoms = int(getattr(config, "num_atoms", 0) or getattr(config, "num_quantiles", 0) or 1)
    samples = max(
        int(getattr(config, key, 0) or 0)
        for key in ("num_tau_samples", "num_tau_prime_samples", "num_quantile_samples")
    )
    rows = int(getattr(config, "batch_size", 1) or 1) * max(samples, 1)
    weights = activations = 0
    stacks = []
    hidden = getattr(config, "hidden_sizes", None)
    if hidden is not None:
        stacks.append([obs, *hidden, actions * atoms])
        last = hidden[-1] if hidden else obs
        if getattr(config, "dueling", False):
            weights += last * atoms + atoms  # the value stream
        weights += int(getattr(config, "quantile_embedding_dim", 0) or 0) * last
    for key, into, out in (
        ("actor_hidden_sizes", obs, 2 * actions),
        ("critic_hidden_sizes", obs + actions, actions),
        ("value_hidden_sizes", obs, 1),
    ):
        sizes = getattr(config, key, None)
        if sizes is not None:
            stacks.append([into, *sizes, out])
    for widths in stacks:
        weights += _dense(widths)
        activations += rows * sum(widths)
    return BYTES * (COPIES * weights + ACTIVATION_COPIES * activations)


def check_network_memory(config: Any, observation_space: Any, action_space: Any,
                         agent: str) -> None:  # fmt: skip
    """UsageError in one line when the networks ``config`` describes need more memory than
    is available here (:func:`available_memory`), naming the size key to lower: the one
    whose default would shrink the estimate most."""
    need = network_bytes(config, observation_space, action_space)
    free = available_memory()
    if free is None or need <= free:
        return
    culprit, value = _culprit(config, observation_space, action_space, need)
    what = f"{culprit}={value}" if culprit else "this observation space"
    lower = f"lower {culprit}" if culprit else "use a smaller observation"
    raise UsageError(
        f"{what} makes {agent}'s networks need ~{_size(need)} (weights with their target, "
        f"Adam's slots and gradients, and a minibatch's activations), more than the "
        f"{_size(free)} of memory available here: {lower}"
    )


def _culprit(config: Any, obs_space: Any, action_space: Any, need: int) -> tuple[str, str]:
    """The size key whose default value shrinks the estimate most, and its value as
    written; ``("", "")`` when none does (a huge observation)."""
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        return "", ""
    defaults = {f.name: f.default for f in dataclasses.fields(config)}
    best, smallest = "", need
    for key in SIZE_KEYS:
        if key not in defaults or defaults[key] is dataclasses.MISSING:
            continue
        if getattr(config, key) == defaults[key]:
            continue
        shrunk = network_bytes(
            dataclasses.replace(config, **{key: defaults[key]}), obs_space, action_space
        )
        if shrunk < smallest:
            best, smallest = key, shrunk
    if not best:
        return "", ""
    value = getattr(config, best)
    shown = ",".join(map(str, value)) if isinstance(value, tuple | list) else f"{value:,}"
    return best, shown


def _size(nbytes: int) -> str:
    """``"256 GB"``, ``"1.5 GB"``, ``"800 MB"``."""
    if nbytes >= 1e12:
        return f"{nbytes / 1e12:,.1f} TB"
    if nbytes >= 1e9:
        return f"{nbytes / 1e9:.1f} GB" if nbytes < 1e10 else f"{math.floor(nbytes / 1e9):,} GB"
    return f"{nbytes / 1e6:.0f} MB"
