"""IQN (Dabney et al. 2018b): DQN's agent learning the return's quantile function.

The network (:class:`~rlkit.networks.iqn.IQNNetwork`) takes the observation and sampled
fractions ``tau`` and gives ``Z_tau(s, a)`` ``[B, N, A]``; the learner
(:class:`~rlkit.agents.iqn_learner.IQNLearner`) draws ``N``, ``N'`` and ``K`` fractions per
example and update; acting is epsilon-greedy on the mean over ``K`` fractions. Everything
else is DQN's: the replay (prioritized and n-step included), the compiled blocks of updates,
target copies, schedules. A network of one's own (``q_network``) is the **torso**: it must
give features ``[B, D]``, which the fraction embedding multiplies (refused in one line
naming the shape otherwise).
"""

from __future__ import annotations

from rlkit.agents.dqn import DQN
from rlkit.agents.iqn_config import IQNConfig
from rlkit.agents.iqn_learner import IQNLearner


class IQN(DQN):
    """IQN: :class:`~rlkit.agents.dqn.DQN` with implicit quantiles (``num_tau_samples`` N,
    ``num_tau_prime_samples`` N', ``num_quantile_samples`` K, ``quantile_embedding_dim``,
    ``kappa``)."""

    name = "iqn"
    config_class = IQNConfig
    accepts_structured = False
    export_refusal = (
        "iqn cannot be exported yet: its greedy act averages K freshly sampled fractions, "
        "which an export could not check action for action (export dqn, c51 or qrdqn)"
    )
    learner: IQNLearner

    def make_learner(self, seed: int) -> IQNLearner:
        return IQNLearner(self.config, self.obs_format, self.observation_space,
                          self.action_space, seed, self._q_network)  # fmt: skip

    def python_networks(self) -> dict:
        return {}
