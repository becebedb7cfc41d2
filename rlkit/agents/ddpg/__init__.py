"""DDPG and TD3 (Lillicrap et al. 2016, Fujimoto et al. 2018): the agent (:mod:`.agent`),
its config (:mod:`.config`), learner (:mod:`.learner`), acting rule (:mod:`.acting`: the
exploration noise and its in-graph twin), networks (:mod:`.networks`) and TD3's terms of the
learner (:mod:`.td3`)."""
