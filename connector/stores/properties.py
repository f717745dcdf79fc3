"""The properties of the offset stores and the schema history, declared for ``connector.config``'s
table and read by the stores (``connector.stores``) and the history wiring (``connector.factories``)."""

from __future__ import annotations

from mysql_cdc_base.properties import Property, prop

STORE_PROPERTIES: tuple[Property, ...] = (
    prop(
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
    prop("offset.storage.file.filename", doc="Offsets file (default <data.dir>/offsets.json)."),
    prop("offset.storage.topic", doc="Offsets topic for offset.storage=kafka."),
    prop(
        "offset.flush.interval.ms",
        "1000",
        "How often the sinks are flushed and the offset stored (0: after every batch).",
        kind="int",
        minimum=0,
    ),
    prop("offset.storage.partitions", "25", "Partitions of a new offsets topic.", kind="int", minimum=1),
    prop(
        "exactly.once.support",
        "disabled",
        "Kafka Connect's exactly-once source support (KIP-618): required (a transactional producer "
        "commits each batch with its offset in the offset topic; start-up refuses a configuration "
        "that cannot be exactly once), requested (the same where the configuration allows it, "
        "otherwise at least once with a warning naming the keys), disabled (at least once).",
        kind="choice",
        choices=("required", "requested", "disabled"),
    ),
    prop(
        "transaction.boundary",
        "poll",
        "With exactly.once.support: poll (each batch handed to the sink is one transaction) or "
        "interval (one transaction every transaction.boundary.interval.ms); connector is refused.",
        kind="choice",
        choices=("poll", "interval", "connector"),
    ),
    prop(
        "transaction.boundary.interval.ms",
        doc="Transaction length for transaction.boundary=interval (default offset.flush.interval.ms).",
        kind="int",
        minimum=1,
    ),
    prop(
        "offset.storage.replication.factor",
        "-1",
        "Replication factor of a new offsets topic (-1: the broker's default).",
        kind="int",
    ),
    prop(
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
    prop(
        "schema.history.internal.file.filename", doc="History file (default <data.dir>/schema-history.jsonl)."
    ),
    prop("schema.history.internal.kafka.topic", doc="History topic for schema.history.internal=kafka."),
    prop("schema.history.internal.kafka.bootstrap.servers", doc="Brokers for the history topic."),
    prop(
        "schema.history.internal.name",
        doc="Client id of the history store (default <topic.prefix>-schemahistory).",
    ),
    prop(
        "schema.history.internal.skip.unparseable.ddl",
        "false",
        "Log and skip DDL the parser cannot read instead of stopping.",
        kind="bool",
    ),
    prop(
        "schema.history.internal.ddl.filter",
        doc="Comma-separated regexes of DDL statements that are "
        "neither applied, stored nor emitted (default: Debezium's list of server-generated and "
        "non-table statements).",
    ),
    prop(
        "schema.history.internal.prefer.ddl",
        "false",
        "Recovery replays the DDL text instead of the recorded tableChanges.",
        kind="bool",
    ),
    prop(
        "schema.history.internal.store.only.captured.tables.ddl",
        "false",
        "Record only DDL of captured tables.",
        kind="bool",
    ),
    prop(
        "schema.history.internal.store.only.captured.databases.ddl",
        "false",
        "Record only DDL of captured databases.",
        kind="bool",
    ),
)
