"""Environments: ``make_env`` (ids, vector envs), Atari as DQN3.0 played it, the bandit,
classic control written in TensorFlow (:mod:`rlkit.envs.tf`), registration of rlkit's own
ids."""
