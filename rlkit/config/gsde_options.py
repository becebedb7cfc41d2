"""The gSDE keys SAC, PPO and A2C share, named as SB3 and rl-zoo name them (no TensorFlow
import; the formulas are :mod:`rlkit.learn.gsde`'s)."""

from __future__ import annotations

from typing import Any

from rlkit.config.options import option

#: the refusal of use_sde with a policy network of one's own
OWN_NETWORK = ("use_sde: gSDE reads the last hidden layer of rlkit's own policy MLP; leave actor "
               "(and torso) out, or use_sde")  # fmt: skip


def sample_freq(value: Any) -> str | None:
    """``sde_sample_freq``: -1 or a count of at least 1."""
    if value == -1 or value >= 1:
        return None
    return "must be -1 (a new noise matrix only when a rollout starts) or >= 1 (every n steps)"


def use_sde_option() -> Any:
    return option(
        False,
        "gSDE exploration (Raffin et al. 2021, SB3's use_sde): the noise is a random linear map "
        "of the policy's last hidden layer, the map held for sde_sample_freq steps (Box actions, "
        "rlkit's MLP policy; the Python loop)",
    )


def sde_sample_freq_option() -> Any:
    return option(
        -1,
        "gSDE: draw new exploration matrices every this many steps; -1: only when a rollout "
        "(PPO, A2C) or a train_freq block of collection (SAC) starts, as SB3",
        sample_freq,
    )


def full_std_option() -> Any:
    return option(
        True, "gSDE: one log std per entry of the [latent, action] exploration matrix (SB3's "
        "full_std); false: one per latent unit"
    )  # fmt: skip


def use_expln_option() -> Any:
    return option(
        False, "gSDE: sigma = expln(log_std) (exp below 0, log1p(x) + 1 above: the paper's) "
        "instead of exp (SB3's use_expln)"
    )  # fmt: skip


def learn_features_option(default: bool, whose: str) -> Any:
    return option(
        default, f"gSDE: the log-probability's gradient reaches the policy's last hidden layer "
        f"through the variance (SB3's learn_features: {whose})"
    )  # fmt: skip
