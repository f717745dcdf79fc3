"""Connector configuration: Debezium's property names, read from a Java ``.properties`` file.

One table of ``Property`` definitions drives everything: parsing and validation (a bad value names
the key and the expected form), defaults, the ``--help`` reference, unknown-key warnings and secret
redaction. Components read their own keys with ``get``/``get_int``/``get_bool``/``subset``; the
properties every part needs are exposed as typed attributes.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import javaproperties

from ddl.errors import ConfigError
from snapshot.policy.modes import MODE_ALIASES, SNAPSHOT_MODES

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Property:
    name: str
    default: str | None = None
    kind: str = "string"  # string | int | bool | list | choice | choice-list | regex-list
    choices: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)  # deprecated choice → current
    required: bool = False
    secret: bool = False
    doc: str = ""
    minimum: int | None = None


def _p(name: str, default: str | None = None, doc: str = "", **kw: Any) -> Property:
    return Property(name, default, doc=doc, **kw)


PROPERTIES: tuple[Property, ...] = (
    # -- connection
    _p("name", "mysql-cdc", "Connector name; keys the stored offsets (as Kafka Connect's connector name)."),
    _p("database.hostname", doc="MySQL host.", required=True),
    _p("database.port", "3306", "MySQL port.", kind="int", minimum=1),
    _p("database.user", doc="Connector user (needs the grants in the README).", required=True),
    _p("database.password", "", "Connector user's password (never logged).", secret=True),
    _p(
        "database.server.id",
        doc="Replica server id, unique in the replication topology.",
        kind="int",
        required=True,
        minimum=1,
    ),
    _p(
        "database.ssl.mode",
        "preferred",
        "TLS to MySQL on every connection: disabled; preferred (TLS when offered, unverified); "
        "required (TLS, unverified); verify_ca (the certificate chains to database.ssl.ca or "
        "database.ssl.truststore); verify_identity (and names database.hostname).",
        kind="choice",
        choices=("disabled", "preferred", "required", "verify_ca", "verify_identity"),
    ),
    _p("database.ssl.ca", doc="CA file (PEM) for verify_ca / verify_identity."),
    _p("database.ssl.cert", doc="Client certificate (PEM) presented to the server; with database.ssl.key."),
    _p("database.ssl.key", doc="Private key (PEM) of database.ssl.cert."),
    _p("database.ssl.key.password", doc="Password of an encrypted database.ssl.key.", secret=True),
    _p("database.ssl.keystore", doc="Client certificate and key as a PKCS12 keystore (Debezium's)."),
    _p("database.ssl.keystore.password", doc="Password of database.ssl.keystore.", secret=True),
    _p(
        "database.ssl.truststore",
        doc="CAs for verify_ca / verify_identity: a PEM bundle or a PKCS12 truststore.",
    ),
    _p("database.ssl.truststore.password", doc="Password of a PKCS12 database.ssl.truststore.", secret=True),
    _p(
        "database.connectionTimeZone",
        "SERVER",
        "Session time zone of the connector's SQL connections (snapshot, heartbeat action): an "
        "IANA name or ±hh:mm; SERVER keeps the server's. TIMESTAMP values are read in it and "
        "emitted in UTC whatever it is.",
    ),
    _p(
        "database.initial.statements",
        doc="';'-separated SQL run on each SQL (not binlog) connection when it opens; ';;' is a literal ';'.",
    ),
    _p("connect.timeout.ms", "30000", "Connect timeout.", kind="int", minimum=1),
    _p(
        "connect.keep.alive.interval.ms",
        "60000",
        "The server sends a replication heartbeat every 0.8 × this while the binlog is idle; a "
        "replication connection silent for longer than this is treated as lost and reconnected.",
        kind="int",
        minimum=1,
    ),
    _p(
        "connect.max.attempts",
        "5",
        "How many times a lost binlog connection is retried (with backoff) before the connector stops.",
        kind="int",
        minimum=1,
    ),
    # -- naming and filters
    _p("topic.prefix", doc="Logical server name; prefix of every topic. [A-Za-z0-9._-]", required=True),
    _p("topic.delimiter", ".", "Delimiter between topic name parts."),
    _p("topic.transaction", "transaction", "Transaction topic suffix: <prefix>.transaction."),
    _p("topic.heartbeat.prefix", "__debezium-heartbeat", "Heartbeat topic prefix."),
    _p("database.include.list", doc="Regexes (comma-separated) of databases to capture.", kind="regex-list"),
    _p("database.exclude.list", doc="Regexes of databases not to capture.", kind="regex-list"),
    _p("table.include.list", doc="Regexes of db.table to capture.", kind="regex-list"),
    _p("table.exclude.list", doc="Regexes of db.table not to capture.", kind="regex-list"),
    _p("column.include.list", doc="Regexes of db.table.column to include.", kind="regex-list"),
    _p("column.exclude.list", doc="Regexes of db.table.column to exclude.", kind="regex-list"),
    _p(
        "table.ignore.builtin",
        "true",
        "Ignore mysql, sys, information_schema, performance_schema.",
        kind="bool",
    ),
    _p("message.key.columns", doc="Custom keys: db.t:c1,c2;db.t2:c"),
    # -- data representation
    _p(
        "decimal.handling.mode",
        "precise",
        "DECIMAL representation.",
        kind="choice",
        choices=("precise", "double", "string"),
    ),
    _p(
        "time.precision.mode",
        "adaptive_time_microseconds",
        "Temporal representation.",
        kind="choice",
        choices=("adaptive_time_microseconds", "adaptive", "connect"),
    ),
    _p(
        "bigint.unsigned.handling.mode",
        "long",
        "BIGINT UNSIGNED representation.",
        kind="choice",
        choices=("long", "precise"),
    ),
    _p(
        "binary.handling.mode",
        "bytes",
        "Binary column representation.",
        kind="choice",
        choices=("bytes", "base64", "base64-url-safe", "hex"),
    ),
    _p("enable.time.adjuster", "true", "Two-digit years 00-69 → 20xx, 70-99 → 19xx.", kind="bool"),
    _p(
        "column.propagate.source.type",
        doc="Regexes of columns whose schema carries source type params.",
        kind="regex-list",
    ),
    _p(
        "datatype.propagate.source.type",
        doc="Regexes of type names whose columns carry source type params.",
        kind="regex-list",
    ),
    _p("include.schema.comments", "false", "Column comments become field docs.", kind="bool"),
    # -- events
    _p("tombstones.on.delete", "true", "Emit a tombstone after each delete.", kind="bool"),
    _p("include.schema.changes", "true", "Emit schema change events to the <prefix> topic.", kind="bool"),
    _p("include.query", "false", "Put the SQL of the change into source.query.", kind="bool"),
    _p("provide.transaction.metadata", "false", "Emit BEGIN/END transaction events.", kind="bool"),
    _p(
        "skipped.operations",
        "t",
        "Operations not emitted: comma-separated c, u, d, t, or none.",
        kind="choice-list",
        choices=("c", "u", "d", "t", "r", "m", "none"),
    ),
    _p("extended.headers.enabled", "true", "Add __debezium.context.* headers.", kind="bool"),
    _p("heartbeat.interval.ms", "0", "Heartbeat period; 0 disables.", kind="int", minimum=0),
    _p("heartbeat.action.query", doc="SQL run at each heartbeat."),
    _p(
        "inconsistent.schema.handling.mode",
        "fail",
        "Row event for a table of unknown structure.",
        kind="choice",
        choices=("fail", "warn", "skip"),
    ),
    _p(
        "event.processing.failure.handling.mode",
        "fail",
        "A binlog event whose rows cannot be decoded or converted: fail stops the connector "
        "naming the position; warn logs the position and skips the event; skip/ignore skip it "
        "silently.",
        kind="choice",
        choices=("fail", "warn", "skip", "ignore"),
    ),
    _p(
        "gtid.source.includes",
        doc="Regexes of GTID sources (MySQL server UUID, MariaDB domain-server) whose transactions are "
        "tracked in the offset; the others are skipped (gtid.source.filter.dml.events) and taken from "
        "the server's executed set on restart.",
        kind="regex-list",
    ),
    _p(
        "gtid.source.excludes",
        doc="Regexes of GTID sources to leave out (see gtid.source.includes).",
        kind="regex-list",
    ),
    _p(
        "gtid.source.filter.dml.events",
        "true",
        "Skip the row events of transactions whose GTID source gtid.source.includes/excludes leave out.",
        kind="bool",
    ),
    _p(
        "event.deserialization.failure.handling.mode",
        None,
        "A binlog event that would lose changes if passed (DML logged as SQL, a row image without "
        "all columns, a partial JSON update, a compressed or unknown event): fail stops before it "
        "naming the setting and position; warn/skip pass it (logged). Unset: "
        "event.processing.failure.handling.mode.",
        kind="choice",
        choices=("fail", "warn", "skip"),
        aliases={"ignore": "skip"},
    ),
    _p("max.batch.size", "2048", "Records handed to the sinks at once.", kind="int", minimum=1),
    _p(
        "max.queue.size",
        "8192",
        "Most records held between the binlog reader and the sinks' durable flush; when full, "
        "reading waits for the sinks to flush (backpressure). Must exceed max.batch.size.",
        kind="int",
        minimum=1,
    ),
    _p("poll.interval.ms", "500", "Longest wait before a partial batch is delivered.", kind="int", minimum=1),
    # -- single message transforms (connector/transforms)
    _p(
        "transforms",
        doc="Comma-separated transform aliases, applied in order to every record before the sinks; "
        "each configured by transforms.<alias>.type (a Java class name, e.g. "
        "io.debezium.transforms.ExtractNewRecordState) and transforms.<alias>.<option>, optionally "
        "transforms.<alias>.predicate and .negate (Kafka Connect's syntax).",
    ),
    _p(
        "predicates",
        doc="Comma-separated predicate aliases for transforms.<alias>.predicate; each configured by "
        "predicates.<alias>.type (e.g. org.apache.kafka.connect.transforms.predicates.TopicNameMatches) "
        "and predicates.<alias>.<option>.",
    ),
    _p(
        "converters",
        doc="Comma-separated custom converter aliases; each configured by <alias>.type (e.g. "
        "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter) and <alias>.<option> "
        "(connector/records/custom_converters.py; register your own with register_converter).",
    ),
    # -- snapshot
    _p(
        "snapshot.mode",
        "initial",
        "When to snapshot (custom: the snapshot.spi.Snapshotter named by snapshot.mode.custom.name).",
        kind="choice",
        choices=SNAPSHOT_MODES,
        aliases=dict(MODE_ALIASES),
    ),
    _p(
        "snapshot.mode.custom.name",
        doc="With snapshot.mode=custom: the Snapshotter plugin, an entry point name of the group "
        "mysql_cdc.snapshotters or package.module:Class; its own options go under "
        "snapshot.mode.custom.<option>.",
    ),
    _p(
        "snapshot.query.mode",
        "select_all",
        "The SELECT reading each table in a start-up snapshot (custom: the snapshot.spi.SnapshotQuery "
        "named by snapshot.query.mode.custom.name; snapshot.select.statement.overrides still win; "
        "signalled snapshots read with their own SELECT).",
        kind="choice",
        choices=("select_all", "custom"),
    ),
    _p(
        "snapshot.query.mode.custom.name",
        doc="With snapshot.query.mode=custom: the SnapshotQuery plugin, an entry point name of the "
        "group mysql_cdc.snapshot_queries or package.module:Class; options under "
        "snapshot.query.mode.custom.<option>.",
    ),
    _p(
        "snapshot.locking.mode",
        "minimal",
        "Locks taken during the snapshot (none: no locks, only safe "
        "when nothing writes during the snapshot or with no_data/recovery; custom: the minimal "
        "workflow with the global lock statement of the snapshot.spi.SnapshotLock named by "
        "snapshot.locking.mode.custom.name).",
        kind="choice",
        choices=(
            "minimal",
            "extended",
            "none",
            "minimal_percona",
            "minimal_percona_no_table_locks",
            "minimal_at_least_once",
            "custom",
        ),
    ),
    _p(
        "snapshot.locking.mode.custom.name",
        doc="With snapshot.locking.mode=custom: the SnapshotLock plugin, an entry point name of the "
        "group mysql_cdc.snapshot_locks or package.module:Class; options under "
        "snapshot.locking.mode.custom.<option>.",
    ),
    _p(
        "snapshot.tables.order.by.row.count",
        "disabled",
        "Snapshot table order by estimated rows.",
        kind="choice",
        choices=("ascending", "descending", "disabled"),
    ),
    _p("snapshot.lock.timeout.ms", "10000", "Lock wait timeout during the snapshot.", kind="int", minimum=0),
    _p("snapshot.fetch.size", doc="Rows fetched per round trip during the snapshot.", kind="int", minimum=1),
    _p(
        "snapshot.max.threads",
        "1",
        "Snapshot readers: > 1 cuts each table with a primary key into key-range chunks read by that "
        "many processes in one consistent view (rows still emitted in key order).",
        kind="int",
        minimum=1,
    ),
    _p(
        "snapshot.max.threads.multiplier",
        "1",
        "Chunked snapshot: at least snapshot.max.threads x this many chunks per table.",
        kind="int",
        minimum=1,
    ),
    _p(
        "legacy.snapshot.max.threads",
        "false",
        "With snapshot.max.threads > 1: read whole tables in parallel, one per thread (before Debezium 3.5).",
        kind="bool",
    ),
    _p("snapshot.include.collection.list", doc="Regexes of captured tables to snapshot.", kind="regex-list"),
    _p("snapshot.select.statement.overrides", doc="db.table list whose SELECT is overridden."),
    _p(
        "snapshot.delay.ms",
        "0",
        "Wait after start-up checks before the snapshot starts (stop() interrupts it).",
        kind="int",
        minimum=0,
    ),
    # -- signals and on-demand snapshots (connector.sources.signals, connector.sources.incremental)
    _p("signal.data.collection", doc="The signal table db.table (id, type, data) for the source channel."),
    _p(
        "signal.enabled.channels",
        "source",
        "Where signals are read: source (the signal table), kafka, file, in-process.",
        kind="choice-list",
        choices=("source", "kafka", "file", "in-process"),
    ),
    _p(
        "signal.poll.interval.ms",
        "5000",
        "How often the kafka and file channels are read.",
        kind="int",
        minimum=0,
    ),
    _p("signal.kafka.topic", doc="Topic of the kafka signal channel (default <topic.prefix>-signal)."),
    _p("signal.kafka.bootstrap.servers", doc="Brokers of the kafka signal channel."),
    _p("signal.kafka.groupId", "kafka-signal", "Consumer group of the kafka signal channel."),
    _p(
        "signal.kafka.poll.timeout.ms",
        "100",
        "How long one read of the kafka signal channel waits.",
        kind="int",
        minimum=0,
    ),
    _p("signal.file", "file-signals.txt", "File of the file signal channel (one JSON signal a line)."),
    _p(
        "incremental.snapshot.chunk.size",
        "1024",
        "Rows read per incremental snapshot chunk.",
        kind="int",
        minimum=1,
    ),
    _p(
        "incremental.snapshot.allow.schema.changes",
        "false",
        "Re-read the open chunk when its table's structure changes during the window.",
        kind="bool",
    ),
    _p(
        "incremental.snapshot.watermarking.strategy",
        "insert_insert",
        "How windows are marked in the signal table: insert_insert or insert_delete.",
        kind="choice",
        choices=("insert_insert", "insert_delete"),
    ),
    _p(
        "read.only",
        "false",
        "Incremental snapshots without writing to the server (GTID watermarks).",
        kind="bool",
    ),
    # -- offsets and schema history
    _p(
        "offset.storage",
        "file",
        "Where offsets live.",
        kind="choice",
        choices=("file", "kafka", "memory"),
        aliases={
            "org.apache.kafka.connect.storage.FileOffsetBackingStore": "file",
            "org.apache.kafka.connect.storage.KafkaOffsetBackingStore": "kafka",
            "org.apache.kafka.connect.storage.MemoryOffsetBackingStore": "memory",
        },
    ),
    _p("offset.storage.file.filename", doc="Offsets file (default <data.dir>/offsets.json)."),
    _p("offset.storage.topic", doc="Offsets topic for offset.storage=kafka."),
    _p(
        "offset.flush.interval.ms",
        "1000",
        "How often the sinks are flushed and the offset stored (0: after every batch).",
        kind="int",
        minimum=0,
    ),
    _p("offset.storage.partitions", "25", "Partitions of a new offsets topic.", kind="int", minimum=1),
    _p(
        "exactly.once.support",
        "disabled",
        "Kafka Connect's exactly-once source support (KIP-618): required (a transactional producer "
        "commits each batch with its offset in the offset topic; start-up refuses a configuration "
        "that cannot be exactly once), requested (the same where the configuration allows it, "
        "otherwise at least once with a warning naming the keys), disabled (at least once).",
        kind="choice",
        choices=("required", "requested", "disabled"),
    ),
    _p(
        "transaction.boundary",
        "poll",
        "With exactly.once.support: poll (each batch handed to the sink is one transaction) or "
        "interval (one transaction every transaction.boundary.interval.ms); connector is refused.",
        kind="choice",
        choices=("poll", "interval", "connector"),
    ),
    _p(
        "transaction.boundary.interval.ms",
        doc="Transaction length for transaction.boundary=interval (default offset.flush.interval.ms).",
        kind="int",
        minimum=1,
    ),
    _p(
        "offset.storage.replication.factor",
        "-1",
        "Replication factor of a new offsets topic (-1: the broker's default).",
        kind="int",
    ),
    _p(
        "schema.history.internal",
        "file",
        "Where schema history lives.",
        kind="choice",
        choices=("file", "kafka", "memory"),
        aliases={
            "io.debezium.storage.file.history.FileSchemaHistory": "file",
            "io.debezium.storage.kafka.history.KafkaSchemaHistory": "kafka",
            "io.debezium.relational.history.MemorySchemaHistory": "memory",
        },
    ),
    _p(
        "schema.history.internal.file.filename", doc="History file (default <data.dir>/schema-history.jsonl)."
    ),
    _p("schema.history.internal.kafka.topic", doc="History topic for schema.history.internal=kafka."),
    _p("schema.history.internal.kafka.bootstrap.servers", doc="Brokers for the history topic."),
    _p(
        "schema.history.internal.name",
        doc="Client id of the history store (default <topic.prefix>-schemahistory).",
    ),
    _p(
        "schema.history.internal.skip.unparseable.ddl",
        "false",
        "Log and skip DDL the parser cannot read instead of stopping.",
        kind="bool",
    ),
    _p(
        "schema.history.internal.ddl.filter",
        doc="Comma-separated regexes of DDL statements that are "
        "neither applied, stored nor emitted (default: Debezium's list of server-generated and "
        "non-table statements).",
    ),
    _p(
        "schema.history.internal.prefer.ddl",
        "false",
        "Recovery replays the DDL text instead of the recorded tableChanges.",
        kind="bool",
    ),
    _p(
        "schema.history.internal.store.only.captured.tables.ddl",
        "false",
        "Record only DDL of captured tables.",
        kind="bool",
    ),
    _p(
        "schema.history.internal.store.only.captured.databases.ddl",
        "false",
        "Record only DDL of captured databases.",
        kind="bool",
    ),
    # -- our runtime and sinks
    _p("data.dir", ".mysql-cdc", "Directory for the default offsets and history files."),
    _p(
        "metrics.port",
        "0",
        "Port of the HTTP endpoint with Debezium's metrics (/metrics) and /health; 0: off.",
        kind="int",
        minimum=0,
    ),
    _p("metrics.host", "127.0.0.1", "Address the metrics endpoint binds."),
    _p(
        "progress.interval.ms",
        "0",
        "Interval of the streaming progress log line (events/s, records delivered, "
        "MilliSecondsBehindSource, binlog position); 0: off. mysql-cdc run uses 10000 when unset.",
        kind="int",
        minimum=0,
    ),
    _p(
        "log.format",
        "text",
        "Log line format of mysql-cdc run/snapshot: text, or json (one object per line with the "
        "connector name, server and context snapshot/streaming).",
        kind="choice",
        choices=("text", "json"),
    ),
    _p(
        "sink.type",
        "jsonl",
        "Comma-separated list of sinks to feed.",
        kind="choice-list",
        choices=("jsonl", "stdout", "memory", "kafka", "spark"),
    ),
    _p("sink.jsonl.path", doc="JSON lines output file (default <data.dir>/events.jsonl)."),
    _p("key.converter.schemas.enable", "true", "Keys carry their schema.", kind="bool"),
    _p("value.converter.schemas.enable", "true", "Values carry their schema.", kind="bool"),
    _p("sink.kafka.bootstrap.servers", doc="Kafka brokers for sink.type=kafka."),
    _p(
        "sink.kafka.client",
        "kafka-python",
        "The Kafka sink's producer: kafka-python, or confluent (librdkafka through confluent-kafka, "
        "the librdkafka extra: pip install 'mysql-cdc[librdkafka]'). Same records, keys, headers, "
        "partitions and guarantees.",
        kind="choice",
        choices=("kafka-python", "confluent"),
    ),
    _p(
        "sink.spark.warehouse",
        doc="Where the Delta tables of sink.type=spark live: a path or a Hadoop URI (file:, hdfs:, s3a:, abfss:).",
    ),
    _p("sink.spark.master", "local[*]", "Spark master URL."),
    _p(
        "sink.spark.log.level",
        doc="Spark's own log level (SparkContext.setLogLevel). Unset: warn for a session the sink "
        "creates, an application's existing session is left alone.",
        kind="choice",
        choices=("all", "trace", "debug", "info", "warn", "error", "fatal", "off"),
    ),
    _p(
        "sink.spark.batch.max.events",
        "50000",
        "Events per Spark batch at most (a batch also ends after sink.spark.batch.max.interval.ms).",
        kind="int",
        minimum=1,
    ),
    _p(
        "sink.spark.batch.max.interval.ms",
        "5000",
        "Longest time a Spark batch stays open.",
        kind="int",
        minimum=1,
    ),
    _p("sink.spark.table.name.format", "{database}.{table}", "Catalog name of current-state tables."),
    _p(
        "sink.spark.changelog.name.format",
        "{database}.{table}_changelog",
        "Catalog name of changelog tables.",
    ),
    _p(
        "sink.spark.schema.evolution",
        "rewrite",
        "How drops, renames and type changes reach existing Delta tables: rewrite (one atomic "
        "rewrite; every Delta reader, delta-rs included, reads the tables) or column-mapping (Delta "
        "column mapping and type widening: metadata-only, readers need those table features).",
        kind="choice",
        choices=("rewrite", "column-mapping"),
    ),
)

# Prefixes whose keys are passed through to a component (not individually declared).
PASSTHROUGH_PREFIXES: tuple[str, ...] = (
    "signal.consumer.",
    "sink.kafka.producer.",
    "sink.spark.conf.",
    "schema.history.internal.producer.",
    "schema.history.internal.consumer.",
    "schema.history.internal.kafka.",
    "offset.storage.kafka.",
    "snapshot.select.statement.overrides.",
    "snapshot.mode.configuration.based.",
    # Options of the snapshot.spi plugins (passed to their configure()).
    "snapshot.mode.custom.",
    "snapshot.query.mode.custom.",
    "snapshot.locking.mode.custom.",
    "column.mask.hash.",
    "column.mask.with.",
    "column.truncate.to.",
    "topic.creation.",
    "sink.spark.",
    "sink.kafka.",
    "driver.",
    "transforms.",  # validated by connector.transforms.build_chain
    "predicates.",
)

# Debezium properties that change what is emitted and are not implemented: start-up stops naming
# the key and the hint. A key matches its entry exactly or as ``entry.`` prefix (``transforms``
# covers ``transforms.unwrap.type``). Remove an entry when its feature is implemented.
REFUSED: Mapping[str, str] = {
    "sink.spark.current.buckets": "the Spark sink writes Delta tables now: Delta lays out the files "
    "(remove the key; OPTIMIZE/ZORDER the tables from Spark if needed)",
    "sink.spark.retain.ms": "the Spark sink writes Delta tables now: old versions stay readable by "
    "time travel until VACUUM (delta.deletedFileRetentionDuration); remove the key",
    "signal.emit.failure": "not implemented (signals are never emitted by the connector)",
    "incremental.snapshot.max.threads": "incremental snapshots read one chunk at a time",
    "topic.naming.strategy": "only Debezium's default topic names <topic.prefix>.<db>.<table> are "
    "implemented (topic.delimiter, topic.transaction and topic.heartbeat.prefix adjust them)",
    "topic.heartbeat.name": "use topic.heartbeat.prefix",
    "schema.name.adjustment.mode": "only the default (none) is implemented",
    "field.name.adjustment.mode": "only the default (none) is implemented",
    "event.converting.failure.handling.mode": "not implemented: unconvertible values follow "
    "event.processing.failure.handling.mode",
    "unavailable.value.placeholder": "not implemented: binlog_row_image must be FULL",
    "binlog.buffer.size": "the look-ahead binlog buffer is not implemented",
    "skip.messages.without.change": "not implemented",
    "post.processors": "post processors are not implemented",
    "notification.enabled.channels": "notifications are not implemented",
    "transaction.metadata.factory": "only the default transaction metadata is implemented",
    "sourceinfo.struct.maker": "only the default source block is implemented",
    "ddl.parser.type": "only the default DDL parser is implemented",
    "streaming.delay.ms": "not implemented",
    "database.server.name": "renamed topic.prefix in Debezium 2.0",
    "database.history": "renamed schema.history.internal.* in Debezium 2.0",
}

# Debezium / Kafka Connect keys that configure the Java runtime and do not apply here: accepted
# without a warning (they change nothing a consumer sees).
NOT_APPLICABLE: frozenset[str] = frozenset(
    {
        "connector.class",
        "tasks.max",
        "key.converter",
        "value.converter",
        "header.converter",
        "database.jdbc.driver",
        "database.protocol",
        "connect.keep.alive",
        "errors.max.retries",
        "errors.retry.delay.initial.ms",
        "errors.retry.delay.max.ms",
        "errors.tolerance",
        "errors.log.enable",
        "errors.log.include.messages",
        "retriable.restart.connector.wait.ms",
        "statistics.metrics.enabled",
        "advanced.metrics.enable",
        "custom.metric.tags",
        "queue.provider.type",
        "executor.shutdown.timeout.ms",
        "offset.activity.monitor.interval.ms",
        "offset.flush.timeout.ms",
        "database.query.timeout.ms",
        "connection.validation.timeout.ms",
        "topic.cache.size",
        "use.nongraceful.disconnect",
    }
)

# Converters whose output is what the connector writes (the JSON converter, schemas per
# *.converter.schemas.enable); any other converter class changes the format and is refused.
_JSON_CONVERTERS = frozenset(
    {
        "org.apache.kafka.connect.json.JsonConverter",
        "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        "org.apache.kafka.connect.storage.StringConverter",
    }
)
_CONVERTER_KEYS = ("key.converter", "value.converter", "header.converter")


def refused_hint(key: str) -> str | None:
    """The reason a Debezium key is refused, or None when it is not."""
    for entry, hint in REFUSED.items():
        if key == entry or key.startswith(entry + "."):
            return hint
    return None


_BY_NAME = {p.name: p for p in PROPERTIES}
_SECRET_RE = re.compile(r"(password|secret|sasl\.jaas\.config|credential|token)", re.IGNORECASE)
_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TOPIC_PREFIX_RE = re.compile(r"^[A-Za-z0-9._-]+$")


def is_secret(key: str) -> bool:
    prop = _BY_NAME.get(key)
    return bool(prop and prop.secret) or bool(_SECRET_RE.search(key))


def redact(props: Mapping[str, str]) -> dict[str, str]:
    return {k: ("********" if is_secret(k) and v else v) for k, v in props.items()}


def substitute_env(value: str, key: str, environ: Mapping[str, str] | None = None) -> str:
    """Replace ``${VAR}`` / ``${VAR:-default}``; an unset variable without default is an error."""
    env = os.environ if environ is None else environ

    def repl(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ConfigError(key, f"environment variable {name} is not set (referenced as ${{{name}}})")

    return _ENV_RE.sub(repl, value)


def load_properties_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """The file's properties; any problem reading it is a ``ConfigError`` naming the file, and the
    line where the text is at fault."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ConfigError("--config", f"configuration file {p} does not exist") from None
    except OSError as exc:
        raise ConfigError("--config", f"cannot read configuration file {p}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            "--config", f"{p} line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"
        ) from None
    try:
        return dict(javaproperties.loads(text))
    except javaproperties.InvalidUEscapeError as exc:
        line = next((n for n, t in enumerate(text.splitlines(), 1) if exc.escape in t), 0)
        raise ConfigError("--config", f"{p} line {line}: invalid \\u escape {exc.escape!r}") from None
    except ValueError as exc:
        raise ConfigError("--config", f"{p}: {exc}") from None


def property_text(key: str, value: Any) -> str:
    """A property value given from Python as text: a class (a ``snapshot.spi`` plugin, for
    ``*.custom.name``) becomes its ``package.module:Class`` path; anything else ``str()``."""
    if not isinstance(value, type):
        return str(value)
    if "<locals>" in value.__qualname__:
        raise ConfigError(
            key,
            f"class {value.__qualname__} is defined inside a function; a plugin must be importable "
            "as package.module:Class (define it at module level)",
        )
    return f"{value.__module__}:{value.__qualname__}"


def property_texts(props: Mapping[str, Any]) -> dict[str, str]:
    return {k: property_text(k, v) for k, v in props.items()}


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError("--set", f"expected key=value, got {item!r}")
        out[key.strip()] = value
    return out


def compile_regex_list(key: str, text: str | None) -> tuple[re.Pattern[str], ...]:
    if not text:
        return ()
    patterns = []
    for part in (s.strip() for s in text.split(",")):
        if not part:
            continue
        try:
            # Debezium matches the whole identifier (Pattern.matches), case-insensitively.
            patterns.append(re.compile(part, re.IGNORECASE))
        except re.error as exc:
            raise ConfigError(key, f"{part!r} is not a valid regular expression ({exc})") from None
    return tuple(patterns)


class ConnectorConfig:
    """Validated connector properties."""

    def __init__(self, props: Mapping[str, str], *, warn_unknown: bool = True) -> None:
        self.raw: dict[str, str] = {k: substitute_env(str(v), k) for k, v in props.items()}
        for key in sorted(self.raw):
            hint = refused_hint(key)
            if hint is not None:
                raise ConfigError(key, f"this Debezium property is not supported: {hint}")
        for key in _CONVERTER_KEYS:
            value = self.raw.get(key, "").strip()
            if value and value not in _JSON_CONVERTERS:
                raise ConfigError(
                    key,
                    f"{value} is not supported: events are written in the JSON converter's format "
                    "(org.apache.kafka.connect.json.JsonConverter; see *.converter.schemas.enable)",
                )
        missing = [p.name for p in PROPERTIES if p.required and not (self.raw.get(p.name) or "").strip()]
        if len(missing) > 1:
            raise ConfigError(", ".join(missing), "are required")
        for prop in PROPERTIES:
            self._validate(prop)
        if self.int_of("max.queue.size") <= self.int_of("max.batch.size"):
            raise ConfigError(
                "max.queue.size",
                f"must be larger than max.batch.size ({self.int_of('max.batch.size')}), "
                f"got {self.int_of('max.queue.size')}",
            )
        if self.raw.get("database.include.list") and self.raw.get("database.exclude.list"):
            raise ConfigError(
                "database.exclude.list", "set either database.include.list or database.exclude.list, not both"
            )
        if self.raw.get("table.include.list") and self.raw.get("table.exclude.list"):
            raise ConfigError(
                "table.exclude.list", "set either table.include.list or table.exclude.list, not both"
            )
        if self.raw.get("gtid.source.includes") and self.raw.get("gtid.source.excludes"):
            raise ConfigError(
                "gtid.source.excludes", "set either gtid.source.includes or gtid.source.excludes, not both"
            )
        if self.raw.get("column.include.list") and self.raw.get("column.exclude.list"):
            raise ConfigError(
                "column.exclude.list", "set either column.include.list or column.exclude.list, not both"
            )
        if not _TOPIC_PREFIX_RE.match(self.topic_prefix):
            raise ConfigError(
                "topic.prefix", f"{self.topic_prefix!r} may contain only letters, digits, '.', '_' and '-'"
            )
        if warn_unknown:
            for key in self.unknown_keys():
                log.warning("unknown configuration property %s is ignored (check its spelling)", key)

    @classmethod
    def from_mapping(cls, props: Mapping[str, Any], **kw: Any) -> ConnectorConfig:
        return cls(property_texts(props), **kw)

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], overrides: Mapping[str, str] | None = None, **kw: Any
    ) -> ConnectorConfig:
        props = load_properties_file(path)
        props.update(overrides or {})
        return cls(props, **kw)

    # -- validation -----------------------------------------------------------------------------
    def _validate(self, prop: Property) -> None:
        value = self.raw.get(prop.name)
        if value is None or value.strip() == "":
            if prop.required:
                raise ConfigError(prop.name, f"is required ({prop.doc})")
            return
        value = value.strip()
        if prop.kind == "int":
            try:
                number = int(value)
            except ValueError:
                raise ConfigError(prop.name, f"expected an integer, got {value!r}") from None
            if prop.minimum is not None and number < prop.minimum:
                raise ConfigError(prop.name, f"must be at least {prop.minimum}, got {number}")
        elif prop.kind == "bool":
            if value.lower() not in ("true", "false"):
                raise ConfigError(prop.name, f"expected true or false, got {value!r}")
        elif prop.kind == "choice":
            canonical = prop.aliases.get(value, prop.aliases.get(value.lower(), value.lower()))
            if canonical not in prop.choices:
                raise ConfigError(prop.name, f"expected one of {', '.join(prop.choices)}, got {value!r}")
        elif prop.kind == "choice-list":
            for item in (v.strip() for v in value.split(",")):
                if item.lower() not in prop.choices:
                    raise ConfigError(
                        prop.name,
                        f"unknown value {item!r}; expected a comma-separated list "
                        f"of {', '.join(prop.choices)}",
                    )
        elif prop.kind == "regex-list":
            compile_regex_list(prop.name, value)

    def unknown_keys(self) -> list[str]:
        converters = tuple(
            f"{a.strip()}." for a in (self.raw.get("converters") or "").split(",") if a.strip()
        )
        return sorted(
            k
            for k in self.raw
            if k not in _BY_NAME
            and k not in NOT_APPLICABLE
            and not k.startswith(PASSTHROUGH_PREFIXES)
            and not k.startswith(converters)
        )

    # -- generic access -------------------------------------------------------------------------
    def get(self, key: str, default: str | None = None) -> str | None:
        value = self.raw.get(key)
        if value is None or value.strip() == "":
            prop = _BY_NAME.get(key)
            return (
                prop.default if prop is not None and prop.default is not None and default is None else default
            )
        return value.strip()

    def get_int(self, key: str, default: int | None = None) -> int | None:
        value = self.get(key)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise ConfigError(key, f"expected an integer, got {value!r}") from None

    def int_of(self, key: str) -> int:
        """An integer property's value, or its default from the property table."""
        value = self.get_int(key)
        if value is None:
            raise ConfigError(key, "is required (an integer)")
        return value

    def get_bool(self, key: str, default: bool = False) -> bool:
        value = self.get(key)
        if value is None:
            return default
        if value.lower() not in ("true", "false"):
            raise ConfigError(key, f"expected true or false, got {value!r}")
        return value.lower() == "true"

    def get_choice(self, key: str) -> str:
        prop = _BY_NAME[key]
        value = self.get(key) or ""
        return prop.aliases.get(value, prop.aliases.get(value.lower(), value.lower()))

    def get_list(self, key: str) -> list[str]:
        value = self.get(key)
        return [v.strip() for v in value.split(",") if v.strip()] if value else []

    def subset(self, prefix: str) -> dict[str, str]:
        return {k[len(prefix) :]: v for k, v in self.raw.items() if k.startswith(prefix)}

    def with_overrides(self, **overrides: str) -> ConnectorConfig:
        return ConnectorConfig({**self.raw, **overrides}, warn_unknown=False)

    def redacted(self) -> dict[str, str]:
        return redact(self.raw)

    def __repr__(self) -> str:
        return f"ConnectorConfig({self.redacted()!r})"

    # -- typed views of the common keys -------------------------------------------------------------
    @property
    def connector_name(self) -> str:
        return self.get("name") or "mysql-cdc"

    @property
    def topic_prefix(self) -> str:
        return self.get("topic.prefix") or ""

    @property
    def hostname(self) -> str:
        return self.get("database.hostname") or ""

    @property
    def port(self) -> int:
        return self.int_of("database.port")

    @property
    def user(self) -> str:
        return self.get("database.user") or ""

    @property
    def password(self) -> str:
        return self.raw.get("database.password", "")

    @property
    def server_id(self) -> int:
        return self.int_of("database.server.id")

    @property
    def data_dir(self) -> Path:
        return Path(self.get("data.dir") or ".mysql-cdc")

    @property
    def sink_types(self) -> list[str]:
        return self.get_list("sink.type")

    def path_or_default(self, key: str, filename: str) -> Path:
        value = self.get(key)
        return Path(value) if value else self.data_dir / filename


def describe_properties() -> list[tuple[str, str, str]]:
    """(name, default, description) for ``--help`` and the README."""
    rows = []
    for p in PROPERTIES:
        extra = f" One of: {', '.join(p.choices)}." if p.choices else ""
        default = "(required)" if p.required else (p.default if p.default not in (None, "") else "-")
        rows.append((p.name, default or "-", p.doc + extra))
    return rows
