"""Replay memories: the transition ring buffer and the frame replay that stores
single frames and rebuilds stacks."""
