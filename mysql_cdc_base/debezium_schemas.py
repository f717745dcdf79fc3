"""The Debezium MySQL connector's own Connect schemas, defined once.

The envelope's ``source`` block (``io.debezium.connector.mysql.Source``): the record builder
writes it into every change event, and the Spark reader derives from it the type it parses
the ``source`` field of Debezium JSON with.
"""

from __future__ import annotations

from mysql_cdc_base.connect import Field, primitive, struct

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
