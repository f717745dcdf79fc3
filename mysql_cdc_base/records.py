"""The record that flows from the event builder to every sink.

A ``ChangeRecord`` is one Kafka-Connect ``SourceRecord``: topic, key and value (each a Connect schema
plus a JSON-ready payload), headers, and the source offset that becomes safe to store once a sink has
accepted this record and every record before it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

import orjson

from mysql_cdc_base.connect import ConnectSchema, envelope_bytes
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.table_id import TableId


class RecordKind(StrEnum):
    DATA = "data"
    TOMBSTONE = "tombstone"
    SCHEMA_CHANGE = "schema_change"
    TRANSACTION = "transaction"
    HEARTBEAT = "heartbeat"
    NOTIFICATION = "notification"  # notification.enabled.channels=sink (not table data)


@dataclass(frozen=True, slots=True)
class Header:
    """A Connect header. String headers are written as their text; struct headers (the
    ``__debezium.newkey``/``oldkey`` pair) as the JSON of their payload."""

    name: str
    value: Any
    schema: ConnectSchema | None = None


@dataclass(frozen=True, slots=True, init=False)
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

    def __init__(
        self,
        topic: str,
        key_schema: ConnectSchema | None,
        key: Any,
        value_schema: ConnectSchema | None,
        value: Any,
        kind: RecordKind = RecordKind.DATA,
        headers: tuple[Header, ...] = (),
        offset: SourceOffset | None = None,
        partition: int | None = None,
        table_id: TableId | None = None,
    ) -> None:
        # The frozen dataclass's own __init__, at half its cost (one or more records are made per
        # row change): each slot is set through its descriptor, not object.__setattr__ by name.
        _set_topic(self, topic)
        _set_key_schema(self, key_schema)
        _set_key(self, key)
        _set_value_schema(self, value_schema)
        _set_value(self, value)
        _set_kind(self, kind)
        _set_headers(self, headers)
        _set_offset(self, offset)
        _set_partition(self, partition)
        _set_table_id(self, table_id)

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


# The slot setters ChangeRecord.__init__ uses (member descriptors; what object.__setattr__ finds).
(
    _set_topic,
    _set_key_schema,
    _set_key,
    _set_value_schema,
    _set_value,
    _set_kind,
    _set_headers,
    _set_offset,
    _set_partition,
    _set_table_id,
) = (getattr(ChangeRecord, f.name).__set__ for f in fields(ChangeRecord))


def jsonl_line(record: ChangeRecord, key_schemas: bool = True, value_schemas: bool = True) -> bytes:
    """The JSON-lines form shared by the ``jsonl`` and ``stdout`` sinks (no trailing newline):
    ``{"topic", "key", "value", "headers"}`` with key/value exactly as the JSON converter writes them."""
    return b"".join(jsonl_parts((record,), key_schemas, value_schemas))[:-1]  # without the newline


def jsonl_lines(
    records: Sequence[ChangeRecord], key_schemas: bool = True, value_schemas: bool = True
) -> bytes:
    """``jsonl_line`` of every record, each ended by a newline, joined in one copy."""
    return b"".join(jsonl_parts(records, key_schemas, value_schemas))


def jsonl_parts(
    records: Sequence[ChangeRecord], key_schemas: bool = True, value_schemas: bool = True
) -> list[bytes]:
    """``jsonl_lines`` as the pieces that make it up, for a gathering write (``os.writev``)."""
    parts: list[bytes] = []
    for chunk in jsonl_chunks(records, key_schemas, value_schemas, max_pieces=len(records) * 4 + 4):
        parts += chunk
    return parts


def jsonl_chunks(
    records: Sequence[ChangeRecord],
    key_schemas: bool = True,
    value_schemas: bool = True,
    max_pieces: int = 1024,
) -> Iterator[list[bytes]]:
    """``jsonl_parts`` cut into lists of whole lines of about ``max_pieces`` pieces each (a few more
    at most), for one gathering write each. Per line: the key and value payloads and the constant
    frames around them (the topic, the schemas' kilobytes, the headers; made once per combination).
    Where two lines in a row share their frames, the end of one and the start of the next are one
    piece made once, so a run of one table's records costs about four pieces a line.

    Why chunks: each payload's bytes are written while they are still in the CPU's cache and freed
    right after, so the next chunk reuses the same memory; a whole batch's payloads kept until one
    write cost about 3 us more per record (fresh memory each time)."""
    dumps = orjson.dumps
    parts: list[bytes] = []
    append = parts.append
    previous: _LineFrames | None = None
    for record in records:
        key_schema, value_schema, headers = record.key_schema, record.value_schema, record.headers
        key, value = record.key, record.value
        has_key = key_schema is not None or key is not None
        has_value = value_schema is not None or value is not None
        frames = previous
        if (
            frames is None
            or frames.value_schema is not value_schema
            or frames.key_schema is not key_schema
            or frames.headers is not headers
            or frames.topic != record.topic
            or frames.has_key is not has_key
            or frames.has_value is not has_value
        ):
            frames = _frames_of(record, has_key, has_value, key_schemas, value_schemas)
            if previous is not None:
                append(previous.tail)
            append(frames.head)
        else:
            append(frames.joint)  # the previous line's end and this line's start, one piece
        if has_key:
            walk = frames.key_walk
            append(dumps(key if walk is None else walk(key)))
            if has_value:
                append(frames.middle)
        if has_value:
            walk = frames.value_walk
            append(dumps(value if walk is None else walk(value)))
        if len(parts) >= max_pieces:
            append(frames.tail)
            yield parts
            parts = []
            append = parts.append
            previous = None
        else:
            previous = frames
    if previous is not None:
        append(previous.tail)
    if parts:
        yield parts


@dataclass(frozen=True, slots=True)
class _LineFrames:
    """The constant pieces of the lines of one topic, key and value schema and header tuple:
    ``head`` + key payload + ``middle`` + value payload + ``tail`` (a null key or value is written
    into the frames, and then ``middle`` is not used), and ``joint`` = ``tail`` + ``head``. Holds
    the objects it was made for: they are compared by identity."""

    topic: str
    key_schema: ConnectSchema | None
    value_schema: ConnectSchema | None
    headers: tuple[Header, ...]
    has_key: bool
    has_value: bool
    head: bytes
    middle: bytes
    tail: bytes
    joint: bytes
    # The schema's payload walker (defaults for nulls, Java floats), None where nothing changes.
    key_walk: Callable[[Any], Any] | None
    value_walk: Callable[[Any], Any] | None


def _frames_of(
    record: ChangeRecord, has_key: bool, has_value: bool, key_schemas: bool, value_schemas: bool
) -> _LineFrames:
    key_schema, value_schema, headers = record.key_schema, record.value_schema, record.headers
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
        cached is not None
        and cached.key_schema is key_schema
        and cached.value_schema is value_schema
        and cached.headers is headers
    ):
        return cached
    head, *rest = _line_frames(record, has_key, has_value, key_schemas, value_schemas)
    middle, tail = (rest[0], rest[1]) if len(rest) == 2 else (b"", rest[0] if rest else b"")
    if not rest:  # neither key nor value: the whole line is constant
        head, tail = b"", head
    frames = _LineFrames(
        record.topic,
        key_schema,
        value_schema,
        headers,
        has_key,
        has_value,
        head,
        middle,
        tail,
        tail + head,
        key_schema._walker if key_schema is not None else None,
        value_schema._walker if value_schema is not None else None,
    )
    if all(isinstance(h.value, str) for h in headers):
        if len(_LINE_FRAMES) >= 256:
            _LINE_FRAMES.clear()
        _LINE_FRAMES[cache_key] = frames
    # else: headers made per record (the key-change pair): nothing worth keeping
    return frames


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
_LINE_FRAMES: dict[tuple[Any, ...], _LineFrames] = {}


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
