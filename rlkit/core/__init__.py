"""The ground floor: errors, atomic files, named seeds, schedules, observation spaces,
quiet imports. Nothing here imports TensorFlow."""
