"""A clean stop on Ctrl-C and SIGTERM: the loop finishes its step, checkpoints and returns."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable


@contextlib.contextmanager
def stop_on_signals(
    trainer,
    on_stop: Callable[[int], None] | None = None,
    on_again: Callable[[], None] | None = None,
):
    """While inside, SIGINT and SIGTERM ask ``trainer`` (anything with
    ``request_stop()``: a :class:`~rlkit.run.loop.Trainer`) to stop cleanly (checkpoint, return).

    ``on_stop(signum)`` runs as soon as the first signal arrives, from a helper thread:
    Python runs signal handlers only between bytecodes, so while a long TensorFlow call
    (the first update block compiles for seconds) holds the main thread, the handler
    waits; the helper thread hears the signal at once through ``signal.set_wakeup_fd``.
    A second Ctrl-C raises KeyboardInterrupt (when the main thread next runs Python: two
    that arrive during one long call reach the handler as one). ``on_again()`` runs, from
    the helper thread, as soon as a second Ctrl-C arrives: e.g. to quit at once while a
    compile holds the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    watched = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.getsignal(s) for s in watched}

    received = []  # signals the Python-level handler has run for

    def handler(signum, frame):
        received.append(signum)
        if signum == signal.SIGINT and received.count(signal.SIGINT) > 1:
            raise KeyboardInterrupt
        trainer.request_stop()

    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    old_wakeup = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)

    def watch() -> None:
        told, interrupts = False, 0
        while True:
            try:
                data = os.read(read_fd, 64)
            except OSError:
                return
            if not data:  # the pipe was closed: the context is over
                return
            signums = [b for b in data if b in watched]
            if signums and not told:
                told = True
                trainer.request_stop()
                if on_stop is not None:
                    on_stop(signums[0])
            interrupts += signums.count(signal.SIGINT)
            if interrupts > 1 and on_again is not None:
                on_again()
                return

    watcher = threading.Thread(target=watch, name="rlkit-signal-watch", daemon=True)
    for s in watched:
        signal.signal(s, handler)
    watcher.start()
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        signal.set_wakeup_fd(old_wakeup)
        os.close(write_fd)
        watcher.join(timeout=1.0)
        os.close(read_fd)
