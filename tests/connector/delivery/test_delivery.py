"""Delivery with a sink that commits offsets with its data: the periodic offset flush does not force
it, and the stored offset never passes what it committed."""

from __future__ import annotations

from collections.abc import Sequence

from connector.delivery.batches import Delivery
from connector.stores.offsets import MemoryOffsetStore
from connector.testing.fake import FakeConnector
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord
from sink.base import Sink
from sink.memory import MemorySink

ITEMS = "CREATE TABLE inventory.items (id INT PRIMARY KEY, name VARCHAR(20))"


class CommittingSink(Sink):
    """Commits every ``every`` records by itself, as the Spark sink commits by its batch size."""

    commits_offsets = True

    def __init__(self, every: int) -> None:
        self.every = every
        self.buffer: list[ChangeRecord] = []
        self.committed: list[ChangeRecord] = []
        self.forced = 0
        self.due_calls = 0

    def send(self, records: Sequence[ChangeRecord]) -> None:
        self.buffer.extend(records)
        while len(self.buffer) >= self.every:
            self._commit(self.every)

    def commit_due(self) -> None:
        self.due_calls += 1

    def flush(self) -> None:
        self.forced += 1
        self._commit(len(self.buffer))

    def _commit(self, count: int) -> None:
        self.committed += self.buffer[:count]
        del self.buffer[:count]

    def committed_offset(self) -> SourceOffset | None:
        return SourceOffset.coerce(self.committed[-1].offset) if self.committed else None


def _records(count: int) -> list[ChangeRecord]:
    fake = FakeConnector(ITEMS, topic_prefix="shop")
    return [r for i in range(count) for r in fake.insert("items", {"id": i, "name": f"n{i}"})]


def test_the_periodic_flush_leaves_a_committing_sink_to_its_own_cadence() -> None:
    records = _records(25)
    offsets = MemoryOffsetStore()
    committing, plain = CommittingSink(every=10), MemorySink()
    delivery = Delivery([committing, plain], offsets, max_batch=5, interval_s=0, commit_interval_s=0)
    delivery.emit(records)
    delivery.flush(force=False)
    assert committing.forced == 0 and committing.due_calls >= 1
    assert len(committing.committed) == 20  # two of its own batches; 5 records wait in it
    assert plain.records == records  # the other sink was flushed as before
    # The stored offset is the committing sink's, not the last record's: a restart resumes there.
    assert offsets.load() == records[19].offset != records[-1].offset


def test_a_forced_flush_commits_everything_and_stores_the_last_offset() -> None:
    records = _records(25)
    offsets = MemoryOffsetStore()
    committing = CommittingSink(every=10)
    delivery = Delivery([committing], offsets, max_batch=5, interval_s=0, commit_interval_s=3600)
    delivery.emit(records)
    delivery.flush()
    assert committing.forced == 1 and committing.committed == records
    assert offsets.load() == records[-1].offset


def test_a_forced_flush_after_a_periodic_one_commits_what_waits_in_a_committing_sink() -> None:
    """The periodic flush counts the records handed over as done for the other sinks; what a
    committing sink still buffers must be committed by the next forced flush all the same (catch-up
    and stop), even when no record came in between."""
    records = _records(25)
    offsets = MemoryOffsetStore()
    committing = CommittingSink(every=10)
    delivery = Delivery([committing], offsets, max_batch=5, interval_s=0, commit_interval_s=3600)
    delivery.emit(records)
    delivery.flush(force=False)
    assert len(committing.committed) == 20  # 5 wait in it
    delivery.flush()
    assert committing.forced == 1 and committing.committed == records
    assert offsets.load() == records[-1].offset


def test_nothing_is_stored_before_a_committing_sink_has_committed() -> None:
    records = _records(3)
    offsets = MemoryOffsetStore()
    delivery = Delivery([CommittingSink(every=10), MemorySink()], offsets, max_batch=1, interval_s=0)
    delivery.emit(records)
    delivery.flush(force=False)
    assert offsets.load() is None


def test_once_a_committing_sink_holds_every_record_the_stored_offset_moves_past_them() -> None:
    records = _records(20)
    offsets = MemoryOffsetStore()
    delivery = Delivery([CommittingSink(every=10)], offsets, max_batch=5, interval_s=0, commit_interval_s=0)
    delivery.emit(records)
    last = SourceOffset.coerce(records[-1].offset)
    assert last is not None
    after_commit = last.with_(pos=last.pos + 100, event=0, row=0)  # an offset no record carries
    delivery.advance(after_commit)
    delivery.flush(force=False)
    assert offsets.load() == after_commit  # caught up, as with any other sink


def test_records_handed_to_the_sinks_are_not_held_until_the_offset_flush() -> None:
    records = _records(12)
    offsets = MemoryOffsetStore()
    plain = MemorySink()
    delivery = Delivery([plain], offsets, max_batch=5, interval_s=3600, commit_interval_s=3600)
    delivery.emit(records)
    # Two batches sent, two pending: only those two are the connector's to hold (max.queue.size).
    assert delivery.sent_count == 10 and delivery.queued == 2
    assert delivery.sent == []  # counted, not kept: nothing needs them again
    delivery.flush()
    assert delivery.delivered == 12 and delivery.queued == 0 and len(plain.records) == 12
    assert offsets.load() == SourceOffset.coerce(records[-1].offset)


def test_records_are_kept_for_on_delivered_until_the_flush() -> None:
    records = _records(7)
    seen: list[ChangeRecord] = []
    delivery = Delivery(
        [MemorySink()], MemoryOffsetStore(), max_batch=5, interval_s=3600, on_delivered=seen.extend
    )
    delivery.emit(records)
    assert seen == []
    delivery.flush()
    assert seen == records


def test_after_first_send_runs_once_the_first_records_are_with_the_sinks() -> None:
    # mysql-cdc run hangs its start-up's deferred full collection here (issue 41).
    records = _records(12)
    plain = MemorySink()
    delivery = Delivery([plain], MemoryOffsetStore(), max_batch=5, interval_s=3600, commit_interval_s=3600)
    calls: list[int] = []
    delivery.after_first_send = lambda: calls.append(delivery.sent_count)
    delivery.emit(records[:1])
    assert calls == [1]  # the first record was handed to the sink at once, then the hook ran
    delivery.emit(records[1:])
    delivery.flush()
    assert calls == [1] and len(plain.records) == 12  # once only
