"""REINFORCE hyper-parameters and presets (no TensorFlow import: the CLI checks them cheaply)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from rlkit.config.options import (
    non_negative,
    one_of,
    option,
    positive,
    positive_sizes,
    unit_interval,
    validate,
)
from rlkit.learn.optimizers import OPTIMIZERS

PRESETS: dict[str, dict[str, Any]] = {
    "none": {},
    # the discrete policy-gradient source's bandit: two hidden layers of 5 ReLUs, Adam at
    # 0.001, the raw reward as the weight of the log-probability, one update per pull
    "bandit": {
        "hidden_sizes": (5, 5),
        "learning_rate": 1e-3,
        "baseline": False,
        "normalize_returns": False,
        "episodes_per_update": 1,
        "entropy_coef": 0.0,
        "max_grad_norm": 0.0,
    },
}


@dataclass(frozen=True)
class ReinforceConfig:
    """REINFORCE (Williams 1992): ascend ``sum_t log pi(a_t|s_t) * G_t`` episode by episode.

    The defaults solve CartPole-v1 within 1,000 episodes (see
    benchmarks/reinforce_cartpole_seeds.py). With ``preset=auto`` an environment whose
    observation never changes (a Box with low == high: a bandit) gets the ``bandit``
    preset, the source's setup. A preset only replaces keys still at their default.
    """

    preset: str = option(
        "auto",
        "auto (bandit when the observation is constant, else none) | none | bandit; "
        "a preset only changes keys left at their default",
        one_of("auto", *PRESETS),
    )
    hidden_sizes: tuple[int, ...] = option(
        (32, 32), "hidden ReLU layer sizes of the policy network", positive_sizes
    )
    learning_rate: float = option(3e-3, "policy optimizer learning rate", positive)
    optimizer: str = option("adam", " | ".join(OPTIMIZERS), one_of(*OPTIMIZERS))
    gamma: float = option(0.99, "discount factor of the returns-to-go", unit_interval)
    normalize_returns: bool = option(
        True,
        "scale the weights of the log-probabilities (returns, or advantages with the "
        "baseline) to zero mean and unit std over each update batch",
    )
    baseline: bool = option(
        True,
        "subtract a learned state value V(s) from the returns (its own network and "
        "optimizer); truncated episodes then bootstrap from V(s_T)",
    )
    value_hidden_sizes: tuple[int, ...] = option(
        (32, 32), "hidden ReLU layer sizes of the value network (baseline)", positive_sizes
    )
    value_learning_rate: float = option(1e-2, "value optimizer learning rate (baseline)", positive)
    episodes_per_update: int = option(1, "finished episodes collected before each update", positive)
    buffer_size: int = option(
        10_000,
        "episode store capacity (transitions); when it fills mid-episode an update runs on "
        "what it holds and the episode continues into the next batch",
        positive,
    )
    entropy_coef: float = option(
        0.0, "weight of an entropy bonus added to the pseudo-objective", non_negative
    )
    max_grad_norm: float = option(
        0.0, "clip each network's gradients by global norm (0 disables)", non_negative
    )
    log_std_init: float = option(
        -0.5, "initial log standard deviation of the Gaussian policy (Box actions only)"
    )
    policy: str = option(
        "",
        "your own policy: an importable builder 'package.module:function' taking "
        "(observation_space, action_space) and returning a keras.Model [B, obs] -> [B, n] "
        "logits (Discrete) or [B, action] Gaussian mean in the box scaled to [-1, 1] (Box; "
        "the log std stays rlkit's); empty: rlkit's MLP from hidden_sizes",
    )
    baseline_network: str = option(
        "",
        "your own value baseline (with baseline = true): an importable builder returning a "
        "keras.Model [B, obs] -> [B, 1] or [B]; empty: rlkit's MLP from value_hidden_sizes",
    )

    def cross_check(self) -> str | None:
        if self.baseline_network and not self.baseline:
            return "baseline_network needs baseline = true (a value baseline to build)"
        return None


def check_spaces(observation_space, action_space, env_id: str = "the environment") -> None:
    """REINFORCE needs Discrete or bounded Box actions and Box or Discrete observations, or a
    Dict or Tuple of them (with a policy, and a baseline when it is on, of one's own: the
    agent refuses its built-in networks for them)."""
    from gymnasium import spaces

    from rlkit.core.errors import UsageError
    from rlkit.core.spaces import observation_format, require_box_actions

    if not isinstance(action_space, spaces.Discrete):
        if not isinstance(action_space, spaces.Box):
            raise UsageError(
                f"reinforce needs a Discrete or Box action space, but {env_id} has {action_space}"
            )
        require_box_actions(action_space, "reinforce", env_id)
    observation_format(observation_space, "reinforce", structured=True)


def is_constant_observation(observation_space) -> bool:
    """True for a Box whose low equals its high everywhere: the state never changes (a bandit)."""
    import numpy as np
    from gymnasium import spaces

    return (
        isinstance(observation_space, spaces.Box)
        and bool(np.all(np.isfinite(observation_space.low)))
        and bool(np.array_equal(observation_space.low, observation_space.high))
    )


def resolve_preset(config: ReinforceConfig, observation_space) -> ReinforceConfig:
    """The config with its preset applied and ``preset`` set to the one used.

    ``auto`` picks ``bandit`` for a constant observation (see
    :func:`is_constant_observation`), else ``none``. The preset's values replace only
    the keys that still hold their class default, so ``--set`` wins over a preset.
    Idempotent: resolving a resolved config changes nothing.
    """
    name = config.preset
    if name == "auto":
        name = "bandit" if is_constant_observation(observation_space) else "none"
    defaults = ReinforceConfig()
    changes: dict[str, Any] = {"preset": name}
    for key, value in PRESETS[name].items():
        if key == "baseline" and config.baseline_network:
            continue  # a baseline network of one's own asks for the baseline
        if getattr(config, key) == getattr(defaults, key):
            changes[key] = value
    resolved = dataclasses.replace(config, **changes)
    validate(resolved)
    return resolved
