"""Many seeds of one DQN configuration in one XLA program, against one program per seed."""
