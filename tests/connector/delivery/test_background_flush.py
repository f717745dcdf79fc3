"""The periodic offset flush off the streaming thread (connector.delivery.background), on real
jsonl and offset files: the offset stored is the one handed over, only after the sink's fsync; a
failure surfaces on the streaming thread and stores nothing; a forced flush waits for it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from connector.delivery.batches import Delivery
from connector.stores.offsets import FileOffsetStore
from connector.testing.fake import FakeConnector
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord
from sink.base import SinkError
from sink.jsonl import JsonlSink
from sink.memory import MemorySink
from tests.connector.background_flush_support import FailingFlushJsonlSink, HeldJsonlSink

ITEMS = "CREATE TABLE inventory.items (id INT PRIMARY KEY, name VARCHAR(20))"


def _records(count: int) -> list[ChangeRecord]:
    fake = FakeConnector(ITEMS, topic_prefix="shop")
    return [r for i in range(count) for r in fake.insert("items", {"id": i, "name": f"n{i}"})]


def _offset(record: ChangeRecord) -> SourceOffset | None:
    return SourceOffset.coerce(record.offset)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def _settled(delivery: Delivery) -> None:
    assert delivery.background is not None
    deadline = time.monotonic() + 30
    while delivery.background.busy:
        assert time.monotonic() < deadline, "the background flush did not end"
        time.sleep(0.005)


def test_the_periodic_flush_stores_the_handed_over_offset_after_the_fsync_off_the_thread(
    tmp_path: Path,
) -> None:
    records = _records(20)
    sink = HeldJsonlSink(tmp_path / "events.jsonl")
    store = FileOffsetStore(tmp_path / "offsets.json", "c", "shop")
    delivery = Delivery([sink], store, max_batch=5, interval_s=0, commit_interval_s=3600)
    delivery.emit(records[:10])
    delivery.flush(force=False)  # returns with the sink's flush held
    assert sink.entered.wait(10)
    assert sink.flush_threads[0] is not threading.current_thread()
    assert store.load() is None, "the offset was stored before the sink's fsync"
    delivery.emit(records[10:])  # written while the flush waits: not covered by its offset
    assert _lines(tmp_path / "events.jsonl") == 20
    sink.release.set()
    _settled(delivery)
    assert store.load() == _offset(records[9])
    delivery.flush()  # forced: takes the background outcome, then flushes the rest here
    assert store.load() == _offset(records[-1])
    assert delivery.delivered == 20 and delivery.stored_offset == _offset(records[-1])


def test_a_periodic_flush_while_one_is_at_the_disk_does_not_wait_for_it(tmp_path: Path) -> None:
    records = _records(10)
    sink = HeldJsonlSink(tmp_path / "events.jsonl")
    store = FileOffsetStore(tmp_path / "offsets.json", "c", "shop")
    delivery = Delivery([sink], store, max_batch=5, interval_s=0, commit_interval_s=3600)
    delivery.emit(records[:5])
    delivery.flush(force=False)
    assert sink.entered.wait(10)
    delivery.emit(records[5:8])  # a partial batch, due at once (interval_s=0)
    started = time.monotonic()
    delivery.flush(force=False)  # the first is still held: this one is left to a later tick
    assert time.monotonic() - started < 1.0
    assert len(sink.flush_threads) == 1
    assert _lines(tmp_path / "events.jsonl") == 8, "the partial batch waited for the held flush"
    delivery.emit(records[8:])
    sink.release.set()
    _settled(delivery)
    delivery.flush(force=False)  # now the next one runs, covering the rest
    _settled(delivery)
    assert store.load() == _offset(records[-1])


def test_a_failed_background_flush_is_raised_by_the_next_flush_and_stores_nothing(tmp_path: Path) -> None:
    records = _records(10)
    store = FileOffsetStore(tmp_path / "offsets.json", "c", "shop")
    sink = FailingFlushJsonlSink(tmp_path / "events.jsonl")
    delivery = Delivery([sink], store, max_batch=5, interval_s=0, commit_interval_s=3600)
    delivery.emit(records)
    delivery.flush(force=False)  # fails on its own thread
    with pytest.raises(SinkError, match="sink.jsonl.path"):
        delivery.flush()
    assert delivery.failed and store.load() is None
    delivery.flush()  # a failed delivery never stores an offset afterwards
    assert store.load() is None and not (tmp_path / "offsets.json").exists()


def test_close_waits_for_the_background_flush_before_the_sinks_close(tmp_path: Path) -> None:
    records = _records(5)
    sink = HeldJsonlSink(tmp_path / "events.jsonl")
    store = FileOffsetStore(tmp_path / "offsets.json", "c", "shop")
    delivery = Delivery([sink], store, max_batch=5, interval_s=0, commit_interval_s=3600)
    delivery.emit(records)
    delivery.flush(force=False)
    assert sink.entered.wait(10)
    threading.Timer(0.2, sink.release.set).start()
    delivery.close()
    assert delivery.background is not None and not delivery.background.busy
    assert store.load() == _offset(records[-1])


def test_sinks_that_cannot_flush_off_the_thread_are_flushed_on_it(tmp_path: Path) -> None:
    memory = MemorySink()
    assert Delivery([memory], FileOffsetStore(tmp_path / "a.json", "c", "s"), 5, 0).background is None
    jsonl_and_memory = [JsonlSink(tmp_path / "e.jsonl"), memory]
    assert Delivery(jsonl_and_memory, FileOffsetStore(tmp_path / "b.json", "c", "s"), 5, 0).background is None
    seen: list[ChangeRecord] = []
    kept = Delivery(
        [JsonlSink(tmp_path / "f.jsonl")], FileOffsetStore(tmp_path / "c.json", "c", "s"), 5, 0, seen.extend
    )
    assert kept.background is None  # on_delivered needs the records after the flush, on this thread
