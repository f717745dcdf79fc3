"""The property groups of the reference (``connector.reference``), as data: kept apart so that
``mysql-cdc --help`` can list them without loading the property table and the modules declaring it."""

from __future__ import annotations

from typing import NamedTuple


class Group(NamedTuple):
    key: str
    title: str
    summary: str


GROUPS: tuple[Group, ...] = (
    Group("required", "Required", "Every configuration sets these."),
    Group("connection", "Connection", "Reaching MySQL: TLS, time zone, timeouts and reconnection."),
    Group("filters", "Filters", "Which databases, tables, columns and GTID sources are captured."),
    Group("snapshot", "Snapshot and signals", "The initial snapshot, signals and incremental snapshots."),
    Group("streaming", "Streaming and events", "Topic names, what is emitted, heartbeats, failure handling."),
    Group("converters", "Converters and types", "How column values are represented; custom converters."),
    Group("transforms", "Transforms", "Single message transforms and their predicates."),
    Group("sink", "Sink selection", "Which sinks are fed."),
    Group("sink-jsonl", "Sink: JSON lines", "sink.type=jsonl (and stdout)."),
    Group("sink-kafka", "Sink: Kafka", "sink.type=kafka; sink.kafka.producer.* pass to the producer."),
    Group("sink-spark", "Sink: Spark / Delta", "sink.type=spark, the in-process Delta sink."),
    Group("stores", "Offset and schema history stores", "Where positions and DDL history are kept."),
    Group("advanced", "Advanced and operations", "Metrics, logs, data directory, batching."),
)
GROUP_KEYS = tuple(g.key for g in GROUPS)

# First match wins: more specific prefixes before their parents.
PREFIX_GROUPS: tuple[tuple[str, str], ...] = (
    ("database.include.", "filters"),
    ("database.exclude.", "filters"),
    ("table.", "filters"),
    ("column.include.", "filters"),
    ("column.exclude.", "filters"),
    ("gtid.source.", "filters"),
    ("message.key.columns", "filters"),
    ("snapshot.include.collection.", "filters"),
    ("database.", "connection"),
    ("connect.", "connection"),
    ("snapshot.", "snapshot"),
    ("legacy.snapshot.", "snapshot"),
    ("incremental.snapshot.", "snapshot"),
    ("signal.", "snapshot"),
    ("read.only", "snapshot"),
    ("sink.jsonl.", "sink-jsonl"),
    ("sink.kafka.", "sink-kafka"),
    ("sink.spark.", "sink-spark"),
    ("sink.", "sink"),
    ("offset.", "stores"),
    ("schema.history.", "stores"),
    ("exactly.once.", "stores"),
    ("transaction.boundary", "stores"),
    ("transforms", "transforms"),
    ("predicates", "transforms"),
    ("converters", "converters"),
    ("key.converter.", "converters"),
    ("value.converter.", "converters"),
    ("decimal.", "converters"),
    ("time.precision.", "converters"),
    ("bigint.", "converters"),
    ("binary.", "converters"),
    ("enable.time.adjuster", "converters"),
    ("column.", "converters"),
    ("datatype.", "converters"),
    ("include.schema.comments", "converters"),
    ("topic.", "streaming"),
    ("tombstones.", "streaming"),
    ("include.", "streaming"),
    ("provide.transaction.", "streaming"),
    ("skipped.operations", "streaming"),
    ("extended.headers.", "streaming"),
    ("heartbeat.", "streaming"),
    ("inconsistent.schema.", "streaming"),
    ("event.", "streaming"),
    ("binlog.", "streaming"),
    ("streaming.", "streaming"),
    ("skip.messages.", "streaming"),
    ("notification.", "advanced"),
    ("post.processors", "advanced"),
    ("name", "connection"),
)

# The declaring module's group, for a name no prefix rule knows (longest module prefix wins).
MODULE_GROUPS: tuple[tuple[str, str], ...] = (
    ("sink.jsonl", "sink-jsonl"),
    ("sink.kafka", "sink-kafka"),
    ("sink.spark", "sink-spark"),
    ("mysql_cdc_base.connect", "converters"),
    ("snapshot", "snapshot"),
    ("connector.sources", "streaming"),
    ("connector.stores", "stores"),
    ("connector.transforms", "transforms"),
    ("connector.records", "converters"),
)


def group_summary_lines() -> list[str]:
    """One line per group (for ``--help``): key, title and summary."""
    return [f"  {g.key:<11} {g.title}: {g.summary}" for g in GROUPS]
