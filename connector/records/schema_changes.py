"""Schema-change records (Debezium 3d): the ``<topic.prefix>`` topic's key and value schemas and the
record of one DDL statement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from connector.records.topic_naming import TopicNamingStrategy
from mysql_cdc_base.connect import ConnectSchema, Field, primitive, struct
from mysql_cdc_base.debezium_schemas import SOURCE_SCHEMA
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord, Header, RecordKind


class SchemaChangeContext(Protocol):
    """What a schema-change record takes from the connector's ``EventBuilder``."""

    naming: TopicNamingStrategy
    headers: tuple[Header, ...]

    def schema_change_value_schema(self) -> ConnectSchema: ...


def _opt(kind: str) -> ConnectSchema:
    return primitive(kind, optional=True)


_STRING_ARRAY_OPT = ConnectSchema("array", optional=True, items=primitive("string"))
SCHEMA_COLUMN_SCHEMA = struct(
    "io.debezium.connector.schema.Column",
    [
        Field("name", primitive("string")),
        Field("jdbcType", primitive("int32")),
        Field("nativeType", _opt("int32")),
        Field("typeName", primitive("string")),
        Field("typeExpression", _opt("string")),
        Field("charsetName", _opt("string")),
        Field("length", _opt("int32")),
        Field("scale", _opt("int32")),
        Field("position", primitive("int32")),
        Field("optional", _opt("boolean")),
        Field("autoIncremented", _opt("boolean")),
        Field("generated", _opt("boolean")),
        Field("comment", _opt("string")),
        Field("defaultValueExpression", _opt("string")),
        Field("enumValues", _STRING_ARRAY_OPT),
    ],
    version=1,
)
SCHEMA_TABLE_SCHEMA = struct(
    "io.debezium.connector.schema.Table",
    [
        Field("defaultCharsetName", _opt("string")),
        Field("primaryKeyColumnNames", _STRING_ARRAY_OPT),
        Field("columns", ConnectSchema("array", items=SCHEMA_COLUMN_SCHEMA)),
        Field("comment", _opt("string")),
    ],
    optional=True,
    version=1,
)
SCHEMA_CHANGE_SCHEMA = struct(
    "io.debezium.connector.schema.Change",
    [
        Field("type", primitive("string")),
        Field("id", primitive("string")),
        Field("table", SCHEMA_TABLE_SCHEMA),
    ],
    version=1,
)
SCHEMA_CHANGE_KEY_SCHEMA = struct(
    "io.debezium.connector.mysql.SchemaChangeKey",
    [
        Field("databaseName", primitive("string")),
    ],
    version=1,
)
SCHEMA_CHANGE_VALUE_SCHEMA = struct(
    "io.debezium.connector.mysql.SchemaChangeValue",
    [
        Field("source", SOURCE_SCHEMA),
        Field("ts_ms", primitive("int64")),
        Field("databaseName", _opt("string")),
        Field("schemaName", _opt("string")),
        Field("ddl", _opt("string")),
        Field("tableChanges", ConnectSchema("array", items=SCHEMA_CHANGE_SCHEMA)),
    ],
    version=1,
)


def schema_change_record(
    builder: SchemaChangeContext,
    database: str,
    ddl: str,
    table_changes: Sequence[Mapping[str, Any]],
    source: dict[str, Any],
    offset: Mapping[str, Any] | None,
    ts_ms: int,
) -> ChangeRecord:
    """One record on the ``<topic.prefix>`` topic for one DDL statement and database."""
    value = {
        "source": source,
        "ts_ms": ts_ms,
        "databaseName": database,
        "schemaName": None,
        "ddl": ddl,
        "tableChanges": list(table_changes),
    }
    return ChangeRecord(
        builder.naming.schema_change_topic(),
        SCHEMA_CHANGE_KEY_SCHEMA,
        {"databaseName": database},
        builder.schema_change_value_schema(),
        value,
        RecordKind.SCHEMA_CHANGE,
        builder.headers,
        SourceOffset.coerce(offset),
        0,
        None,
    )
