"""The periodic offset flush on a thread of its own: the sinks' fsyncs, then the offset's save.

Every ``offset.flush.interval.ms`` the sinks are made durable and then the offset after the last
record they hold is stored. For sinks whose ``flush`` may run while ``send`` goes on
(``Sink.flushes_off_thread``: the jsonl file, whose fsync covers every line written before it was
called), the streaming thread need not wait for the disk: it hands the flush to ``BackgroundFlush``
and reads on. The order that makes a crash lose nothing stays: the job fsyncs the sinks first and
stores the offset only after that, and the offset is the one taken when the job was handed over, so
it never covers a record written after the fsync began. One job runs at a time; its failure is
raised on the streaming thread by the next flush (``finish``), which stops the connector without
storing anything past it, as a failed flush on the streaming thread does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import NamedTuple

from connector.stores.offsets import OffsetStore
from mysql_cdc_base.position import SourceOffset
from sink.base import Sink


class FlushOutcome(NamedTuple):
    """A completed background flush: the records it made durable, the offset it stored (None: the
    offset had not moved), and each sink's flush time in seconds (in the order of the sinks)."""

    records: int
    offset: SourceOffset | None
    sink_seconds: tuple[float, ...]


class BackgroundFlush:
    """Runs one flush of ``sinks`` followed by ``offsets.save`` at a time on a daemon thread."""

    def __init__(self, sinks: Sequence[Sink], offsets: OffsetStore) -> None:
        self.sinks = tuple(sinks)
        self.offsets = offsets
        self._thread: threading.Thread | None = None
        self._outcome: FlushOutcome | None = None
        self._error: BaseException | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, records: int, offset: SourceOffset | None) -> None:
        """Flush the sinks (when ``records`` were sent since the last flush), then store ``offset``
        (None: leave the stored one). The previous job must be finished (``finish``)."""
        if self._thread is not None:
            raise RuntimeError("a background flush is still unfinished")  # a bug, not a user error
        self._thread = threading.Thread(
            target=self._run, args=(records, offset), name="mysql-cdc-offset-flush", daemon=True
        )
        self._thread.start()

    def _run(self, records: int, offset: SourceOffset | None) -> None:
        seconds: list[float] = []
        try:
            if records:
                for sink in self.sinks:
                    started = time.perf_counter()
                    sink.flush()
                    seconds.append(time.perf_counter() - started)
            if offset is not None:
                self.offsets.save(offset)
        except BaseException as exc:  # noqa: BLE001 - handed to the streaming thread by finish()
            self._error = exc
            return
        self._outcome = FlushOutcome(records, offset, tuple(seconds))

    def finish(self, wait: bool) -> FlushOutcome | None:
        """The outcome of the last job once it has ended (waiting for it when ``wait``), at most
        once; None when no job ended since. Raises the job's error."""
        thread = self._thread
        if thread is None:
            return None
        if wait:
            thread.join()
        elif thread.is_alive():
            return None
        self._thread = None
        error, self._error = self._error, None
        outcome, self._outcome = self._outcome, None
        if error is not None:
            raise error
        return outcome
