"""Munchausen DQN (Vieillard, Pietquin and Geist 2020): DQN with a soft, self-rewarding target.

Everything but the loss is DQN's (replay, prioritized and n-step included, the compiled
blocks of updates, target copies, epsilon-greedy acting on ``Q``). The loss is
:class:`~rlkit.learn.value_losses.MunchausenLoss` on the value-learning seam: it regresses
``Q(s, a)`` on ``r + alpha clip(tau log pi(a|s), l0, 0) + pcont sum_a' pi(a'|s') (q(s', a') -
tau log pi(a'|s'))`` with ``pi = softmax(q_target / tau)``, the learner handing it the target
network's values at ``s`` as well as at ``s'``. Named ``mdqn`` after the paper's M-DQN (a
command-line name without a hyphen, as ``qrdqn``).
"""

from __future__ import annotations

from rlkit.agents.dqn.agent import DQN
from rlkit.agents.dqn.heads import ScalarHead, given_loss
from rlkit.agents.dqn.mdqn_config import MDQNConfig
from rlkit.learn.value_losses import MunchausenLoss, ValueLoss


class MunchausenHead(ScalarHead):
    """One value per action, learnt by the Munchausen regression (Huber's with
    ``clip_delta``, or the squared error for ``loss = "mse"``)."""

    def __init__(self, config: MDQNConfig) -> None:
        self.config = config

    def value_loss(self, name: str, clip_delta: float, given: ValueLoss | None) -> ValueLoss:
        cfg = self.config
        return given_loss(name, given) or MunchausenLoss(
            cfg.tau, cfg.alpha, cfg.clip_value_min, clip_delta if name == "huber" else 0.0
        )


class MDQN(DQN):
    """M-DQN: :class:`~rlkit.agents.dqn.agent.DQN` regressing on the Munchausen target (``tau``,
    ``alpha``, ``clip_value_min``: the paper's 0.03, 0.9, -1)."""

    name = "mdqn"
    config_class = MDQNConfig

    def value_head(self) -> MunchausenHead:
        return MunchausenHead(self.config)
