"""Where training metrics go: ``metrics.csv`` and TensorBoard event files.

``metrics.csv`` has one row per finished episode (``kind=episode``) and one per
evaluation (``kind=eval``); it holds no wall-clock figures, so two runs with the
same seed on the same machine write identical files. Lines end in ``\n`` (LF), before and
after a resume. Timing (steps/s) and
per-update scalars go to TensorBoard (``tensorboard --logdir runs``).
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import TextIO

from rlkit.core.files import atomic_write_bytes

COLUMNS = ["kind", "step", "episode", "return", "length", "return_std"]


class MetricsLogger:
    """Appends rows to a run's ``metrics.csv`` (``csv_path``) and scalars to TensorBoard
    event files in ``tensorboard_dir`` (:class:`~rlkit.run.folder.RunFolder` names both).

    With ``csv_path=None`` it keeps nothing (library use without a run folder).
    ``rows_written`` counts CSV data rows, so a resumed run can cut rows written
    after its checkpoint (:meth:`truncate`).
    """

    def __init__(self, csv_path: Path | None, tensorboard_dir: Path | None = None) -> None:
        self.path = Path(csv_path) if csv_path is not None else None
        self.rows_written = 0
        self._file: TextIO | None = None
        self._csv = None
        self._writer = None
        if self.path is None:
            return
        path = self.path
        new = not path.exists()
        self._file = open(path, "a", newline="")  # noqa: SIM115 - closed in close()
        self._csv = csv.writer(self._file, lineterminator="\n")
        if new:
            self._csv.writerow(COLUMNS)
            self._file.flush()
        if tensorboard_dir is not None:
            # TensorBoard's own event writer: far cheaper per scalar than an eager
            # tf.summary.scalar call, and it writes from a background thread.
            from tensorboard.summary.writer.event_file_writer import EventFileWriter

            self._writer = EventFileWriter(str(tensorboard_dir), flush_secs=10)

    def truncate(self, rows: int) -> None:
        """Keep only the header and the first ``rows`` data rows of ``metrics.csv``."""
        if self.path is None:
            return
        self._open_file().close()
        path = self.path
        lines = path.read_text().splitlines()  # LF or CRLF (files of older rlkit versions)
        atomic_write_bytes(path, "".join(line + "\n" for line in lines[: rows + 1]).encode())
        self._file = open(path, "a", newline="")  # noqa: SIM115
        self._csv = csv.writer(self._file, lineterminator="\n")
        self.rows_written = rows

    def row(self, kind: str, step: int, episode: int, ret: float, length: float, std=None):
        """One CSV row (an episode or an evaluation); flushed at once."""
        if self._csv is None:
            return
        std_text = "" if std is None else f"{std:.6g}"
        self._csv.writerow([kind, step, episode, f"{ret:.6g}", f"{length:.6g}", std_text])
        self._open_file().flush()
        self.rows_written += 1

    def scalars(self, step: int, values: dict[str, float]) -> None:
        """TensorBoard scalars, e.g. ``{"train/loss": 0.3}``."""
        if self._writer is None:
            return
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary

        summary = Summary(
            value=[Summary.Value(tag=name, simple_value=float(v)) for name, v in values.items()]
        )
        self._writer.add_event(Event(wall_time=time.time(), step=int(step), summary=summary))

    def _open_file(self) -> TextIO:
        """``metrics.csv`` as opened; ValueError once :meth:`close` has closed it."""
        if self._file is None:
            raise ValueError(f"{self.path} is closed (MetricsLogger.close)")
        return self._file

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._writer is not None:
            self._writer.flush()
            self._writer.close()
            self._writer = None
