"""Delivery: batches records to the sinks and stores offsets once the sinks hold them durably."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from connector.delivery.background import BackgroundFlush, FlushOutcome
from connector.metrics import ConnectorMetrics
from connector.stores.offsets import OffsetStore
from connector.transforms import TransformChain
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord
from sink.base import Sink, TransactionAbandonedError

log = logging.getLogger(__name__)
TRANSACTION_ATTEMPTS = 3


class Transaction(Protocol):
    """Commits what the sinks were sent since the last commit together with the offset (exactly
    once: ``connector.delivery.exactly_once.OffsetTransactions``)."""

    def commit(self, offset: SourceOffset | None) -> None: ...

    def recover(self, offset: SourceOffset | None) -> bool:
        """After ``TransactionAbandonedError``: a new producer (aborting the open transaction);
        True when the transaction that was to store ``offset`` did commit after all."""
        ...


class Delivery:
    """Batches records to the sinks and stores offsets once the sinks have them durably.

    Records go to every sink's ``send`` in batches (``max.batch.size``, or after ``poll.interval.ms``);
    every ``offset.flush.interval.ms`` (and on stop) every sink is flushed (fsync, broker
    acknowledgement, Spark commit) and only then is the offset of the last flushed record stored.
    A failure leaves the stored offset where it was, so a restart redelivers from there.
    Sinks that commit offsets with their data (``Sink.commits_offsets``: Spark) are not forced by
    that periodic flush (nor by a full ``max.queue.size``), only on catch-up and stop: they commit at
    their own batch cadence, and the stored offset is then the earliest offset such a sink reports
    committed, so a restart never resumes past what its tables hold.

    ``max.queue.size`` bounds the records the connector holds: those not yet handed to the sinks,
    and those a transaction or ``on_delivered`` keeps until the flush. When they fill it, the sinks
    are flushed before the source goes on (backpressure, as Debezium's reader blocks on a full
    ``ChangeEventQueue``). Records a sink has taken are its own to bound (a Kafka producer's
    buffer, the Spark sink's batch size), as Debezium's queue ends where the producer takes them:
    the sinks are then flushed every ``offset.flush.interval.ms``, not every ``max.queue.size``
    records (each flush is an fsync of the jsonl file and of the offset file).

    With a ``transaction`` (``exactly.once.support``) the offset is not saved to the store: each
    flush commits the sinks' transaction together with the offset. ``commit_each_batch``
    (``transaction.boundary=poll``) flushes, and so commits, every batch handed to the sinks.

    When every sink's flush may run while records are sent (``Sink.flushes_off_thread``: jsonl)
    and nothing waits for the delivered records (no transaction, no ``on_delivered``), the periodic
    flush runs on a thread of its own (``connector.delivery.background``): the sinks' fsyncs, then
    the offset taken when it was handed over. A forced flush waits for it first.
    """

    def __init__(
        self,
        sinks: Sequence[Sink],
        offsets: OffsetStore,
        max_batch: int,
        interval_s: float,
        on_delivered: Callable[[Sequence[ChangeRecord]], None] | None = None,
        commit_interval_s: float | None = None,
        transforms: TransformChain | None = None,
        max_queue: int | None = None,
        metrics: ConnectorMetrics | None = None,
        transaction: Transaction | None = None,
        commit_each_batch: bool = False,
    ) -> None:
        self.metrics = metrics
        self.transaction = transaction
        self.commit_each_batch = commit_each_batch
        self.sinks = list(sinks)
        if metrics is not None:
            for sink in self.sinks:
                figures = metrics.sink(type(sink).__name__)
                figures.waiting_seconds, figures.waits = sink.waiting_seconds, sink.waits
        self.offsets = offsets
        self.max_batch = max_batch
        self.max_queue = max_queue if max_queue is not None else max(8192, 4 * max_batch)
        self.interval_s = interval_s
        self.commit_interval_s = interval_s if commit_interval_s is None else commit_interval_s
        self.on_delivered = on_delivered
        # The single message transforms (connector.transforms), applied to every record before the sinks.
        self.transforms = transforms or None
        self.pending: list[ChangeRecord] = []
        self.in_flight = 0  # records the sinks are being handed now
        self.pending_offset: SourceOffset | None = None  # offset after the last record emitted
        # Handed to the sinks, not yet flushed: counted, and kept only where they are needed again
        # (re-sent after an abandoned transaction, or handed to on_delivered): records held until
        # the offset flush only to be counted kept the collector busy and the memory high.
        self.sent_count = 0
        self.sent: list[ChangeRecord] = []
        self._keep_sent = transaction is not None or on_delivered is not None
        self.sent_offset: SourceOffset | None = None
        self.last_record_offset: SourceOffset | None = None  # of the last record the sinks got
        self.stored_offset: SourceOffset | None = None
        self.failed = False
        self.last_send = self.last_commit = time.monotonic()
        self.delivered = 0
        self.sent_any = False  # the first records go to the sinks without waiting for a batch
        # Called once those first records are with the sinks (``mysql-cdc run``: the start-up's
        # deferred full collection, ``connector.cli.allocator.settle_after_first_records``).
        self.after_first_send: Callable[[], None] | None = None
        off_thread = bool(self.sinks) and all(
            s.flushes_off_thread and not s.commits_offsets for s in self.sinks
        )
        self.background = (
            BackgroundFlush(self.sinks, offsets)
            if off_thread and transaction is None and on_delivered is None and not commit_each_batch
            else None
        )

    def emit(self, records: list[ChangeRecord]) -> None:
        """Takes the records of one source event (all rows of a rows event). Batches are cut where
        they fill, as if each record had come alone: what a sink is handed, what a flush
        covers and ``max.queue.size`` do not depend on how many rows an event holds."""
        start, size = 0, self.max_batch
        while len(self.pending) + len(records) - start >= size:
            fill = size - len(self.pending)  # exactly what completes the batch
            self._emit(records[start : start + fill])
            start += fill
        if start < len(records):
            self._emit(records[start:] if start else records)

    def _emit(self, records: list[ChangeRecord]) -> None:
        for record in reversed(records):
            if record.offset is not None:
                self.pending_offset = record.offset  # a record a transform drops still counts
                break
        self.pending.extend(self.transforms.apply(records) if self.transforms is not None else records)
        if not self.sent_any and self.pending and not self.commit_each_batch:
            # The first records go to the sinks at once, as Debezium's first poll returns what its
            # queue holds: a resumed connector's first event is out before a batch has filled.
            self.sent_any = True
            self._send()
            if self.after_first_send is not None:
                self.after_first_send()
            return
        if len(self.pending) >= self.max_batch:
            if self.commit_each_batch:
                self.flush()  # transaction.boundary=poll: this batch is one transaction
                return
            self._send()
            if len(self.sent) + self.max_batch > self.max_queue:
                # The connector holds what a transaction (or on_delivered) still needs: when that
                # fills the queue, flush (commit) before reading on. Records a sink has taken are
                # its own to bound, as Debezium's queue ends where the producer takes a record (a
                # sink that commits offsets: sink.spark.batch.max.events).
                self.flush(force=False)
            else:
                self.tick()

    @property
    def queued(self) -> int:
        """Records the connector holds: not yet handed to the sinks, or kept for a transaction or
        ``on_delivered`` until the flush (``max.queue.size`` bounds it)."""
        return len(self.pending) + self.in_flight + len(self.sent)

    def advance(self, offset: SourceOffset) -> None:
        self.pending_offset = offset
        self.tick()

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last_commit >= self.commit_interval_s:
            self.flush(force=False)
        elif self.pending and now - self.last_send >= self.interval_s:
            if self.commit_each_batch:
                self.flush()
            else:
                self._send()

    def _send(self) -> None:
        batch, self.pending = self.pending, []
        if batch:
            size = self.max_batch
            chunks = (
                [batch] if len(batch) <= size else [batch[i : i + size] for i in range(0, len(batch), size)]
            )
            self.in_flight = len(batch)
            try:
                for chunk in chunks:
                    for sink in self.sinks:
                        sink.send(chunk)
            except TransactionAbandonedError:
                if self.transaction is None:
                    self.failed = True
                    self._count_failure()
                    raise
                # Exactly once: the next flush starts a new producer and sends the whole
                # transaction again (the sink keeps failing until then).
            except BaseException:
                self.failed = True
                self._count_failure()
                raise
            finally:
                self.in_flight = 0
            self.sent_count += len(batch)
            if self._keep_sent:
                self.sent.extend(batch)
            for record in reversed(batch):
                if record.offset is not None:
                    self.last_record_offset = SourceOffset.coerce(record.offset)
                    break
        self.sent_offset = self.pending_offset
        self.last_send = time.monotonic()

    def flush(self, force: bool = True) -> None:
        """Send what is pending, flush every sink, then store the offset. ``force=False`` (the
        periodic flush) leaves sinks that commit offsets with their data to their own cadence."""
        if self.background is not None:
            if not force and self.background.busy:
                # The previous periodic flush is still at the disk: the next tick tries again, and
                # a partial batch due by poll.interval.ms goes to the sinks meanwhile.
                if self.pending and time.monotonic() - self.last_send >= self.interval_s:
                    self._send()
                return
            self._finish_background()
        if self.failed:
            return  # never store an offset past records that may not have been delivered
        if self.background is not None and not force:
            self._flush_in_background()
            return
        self._send()
        batch, self.sent = self.sent, []
        count, self.sent_count = self.sent_count, 0
        offset = self.sent_offset
        flushed = self.sinks if force else [s for s in self.sinks if not s.commits_offsets]
        changed = offset is not None and offset != self.stored_offset
        try:
            if self.transaction is not None and (count or changed):
                # Exactly once: the records and the offset after them become visible together.
                self._commit(batch, offset if changed else None)
            elif count and self.transaction is None:
                self._flush_sinks(flushed, count)
            elif force and self.transaction is None:
                # A periodic flush counted the records handed over as done; a sink that commits at
                # its own cadence may still hold some of them, and a forced flush must commit them.
                self._flush_sinks([s for s in self.sinks if s.commits_offsets], 0)
            if count:
                self.delivered += count
                if self.on_delivered is not None:
                    self.on_delivered(batch)
        except BaseException:
            self.failed = True
            self._count_failure()
            raise
        if self.transaction is not None:
            if changed:
                self.stored_offset = offset  # committed with the records
            self.last_commit = self.last_send = time.monotonic()
            return
        if len(flushed) < len(self.sinks):
            own = [s for s in self.sinks if s not in flushed]
            try:
                for sink in own:
                    sink.commit_due()
            except BaseException:
                self.failed = True
                self._count_failure()
                raise
            committed = [s.committed_offset() for s in own]
            offset = _earliest(committed)
            if offset is not None and all(c == self.last_record_offset for c in committed):
                # They hold every record sent: the offset may move past them as without them
                # (e.g. after the transaction's commit), so an idle connector is caught up.
                offset = self.sent_offset
        if offset is not None and offset != self.stored_offset:
            self.offsets.save(offset)
            self.stored_offset = offset
        self.last_commit = self.last_send = time.monotonic()

    def _flush_in_background(self) -> None:
        """Hand what was sent so far, and the offset after it, to the background flush."""
        assert self.background is not None
        self._send()
        count, self.sent_count = self.sent_count, 0
        offset = self.sent_offset
        moved = offset if offset is not None and offset != self.stored_offset else None
        if count or moved is not None:
            self.background.start(count, moved)
        self.last_commit = self.last_send = time.monotonic()

    def _finish_background(self) -> None:
        """Wait for the background flush, and take its outcome (raising its failure)."""
        assert self.background is not None
        try:
            outcome = self.background.finish(wait=True)
        except BaseException:
            self.failed = True
            self._count_failure()
            raise
        if outcome is not None:
            self._take(outcome)

    def _take(self, outcome: FlushOutcome) -> None:
        if outcome.offset is not None:
            self.stored_offset = outcome.offset
        self.delivered += outcome.records
        if self.metrics is not None and outcome.sink_seconds:
            for sink, seconds in zip(self.sinks, outcome.sink_seconds, strict=True):
                self.metrics.sink(type(sink).__name__).on_flush(seconds, outcome.records)

    def close(self) -> None:
        """Wait for a background flush still running (before the sinks close); its failure, which
        no flush will raise any more, is logged."""
        if self.background is None:
            return
        try:
            self._finish_background()
        except Exception:
            log.exception("the last background offset flush failed; the stored offset stays before it")

    def _flush_sinks(self, sinks: Sequence[Sink], records: int) -> None:
        if self.metrics is None:
            for sink in sinks:
                sink.flush()
        else:
            self._timed_flush(sinks, records)

    def _commit(self, batch: list[ChangeRecord], offset: SourceOffset | None) -> None:
        """Flush and commit one transaction. When the brokers let it lapse (a coordinator or
        leader lost, TransactionAbandonedError), a new producer aborts it and the same records are
        sent again, unless the commit turns out to have gone through."""
        assert self.transaction is not None
        for attempt in range(1, TRANSACTION_ATTEMPTS + 1):
            try:
                if batch:
                    self._flush_sinks(self.sinks, len(batch))
                self.transaction.commit(offset)
                return
            except TransactionAbandonedError as exc:
                if attempt == TRANSACTION_ATTEMPTS or offset is None:
                    raise  # None: no offset to tell whether it committed, so never send twice
                log.warning(
                    "transaction abandoned (%s); starting a new producer and sending its %d records "
                    "again (attempt %d of %d)",
                    exc,
                    len(batch),
                    attempt + 1,
                    TRANSACTION_ATTEMPTS,
                )
                if self.transaction.recover(offset):
                    log.warning("the abandoned transaction had committed: its records are not sent again")
                    return
                size = self.max_batch
                for start in range(0, len(batch), size):
                    for sink in self.sinks:
                        sink.send(batch[start : start + size])

    def _timed_flush(self, sinks: Sequence[Sink], records: int) -> None:
        """Flush ``sinks``, counting records, flushes and flush time per sink (metrics)."""
        assert self.metrics is not None
        for sink in sinks:
            started = time.perf_counter()
            sink.flush()
            self.metrics.sink(type(sink).__name__).on_flush(time.perf_counter() - started, records)

    def _count_failure(self) -> None:
        if self.metrics is not None:
            for sink in self.sinks:
                self.metrics.sink(type(sink).__name__).failures += 1


def _earliest(offsets: Sequence[SourceOffset | None]) -> SourceOffset | None:
    """The earliest of the offsets sinks report committed; None (store nothing) if one has none
    yet, or if they cannot be ordered (two sinks mid-snapshot, different servers)."""
    if any(o is None for o in offsets):
        return None
    known = [o for o in offsets if o is not None]
    if len(known) == 1:
        return known[0]
    if any(o.in_snapshot or not o.has_position for o in known):
        return None
    keys = {o.position_key[0] for o in known}
    return min(known, key=lambda o: o.position_key[1:]) if len(keys) == 1 else None
