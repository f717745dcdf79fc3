"""When the Spark sink applies a batch, and on which thread.

A batch's cost is mostly fixed per Delta table it touches (Spark jobs, a Delta log write), so the
sink wants few, large batches while it is behind and small, prompt ones once it has caught up:

* **Size:** a batch ends after ``sink.spark.batch.max.events`` events (the memory bound), extended
  to the end of the transaction in progress so a reader never sees part of one.
* **Time:** once caught up, a batch ends ``sink.spark.batch.max.interval.ms`` after its first event.
  While the events read are older than that interval by the source's clock and keep coming (the
  connector reads the binlog's past: after a restart, a pause, or a batch slower than the
  interval), the interval does not end a batch: it grows, up to the size bound or ``BEHIND_INTERVALS`` intervals (which bounds
  how long a change waits when the server's clock runs behind the connector's), so the fixed costs
  are spread over more events (as Kafka's producer batches while a request is in flight). When
  no event has come for ``QUIET_MS`` the reader is at the binlog's end, and the batch is due.
* **Background:** a full or due batch is committed by one worker thread while the connector reads
  on; the next batch is handed over when the worker is free (the batch meanwhile grows), and a
  full buffer waits for it (backpressure). A failure of the worker is raised by the next call.
  ``drain`` applies whatever is buffered in the calling thread, after the worker's batch.

Records reach ``apply`` in order, one batch at a time, so what each Delta commit records (the offset
of the last event its table holds) is exactly what it was with batches applied inline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord

BEHIND_INTERVALS = 12  # the longest a batch grows while behind, in batch intervals
_SECOND_MS = 1000  # binlog timestamps have whole seconds
QUIET_MS = 1000  # no event for this long: the reader has reached the binlog's end


class BatchCadence:
    def __init__(
        self,
        apply: Callable[[list[ChangeRecord]], None],
        max_events: int,
        max_interval_ms: int,
        clock_ms: Callable[[], float] = lambda: time.time() * 1000,
        quiet_ms: float = QUIET_MS,
    ) -> None:
        self._apply = apply
        self.max_events = max_events
        self.max_interval_ms = max_interval_ms
        self._clock_ms = clock_ms
        self._quiet_s = quiet_ms / 1000
        self._last_add = 0.0
        self._pending: list[ChangeRecord] = []
        self._since = 0.0  # monotonic time of the oldest buffered event's arrival
        self._newest_ms: float | None = None  # the newest buffered event's source timestamp
        self._worker: ThreadPoolExecutor | None = None
        self._running: Future[None] | None = None

    @property
    def pending(self) -> int:
        return len(self._pending)

    def add(self, records: Sequence[ChangeRecord]) -> None:
        if not records:
            return
        if not self._pending:
            self._since = time.monotonic()
        self._pending.extend(records)
        self._last_add = time.monotonic()
        newest = _source_ms(records[-1])
        if newest is not None:
            self._newest_ms = newest
        while len(self._pending) >= self.max_events:
            cut = self._batch_end(self.max_events)
            batch, self._pending = self._pending[:cut], self._pending[cut:]
            self._hand_over(batch)
            self._since = time.monotonic()
        self.tick()

    def tick(self) -> None:
        """Hand the buffered events to the worker when the interval says so and it is free."""
        self.check()
        if not self._pending or not self._due() or self.busy:
            return
        batch, self._pending = self._pending, []
        self._hand_over(batch)

    @property
    def busy(self) -> bool:
        return self._running is not None and not self._running.done()

    def check(self) -> None:
        """Raise the worker's failure, if its batch failed."""
        running = self._running
        if running is not None and running.done():
            self._running = None
            running.result()

    def wait(self) -> None:
        """Wait for the worker's batch (raising its failure)."""
        running, self._running = self._running, None
        if running is not None:
            running.result()

    def drain(self) -> None:
        """Apply everything buffered, in the calling thread, after the worker's batch."""
        self.wait()
        if self._pending:
            batch, self._pending = self._pending, []
            self._apply(batch)

    def run(self, batch: list[ChangeRecord]) -> None:
        """Hand ``batch`` to the worker now (after the batch it is applying)."""
        self._hand_over(batch)

    def close(self, drain: bool = True) -> None:
        """Stop the worker; ``drain``: apply everything buffered first."""
        try:
            if drain:
                self.drain()
        finally:
            if self._worker is not None:
                self._worker.shutdown(wait=True)
                self._worker = None

    def _due(self) -> bool:
        waited = (time.monotonic() - self._since) * 1000
        if waited < self.max_interval_ms:
            return False
        # While behind, the batch grows (up to BEHIND_INTERVALS intervals).
        return waited >= BEHIND_INTERVALS * self.max_interval_ms or not self._behind()

    def _behind(self) -> bool:
        """Are the events read older than a batch interval by the source's clock, and still coming?"""
        if self._newest_ms is None or time.monotonic() - self._last_add > self._quiet_s:
            return False
        return self._clock_ms() - self._newest_ms > self.max_interval_ms + _SECOND_MS

    def _hand_over(self, batch: list[ChangeRecord]) -> None:
        self.wait()  # one batch at a time, in order; a full buffer waits here
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="delta-batch")
        self._running = self._worker.submit(self._apply, batch)

    def _batch_end(self, limit: int) -> int:
        """Where a full batch ends: after ``limit`` events, extended to the end of the transaction
        in progress (at most to twice the limit) so a reader never sees part of a transaction."""
        pending = self._pending
        last = SourceOffset.coerce(pending[limit - 1].offset)
        if last is None or last.in_snapshot or not last.event:
            return limit
        cut = limit
        while cut < len(pending) and cut < 2 * limit:
            offset = SourceOffset.coerce(pending[cut].offset)
            if offset is not None and (offset.file, offset.pos) != (last.file, last.pos):
                break
            cut += 1
        return cut


def _source_ms(record: ChangeRecord) -> float | None:
    """The event's time by the source's clock (``source.ts_ms``; a snapshot row's is its read)."""
    value = record.value
    source = value.get("source") if isinstance(value, dict) else None
    ts = source.get("ts_ms") if isinstance(source, dict) else None
    return float(ts) if isinstance(ts, int) else None
