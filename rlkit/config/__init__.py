"""Options and their rules: the option dataclass machinery, the ``[run]`` settings,
config files and the shipped presets; every "which value wins" rule lives here.
Nothing here imports TensorFlow."""
