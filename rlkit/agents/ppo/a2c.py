"""A2C (Mnih et al. 2016, synchronous; SB3's ``A2C``) as PPO's variant: the same acting
rule, rollout and learner, run with one epoch of one minibatch holding the whole rollout.

Why that is A2C: PPO's first minibatch step after a rollout evaluates ``log pi(a|s)`` with
the very weights that gave ``log pi_old``, so its ratio ``r = exp(log pi - log pi_old)`` is
1 and ``clip(r, 1 - eps, 1 + eps) = r``; the clipped surrogate ``-min(r A, clip(r) A)``
then has the gradient ``-A r grad log pi = -A grad log pi``, the policy gradient of SB3's
A2C loss ``-(A log pi).mean()``. With one epoch and one minibatch that first step is the
only one; the value loss (``vf_coef`` times the MSE to the returns), the entropy term, the
global-norm clip and the optimizer step are the same in both. ``tests/unit/agents/
test_a2c.py`` checks the gradient fact and one whole update against SB3's ``A2C.train``
written out. The approximate KL and clip fraction a run logs are 0 by construction.
"""

from __future__ import annotations

from rlkit.agents.ppo import spaces as ppo_spaces
from rlkit.agents.ppo.agent import PPO
from rlkit.agents.ppo.config import A2CConfig, PPOConfig

__all__ = ["A2C"]


class A2C(PPO):
    """A2C for Discrete or Box actions: :class:`PPO` built from :meth:`A2CConfig.ppo`.

    Args:
        observation_space, action_space, seed: as :class:`PPO`'s.
        config: an :class:`A2CConfig`; keyword arguments override its keys.

    Attributes: those of :class:`PPO`; ``config`` is the :class:`A2CConfig`,
    ``learner.config`` the :class:`PPOConfig` that runs it.
    """

    name = "a2c"
    config_class = A2CConfig
    check_spaces = staticmethod(ppo_spaces.check_a2c_spaces)

    def learner_config(self) -> PPOConfig:
        """PPO's keys for A2C: one epoch, one minibatch of the whole rollout."""
        return self.config.ppo()

    def update(self) -> dict[str, float] | None:
        """One A2C update when every stream has its ``n_steps`` steps (else None): PPO's
        metrics less the clip range, which A2C has not."""
        metrics = super().update()
        if metrics is not None:
            metrics.pop("clip_range", None)
        return metrics
