"""Import TensorFlow without its start-up chatter on the terminal.

TensorFlow's native start-up lines (oneDNN notes, CUDA probes on a CPU machine such as
``E0000 ... failed call to cuInit``) bypass Python logging and partly ignore
``TF_CPP_MIN_LOG_LEVEL``: its usual ``3`` still lets six of them through, written before
TensorFlow's logging reads it. ``import rlkit`` arranges that TensorFlow's first import
(and its first device probe) runs with the process's stderr silenced, whatever
``TF_CPP_MIN_LOG_LEVEL`` says (a user who set it asked for quiet; the level they set is
kept for TensorFlow's later lines), unless they asked for TensorFlow's logs with
``RLKIT_TF_LOGS=1``. Python exceptions still propagate normally.
"""

from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def silenced_stderr():
    """While inside, native code's writes to file descriptor 2 (TensorFlow's C++ start-up
    lines) go to /dev/null; Python's own stderr (``print(file=sys.stderr)``, warnings, the
    user's logging handlers on ``sys.stderr``) still reaches the terminal."""
    try:
        sys.stderr.flush()
    except (AttributeError, ValueError):
        pass
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    python_stderr, kept = sys.stderr, None
    if _writes_to_fd2(python_stderr):  # Python's writes go on to the real stderr
        kept = open(  # noqa: SIM115 - closed below
            saved, "w", buffering=1, closefd=False, encoding=getattr(python_stderr, "encoding",
            None), errors="backslashreplace",
        )  # fmt: skip
        sys.stderr = kept
    os.dup2(null, 2)
    try:
        yield
    finally:
        if kept is not None:
            kept.flush()
            if sys.stderr is kept:
                sys.stderr = python_stderr
            kept.close()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _writes_to_fd2(stream) -> bool:
    try:
        return stream.fileno() == 2
    except (AttributeError, ValueError, OSError):
        return False  # (e.g. pytest's capture: not file descriptor 2)


def _probe_devices() -> None:
    import tensorflow as tf

    tf.config.list_physical_devices()  # where the CUDA probe prints its errors


def user_wants_tf_logs() -> bool:
    """Did the user ask to see TensorFlow's start-up lines (``RLKIT_TF_LOGS=1``)?"""
    return os.environ.get("RLKIT_TF_LOGS") == "1"


def import_tensorflow_quietly() -> None:
    """Import TensorFlow (if not yet imported) with the C++ side's stderr silenced."""
    if "tensorflow" in sys.modules:
        return
    if user_wants_tf_logs():
        _probe_devices()
        return
    with _quiet_import():
        _probe_devices()


def quiet_tensorflow_when_it_loads() -> None:
    """Arrange for TensorFlow's first import to be quiet (see the module docstring)."""
    if user_wants_tf_logs():
        return
    from rlkit.core.import_hooks import around_import

    around_import("tensorflow", around=_quiet_import, after=_probe_devices)


@contextlib.contextmanager
def _quiet_import():
    """TensorFlow's first import: its C++ logging reads ``TF_CPP_MIN_LOG_LEVEL`` once, as it
    loads, so where the user set none the level is 2 for that moment only, and the
    process's environment is left as it was, for the user's own subprocesses (a level the
    user set is theirs: kept)."""
    if user_wants_tf_logs():  # (asked for since rlkit was imported)
        yield
        return
    own_level = "TF_CPP_MIN_LOG_LEVEL" in os.environ
    if not own_level:
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    try:
        with silenced_stderr():
            yield
    finally:
        if not own_level:
            os.environ.pop("TF_CPP_MIN_LOG_LEVEL", None)
