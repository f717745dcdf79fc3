"""The record that flows from the event builder to every sink.

A ``ChangeRecord`` is one Kafka-Connect ``SourceRecord``: topic, key and value (each a Connect schema
plus a JSON-ready payload), headers, and the source offset that becomes safe to store once a sink has
accepted this record and every record before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from ddl.model import TableId
from ddl.position import SourceOffset
from sink.connect import ConnectSchema, envelope_bytes


class RecordKind(StrEnum):
    DATA = "data"
    TOMBSTONE = "tombstone"
    SCHEMA_CHANGE = "schema_change"
    TRANSACTION = "transaction"
    HEARTBEAT = "heartbeat"


@dataclass(frozen=True, slots=True)
class Header:
    """A Connect header. String headers are written as their text; struct headers (the
    ``__debezium.newkey``/``oldkey`` pair) as the JSON of their payload."""

    name: str
    value: Any
    schema: ConnectSchema | None = None


@dataclass(frozen=True, slots=True)
class ChangeRecord:
    topic: str
    key_schema: ConnectSchema | None
    key: Any
    value_schema: ConnectSchema | None
    value: Any
    kind: RecordKind = RecordKind.DATA
    headers: tuple[Header, ...] = ()
    # Source offset after this record (Debezium's offset map); None = nothing new to commit.
    offset: SourceOffset | None = None
    # Kafka partition Debezium pins (0 for heartbeat and schema-change records), else None.
    partition: int | None = None
    table_id: TableId | None = None

    # -- what the JSON converter writes ---------------------------------------------------------
    def key_bytes(self, schemas_enable: bool = True) -> bytes | None:
        return envelope_bytes(self.key_schema, self.key, schemas_enable)

    def value_bytes(self, schemas_enable: bool = True) -> bytes | None:
        return envelope_bytes(self.value_schema, self.value, schemas_enable)

    def header_items(self) -> list[tuple[str, bytes]]:
        """Headers as Kafka carries them: name and UTF-8 bytes."""
        out = []
        for h in self.headers:
            if isinstance(h.value, str):
                out.append((h.name, h.value.encode()))
            else:
                payload = h.schema.payload_for_json(h.value) if h.schema is not None else h.value
                out.append((h.name, orjson.dumps(payload)))
        return out

    # -- convenient accessors for embedded users and tests ---------------------------------------
    @property
    def op(self) -> str | None:
        return self.value.get("op") if isinstance(self.value, dict) else None

    @property
    def before(self) -> dict[str, Any] | None:
        return self.value.get("before") if isinstance(self.value, dict) else None

    @property
    def after(self) -> dict[str, Any] | None:
        return self.value.get("after") if isinstance(self.value, dict) else None

    @property
    def source(self) -> dict[str, Any] | None:
        return self.value.get("source") if isinstance(self.value, dict) else None


def jsonl_line(record: ChangeRecord, key_schemas: bool = True, value_schemas: bool = True) -> bytes:
    """The JSON-lines form shared by the ``jsonl`` and ``stdout`` sinks (no trailing newline):
    ``{"topic", "key", "value", "headers"}`` with key/value exactly as the JSON converter writes them."""
    key = record.key_bytes(key_schemas)
    value = record.value_bytes(value_schemas)
    headers = {name: raw.decode() for name, raw in record.header_items()}
    return b"".join(
        (
            b'{"topic":',
            orjson.dumps(record.topic),
            b',"key":',
            key if key is not None else b"null",
            b',"value":',
            value if value is not None else b"null",
            b',"headers":',
            orjson.dumps(headers),
            b"}",
        )
    )
