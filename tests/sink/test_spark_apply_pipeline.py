"""How ``spark-apply`` takes a micro-batch in parts (``sink/spark/pipeline.py``): which topics are
complete from the order Spark hands its partitions over, and the worker that applies the parts in
order, the parts that arrive meanwhile together. (The job itself, with real Kafka and Spark, runs
these in ``test_spark_apply_schema.py`` and ``test_spark_apply_input.py``.)"""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.spark.kafka_records import SourceRecord
from sink.spark.pipeline import Arrivals, Parts


def test_a_topic_is_complete_once_another_partition_follows_each_of_its_partitions() -> None:
    arrivals = Arrivals(Counter({"p.db.a": 1, "p.db.b": 2, "p": 1}))
    assert arrivals.arrived("p.db.a", 0) is None
    assert arrivals.arrived("p.db.a", 0) is None  # the same partition's next batch
    assert arrivals.arrived("p.db.b", 0) == "p.db.a"
    assert arrivals.arrived("p", 0) is None  # b has one partition of two
    assert arrivals.arrived("p.db.b", 1) == "p"
    # The last partition is only known complete at the end of the micro-batch.


def test_a_partition_that_comes_back_or_an_unknown_plan_completes_nothing_before_the_end() -> None:
    arrivals = Arrivals(Counter({"p.db.a": 1, "p.db.b": 1, "p.db.c": 1}))
    arrivals.arrived("p.db.a", 0)
    arrivals.arrived("p.db.b", 0)
    assert arrivals.arrived("p.db.a", 0) is None  # a in two Spark partitions: nothing more early
    assert arrivals.broken
    assert arrivals.arrived("p.db.c", 0) is None
    unknown = Arrivals(None)
    assert unknown.arrived("p.db.a", 0) is None and unknown.arrived("p.db.b", 0) is None


def record(n: int) -> SourceRecord:
    change = ChangeRecord(
        topic="t", key_schema=None, key=None, value_schema=None, value=n, kind=RecordKind.DATA
    )
    return SourceRecord("p", (n,), change)


def test_parts_are_applied_in_order_and_those_added_meanwhile_together() -> None:
    started, release = threading.Event(), threading.Event()
    applied: list[list[int]] = []

    def apply(records: list[SourceRecord]) -> int:
        applied.append([s.record.value for s in records])
        started.set()
        release.wait(10)
        return len(records)

    with ThreadPoolExecutor(max_workers=1) as pool:
        parts = Parts(pool, apply)
        parts.add([record(1)])
        assert started.wait(10)
        parts.add([record(2)])  # while 1 is applied
        parts.add([record(3), record(4)])
        release.set()
        assert parts.results() == [1, 3]
        assert applied == [[1], [2, 3, 4]]
        parts.add([record(5)])  # the worker had stopped: it starts again
        assert parts.results() == [1, 3, 1]
    assert applied[-1] == [5]


def test_a_failed_part_is_raised_once_everything_added_has_been_handled() -> None:
    def apply(records: list[SourceRecord]) -> int:
        if records[0].record.value == 2:
            raise RuntimeError("part 2 failed")
        return len(records)

    with ThreadPoolExecutor(max_workers=1) as pool:
        parts = Parts(pool, apply)
        parts.add([record(1)])
        parts.results()
        parts.add([record(2)])
        with pytest.raises(RuntimeError, match="part 2 failed"):
            parts.results()
        parts.add([record(3)])  # (the applier's own check skips what follows a failure)
        with pytest.raises(RuntimeError, match="part 2 failed"):
            parts.results()
