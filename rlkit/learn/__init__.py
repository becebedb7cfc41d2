"""The learner's pure parts: losses, the gradient pipeline, optimizers, returns,
exploration noise, compiled functions."""
