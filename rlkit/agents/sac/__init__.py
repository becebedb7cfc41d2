"""SAC, DDPG's maximum-entropy heir (Haarnoja et al. 2018): the agent (:mod:`.agent`), its
config (:mod:`.config`), learner (:mod:`.learner`), acting rule (:mod:`.acting`) and
networks (:mod:`.networks`); the formulas are :mod:`rlkit.learn.max_entropy`'s."""
