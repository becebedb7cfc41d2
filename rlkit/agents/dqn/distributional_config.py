"""C51's and QR-DQN's hyper-parameters: DQN's, plus their distribution (no TensorFlow).

Option names as the papers and Dopamine spell them (``num_atoms``, ``v_min``, ``v_max``,
``num_quantiles``, ``kappa``). Every other key is DQN's (:class:`~rlkit.agents.dqn.config.
DQNConfig`), with the batch-mean reduction the papers and Dopamine use.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlkit.agents.dqn.config import DQNConfig, check_spaces, describe_schedules
from rlkit.config.options import non_negative, one_of, option, unit_interval
from rlkit.config.replay_options import (
    importance_exponent_option,
    n_step_option,
    prioritized_option,
    priority_exponent_option,
)

__all__ = ["C51Config", "QRDQNConfig", "RainbowConfig", "check_spaces", "describe_schedules"]


def at_least_two(value: int) -> str | None:
    return None if value >= 2 else "must be at least 2"


def own_loss_option(own: str, description: str):
    """The ``loss`` key of a distributional config: its own loss (the others are refused by
    its ``cross_check`` in a line that says why)."""
    return option(own, f"{own}: {description} (the only loss of this agent)",
                  one_of(own, "dqn3", "huber", "mse"))  # fmt: skip


def mean_reduction_option():
    """The ``reduction`` key, the batch mean by default (the papers', Dopamine's)."""
    return option("mean", "sum or mean of the per-example losses over the minibatch",
                  one_of("sum", "mean"))  # fmt: skip


def _refuse_other_losses(name: str, own: str, loss: str) -> str | None:
    if loss != own:
        return (
            f"{name} learns a distribution with its own loss ({own}); loss={loss} does not "
            f"combine with it (DQN3.0's injected delta, Huber and MSE are for one value per "
            f"action: use rlkit train dqn)"
        )
    return None


@dataclass(frozen=True)
class C51Config(DQNConfig):
    """C51 (Bellemare et al. 2017): a categorical distribution over ``num_atoms`` atoms on
    ``[v_min, v_max]`` per action, learnt by the cross-entropy to the projected target."""

    _agent = "c51"  # the name messages give (not a field: no annotation)

    num_atoms: int = option(51, "atoms of each action's distribution (C51: 51)", at_least_two)
    v_min: float = option(-10.0, "the smallest atom (C51: -10)")
    v_max: float = option(10.0, "the largest atom (C51: 10)")
    loss: str = own_loss_option("categorical", "the cross-entropy to the projected target")
    reduction: str = mean_reduction_option()

    def cross_check(self) -> str | None:
        if not self.v_min < self.v_max:
            return f"v_min ({self.v_min:g}) must be below v_max ({self.v_max:g})"
        return _refuse_other_losses(self._agent, "categorical", self.loss) or super().cross_check()


@dataclass(frozen=True)
class QRDQNConfig(DQNConfig):
    """QR-DQN (Dabney et al. 2018a): ``num_quantiles`` values per action at the fractions
    ``(2i + 1) / 2N``, learnt by the quantile Huber loss with threshold ``kappa``."""

    _agent = "qrdqn"

    num_quantiles: int = option(
        200, "quantiles per action (QR-DQN: 200; rl-zoo and Dopamine's MinAtar 200)", at_least_two
    )
    kappa: float = option(1.0, "the quantile Huber loss's threshold (0: the quantile loss)",
                          non_negative)  # fmt: skip
    loss: str = own_loss_option("quantile", "the quantile Huber loss")
    reduction: str = mean_reduction_option()

    def cross_check(self) -> str | None:
        return _refuse_other_losses(self._agent, "quantile", self.loss) or super().cross_check()


@dataclass(frozen=True)
class RainbowConfig(C51Config):
    """Rainbow (Hessel et al. 2018): C51 with prioritized replay, 3-step returns, a dueling
    head, Double DQN's bootstrap and noisy networks (no epsilon): each of its parts is a
    key of its own, on here. Prioritized replay as Dopamine's Rainbow sets it (alpha 0.5,
    beta 0.5 fixed; the paper anneals beta from 0.4 to 1: importance_anneal_steps)."""

    _agent = "rainbow"

    prioritized: bool = prioritized_option(True)
    priority_exponent: float = priority_exponent_option(0.5)
    importance_exponent: float = importance_exponent_option(0.5)
    n_step: int = n_step_option(3)
    dueling: bool = option(True, "dueling head: Q = V + A - mean(A), per atom")
    double_dqn: bool = option(True, "Double DQN's bootstrap action (the online net's choice)")
    noisy: bool = option(True, "noisy networks (Fortunato et al. 2018) instead of epsilon")
    eps_start: float = option(0.0, "initial exploration epsilon (0: the noise explores)",
                              unit_interval)  # fmt: skip
    eps_end: float = option(0.0, "final exploration epsilon (0: the noise explores)",
                            unit_interval)  # fmt: skip

    def cross_check(self) -> str | None:
        """Without noisy networks something else must explore: epsilon (the mirror of
        DQN's noisy networks with an epsilon, refused there)."""
        if not self.noisy and self.eps_start == 0 and self.eps_end == 0:
            return (
                "noisy=false leaves rainbow nothing to explore with (its epsilon is 0 -> 0: "
                "the noise explored); set eps_start and eps_end, e.g. eps_start=1 "
                "eps_end=0.01 as Dopamine's Rainbow (eps_anneal_steps or eps_anneal_fraction: "
                "over how long)"
            )
        return super().cross_check()
