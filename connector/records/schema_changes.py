"""Schema-change records (Debezium 3d): the ``<topic.prefix>`` topic's key and value schemas and the
record of one DDL statement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from connector.records.topic_naming import TopicNamingStrategy
from mysql_cdc_base.connect import ConnectSchema
from mysql_cdc_base.debezium_schemas import SCHEMA_CHANGE_KEY_SCHEMA
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord, Header, RecordKind


class SchemaChangeContext(Protocol):
    """What a schema-change record takes from the connector's ``EventBuilder``."""

    naming: TopicNamingStrategy
    headers: tuple[Header, ...]

    def schema_change_value_schema(self) -> ConnectSchema: ...


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
