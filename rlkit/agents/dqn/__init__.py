"""DQN and its family (Mnih et al. 2015 as DQN3.0 does it; C51, QR-DQN, Rainbow, IQN,
M-DQN): the agent (:mod:`.agent`), its config (:mod:`.config`), learner (:mod:`.learner`),
acting rule (:mod:`.acting`: epsilon-greedy and its in-graph twin), the target copy's cadence
(:mod:`.target_copy`) and the value heads (:mod:`.heads`). Each member is DQN with a config
and another head or loss: :mod:`.distributional` (C51, QR-DQN, Rainbow), :mod:`.iqn`,
:mod:`.mdqn`."""
