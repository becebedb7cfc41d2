"""Import TensorFlow without its start-up chatter on the terminal.

TensorFlow's native start-up lines (oneDNN notes, CUDA probes on a CPU machine such as
``E0000 ... failed call to cuInit``) bypass Python logging and partly ignore
``TF_CPP_MIN_LOG_LEVEL``. ``import rlkit`` arranges that TensorFlow's first import (and
its first device probe) runs with the process's stderr silenced, unless the user asked
for TensorFlow's logs by setting ``TF_CPP_MIN_LOG_LEVEL`` or ``RLKIT_TF_LOGS=1``
themselves. Python exceptions still propagate normally.
"""

from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def silenced_stderr():
    """File descriptor 2 points at /dev/null while inside (native code's output too)."""
    try:
        sys.stderr.flush()
    except (AttributeError, ValueError):
        pass
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _probe_devices() -> None:
    import tensorflow as tf

    tf.config.list_physical_devices()  # where the CUDA probe prints its errors


def user_wants_tf_logs() -> bool:
    return "TF_CPP_MIN_LOG_LEVEL" in os.environ or os.environ.get("RLKIT_TF_LOGS") == "1"


def import_tensorflow_quietly() -> None:
    """Import TensorFlow (if not yet imported) with the C++ side's stderr silenced."""
    if "tensorflow" in sys.modules:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with silenced_stderr():
        _probe_devices()


def quiet_tensorflow_when_it_loads() -> None:
    """Arrange for TensorFlow's first import to be quiet (see the module docstring)."""
    if user_wants_tf_logs():
        return
    from rlkit.core.import_hooks import around_import

    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    around_import("tensorflow", around=silenced_stderr, after=_probe_devices)
