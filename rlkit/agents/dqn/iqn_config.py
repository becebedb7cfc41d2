"""IQN's hyper-parameters: DQN's, plus its sampled fractions (no TensorFlow).

Option names as Dopamine's ``JaxImplicitQuantileAgent`` spells them (``num_tau_samples`` N,
``num_tau_prime_samples`` N', ``num_quantile_samples`` K, ``quantile_embedding_dim`` n,
``kappa``); defaults the paper's (Dabney et al. 2018b: N = N' = 64, K = 32, n = 64, kappa 1)
and Dopamine's (no Double DQN). Every other key is DQN's, with the batch mean.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlkit.agents.dqn.config import (
    BUILT_IN_TORSOS,
    DQNConfig,
    check_spaces,
    describe_schedules,
)
from rlkit.agents.dqn.distributional_config import mean_reduction_option, own_loss_option
from rlkit.config.options import non_negative, option, positive

__all__ = ["IQNConfig", "check_spaces", "describe_schedules"]


@dataclass(frozen=True)
class IQNConfig(DQNConfig):
    """IQN (Dabney et al. 2018b): values at fractions ``tau ~ U(0, 1)`` sampled anew for each
    example and update, a cosine embedding of ``tau`` multiplied into the torso's features;
    the quantile Huber loss over the ``N x N'`` pairs; acting on the mean over ``K``."""

    num_tau_samples: int = option(64, "N: fractions tau of the online values in the loss",
                                  positive)  # fmt: skip
    num_tau_prime_samples: int = option(
        64, "N': fractions tau' of the target values in the loss", positive
    )
    num_quantile_samples: int = option(
        32,
        "K: fractions whose mean value is Q(s, a) for acting and the bootstrap action",
        positive,
    )
    quantile_embedding_dim: int = option(
        64, "n: cosines cos(pi i tau), i = 1..n, embedding each fraction", positive
    )
    kappa: float = option(1.0, "the quantile Huber loss's threshold (0: the quantile loss)",
                          non_negative)  # fmt: skip
    double_dqn: bool = option(
        False, "the bootstrap action by the online net's K-sample mean (Dopamine: false)"
    )
    loss: str = own_loss_option("quantile", "the quantile Huber loss over the N x N' pairs")
    reduction: str = mean_reduction_option()
    q_network: str = option(
        "",
        "your own torso: an importable builder 'package.module:function' taking "
        "(observation_space, action_space) and returning a keras.Model giving features "
        "[batch, D]; IQN's embedding and head go on top (empty: rlkit's torso)",
    )

    def cross_check(self) -> str | None:
        if self.loss != "quantile":
            return (
                f"iqn learns quantiles with its own loss (quantile); loss={self.loss} does not "
                "combine with it (DQN3.0's injected delta, Huber and MSE are for one value per "
                "action: use rlkit train dqn)"
            )
        if self.noisy:
            return "iqn takes no noisy networks here (set noisy=false): epsilon explores"
        if self.torso not in BUILT_IN_TORSOS:
            return (
                "iqn's torso of your own is its q_network (--set q_network=module:function, "
                "or IQN(..., q_network=build)): its fraction embedding goes on it"
            )
        return super().cross_check()
