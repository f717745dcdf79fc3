"""An incremental snapshot's state as the offset keeps it (``connector.sources.incremental``): the
offset keys, the chunk keys as JSON text (a list of key values, bytes as ``{"hex": ...}``), the
queued collections with their conditions and surrogate keys, the open chunk's window and the
progress figures."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from connector.records.builder import TableSchema
from connector.sources.signals import SignalError
from mysql_cdc_base.errors import OffsetError
from mysql_cdc_base.position import GtidSet
from mysql_cdc_base.table_id import TableId
from snapshot.rows.chunks import ChunkKeyError, Key

COLLECTIONS = "incremental_snapshot_collections"
PRIMARY_KEY = "incremental_snapshot_primary_key"
MAXIMUM_KEY = "incremental_snapshot_maximum_key"
CORRELATION_ID = "incremental_snapshot_correlation_id"
OFFSET_KEYS = (COLLECTIONS, PRIMARY_KEY, MAXIMUM_KEY, CORRELATION_ID)


# -- key encoding in the offset ---------------------------------------------------------------------
def _encode_value(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return {"hex": bytes(value).hex()}
    return value


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict) and "hex" in value:
        return bytes.fromhex(value["hex"])
    return value


def encode_key(key: Key | None) -> str | None:
    return None if key is None else orjson.dumps([_encode_value(v) for v in key]).decode()


class ForeignKeyEncoding(OffsetError, ValueError):
    """A stored key that is not ours: Debezium's hex of a Java-serialized array."""


def decode_key(text: Any) -> Key | None:
    if not text:
        return None
    try:
        values = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise ForeignKeyEncoding(str(text)[:40]) from None
    if not isinstance(values, list):
        raise ForeignKeyEncoding(str(text)[:40])
    return tuple(_decode_value(v) for v in values)


class Collection(NamedTuple):
    """One table queued for an incremental snapshot, as Debezium keeps it in the offset."""

    table: TableId
    condition: str | None = None
    surrogate_key: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "incremental_snapshot_collections_id": str(self.table),
            "incremental_snapshot_collections_additional_condition": self.condition,
            "incremental_snapshot_collections_surrogate_key": self.surrogate_key,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Collection:
        return cls(
            TableId.parse(str(data["incremental_snapshot_collections_id"])),
            data.get("incremental_snapshot_collections_additional_condition") or None,
            data.get("incremental_snapshot_collections_surrogate_key") or None,
        )


@dataclass
class Chunk:
    """The chunk read last: its window of rows (key → converted image) until it closes."""

    id: str
    collection: Collection
    schema: TableSchema
    last_key: Key | None  # the chunk's largest key (None: the chunk was empty)
    done: bool  # the table has no row after this chunk
    fields: tuple[str, ...] = ()  # the payload fields of the window's keys
    # payload key fields → (the row's key as read, its converted image), in key order
    window: dict[Key, tuple[Key, dict[str, Any]]] = field(default_factory=dict)
    open: bool = False
    high: GtidSet | None = None  # read.only: the server's GTID position after the read


@dataclass
class Progress:
    """Per-table figures for logs, the progress line and the metrics."""

    rows: dict[TableId, int] = field(default_factory=dict)
    scanned: dict[TableId, int] = field(default_factory=dict)  # rows read (emitted or not)
    chunks_by_table: dict[TableId, int] = field(default_factory=dict)
    chunks: int = 0
    started: float = field(default_factory=time.monotonic)
    logged: float = field(default_factory=time.monotonic)
    current: TableId | None = None  # the table being read (None: no snapshot running)

    def on_chunk(self, table: TableId) -> None:
        self.chunks += 1
        self.chunks_by_table[table] = self.chunks_by_table.get(table, 0) + 1

    def describe(self) -> str | None:
        """``db.t 12000 rows/12 chunks (reading), db.u 300 rows/1 chunk``; None when nothing ran."""
        if not self.chunks_by_table:
            return None
        parts = []
        for table, chunks in self.chunks_by_table.items():
            state = " (reading)" if table == self.current else ""
            parts.append(f"{table} {self.rows.get(table, 0)} rows/{chunks} chunks{state}")
        return ", ".join(parts)


def window_fields(schema: TableSchema, collection: Collection) -> tuple[str, ...]:
    """The payload fields a row is known by in the window: the primary key (what streamed changes
    are matched by), else the surrogate key (a key column the payload leaves out could not tell
    rows apart: refused)."""
    names = schema.table.primary_key or ((collection.surrogate_key,) if collection.surrogate_key else ())
    emitted = {name.lower(): name for _, name, _ in schema.value_columns}
    fields = tuple(emitted.get(name.lower()) for name in names)
    missing = [n for n, f in zip(names, fields, strict=True) if f is None]
    if missing:
        raise ChunkKeyError(
            f"key column(s) {', '.join(missing)} of {collection.table} are excluded from the events "
            "(column.exclude.list), so streamed changes cannot be matched with snapshot rows"
        )
    return tuple(f for f in fields if f is not None)


def additional_conditions(data: Mapping[str, Any]) -> dict[TableId, str]:
    entries = data.get("additional-conditions") or []
    if not isinstance(entries, list):
        raise SignalError('additional-conditions must be a JSON list of {"data-collection", "filter"}')
    out: dict[TableId, str] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("data-collection") or not entry.get("filter"):
            raise SignalError(f'additional-conditions entry {entry!r} needs "data-collection" and "filter"')
        try:
            # Kept as Debezium keeps it in the offset: in parentheses.
            out[TableId.parse(str(entry["data-collection"]))] = f"({entry['filter']})"
        except ValueError:
            raise SignalError(
                f"additional-conditions names {entry['data-collection']!r}, not a db.table"
            ) from None
    return out
