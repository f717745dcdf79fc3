"""The connector core's own property declarations: connection, naming and filters, events, batching
and transforms, the runtime directory and the sink types. The other components declare theirs next
to their code; ``connector.config`` assembles them all into one table."""

from __future__ import annotations

from mysql_cdc_base.properties import (
    Property,
    prop,
)

# The connector core's own properties: connection, naming and filters ...
CONNECTION_PROPERTIES: tuple[Property, ...] = (
    # -- connection
    prop("name", "mysql-cdc", "Connector name; keys the stored offsets (as Kafka Connect's connector name)."),
    prop("database.hostname", doc="MySQL host.", required=True),
    prop("database.port", "3306", "MySQL port.", kind="int", minimum=1),
    prop(
        "database.user",
        doc="Connector user (needs the grants listed in Getting started: docs/getting-started.md).",
        required=True,
    ),
    prop("database.password", "", "Connector user's password (never logged).", secret=True),
    prop(
        "database.server.id",
        doc="Replica server id, unique in the replication topology.",
        kind="int",
        required=True,
        minimum=1,
    ),
    prop(
        "database.ssl.mode",
        "preferred",
        "TLS to MySQL on every connection: disabled; preferred (TLS when offered, unverified); "
        "required (TLS, unverified); verify_ca (the certificate chains to database.ssl.ca or "
        "database.ssl.truststore); verify_identity (and names database.hostname).",
        kind="choice",
        choices=("disabled", "preferred", "required", "verify_ca", "verify_identity"),
    ),
    prop("database.ssl.ca", doc="CA file (PEM) for verify_ca / verify_identity."),
    prop("database.ssl.cert", doc="Client certificate (PEM) presented to the server; with database.ssl.key."),
    prop("database.ssl.key", doc="Private key (PEM) of database.ssl.cert."),
    prop("database.ssl.key.password", doc="Password of an encrypted database.ssl.key.", secret=True),
    prop("database.ssl.keystore", doc="Client certificate and key as a PKCS12 keystore (Debezium's)."),
    prop("database.ssl.keystore.password", doc="Password of database.ssl.keystore.", secret=True),
    prop(
        "database.ssl.truststore",
        doc="CAs for verify_ca / verify_identity: a PEM bundle or a PKCS12 truststore.",
    ),
    prop(
        "database.ssl.truststore.password", doc="Password of a PKCS12 database.ssl.truststore.", secret=True
    ),
    prop(
        "database.connectionTimeZone",
        "SERVER",
        "Session time zone of the connector's SQL connections (snapshot, heartbeat action): an "
        "IANA name or ±hh:mm; SERVER keeps the server's. TIMESTAMP values are read in it and "
        "emitted in UTC whatever it is.",
    ),
    prop(
        "database.initial.statements",
        doc="';'-separated SQL run on each SQL (not binlog) connection when it opens; ';;' is a literal ';'.",
    ),
    prop("connect.timeout.ms", "30000", "Connect timeout.", kind="int", minimum=1),
    prop(
        "connect.keep.alive.interval.ms",
        "60000",
        "The server sends a replication heartbeat every 0.8 × this while the binlog is idle; a "
        "replication connection silent for longer than this is treated as lost and reconnected.",
        kind="int",
        minimum=1,
    ),
    prop(
        "connect.max.attempts",
        "5",
        "How many times a lost binlog connection is retried (with backoff) before the connector stops.",
        kind="int",
        minimum=1,
    ),
    # -- naming and filters
    prop("topic.prefix", doc="Logical server name; prefix of every topic. [A-Za-z0-9._-]", required=True),
    prop(
        "topic.naming.strategy",
        "io.debezium.schema.DefaultTopicNamingStrategy",
        "How topics are named. io.debezium.schema.DefaultTopicNamingStrategy (or default): "
        "<topic.prefix>.<db>.<table>, characters Kafka rejects become _; "
        "io.debezium.schema.DefaultUnicodeTopicNamingStrategy (or unicode): they and _ become _uXXXX; "
        "or a Python plugin: an entry point of group mysql_cdc.topic_naming_strategies or "
        "package.module:Class (docs/guides/topic-naming.md).",
    ),
    prop("topic.delimiter", ".", "Delimiter between topic name parts."),
    prop(
        "topic.cache.size",
        "10000",
        "How many data topic names the naming strategy keeps (least recently used go first).",
        kind="int",
        minimum=1,
    ),
    prop("topic.transaction", "transaction", "Transaction topic suffix: <prefix>.transaction."),
    prop("topic.heartbeat.prefix", "__debezium-heartbeat", "Heartbeat topic prefix."),
    prop(
        "topic.heartbeat.name",
        doc="Full heartbeat topic name; overrides <topic.heartbeat.prefix>.<topic.prefix> (several "
        "connectors may share one heartbeat topic).",
    ),
    prop(
        "schema.name.adjustment.mode",
        "none",
        "Record schema names (<topic>.Key/.Value/.Envelope): none; avro replaces characters Avro "
        "rejects with _; avro_unicode replaces them and _ with _uXXXX.",
        kind="choice",
        choices=("none", "avro", "avro_unicode"),
    ),
    prop(
        "field.name.adjustment.mode",
        "none",
        "Column field names in keys and values: none; avro replaces characters Avro rejects with _ "
        "(a leading digit gets _ before it); avro_unicode replaces them and _ with _uXXXX.",
        kind="choice",
        choices=("none", "avro", "avro_unicode"),
    ),
    prop(
        "database.include.list", doc="Regexes (comma-separated) of databases to capture.", kind="regex-list"
    ),
    prop("database.exclude.list", doc="Regexes of databases not to capture.", kind="regex-list"),
    prop("table.include.list", doc="Regexes of db.table to capture.", kind="regex-list"),
    prop("table.exclude.list", doc="Regexes of db.table not to capture.", kind="regex-list"),
    prop("column.include.list", doc="Regexes of db.table.column to include.", kind="regex-list"),
    prop("column.exclude.list", doc="Regexes of db.table.column to exclude.", kind="regex-list"),
    prop(
        "table.ignore.builtin",
        "true",
        "Ignore mysql, sys, information_schema, performance_schema.",
        kind="bool",
    ),
    prop("message.key.columns", doc="Custom keys: db.t:c1,c2;db.t2:c"),
)

# ... and events, batching and transforms. The other components declare theirs next to their
# code; PROPERTIES below assembles them.
EVENT_PROPERTIES: tuple[Property, ...] = (
    prop("enable.time.adjuster", "true", "Two-digit years 00-69 → 20xx, 70-99 → 19xx.", kind="bool"),
    prop(
        "column.propagate.source.type",
        doc="Regexes of columns whose schema carries source type params.",
        kind="regex-list",
    ),
    prop(
        "datatype.propagate.source.type",
        doc="Regexes of type names whose columns carry source type params.",
        kind="regex-list",
    ),
    prop("include.schema.comments", "false", "Column comments become field docs.", kind="bool"),
    prop(
        "ddl.parser.type",
        "default",
        "Debezium's choice of ANTLR grammar for MySQL DDL (default: Oracle's; legacy: Positive "
        "Technologies'). Accepted so Debezium configurations run unchanged: this connector has one "
        "DDL parser (sqlglot with MySQL and MariaDB dialects), used for both values; what it parses "
        "is compared with Debezium's output in tests/golden.",
        kind="choice",
        choices=("default", "legacy"),
    ),
    # -- events
    prop("tombstones.on.delete", "true", "Emit a tombstone after each delete.", kind="bool"),
    prop("include.schema.changes", "true", "Emit schema change events to the <prefix> topic.", kind="bool"),
    prop("include.query", "false", "Put the SQL of the change into source.query.", kind="bool"),
    prop("provide.transaction.metadata", "false", "Emit BEGIN/END transaction events.", kind="bool"),
    prop(
        "transaction.metadata.factory",
        "io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory",
        "The transaction metadata (the transaction block of data events, the BEGIN/END values): "
        "Debezium's default, or a Python plugin that may add fields (an entry point of group "
        "mysql_cdc.transaction_struct_makers or package.module:Class; docs/guides/topic-naming.md).",
    ),
    prop(
        "sourceinfo.struct.maker",
        "io.debezium.connector.mysql.MySqlSourceInfoStructMaker",
        "The source block of data and schema change records: Debezium's default, or a Python plugin "
        "that may add fields (an entry point of group mysql_cdc.source_struct_makers or "
        "package.module:Class; docs/guides/topic-naming.md).",
    ),
    prop(
        "skipped.operations",
        "t",
        "Operations not emitted: comma-separated c, u, d, t, or none.",
        kind="choice-list",
        choices=("c", "u", "d", "t", "r", "m", "none"),
    ),
    prop("extended.headers.enabled", "true", "Add __debezium.context.* headers.", kind="bool"),
    prop("heartbeat.interval.ms", "0", "Heartbeat period; 0 disables.", kind="int", minimum=0),
    prop("heartbeat.action.query", doc="SQL run at each heartbeat."),
    prop(
        "inconsistent.schema.handling.mode",
        "fail",
        "Row event for a table of unknown structure.",
        kind="choice",
        choices=("fail", "warn", "skip"),
    ),
    prop(
        "event.processing.failure.handling.mode",
        "fail",
        "A binlog event whose rows cannot be decoded or converted: fail stops the connector "
        "naming the position; warn logs the position and skips the event; skip/ignore skip it "
        "silently.",
        kind="choice",
        choices=("fail", "warn", "skip", "ignore"),
    ),
    prop(
        "event.converting.failure.handling.mode",
        "warn",
        "A custom converter (converters) that fails on a value: fail stops the connector naming the "
        "column; warn writes null for the value and logs the column; skip writes null and logs at "
        "debug. Values the server wrote that no type can hold (a date such as 2020-02-30 in the binlog) "
        "follow event.processing.failure.handling.mode, as in Debezium.",
        kind="choice",
        choices=("fail", "warn", "skip"),
    ),
    prop(
        "gtid.source.includes",
        doc="Regexes of GTID sources (MySQL server UUID, MariaDB domain-server) whose transactions are "
        "tracked in the offset; the others are skipped (gtid.source.filter.dml.events) and taken from "
        "the server's executed set on restart.",
        kind="regex-list",
    ),
    prop(
        "gtid.source.excludes",
        doc="Regexes of GTID sources to leave out (see gtid.source.includes).",
        kind="regex-list",
    ),
    prop(
        "gtid.source.filter.dml.events",
        "true",
        "Skip the row events of transactions whose GTID source gtid.source.includes/excludes leave out.",
        kind="bool",
    ),
    prop(
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
    prop("max.batch.size", "2048", "Records handed to the sinks at once.", kind="int", minimum=1),
    prop(
        "max.queue.size",
        "8192",
        "Most records held between the binlog reader and the sinks' durable flush; when full, "
        "reading waits for the sinks to flush (backpressure). Must exceed max.batch.size.",
        kind="int",
        minimum=1,
    ),
    prop(
        "poll.interval.ms", "500", "Longest wait before a partial batch is delivered.", kind="int", minimum=1
    ),
    # -- single message transforms (connector/transforms)
    prop(
        "transforms",
        doc="Comma-separated transform aliases, applied in order to every record before the sinks; "
        "each configured by transforms.<alias>.type (a Java class name, e.g. "
        "io.debezium.transforms.ExtractNewRecordState) and transforms.<alias>.<option>, optionally "
        "transforms.<alias>.predicate and .negate (Kafka Connect's syntax).",
    ),
    prop(
        "predicates",
        doc="Comma-separated predicate aliases for transforms.<alias>.predicate; each configured by "
        "predicates.<alias>.type (e.g. org.apache.kafka.connect.transforms.predicates.TopicNameMatches) "
        "and predicates.<alias>.<option>.",
    ),
    prop(
        "converters",
        doc="Comma-separated custom converter aliases; each configured by <alias>.type (e.g. "
        "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter) and <alias>.<option> "
        "(connector/records/custom_converters.py; register your own with register_converter).",
    ),
)

RUNTIME_PROPERTIES: tuple[Property, ...] = (
    prop("data.dir", ".mysql-cdc", "Directory for the default offsets and history files."),
)

SINK_TYPE_PROPERTIES: tuple[Property, ...] = (
    prop(
        "sink.type",
        "jsonl",
        "Comma-separated list of sinks to feed.",
        kind="choice-list",
        choices=("jsonl", "stdout", "memory", "kafka", "spark"),
    ),
)
