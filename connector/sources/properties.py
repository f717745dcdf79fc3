"""The properties of signals and on-demand (incremental and blocking) snapshots, declared for
``connector.config``'s table and read by ``connector.sources.signals`` and ``connector.sources.incremental``."""

from __future__ import annotations

from mysql_cdc_base.properties import Property, prop

SIGNAL_PROPERTIES: tuple[Property, ...] = (
    prop("signal.data.collection", doc="The signal table db.table (id, type, data) for the source channel."),
    prop(
        "signal.enabled.channels",
        "source",
        "Where signals are read: source (the signal table), kafka, file, in-process.",
        kind="choice-list",
        choices=("source", "kafka", "file", "in-process"),
    ),
    prop(
        "signal.poll.interval.ms",
        "5000",
        "How often the kafka and file channels are read.",
        kind="int",
        minimum=0,
    ),
    prop("signal.kafka.topic", doc="Topic of the kafka signal channel (default <topic.prefix>-signal)."),
    prop("signal.kafka.bootstrap.servers", doc="Brokers of the kafka signal channel."),
    prop("signal.kafka.groupId", "kafka-signal", "Consumer group of the kafka signal channel."),
    prop(
        "signal.kafka.poll.timeout.ms",
        "100",
        "How long one read of the kafka signal channel waits.",
        kind="int",
        minimum=0,
    ),
    prop("signal.file", "file-signals.txt", "File of the file signal channel (one JSON signal a line)."),
    prop(
        "signal.emit.failure.max.retries",
        "0",
        "Retries of a failed incremental snapshot watermark write (window open or close) into the "
        "signal table: -1 without limit, 0 none (the failure stops the connector naming this key).",
        kind="int",
        minimum=-1,
    ),
    prop(
        "signal.emit.failure.backoff.ms",
        "10000",
        "Wait between the retries of signal.emit.failure.max.retries; the connection is re-opened first.",
        kind="int",
        minimum=1,
    ),
    prop(
        "incremental.snapshot.chunk.size",
        "1024",
        "Rows read per incremental snapshot chunk.",
        kind="int",
        minimum=1,
    ),
    prop(
        "incremental.snapshot.max.threads",
        "1",
        "Chunks read at once per incremental snapshot window, each by its own reader process.",
        kind="int",
        minimum=1,
    ),
    prop(
        "incremental.snapshot.allow.schema.changes",
        "false",
        "Re-read the open chunk when its table's structure changes during the window.",
        kind="bool",
    ),
    prop(
        "incremental.snapshot.watermarking.strategy",
        "insert_insert",
        "How windows are marked in the signal table: insert_insert or insert_delete.",
        kind="choice",
        choices=("insert_insert", "insert_delete"),
    ),
    prop(
        "read.only",
        "false",
        "Incremental snapshots without writing to the server (GTID watermarks).",
        kind="bool",
    ),
)

# Streaming behaviour Debezium declares in its common and binlog configuration.
STREAMING_PROPERTIES: tuple[Property, ...] = (
    prop(
        "binlog.buffer.size",
        "0",
        "Look-ahead buffer, in binlog events, that holds each transaction until its end so that rows "
        "the server rolled back (ROLLBACK, ROLLBACK TO SAVEPOINT) are never emitted; 0 disables it, and "
        "a rollback covering rows then stops the connector naming this key.",
        kind="int",
        minimum=0,
    ),
    prop(
        "streaming.delay.ms",
        "0",
        "Milliseconds to wait after the snapshot (or at start without one) before streaming begins.",
        kind="int",
        minimum=0,
    ),
    prop(
        "skip.messages.without.change",
        "false",
        "Skip update events whose emitted columns (after column.include.list/column.exclude.list and "
        "the column mappers) are unchanged.",
        kind="bool",
    ),
)
