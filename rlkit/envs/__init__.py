"""Environments: ``make_env`` (ids, vector envs), Atari as DQN3.0 played it, the bandit,
registration of rlkit's own ids."""
