"""The record that flows from the event builder to every sink.

A ``ChangeRecord`` is one Kafka-Connect ``SourceRecord``: topic, key and value (each a Connect schema
plus a JSON-ready payload), headers, and the source offset that becomes safe to store once a sink has
accepted this record and every record before it.
"""

from __future__ import annotations

from collections.abc import Sequence
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
        return list(_rendered_headers(self.headers)[0])

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
    parts: list[bytes] = []
    _append_jsonl_parts(parts, record, key_schemas, value_schemas)
    return b"".join(parts)[:-1]  # without the newline


def jsonl_lines(
    records: Sequence[ChangeRecord], key_schemas: bool = True, value_schemas: bool = True
) -> bytes:
    """``jsonl_line`` of every record, each ended by a newline, joined in one copy."""
    return b"".join(jsonl_parts(records, key_schemas, value_schemas))


def jsonl_parts(
    records: Sequence[ChangeRecord], key_schemas: bool = True, value_schemas: bool = True
) -> list[bytes]:
    """``jsonl_lines`` as the pieces that make it up, for a gathering write (``os.writev``): per
    record the key and value payloads plus at most three constant pieces (the topic, the schemas'
    kilobytes and the headers, made once per combination), so the schemas are copied once, by the
    kernel, and no batch-sized buffer is built first."""
    parts: list[bytes] = []
    for record in records:
        _append_jsonl_parts(parts, record, key_schemas, value_schemas)
    return parts


def _append_jsonl_parts(
    parts: list[bytes], record: ChangeRecord, key_schemas: bool, value_schemas: bool
) -> None:
    key_schema, value_schema, headers = record.key_schema, record.value_schema, record.headers
    has_key = key_schema is not None or record.key is not None
    has_value = value_schema is not None or record.value is not None
    cache_key = (
        record.topic,
        id(key_schema),
        id(value_schema),
        id(headers),
        has_key,
        has_value,
        key_schemas,
        value_schemas,
    )
    cached = _LINE_FRAMES.get(cache_key)
    if (
        cached is None
        or cached[0] is not key_schema
        or cached[1] is not value_schema
        or cached[2] is not headers
    ):
        frames = _line_frames(record, has_key, has_value, key_schemas, value_schemas)
        if not all(isinstance(h.value, str) for h in headers):
            parts.extend(_interleave(frames, record, has_key, has_value))
            return  # headers made per record (the key-change pair): nothing worth keeping
        if len(_LINE_FRAMES) >= 256:
            _LINE_FRAMES.clear()
        cached = _LINE_FRAMES[cache_key] = (key_schema, value_schema, headers, frames)
    parts.extend(_interleave(cached[3], record, has_key, has_value))


def _interleave(
    frames: tuple[bytes, ...], record: ChangeRecord, has_key: bool, has_value: bool
) -> tuple[bytes, ...]:
    """The line's pieces: the constant frames around the key and value payloads."""
    if has_key and has_value:
        return (
            frames[0],
            _payload(record.key_schema, record.key),
            frames[1],
            _payload(record.value_schema, record.value),
            frames[2],
        )
    if has_key:
        return (frames[0], _payload(record.key_schema, record.key), frames[1])
    if has_value:
        return (frames[0], _payload(record.value_schema, record.value), frames[1])
    return frames


def _payload(schema: ConnectSchema | None, payload: Any) -> bytes:
    return orjson.dumps(schema.payload_for_json(payload) if schema is not None else payload)


def _envelope_frame(schema: ConnectSchema | None, schemas_enable: bool) -> tuple[bytes, bytes]:
    """What the JSON converter writes before and after a key's or value's payload."""
    if not schemas_enable:
        return b"", b""
    return b'{"schema":' + (schema.json_bytes if schema is not None else b"null") + b',"payload":', b"}"


def _line_frames(
    record: ChangeRecord, has_key: bool, has_value: bool, key_schemas: bool, value_schemas: bool
) -> tuple[bytes, ...]:
    """The constant pieces of a line around its payloads (null key or value included in them):
    ``{"topic":..,"key":`` + key + ``,"value":`` + value + ``,"headers":{..}}`` and a newline."""
    segments: list[bytes] = [b'{"topic":' + orjson.dumps(record.topic) + b',"key":']
    if has_key:
        key_open, key_close = _envelope_frame(record.key_schema, key_schemas)
        segments[-1] += key_open
        segments.append(key_close + b',"value":')
    else:
        segments[-1] += b'null,"value":'
    if has_value:
        value_open, value_close = _envelope_frame(record.value_schema, value_schemas)
        segments[-1] += value_open
        segments.append(value_close)
    else:
        segments[-1] += b"null"
    segments[-1] += b',"headers":' + _rendered_headers(record.headers)[1] + b"}\n"
    return tuple(segments)


# Line frames by topic, schema and header identity (see _HEADER_RENDERINGS for why id() is safe:
# each entry holds the objects it is keyed by).
_LINE_FRAMES: dict[tuple[Any, ...], tuple[Any, Any, Any, tuple[bytes, ...]]] = {}


# Rendered header tuples by identity: the context headers are one tuple shared by every record of a
# connector, so their bytes are made once. Tuples holding a struct header (the key-change pair) are
# made per record and rendered each time. Keyed by id() because hashing the tuple would hash every
# header of every record; safe because each entry holds the tuple itself, so its id cannot be freed
# and reused while the entry exists, and a hit is confirmed by identity.
_HEADER_RENDERINGS: dict[int, tuple[tuple[Header, ...], tuple[tuple[str, bytes], ...], bytes]] = {}


def _rendered_headers(headers: tuple[Header, ...]) -> tuple[tuple[tuple[str, bytes], ...], bytes]:
    """(Kafka header items, the jsonl ``headers`` object) of a record's headers."""
    cached = _HEADER_RENDERINGS.get(id(headers))
    if cached is not None and cached[0] is headers:
        return cached[1], cached[2]
    items = []
    for h in headers:
        if isinstance(h.value, str):
            items.append((h.name, h.value.encode()))
        else:
            payload = h.schema.payload_for_json(h.value) if h.schema is not None else h.value
            items.append((h.name, orjson.dumps(payload)))
    rendered = tuple(items), orjson.dumps({name: raw.decode() for name, raw in items})
    if all(isinstance(h.value, str) for h in headers):
        if len(_HEADER_RENDERINGS) >= 64:
            _HEADER_RENDERINGS.clear()
        _HEADER_RENDERINGS[id(headers)] = (headers, *rendered)
    return rendered
