"""Import TensorFlow without its start-up chatter on the terminal."""

from __future__ import annotations

import os


def import_tensorflow_quietly() -> None:
    """Import TensorFlow with the C++ side's stderr silenced.

    TensorFlow's native start-up lines (oneDNN notes, CUDA probes on a CPU machine)
    bypass Python logging and ``TF_CPP_MIN_LOG_LEVEL``; they are noise to a CLI user.
    Python exceptions still propagate normally.
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        import tensorflow as tf

        tf.config.list_physical_devices()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)
