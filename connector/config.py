"""Connector configuration: Debezium's property names, read from a Java ``.properties`` file.

Every component declares its properties next to its code (``ddl.properties.Property``: name, kind,
default, doc, validation); this module declares the connector core's and assembles all of them into
one table that drives parsing and validation (a bad value names the key and the expected form),
defaults, the ``--help`` reference, unknown-key warnings, refused Debezium keys and secret redaction.
Components read their own keys with ``get``/``get_int``/``get_bool``/``subset``; the properties
every part needs are exposed as typed attributes.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from connector.config_files import load_properties_file, unknown_key_message
from connector.log_format import LOG_FORMAT_PROPERTIES
from connector.metrics import METRICS_PROPERTIES
from connector.notifications.properties import NOTIFICATION_PROPERTIES
from connector.post_processors.properties import POST_PROCESSOR_PROPERTIES
from connector.sources.properties import SIGNAL_PROPERTIES, STREAMING_PROPERTIES
from connector.stores.properties import STORE_PROPERTIES
from ddl.errors import ConfigError
from ddl.properties import (
    Property,
    by_name,
    check_value,
    parse_bool,
    parse_int,
    prop,
    split_list,
)
from sink.connect import CONVERTER_PROPERTIES, REPRESENTATION_PROPERTIES
from sink.jsonl import JSONL_PROPERTIES
from sink.kafka.settings import KAFKA_SINK_PROPERTIES
from sink.spark.settings import SPARK_SINK_PROPERTIES
from snapshot.settings import SNAPSHOT_PROPERTIES

log = logging.getLogger(__name__)

__all__ = ["ConfigError", "ConnectorConfig", "Property"]

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

# The whole table, in the order of --help.
PROPERTIES: tuple[Property, ...] = (
    *CONNECTION_PROPERTIES,
    *REPRESENTATION_PROPERTIES,
    *EVENT_PROPERTIES,
    *SNAPSHOT_PROPERTIES,
    *SIGNAL_PROPERTIES,
    *NOTIFICATION_PROPERTIES,
    *POST_PROCESSOR_PROPERTIES,
    *STREAMING_PROPERTIES,
    *STORE_PROPERTIES,
    *RUNTIME_PROPERTIES,
    *METRICS_PROPERTIES,
    *LOG_FORMAT_PROPERTIES,
    *SINK_TYPE_PROPERTIES,
    *JSONL_PROPERTIES,
    *CONVERTER_PROPERTIES,
    *KAFKA_SINK_PROPERTIES,
    *SPARK_SINK_PROPERTIES,
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
    "post.processors.",  # validated by connector.post_processors.build_post_processors
)

# Debezium properties that change what is emitted and are not implemented: start-up stops naming
# the key and the hint. A key matches its entry exactly or as ``entry.`` prefix (``transforms``
# covers ``transforms.unwrap.type``). Remove an entry when its feature is implemented.
REFUSED: Mapping[str, str] = {
    "sink.spark.current.buckets": "the Spark sink writes Delta tables now: Delta lays out the files "
    "(remove the key; OPTIMIZE/ZORDER the tables from Spark if needed)",
    "sink.spark.retain.ms": "the Spark sink writes Delta tables now: old versions stay readable by "
    "time travel until VACUUM (delta.deletedFileRetentionDuration); remove the key",
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


_BY_NAME = by_name(PROPERTIES)
_SECRET_RE = re.compile(r"(password|secret|sasl\.jaas\.config|credential|token)", re.IGNORECASE)
_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TOPIC_PREFIX_RE = re.compile(r"^[A-Za-z0-9._-]+$")


def is_secret(key: str) -> bool:
    spec = _BY_NAME.get(key)
    return bool(spec and spec.secret) or bool(_SECRET_RE.search(key))


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
        for spec in PROPERTIES:
            self._validate(spec)
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
                log.warning("%s", unknown_key_message(key, _BY_NAME))

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
    def _validate(self, spec: Property) -> None:
        check_value(spec, self.raw.get(spec.name))

    def unknown_keys(self) -> list[str]:
        converters = tuple(f"{alias}." for alias in split_list(self.raw.get("converters")))
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
            spec = _BY_NAME.get(key)
            return (
                spec.default if spec is not None and spec.default is not None and default is None else default
            )
        return value.strip()

    def get_int(self, key: str, default: int | None = None) -> int | None:
        value = self.get(key)
        if value is None:
            return default
        return parse_int(key, value)

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
        return parse_bool(key, value)

    def get_choice(self, key: str) -> str:
        return _BY_NAME[key].canonical(self.get(key) or "")

    def get_list(self, key: str) -> list[str]:
        return split_list(self.get(key))

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
        return self.get("name") or ""  # blank: the declared default

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
        return Path(self.get("data.dir") or "")  # blank: the declared default

    @property
    def sink_types(self) -> list[str]:
        return self.get_list("sink.type")

    def path_or_default(self, key: str, filename: str) -> Path:
        value = self.get(key)
        return Path(value) if value else self.data_dir / filename
