"""The replay options DQN and DDPG share: n-step returns and prioritized replay.

Each function is one config field (the agents' config dataclasses call them), written
once so that both agents spell, default and check them alike: option names as Dopamine
and the papers spell them (``n_step`` is Dopamine's ``update_horizon``).
"""

from __future__ import annotations

from typing import Any

from rlkit.config.options import non_negative, option, positive, unit_interval


def n_step_option(default: int = 1) -> Any:
    return option(
        default,
        "n-step returns: rewards summed over up to n steps of the episode, then the bootstrap "
        "discounted by gamma^n (Dopamine's update_horizon; 1: the one-step target)",
        positive,
    )


def prioritized_option(default: bool = False) -> Any:
    return option(
        default,
        "proportional prioritized replay (Schaul et al. 2016): sampled in proportion to "
        "(|TD error| + priority_epsilon)^priority_exponent, importance-weighted",
    )


def priority_exponent_option(default: float = 0.6) -> Any:
    return option(
        default,
        "prioritized replay's alpha: how much the TD error shapes sampling (0: uniform; "
        "Schaul et al.'s proportional 0.6, Dopamine 0.5)",
        non_negative,
    )


def importance_exponent_option(default: float = 0.4) -> Any:
    return option(
        default,
        "prioritized replay's beta at the start: importance weights (N P)^-beta / max "
        "(Schaul et al. 0.4 annealed to 1; Dopamine 0.5 fixed)",
        unit_interval,
    )


def importance_anneal_steps_option() -> Any:
    return option(
        0,
        "steps after learning_starts over which beta rises linearly to 1 (0: beta fixed)",
        non_negative,
    )


def priority_epsilon_option() -> Any:
    return option(1e-6, "added to |TD error| so that no transition has priority 0", positive)
