"""When the Spark sink applies a batch (``sink/spark/cadence.py``): by size, by interval once caught
up, grown while behind, one batch at a time on a worker while records keep arriving."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mysql_cdc_base.records import ChangeRecord
from sink.spark.cadence import BEHIND_INTERVALS, BatchCadence


def event(n: int, ts_ms: float, pos: int | None = None) -> ChangeRecord:
    """A change event at binlog position ``pos`` (its own transaction unless given), written at
    ``ts_ms`` by the source's clock."""
    offset = {"file": "mysql-bin.000001", "pos": pos if pos is not None else 100 * n, "event": 1, "row": 1}
    value = {"op": "c", "after": {"id": n}, "source": {"ts_ms": int(ts_ms)}}
    return ChangeRecord("t", None, None, None, value, offset=offset)  # type: ignore[arg-type]


class Applied:
    def __init__(self, hold: threading.Event | None = None) -> None:
        self.batches: list[list[int]] = []
        self.threads: set[str] = set()
        self.hold = hold

    def __call__(self, batch: list[ChangeRecord]) -> None:
        if self.hold is not None:
            assert self.hold.wait(10)
        self.threads.add(threading.current_thread().name)
        self.batches.append([r.value["after"]["id"] for r in batch])


def now_ms() -> float:
    return time.time() * 1000


def test_a_full_batch_ends_at_the_transaction_end_and_is_applied_on_the_worker() -> None:
    applied = Applied()
    cadence = BatchCadence(applied, max_events=3, max_interval_ms=60_000)
    # Events 2-4 are one transaction: the batch of 3 extends to its end.
    cadence.add([event(1, now_ms()), *(event(n, now_ms(), pos=200) for n in (2, 3, 4)), event(5, now_ms())])
    cadence.wait()
    assert applied.batches == [[1, 2, 3, 4]] and cadence.pending == 1
    assert all(name.startswith("delta-batch") for name in applied.threads)
    cadence.drain()  # the rest, in the calling thread
    assert applied.batches == [[1, 2, 3, 4], [5]]
    assert threading.current_thread().name in applied.threads
    cadence.close()


def test_once_caught_up_the_interval_ends_a_batch() -> None:
    applied = Applied()
    cadence = BatchCadence(applied, max_events=1000, max_interval_ms=50)
    cadence.add([event(1, now_ms())])
    cadence.tick()
    assert applied.batches == []  # not due yet
    time.sleep(0.06)
    cadence.tick()
    cadence.wait()
    assert applied.batches == [[1]]
    cadence.close()


def test_while_behind_the_batch_grows_up_to_its_bound() -> None:
    applied = Applied()
    cadence = BatchCadence(applied, max_events=1000, max_interval_ms=30)
    old = now_ms() - 3_600_000  # an hour behind the source
    cadence.add([event(1, old)])
    time.sleep(0.05)
    cadence.add([event(2, old + 1000)])  # due by the interval, but read from the past
    cadence.wait()
    assert applied.batches == []
    time.sleep(BEHIND_INTERVALS * 0.03)
    cadence.tick()  # a batch grows for BEHIND_INTERVALS intervals at most
    cadence.wait()
    assert applied.batches == [[1, 2]]
    # Caught up: the interval ends batches again.
    cadence.add([event(3, now_ms())])
    time.sleep(0.05)
    cadence.tick()
    cadence.wait()
    assert applied.batches == [[1, 2], [3]]
    cadence.close()


def test_records_arriving_while_the_worker_commits_join_the_next_batch() -> None:
    hold = threading.Event()
    applied = Applied(hold)
    cadence = BatchCadence(applied, max_events=2, max_interval_ms=60_000)
    cadence.add([event(1, now_ms()), event(2, now_ms())])  # full: handed over, the worker is held
    cadence.add([event(3, now_ms())])  # returns at once: the worker is busy, nothing blocks
    assert cadence.busy and cadence.pending == 1
    hold.set()
    cadence.add([event(4, now_ms())])  # full again: waits for the worker's batch, then hands over
    cadence.wait()
    assert applied.batches == [[1, 2], [3, 4]]
    cadence.close()


def test_a_failed_batch_is_raised_by_the_next_call() -> None:
    def fail(batch: list[Any]) -> None:
        raise OSError("Delta commit failed")

    cadence = BatchCadence(fail, max_events=1, max_interval_ms=60_000)
    with pytest.raises(OSError, match="Delta commit failed"):  # by add's own check, or the tick
        cadence.add([event(1, now_ms())])
        time.sleep(0.05)
        cadence.tick()
    cadence.tick()  # raised once
    cadence.close()


def test_behind_but_quiet_means_the_binlog_end_is_reached_and_the_batch_is_due() -> None:
    applied = Applied()
    cadence = BatchCadence(applied, max_events=1000, max_interval_ms=30, quiet_ms=100)
    cadence.add([event(1, now_ms() - 600_000)])  # the last event of a backlog, ten minutes old
    time.sleep(0.05)
    cadence.tick()
    cadence.wait()
    assert applied.batches == []  # events may still be coming
    time.sleep(0.1)
    cadence.tick()  # none came: the reader is at the end
    cadence.wait()
    assert applied.batches == [[1]]
    cadence.close()
