"""What users run to check rlkit: acceptance runs per agent, the rl-zoo table, speed
against Stable-Baselines3, Atari throughput and curves, sweep throughput.

Run each from the repository root as a module, e.g. ``python -m benchmarks.zoo_table``;
benchmarks/README.md lists them with what they print.
"""
