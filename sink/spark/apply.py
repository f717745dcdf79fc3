"""``mysql-cdc spark-apply``: the connectors' Kafka topics into Delta tables with Spark Structured
Streaming, through the Spark sink's own apply path.

The job reads the topics with Spark's Kafka source (``kafka.isolation.level=read_committed``, so a
transactional producer's records appear whole), and every micro-batch (``foreachBatch``) is:

1. collected on the driver as Spark reads it and read into the connector's ``ChangeRecord``
   objects (``sink/spark/kafka_records.py``: schemas from the records themselves, a source offset
   rebuilt from each ``source`` block); a table whose topic is complete is applied (steps 2 and 3)
   while Spark reads the other topics (``sink/spark/pipeline.py``), the rest once everything has
   arrived; a bad record stops the job before anything after it is written;
2. split by connector (``source.name``, its ``topic.prefix``) and put in that connector's binlog
   order (transactions across tables in their server's order), each table's schema change events
   before its events whichever micro-batch brought them (``sink/spark/schema_changes.py``);
3. applied by one ``SparkSink`` per connector with ``SparkSink.apply_now``: the same batch reduction,
   MERGE into current-state tables, changelog appends and schema evolution as the in-process sink.

Exactly once: Spark's checkpoint records each micro-batch's Kafka offset ranges before it runs and
replays an unfinished one after a crash; every Delta commit carries the offset of the last event
its table holds (the in-process sink's mechanism), and with ``kafka_input`` every event at or before
it is skipped, table by table, whenever it arrives: a replayed micro-batch, and also duplicates an
at-least-once connector wrote after its own restart.

Each connector has its own directory ``<warehouse>/<topic.prefix>/`` and its own Delta transaction
id (``mysql-cdc-apply:<topic.prefix>``); catalog names carry the prefix by default (see
``DEFAULT_TABLE_NAME_FORMAT``), and two connectors whose tables would get one name stop the job.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import MappingSource, by_name, int_of, parse_bool, split_list, text_of
from mysql_cdc_base.records import RecordKind
from mysql_cdc_base.table_id import TableId
from sink.base import SinkError
from sink.spark.kafka_records import KafkaRow, RecordReader, SourceRecord
from sink.spark.pipeline import (
    Arrivals,
    MicroBatchStats,
    Parts,
    arrow_batches,
    partition_counts,
    rows_of,
)
from sink.spark.schema_changes import SchemaChanges
from sink.spark.session import (
    DELTA_PACKAGE,
    KAFKA_SOURCE_PACKAGE,
    delta_jars,
    kafka_source_jars,
    spark_session,
)
from sink.spark.settings import (
    EVOLUTION_MODES,
    SPARK_SINK_PROPERTIES,
    SparkSinkSettings,
    check_name_format,
    warehouse_uri,
)
from sink.spark.sink import SparkSink

log = logging.getLogger(__name__)

DEFAULT_TABLE_NAME_FORMAT = "{prefix}_{database}.{table}"
DEFAULT_CHANGELOG_NAME_FORMAT = "{prefix}_{database}.{table}_changelog"
DEFAULT_QUERY_NAME = "mysql-cdc-apply"
STARTING_OFFSETS = ("earliest", "latest")
# The sink's declarations, for the keys the job shares with sink.type=spark.
_SPARK_SINK = by_name(SPARK_SINK_PROPERTIES)
# Set by the job itself: exactly-once reading and the topics come from their own settings.
# Table maintenance (sink/spark/maintenance.py): the job's tables are kept as the in-process sink's.
MAINTENANCE_KEYS = (
    "sink.spark.optimize.interval.commits",
    "sink.spark.vacuum.interval.ms",
    "sink.spark.vacuum.retention.hours",
)
_FIXED_KAFKA_OPTIONS = {"isolation.level", "bootstrap.servers", "group.id", "auto.offset.reset"}
_KNOWN_KEYS = {
    "kafka.bootstrap.servers",
    "topics",
    "topics.regex",
    "sink.spark.warehouse",
    "sink.spark.master",
    "sink.spark.log.level",
    "sink.spark.schema.evolution",
    "sink.spark.table.name.format",
    "sink.spark.changelog.name.format",
    *MAINTENANCE_KEYS,
    "spark.apply.checkpoint.location",
    "spark.apply.trigger.interval.ms",
    "spark.apply.max.offsets.per.trigger",
    "spark.apply.starting.offsets",
    "spark.apply.query.name",
    "spark.apply.fail.on.data.loss",
}
_PREFIXES = ("sink.spark.conf.", "spark.apply.kafka.")
# Kafka consumer settings the job defaults (spark.apply.kafka.* overrides them). A micro-batch reads
# each topic partition up to an end offset it already knows, and with Kafka's default
# fetch.max.wait.ms (500) every partition's read ends waiting that long at the broker for records
# past the end: 41 topics cost 10 s a micro-batch on 2 cores, the most of the job's catch-up time.
KAFKA_DEFAULTS = {"fetch.max.wait.ms": "10"}


@dataclass(frozen=True)
class ApplySettings:
    bootstrap_servers: str
    warehouse: str
    checkpoint_location: str
    topics: tuple[str, ...] = ()
    topics_regex: str | None = None
    master: str = "local[*]"
    conf: Mapping[str, str] = field(default_factory=dict)
    log_level: str | None = None
    evolution: str = "rewrite"
    table_name_format: str = DEFAULT_TABLE_NAME_FORMAT
    changelog_name_format: str = DEFAULT_CHANGELOG_NAME_FORMAT
    trigger_interval_ms: int = 5000
    max_offsets_per_trigger: int = 50000
    starting_offsets: str = "earliest"
    query_name: str = DEFAULT_QUERY_NAME
    fail_on_data_loss: bool = True
    kafka_options: Mapping[str, str] = field(default_factory=dict)
    optimize_interval_commits: int = int(_SPARK_SINK["sink.spark.optimize.interval.commits"].default or 0)
    vacuum_interval_ms: int = int(_SPARK_SINK["sink.spark.vacuum.interval.ms"].default or 0)
    vacuum_retention_hours: int = int(_SPARK_SINK["sink.spark.vacuum.retention.hours"].default or 0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "warehouse", warehouse_uri(self.warehouse))

    def sink_settings(self, prefix: str) -> SparkSinkSettings:
        """The Spark sink settings of one connector's tables (``topic.prefix`` ``prefix``)."""
        tag = re.sub(r"[^A-Za-z0-9_]", "_", prefix)
        return SparkSinkSettings(
            warehouse=f"{self.warehouse}/{prefix}",
            master=self.master,
            conf=self.conf,
            log_level=self.log_level,
            table_name_format=self.table_name_format.replace("{prefix}", tag),
            changelog_name_format=self.changelog_name_format.replace("{prefix}", tag),
            evolution=self.evolution,
            app_id=f"mysql-cdc-apply:{prefix}",
            converter_settings=None,  # schemas come from the records alone
            kafka_input=True,
            optimize_interval_commits=self.optimize_interval_commits,
            vacuum_interval_ms=self.vacuum_interval_ms,
            vacuum_retention_hours=self.vacuum_retention_hours,
        )

    def consumer_options(self) -> dict[str, str]:
        """The Kafka consumer settings of the job's reads: ``KAFKA_DEFAULTS``, then
        ``spark.apply.kafka.*``."""
        return {**KAFKA_DEFAULTS, **self.kafka_options}

    def subscribes(self, topic: str) -> bool:
        """Is ``topic`` among the job's topics? (``topics.regex`` is a Java regex, matched here
        with Python's, which agree on the patterns topic names need.)"""
        if self.topics_regex is None:
            return topic in self.topics
        try:
            return re.fullmatch(self.topics_regex, topic) is not None
        except re.error:
            return False

    def session_conf(self) -> dict[str, str]:
        """``sink.spark.conf.*`` plus the Delta and Kafka source jars (shipped to executors)."""
        conf = dict(self.conf)
        if "spark.jars" not in conf and "spark.jars.packages" not in conf:
            jars = delta_jars() + kafka_source_jars()
            if delta_jars() and kafka_source_jars():
                conf["spark.jars"] = ",".join(jars)
            else:
                conf["spark.jars.packages"] = f"{DELTA_PACKAGE},{KAFKA_SOURCE_PACKAGE}"
        conf.setdefault("spark.app.name", self.query_name)
        return conf


def apply_settings(props: Mapping[str, str]) -> ApplySettings:
    """The job's settings from its properties (``mysql-cdc spark-apply --config``)."""

    source = MappingSource(props)
    get = source.get

    def required(key: str, what: str) -> str:
        value = get(key)
        if value is None:
            raise ConfigError(key, f"is required: {what}")
        return value

    def positive(key: str, default: int) -> int:
        text = get(key)
        try:
            value = int(text) if text is not None else default
        except ValueError:
            raise ConfigError(key, f"expected a positive integer, got {text!r}") from None
        if value < 1:
            raise ConfigError(key, f"must be a positive integer, got {value}")
        return value

    for key in sorted(props):
        if key not in _KNOWN_KEYS and not key.startswith(_PREFIXES):
            log.warning("unknown spark-apply property %s is ignored (check its spelling)", key)
    topics, regex = _topics(source)
    evolution = (text_of(source, _SPARK_SINK["sink.spark.schema.evolution"]) or "").lower()
    if evolution not in EVOLUTION_MODES:
        raise ConfigError("sink.spark.schema.evolution", f"must be one of {', '.join(EVOLUTION_MODES)}")
    starting = (get("spark.apply.starting.offsets") or "earliest").lower()
    if starting not in STARTING_OFFSETS:
        raise ConfigError("spark.apply.starting.offsets", f"must be one of {', '.join(STARTING_OFFSETS)}")
    fail_on_data_loss = parse_bool(
        "spark.apply.fail.on.data.loss", get("spark.apply.fail.on.data.loss") or "true"
    )
    formats = _name_formats(source)
    kafka_options = _kafka_options(source)
    return ApplySettings(
        bootstrap_servers=required("kafka.bootstrap.servers", "the Kafka cluster the connectors write to"),
        warehouse=required(
            "sink.spark.warehouse", "the directory or URI (file:, hdfs:, s3a:, abfss:) of the Delta tables"
        ),
        checkpoint_location=required(
            "spark.apply.checkpoint.location",
            "the streaming checkpoint (a directory or URI the driver and a restarted job share)",
        ),
        topics=topics,
        topics_regex=regex,
        master=text_of(source, _SPARK_SINK["sink.spark.master"]) or "",
        conf=source.subset("sink.spark.conf."),
        log_level=get("sink.spark.log.level"),
        evolution=evolution,
        table_name_format=formats["sink.spark.table.name.format"],
        changelog_name_format=formats["sink.spark.changelog.name.format"],
        trigger_interval_ms=positive("spark.apply.trigger.interval.ms", 5000),
        max_offsets_per_trigger=positive("spark.apply.max.offsets.per.trigger", 50000),
        starting_offsets=starting,
        query_name=get("spark.apply.query.name") or DEFAULT_QUERY_NAME,
        fail_on_data_loss=fail_on_data_loss,
        kafka_options=kafka_options,
        **_maintenance(source),
    )


def _topics(source: MappingSource) -> tuple[tuple[str, ...], str | None]:
    """``topics`` or ``topics.regex``: exactly one of them."""
    topics = tuple(split_list(source.get("topics")))
    regex = source.get("topics.regex")
    if bool(topics) == bool(regex):
        raise ConfigError(
            "topics", "set exactly one of topics (a comma-separated list) or topics.regex (a Java regex)"
        )
    if regex is not None:
        try:
            re.compile(regex)
        except re.error as exc:
            raise ConfigError(
                "topics.regex", f"{regex!r} is not a valid regular expression ({exc})"
            ) from None
    return topics, regex


def _name_formats(source: MappingSource) -> dict[str, str]:
    formats = {}
    for key, default in (
        ("sink.spark.table.name.format", DEFAULT_TABLE_NAME_FORMAT),
        ("sink.spark.changelog.name.format", DEFAULT_CHANGELOG_NAME_FORMAT),
    ):
        text = source.get(key) or default
        check_name_format(key, text.replace("{prefix}", "p"))
        formats[key] = text
    return formats


def _kafka_options(source: MappingSource) -> Mapping[str, str]:
    kafka_options = source.subset("spark.apply.kafka.")
    for key in kafka_options:
        if key in _FIXED_KAFKA_OPTIONS:
            raise ConfigError(
                f"spark.apply.kafka.{key}",
                "is set by the job (read_committed reading, kafka.bootstrap.servers, offsets in the "
                "checkpoint); remove it",
            )
    return kafka_options


def _maintenance(source: MappingSource) -> dict[str, int]:
    """The table maintenance settings, as ``sink.type=spark`` reads them (0 turns one off)."""
    out = {}
    for key in MAINTENANCE_KEYS:
        value = int_of(source, _SPARK_SINK[key])
        if value is None or value < 0:
            raise ConfigError(key, f"must be 0 or a positive integer, got {value!r}")
        out[key.removeprefix("sink.spark.").replace(".", "_")] = value
    return out


class MicroBatchApplier:
    """The ``foreachBatch`` function: one micro-batch of Kafka rows into the Delta tables."""

    def __init__(self, spark: SparkSession, settings: ApplySettings) -> None:
        self.spark = spark
        self.settings = settings
        self.reader = RecordReader()
        self.sinks: dict[str, SparkSink] = {}
        self.schema_changes: dict[str, SchemaChanges] = {}
        self._names: dict[str, tuple[str, TableId]] = {}  # catalog name -> (prefix, table)
        self._named: set[tuple[str, TableId | None]] = set()  # the tables whose names are checked
        self._lock = threading.Lock()
        self.error: BaseException | None = None  # what stopped the job
        self.batches = 0
        self.records = 0
        self.collect_seconds = 0.0
        self.early_topics = 0  # topics applied while Spark read the rest of their micro-batch
        self._worker: ThreadPoolExecutor | None = None  # applies parts while Spark reads on
        self._failed = False  # a part of this micro-batch failed: the rest is not applied
        # The topic each table's events came in ("": more than one), known from earlier micro-batches.
        self._homes: dict[tuple[str, TableId], str] = {}

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        with self._lock:
            try:
                self._run(frame, batch_id)
            except BaseException as exc:
                self.error = exc
                raise

    def _run(self, frame: DataFrame, batch_id: int) -> None:
        """The micro-batch as it arrives (``sink/spark/pipeline.py``): each topic parsed as Spark
        hands it over, a complete topic of one table's events applied in the worker thread while
        Spark reads the others, the rest at the end; returns once everything is committed."""
        started = time.perf_counter()
        self._failed = False
        arrivals = Arrivals(partition_counts(frame))
        waiting: dict[str, list[SourceRecord]] = {}
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="apply")
        parts = Parts(self._worker, functools.partial(self._apply_found, batch_id=batch_id))
        count = early = 0
        seen: list[SourceRecord] = []
        try:
            for batch in arrow_batches(frame):
                rows = rows_of(batch)
                count += len(rows)
                for row in rows:
                    done = arrivals.arrived(row.topic, row.partition)
                    if done in waiting and self._early(done, waiting[done]):
                        parts.add(waiting.pop(done))
                        early += 1
                    found = self.reader.read(row)
                    if found is not None:
                        waiting.setdefault(row.topic, []).append(found)
                        seen.append(found)
            self.collect_seconds = time.perf_counter() - started
            parts.add([s for topic in sorted(waiting) for s in waiting[topic]])
        except BaseException:
            parts.settle()  # nothing of the micro-batch is written after foreachBatch returns
            raise
        stats = MicroBatchStats(parts=0)
        for part in parts.results():  # (raises the first part's error)
            stats.add(part)
        self._learn_homes(seen)
        self.early_topics += early
        self._log(batch_id, count, stats, time.perf_counter() - started, early)

    def apply(self, rows: list[KafkaRow], batch_id: int) -> None:
        """A micro-batch's rows applied at once, after all of them are read and checked."""
        started = time.perf_counter()
        self._failed = False
        found = [s for s in map(self.reader.read, rows) if s is not None]
        self.collect_seconds = 0.0
        self._log(batch_id, len(rows), self._apply_found(found, batch_id), time.perf_counter() - started, 0)
        self._learn_homes(found)

    def _early(self, topic: str, found: Iterable[SourceRecord]) -> bool:
        """May this complete topic's records be applied before the rest of the micro-batch? Its
        schema change events (the connector's topic), or the events of the tables the default
        topic name names whose events came in this topic alone in earlier micro-batches
        (``sink/spark/pipeline.py``)."""
        return all(self._early_record(topic, s) for s in found)

    def _early_record(self, topic: str, s: SourceRecord) -> bool:
        table_id = s.record.table_id
        if s.record.kind is RecordKind.SCHEMA_CHANGE:
            return s.source == topic
        return (
            table_id is not None
            and topic == f"{s.source}.{table_id.database}.{table_id.table}"
            and self._homes.get((s.source, table_id)) == topic
        )

    def _learn_homes(self, found: Iterable[SourceRecord]) -> None:
        """Each table's topic, once the micro-batch is over: a table seen in two gets none."""
        for s in found:
            table_id = s.record.table_id
            if table_id is not None:
                key = (s.source, table_id)
                if self._homes.setdefault(key, s.record.topic) != s.record.topic:
                    self._homes[key] = ""

    def _apply_found(self, found: list[SourceRecord], batch_id: int) -> MicroBatchStats:
        """Records of the micro-batch (all of it, or the whole of some topics) into the tables:
        schema change events kept, the rest per connector in binlog order, checked, then written."""
        if self._failed:
            return MicroBatchStats()  # an earlier part failed: nothing more of the micro-batch
        try:
            return self._apply_parts(found, batch_id)
        except BaseException:
            self._failed = True
            raise

    def _apply_parts(self, found: list[SourceRecord], batch_id: int) -> MicroBatchStats:
        started = time.perf_counter()
        by_source: dict[str, list[SourceRecord]] = {}
        for s in found:
            if s.record.kind is RecordKind.SCHEMA_CHANGE:
                # Kept, and put before the table's events whichever micro-batch brings them.
                self._schema_changes(s.source).add(s)
            else:
                by_source.setdefault(s.source, []).append(s)
        for prefix, records in by_source.items():
            records.sort(key=lambda s: s.order)
            records[:] = _without_repeats(records)
            self._check_names(prefix, records)
        for prefix, records in by_source.items():
            # (May stop the job too: a column whose rename or drop no schema change tells.)
            records[:] = self._schema_changes(prefix).place(records, self._sink(prefix), batch_id)
        placed = time.perf_counter()
        # Everything is read and checked: only now is anything written.
        for prefix, records in sorted(by_source.items()):
            self._sink(prefix).apply_now([s.record for s in records])
        return MicroBatchStats(
            sum(len(r) for r in by_source.values()),
            set(by_source),
            placed - started,
            time.perf_counter() - placed,
        )

    def _log(self, batch_id: int, count: int, stats: MicroBatchStats, seconds: float, early: int) -> None:
        self.batches += 1
        self.records += count
        sinks = self.sinks.values()
        log.info(
            "micro-batch %d: %d Kafka records, %d change events of %d connector(s) applied in %.2f s "
            "(collect and read %.2f s, order %.2f s, apply %.2f s in %d part(s); %d of %d topic(s) "
            "applied while Spark read on; so far: %d Delta commits, %.2f s in Delta operations)",
            batch_id,
            count,
            stats.events,
            len(stats.sources),
            seconds,
            self.collect_seconds,
            stats.order_seconds,
            stats.apply_seconds,
            stats.parts,
            early,
            early + 1,
            sum(s.commits_written for s in sinks),
            sum(s.delta_seconds for s in sinks),
        )

    def _schema_changes(self, prefix: str) -> SchemaChanges:
        changes = self.schema_changes.get(prefix)
        if changes is None:
            changes = SchemaChanges(prefix, self.settings.subscribes(prefix), self.reader, self._read_topic)
            self.schema_changes[prefix] = changes
        return changes

    def _read_topic(self, topic: str, starting: dict[int, int] | None) -> list[KafkaRow]:
        """The topic's records from ``starting`` (per partition; None: the beginning) to its end,
        read committed: a bounded read of the same Kafka cluster, with the job's Kafka settings."""
        try:
            return self._read_range(topic, starting)
        except Exception:  # noqa: BLE001 - a partition the offsets do not name: read it all
            if starting is None:
                raise
            return self._read_range(topic, None)

    def _read_range(self, topic: str, starting: dict[int, int] | None) -> list[KafkaRow]:
        settings = self.settings
        reader = (
            self.spark.read.format("kafka")
            .option("kafka.bootstrap.servers", settings.bootstrap_servers)
            .option("kafka.isolation.level", "read_committed")
            .option("subscribe", topic)
            .option("startingOffsets", "earliest" if starting is None else json.dumps({topic: starting}))
            .option("endingOffsets", "latest")
            .option("failOnDataLoss", "false")  # retention may have removed early records
        )
        for key, value in settings.consumer_options().items():
            reader = reader.option(f"kafka.{key}", value)
        return kafka_rows(reader.load())

    def _sink(self, prefix: str) -> SparkSink:
        sink = self.sinks.get(prefix)
        if sink is None:
            sink = SparkSink(self.settings.sink_settings(prefix), self.spark)
            sink.start()  # reads the tables' committed offsets back
            self.sinks[prefix] = sink
        return sink

    def _check_names(self, prefix: str, records: list[SourceRecord]) -> None:
        names = self.settings.sink_settings(prefix)
        for table_id, s in {s.record.table_id: s for s in records}.items():
            if table_id is None or (prefix, table_id) in self._named:
                continue
            for name in names.names(table_id):
                owner = self._names.setdefault(name.lower(), (prefix, table_id))
                if owner != (prefix, table_id):
                    raise SinkError(
                        f"table {table_id} of connector {prefix} (topic {s.record.topic}) and table "
                        f"{owner[1]} of connector {owner[0]} would both be named {name}: keep "
                        "{prefix} in sink.spark.table.name.format and sink.spark.changelog.name.format"
                    )
            self._named.add((prefix, table_id))


def _without_repeats(records: list[SourceRecord]) -> list[SourceRecord]:
    """The records without the repeats inside one micro-batch (an event written twice, both copies
    in this micro-batch; across micro-batches the tables' committed offsets skip them): per table,
    an event at or before one already taken. ``records`` are in binlog order."""
    newest: dict[TableId, tuple[Any, ...]] = {}
    out = []
    for s in records:
        table_id, offset = s.record.table_id, s.record.offset
        if table_id is not None and offset is not None:
            key = offset.position_key
            seen = newest.get(table_id)
            if seen is not None and key <= seen:
                continue
            newest[table_id] = key
        out.append(s)
    if len(out) < len(records):
        log.info("%d change events arrived twice in this micro-batch; applied once", len(records) - len(out))
    return out


def kafka_rows(frame: DataFrame) -> list[KafkaRow]:
    """A Kafka source frame's records on the driver, in one Arrow collect (column batches, not a
    pickled ``Row`` per record)."""
    table = frame.select("topic", "partition", "offset", "key", "value").toArrow()
    return list(
        map(
            KafkaRow,
            table.column("topic").to_pylist(),
            table.column("partition").to_pylist(),
            table.column("offset").to_pylist(),
            table.column("key").to_pylist(),
            table.column("value").to_pylist(),
        )
    )


def job_session(settings: ApplySettings) -> SparkSession:
    """The job's SparkSession (Delta and Spark's Kafka source on its class path)."""
    return spark_session(settings.master, settings.session_conf(), settings.warehouse, settings.log_level)


def apply_stream(spark: SparkSession, settings: ApplySettings) -> StreamingQuery:
    """Start the job in ``spark`` (a session with Delta and the Kafka source: see
    :func:`job_session`) and return its query; ``query.lastProgress`` has Spark's progress
    metrics, ``query.exception()`` why it stopped."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", settings.bootstrap_servers)
        .option("kafka.isolation.level", "read_committed")
        .option("startingOffsets", settings.starting_offsets)
        .option("maxOffsetsPerTrigger", str(settings.max_offsets_per_trigger))
        .option("failOnDataLoss", str(settings.fail_on_data_loss).lower())
    )
    if settings.topics:
        reader = reader.option("subscribe", ",".join(settings.topics))
    else:
        reader = reader.option("subscribePattern", str(settings.topics_regex))
    for key, value in settings.consumer_options().items():
        reader = reader.option(f"kafka.{key}", value)
    applier = MicroBatchApplier(spark, settings)
    query = (
        reader.load()
        .writeStream.queryName(settings.query_name)
        .option("checkpointLocation", settings.checkpoint_location)
        .trigger(processingTime=f"{settings.trigger_interval_ms} milliseconds")
        .foreachBatch(applier)
        .start()
    )
    query.applier = applier  # type: ignore[attr-defined]
    return query
