"""PPO (Schulman et al. 2017), REINFORCE's heir: the agent (:mod:`.agent`), its config
(:mod:`.config`), learner (:mod:`.learner`), acting rule (:mod:`.acting`) and networks
(:mod:`.networks`); the formulas are :mod:`rlkit.learn.advantages`'s, the rollout store
:mod:`rlkit.replay.rollout`'s."""
