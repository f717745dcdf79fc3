"""A micro-batch of ``mysql-cdc spark-apply`` taken in parts: its Kafka records reach the driver
as Spark reads them (one Arrow batch stream), and a table's records are applied as soon as all of
them have arrived, while Spark reads the other topics.

Spark's Kafka source gives every topic partition of a micro-batch one Spark partition (the job sets
neither ``minPartitions`` nor ``maxRecordsPerPartition``), and ``collectAsArrowToPython`` writes
each finished Spark partition's Arrow batches to the driver together, as the partition finishes.
So a topic partition is complete once a batch of another one follows it, and a topic once all its
partitions in the micro-batch are (``partition_counts``: read from the micro-batch's own input
partitions). Anything this module cannot tell is applied at the end of the micro-batch, as before.

Which records may go early (``early_topic``): a topic whose every record is of the table the
connector's default topic name (``<topic.prefix>.<database>.<table>``) names, and whose table has
been seen in no other topic. Events of one table are then all in that topic, so applying them
early cannot put a later event of the table before an earlier one that another topic still brings.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import pyarrow as pa
from pyspark.errors.exceptions.captured import unwrap_spark_exception
from pyspark.serializers import read_int
from pyspark.sql import DataFrame
from pyspark.sql.pandas.serializers import ArrowStreamSerializer
from pyspark.traceback_utils import SCCallSiteSync
from pyspark.util import _load_from_socket

from sink.spark.kafka_records import KafkaRow, SourceRecord

T = TypeVar("T")

_COLUMNS = ("topic", "partition", "offset", "key", "value")
# KafkaOffsetRange(topic-partition,fromOffset,untilOffset,preferredLoc) inside the input partitions'
# toString (case classes): the topic partition prints as "<topic>-<partition>".
_RANGE = re.compile(r"KafkaOffsetRange\((.+?)-(\d+),(-?\d+),(-?\d+),")
_SCAN_RDD = "DataSourceRDD"


def arrow_batches(frame: DataFrame) -> Iterator[pa.RecordBatch]:
    """The frame's records as Arrow batches in the order Spark finishes its partitions (not the
    frame's order), each as soon as the driver has it; the Kafka columns only."""
    selected = frame.select(*_COLUMNS)
    with SCCallSiteSync(selected.sparkSession.sparkContext):
        port, secret, server = selected._jdf.collectAsArrowToPython()
    try:
        # A stream of un-ordered batches, then the batches' order (or the JVM's error).
        yield from _load_from_socket((port, secret), _UnorderedArrow())
    finally:
        with unwrap_spark_exception():
            server.getResult()  # the JVM side's exception, if any


class _UnorderedArrow(ArrowStreamSerializer):
    """``ArrowCollectSerializer`` without the trailing batch order (records carry their offsets)."""

    def load_stream(self, stream: Any) -> Iterator[pa.RecordBatch]:
        yield from super().load_stream(stream)
        count = read_int(stream)
        if count == -1:
            from pyspark.serializers import UTF8Deserializer  # noqa: PLC0415 - the error path only

            raise RuntimeError(f"collecting the micro-batch failed: {UTF8Deserializer().loads(stream)}")
        for _ in range(count):
            read_int(stream)


def rows_of(batch: pa.RecordBatch) -> list[KafkaRow]:
    columns = [batch.column(name).to_pylist() for name in _COLUMNS]
    return list(map(KafkaRow, *columns))


def partition_counts(frame: DataFrame) -> Counter[str] | None:
    """Per topic, the Spark partitions (topic partitions with records to read) of a micro-batch's
    frame; None when the plan does not show them (nothing is then applied before the end)."""
    try:
        rdd = frame._jdf.queryExecution().toRdd()
        for _ in range(16):
            if rdd.getClass().getSimpleName() == _SCAN_RDD:
                break
            deps = rdd.dependencies()
            if deps.size() != 1:
                return None
            rdd = deps.head().rdd()
        else:
            return None
        # (DataSourceRDDPartition(index, inputPartitions) prints no fields: each one's partitions do)
        texts = [str(part.inputPartitions()) for part in rdd.partitions()]
    except Exception:  # noqa: BLE001 - an unknown plan: no early applies
        return None
    ranges = [_RANGE.findall(text) for text in texts]
    if any(len(found) != 1 for found in ranges):
        return None  # (a Spark partition of several topic partitions: no early applies)
    return Counter(found[0][0] for found in ranges)


class Arrivals:
    """Which topics of a micro-batch are complete, from the order its partitions arrive in."""

    def __init__(self, expected: Counter[str] | None) -> None:
        self._expected = expected
        self._done: Counter[str] = Counter()
        self._seen: set[tuple[str, int]] = set()
        self._current: tuple[str, int] | None = None
        self.broken = expected is None  # nothing is known complete before the end

    def arrived(self, topic: str, partition: int) -> str | None:
        """A batch of this topic partition arrived: the topic completed by it, if any (the
        partition before it is complete)."""
        where = (topic, partition)
        if where == self._current or self.broken:
            return None
        if where in self._seen:
            self.broken = True  # one topic partition in two Spark partitions: wait for the end
            return None
        finished, self._current = self._current, where
        self._seen.add(where)
        if finished is None:
            return None
        self._done[finished[0]] += 1
        assert self._expected is not None
        return finished[0] if self._done[finished[0]] == self._expected[finished[0]] else None


@dataclass
class MicroBatchStats:
    """What applying (part of) a micro-batch did, for its log line."""

    events: int = 0
    sources: set[str] = field(default_factory=set)
    order_seconds: float = 0.0
    apply_seconds: float = 0.0
    parts: int = 1

    def add(self, other: MicroBatchStats) -> None:
        self.parts += other.parts
        self.events += other.events
        self.sources |= other.sources
        self.order_seconds += other.order_seconds
        self.apply_seconds += other.apply_seconds


class Parts(Generic[T]):
    """A micro-batch's parts applied by ``apply`` in one worker thread, in the order they are
    added: the parts added while one is applied are applied together next (one sink batch, whose
    tables commit side by side)."""

    def __init__(self, pool: ThreadPoolExecutor, apply: Callable[[list[SourceRecord]], T]) -> None:
        self._pool = pool
        self._apply = apply
        self._ready: list[SourceRecord] = []
        self._lock = threading.Lock()
        self._running = False
        self._futures: list[Future[list[T]]] = []

    def add(self, records: list[SourceRecord]) -> None:
        with self._lock:
            self._ready.extend(records)
            if self._running:
                return  # the worker takes them when it is done with what it applies
            self._running = True
        self._futures.append(self._pool.submit(self._drain))

    def settle(self) -> None:
        """Return once everything added is applied (or failed)."""
        wait(self._futures)

    def results(self) -> list[T]:
        """Once everything added is applied: what each apply returned; raises the first failure."""
        self.settle()
        return [result for future in self._futures for result in future.result()]

    def _drain(self) -> list[T]:
        out: list[T] = []
        try:
            while True:
                with self._lock:
                    take, self._ready = self._ready, []
                    if not take:
                        self._running = False
                        return out
                out.append(self._apply(take))
        except BaseException:
            with self._lock:
                self._running = False
            raise
