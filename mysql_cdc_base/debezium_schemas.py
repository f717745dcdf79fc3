"""The Debezium connector's own fixed Connect schemas, defined once.

* the envelope's ``source`` block (``io.debezium.connector.mysql.Source``): the record builder
  writes it into every change event, and the Spark reader derives from it the type it parses the
  ``source`` field of Debezium JSON with;
* the schema-change topic's key and value (``SchemaChangeKey``/``SchemaChangeValue`` and the
  ``tableChanges`` structs);
* transaction metadata: the BEGIN/END records' key and value, and a change event's ``transaction``
  block;
* heartbeats: ``ServerNameKey`` and ``Heartbeat``.

Tables' own key and value schemas are built per table (``connector.records.table_schema``).
"""

from __future__ import annotations

from mysql_cdc_base.connect import ConnectSchema, Field, primitive, struct

SOURCE_SCHEMA = struct(
    "io.debezium.connector.mysql.Source",
    [
        Field("version", primitive("string")),
        Field("connector", primitive("string")),
        Field("name", primitive("string")),
        Field("ts_ms", primitive("int64")),
        Field(
            "snapshot",
            primitive(
                "string",
                optional=True,
                name="io.debezium.data.Enum",
                version=1,
                parameters={
                    "allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"
                },
                default="false",
            ),
        ),
        Field("db", primitive("string")),
        Field("sequence", primitive("string", optional=True)),
        Field("ts_us", primitive("int64", optional=True)),
        Field("ts_ns", primitive("int64", optional=True)),
        Field("table", primitive("string", optional=True)),
        Field("server_id", primitive("int64")),
        Field("gtid", primitive("string", optional=True)),
        Field("file", primitive("string")),
        Field("pos", primitive("int64")),
        Field("row", primitive("int32")),
        Field("thread", primitive("int64", optional=True)),
        Field("query", primitive("string", optional=True)),
    ],
    version=1,
)


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


TRANSACTION_KEY_SCHEMA = struct(
    "io.debezium.connector.common.TransactionMetadataKey",
    [
        Field("id", primitive("string")),
    ],
    version=1,
)
EVENT_COLLECTION_SCHEMA = struct(
    "event.collection",
    [
        Field("data_collection", primitive("string")),
        Field("event_count", primitive("int64")),
    ],
    optional=True,
    version=1,
)
TRANSACTION_VALUE_SCHEMA = struct(
    "io.debezium.connector.common.TransactionMetadataValue",
    [
        Field("status", primitive("string")),
        Field("id", primitive("string")),
        Field("event_count", primitive("int64", optional=True)),
        Field("data_collections", ConnectSchema("array", optional=True, items=EVENT_COLLECTION_SCHEMA)),
        Field("ts_ms", primitive("int64")),
    ],
    version=1,
)


TRANSACTION_BLOCK_SCHEMA = struct(
    "event.block",
    [
        Field("id", primitive("string")),
        Field("total_order", primitive("int64")),
        Field("data_collection_order", primitive("int64")),
    ],
    optional=True,
    version=1,
)


HEARTBEAT_KEY_SCHEMA = struct(
    "io.debezium.connector.common.ServerNameKey",
    [
        Field("serverName", primitive("string")),
    ],
    version=1,
)
HEARTBEAT_VALUE_SCHEMA = struct(
    "io.debezium.connector.common.Heartbeat",
    [
        Field("ts_ms", primitive("int64")),
    ],
    version=1,
)
