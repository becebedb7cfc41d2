"""REINFORCE, the Monte-Carlo policy gradient (Williams 1992): the agent (:mod:`.agent`), its
config and presets (:mod:`.config`), learner (:mod:`.learner`) and acting rule
(:mod:`.acting`: sampling from the policy it follows)."""
