"""Munchausen DQN's hyper-parameters: DQN's, plus the Munchausen term (no TensorFlow).

Option names as the authors' code spells them (``google-research/munchausen_rl``, and
Revisiting Rainbow's gin files: ``tau``, ``alpha``, ``clip_value_min``), defaults the
paper's (Vieillard, Pietquin and Geist 2020, Table 3: tau 0.03, alpha 0.9, l0 -1). The
regression is Huber's (the paper's) or the squared error, on the batch mean.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlkit.agents.dqn.config import DQNConfig, check_spaces, describe_schedules
from rlkit.agents.dqn.distributional_config import mean_reduction_option
from rlkit.config.options import one_of, option, unit_interval

__all__ = ["MDQNConfig", "check_spaces", "describe_schedules"]


def positive_temperature(value: float) -> str | None:
    return None if value > 0 else "must be > 0 (the entropy temperature)"


def negative(value: float) -> str | None:
    return None if value < 0 else "must be < 0 (the lower clip of tau log pi)"


@dataclass(frozen=True)
class MDQNConfig(DQNConfig):
    """M-DQN: DQN regressing on ``r + alpha clip(tau log pi(a|s), l0, 0) + gamma sum_a'
    pi(a'|s') (q(s', a') - tau log pi(a'|s'))`` with ``pi = softmax(q_target / tau)``."""

    tau: float = option(0.03, "entropy temperature of pi = softmax(q / tau) (M-DQN: 0.03)",
                        positive_temperature)  # fmt: skip
    alpha: float = option(0.9, "Munchausen scale of tau log pi(a|s) in [0, 1] (M-DQN: 0.9)",
                          unit_interval)  # fmt: skip
    clip_value_min: float = option(-1.0, "l0: the lower clip of tau log pi(a|s) (M-DQN: -1)",
                                   negative)  # fmt: skip
    loss: str = option(
        "huber",
        "huber (the paper's, threshold clip_delta) | mse, on y - Q(s, a)",
        one_of("huber", "mse", "dqn3"),
    )
    reduction: str = mean_reduction_option()
    double_dqn: bool = option(
        False, "not used by M-DQN: its soft target has no argmax (must stay false)"
    )

    def cross_check(self) -> str | None:
        if self.loss == "dqn3":
            return "mdqn regresses with huber or mse; DQN3.0's injected delta is dqn's own loss"
        if self.double_dqn:
            return (
                "mdqn's target is a softmax expectation with no argmax: double_dqn does not "
                "apply (set it false)"
            )
        return super().cross_check()
