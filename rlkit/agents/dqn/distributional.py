"""C51, QR-DQN and Rainbow: DQN's agent with a distributional head
(:mod:`rlkit.agents.dqn.heads`).

Everything but the head is DQN's: the replay (prioritized and n-step included), the update
pipeline, the compiled blocks of updates, target copies, epsilon-greedy acting (on each
action's expected value). The loss is the head's, on the value-learning seam
(:class:`~rlkit.learn.value_losses.CategoricalLoss`, :class:`~rlkit.learn.value_losses.
QuantileLoss`). A network of one's own (``q_network``) must output ``[B, A * N]``
(action-major: action ``a``'s ``N`` values are columns ``a*N .. a*N + N - 1``).
"""

from __future__ import annotations

from rlkit.agents.dqn.agent import DQN
from rlkit.agents.dqn.distributional_config import C51Config, QRDQNConfig, RainbowConfig
from rlkit.agents.dqn.heads import CategoricalHead, QuantileHead


class C51(DQN):
    """C51 (Bellemare et al. 2017): :class:`~rlkit.agents.dqn.agent.DQN` learning a categorical
    distribution of the return per action (``num_atoms`` on ``[v_min, v_max]``)."""

    name = "c51"
    config_class = C51Config

    def value_head(self) -> CategoricalHead:
        cfg = self.config
        return CategoricalHead(cfg.num_atoms, cfg.v_min, cfg.v_max)


class QRDQN(DQN):
    """QR-DQN (Dabney et al. 2018a): :class:`~rlkit.agents.dqn.agent.DQN` learning
    ``num_quantiles`` quantiles of the return per action (quantile Huber loss, ``kappa``)."""

    name = "qrdqn"
    config_class = QRDQNConfig

    def value_head(self) -> QuantileHead:
        return QuantileHead(self.config.num_quantiles, self.config.kappa)


class Rainbow(C51):
    """Rainbow (Hessel et al. 2018): :class:`C51` with prioritized replay, n-step returns,
    a dueling head, Double DQN and noisy networks, all on by its config's defaults."""

    name = "rainbow"
    config_class = RainbowConfig
