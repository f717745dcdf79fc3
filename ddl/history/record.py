"""One schema history record and its JSON document, as Debezium's ``HistoryRecord`` writes it.

The document keys, in Debezium's order: ``source``, ``position``, ``ts_ms``, ``databaseName``,
``schemaName``, ``ddl``, ``tableChanges`` (each element already in its history form, see
``ddl.history.serialize.table_change_to_history``). The file history stores it as one compact line, the
Kafka history pretty-printed; reading accepts any JSON layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from mysql_cdc_base.errors import SchemaHistoryError


@dataclass(frozen=True, slots=True)
class HistoryRecord:
    source: Mapping[str, Any]
    position: Mapping[str, Any]
    ts_ms: int
    ddl: str
    database_name: str | None = None
    schema_name: str | None = None
    # Debezium's tableChanges array, already in its JSON document form.
    table_changes: tuple[Mapping[str, Any], ...] = field(default=())


def history_record_to_document(record: HistoryRecord) -> dict[str, Any]:
    document: dict[str, Any] = {
        "source": dict(record.source),
        "position": dict(record.position),
        "ts_ms": record.ts_ms,
    }
    if record.database_name is not None:
        document["databaseName"] = record.database_name
    if record.schema_name is not None:
        document["schemaName"] = record.schema_name
    document["ddl"] = record.ddl
    document["tableChanges"] = [dict(change) for change in record.table_changes]
    return document


def history_record_to_json(record: HistoryRecord) -> bytes:
    """Compact one-line JSON (the file history's line format, without the newline)."""
    return orjson.dumps(history_record_to_document(record))


def history_record_from_document(document: Mapping[str, Any]) -> HistoryRecord:
    try:
        source = document["source"]
        position = document["position"]
        if not isinstance(source, Mapping) or not isinstance(position, Mapping):
            raise TypeError("source and position must be objects")
        changes = document.get("tableChanges") or []
        if not isinstance(changes, list):
            raise TypeError("tableChanges must be an array")
        return HistoryRecord(
            source=dict(source),
            position=dict(position),
            ts_ms=int(document.get("ts_ms", 0)),
            ddl=str(document.get("ddl") or ""),
            database_name=document.get("databaseName"),
            schema_name=document.get("schemaName"),
            table_changes=tuple(dict(c) for c in changes),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SchemaHistoryError(f"invalid schema history record: {exc}") from exc


def history_record_from_json(data: bytes | str) -> HistoryRecord:
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise SchemaHistoryError(f"invalid schema history record (not JSON): {exc}") from exc
    if not isinstance(document, Mapping):
        raise SchemaHistoryError("invalid schema history record: not a JSON object")
    return history_record_from_document(document)
