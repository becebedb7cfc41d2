"""IQN (Dabney et al. 2018b): DQN's agent learning the return's quantile function.

The network (:class:`~rlkit.networks.iqn.IQNNetwork`) takes the observation and sampled
fractions ``tau`` and gives ``Z_tau(s, a)`` ``[B, N, A]``; the learner
(:class:`~rlkit.agents.dqn.iqn_learner.IQNLearner`) draws ``N``, ``N'`` and ``K`` fractions per
example and update; acting is epsilon-greedy on the mean over ``K`` fresh fractions; an export
acts greedily on ``K`` fixed ones, the midpoints ``(2k + 1) / 2K`` (recorded in its
metadata). Everything else is DQN's: the replay (prioritized and n-step included), the
compiled blocks of updates, target copies, schedules. A network of one's own (``q_network``)
is the **torso**: it must give features ``[B, D]``, which the fraction embedding multiplies
(refused in one line naming the shape otherwise).
"""

from __future__ import annotations

import numpy as np

from rlkit.agents.dqn.agent import DQN
from rlkit.agents.dqn.iqn_config import IQNConfig
from rlkit.agents.dqn.iqn_learner import IQNLearner


class IQN(DQN):
    """IQN: :class:`~rlkit.agents.dqn.agent.DQN` with implicit quantiles (``num_tau_samples`` N,
    ``num_tau_prime_samples`` N', ``num_quantile_samples`` K, ``quantile_embedding_dim``,
    ``kappa``)."""

    name = "iqn"
    config_class = IQNConfig
    accepts_structured = False
    learner: IQNLearner

    def make_learner(self, seed: int) -> IQNLearner:
        return IQNLearner(self.config, self.obs_format, self.observation_space,
                          self.action_space, seed, self._q_network)  # fmt: skip

    def python_networks(self) -> dict:
        return {}

    def export_fractions(self) -> np.ndarray:
        """The ``K`` fixed fractions an export of this agent acts on: the midpoints
        ``(2k + 1) / 2K`` (:meth:`~rlkit.agents.dqn.iqn_learner.IQNLearner.export_fractions`)."""
        return self.learner.export_fractions()

    def export_q_values(self, obs) -> np.ndarray:
        """``Q(s, .)`` as an export computes it, by this agent's own network: the mean of
        ``Z`` over :meth:`export_fractions` (``[A]``, or ``[N, A]`` for a batch), drawing
        nothing; what the export's check compares the export with. Acting, training and
        evaluation keep their ``K`` fresh fractions."""
        x = np.asarray(self.encode(obs))  # (IQN takes no Dict or Tuple observations)
        single = np.ndim(x) == len(self.obs_format.shape)
        values = self.learner.values_at(x[None] if single else x, self.export_fractions())
        return values[0] if single else values
