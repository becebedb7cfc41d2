"""The life of a run: the run folder, the training loop and its hooks (evaluation,
checkpoints, metrics), checkpoints, experiments as library calls, plots and videos."""
