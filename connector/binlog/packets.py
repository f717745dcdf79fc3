"""One binlog event's bytes → mysql-replication's event object, and MySQL 8's compressed
transactions (TRANSACTION_PAYLOAD_EVENT) → their inner events.

Both the file source (``connector.binlog.files``) and server streaming (``connector.binlog.server_stream``) use
this module, so a compressed transaction is expanded by one implementation wherever it comes from.

Events are parsed by mysql-replication's own ``BinLogPacketWrapper`` (the parser server streaming
uses): it is fed a ``pymysql`` packet holding the OK byte and the event, the table map dict it
fills from TABLE_MAP events, and a control connection (a ``ControlStandIn`` for files: it has no
server behind it and refuses every query, so no decoding step can reach a server unnoticed).

TRANSACTION_PAYLOAD body (MySQL ``binary_log::Transaction_payload_event``): a list of fields, each a
type, a length and a value, all three net_field_length integers, ended by a type 0 field; then the
payload. Field types: 1 payload size, 2 compression type (0 ZSTD, 255 NONE), 3 uncompressed size.
The payload is a run of complete events (19-byte header, body) without CRC32 footers.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from pymysql.protocol import MysqlPacket
from pymysqlreplication.event import NotImplementedEvent
from pymysqlreplication.packet import BinLogPacketWrapper
from pymysqlreplication.row_event import TableMapEvent, find_charset

from connector.errors import ReplicationError

HEADER_LEN = 19
CHECKSUM_LEN = 4
TRANSACTION_PAYLOAD_EVENT = 0x28

COMPRESSION_ZSTD = 0
COMPRESSION_NONE = 255
_COMPRESSION_NAMES = {COMPRESSION_ZSTD: "ZSTD", COMPRESSION_NONE: "NONE"}

_FIELD_END = 0
_FIELD_PAYLOAD_SIZE = 1
_FIELD_COMPRESSION_TYPE = 2
_FIELD_UNCOMPRESSED_SIZE = 3

# Every class the parser may build (its own table, and NotImplementedEvent for the rest): nothing
# is filtered out at the packet level, so no event disappears before the connector has seen it.
_ALLOWED_EVENTS = frozenset(
    {*BinLogPacketWrapper._BinLogPacketWrapper__event_map.values(), NotImplementedEvent}
)


class PayloadError(ReplicationError):
    """A TRANSACTION_PAYLOAD event that cannot be expanded; the message names the event's position."""


class ControlStandIn:
    """What mysql-replication's parser asks of its control connection, without a server: the
    connection charset, and the server kind (``mysql``/``mariadb``, from the file's FDE)."""

    charset = "utf8mb4"

    def __init__(self, dbms: str) -> None:
        self.dbms = dbms

    def _get_dbms(self) -> str:
        return self.dbms

    def cursor(self, *_args: Any, **_kwargs: Any) -> Any:
        raise ReplicationError(
            "decoding a binlog file tried to query a server (a table's column names); this is a bug: "
            "the file source decodes from the files and the table structures it knows"
        )


class ControlConnection(Protocol):
    charset: str

    def _get_dbms(self) -> str: ...


@dataclass
class ParserState:
    """What decoding an event needs from the events before it: the FDE's server version, post-header
    lengths and checksum setting, and the table maps seen (the dict is filled as TABLE_MAPs pass)."""

    control: Any
    mysql_version: tuple[int, ...] = (0, 0, 0)
    post_header_lengths: tuple[int, ...] | None = None
    table_map: dict[int, Any] = field(default_factory=dict)


def parse_event(state: ParserState, event: bytes, *, has_checksum: bool) -> Any:
    """The mysql-replication event object for ``event`` (header, body and, if ``has_checksum``, its
    CRC32, which is not verified here). Its ``event_type``, ``timestamp``... are on ``.packet``."""
    if not has_checksum:
        # The parser reads optional table-map metadata up to a 4-byte footer: give footer-less
        # events (those inside a payload) a zero footer and the header size to match.
        size = struct.unpack_from("<I", event, 9)[0] + CHECKSUM_LEN
        event = event[:9] + struct.pack("<I", size) + event[13:] + b"\0" * CHECKSUM_LEN
    wrapper = BinLogPacketWrapper(
        MysqlPacket(b"\x00" + event, "utf8"),
        state.table_map,
        state.control,
        state.mysql_version,
        True,  # use_checksum: every event now ends with a 4-byte footer
        _ALLOWED_EVENTS,
        None,
        None,
        None,
        None,
        False,  # freeze_schema
        False,  # ignore_decode_errors
        False,  # verify_checksum: the file source verifies the bytes itself, before parsing
        True,  # optional_meta_data: column names etc. from the table map, never from a server
        False,
        False,
        state.post_header_lengths,
    )
    parsed = wrapper.event
    if isinstance(parsed, TableMapEvent):
        _apply_charsets(parsed)
        state.table_map[parsed.table_id] = parsed.get_table()
    return parsed


def _apply_charsets(table_map: TableMapEvent) -> None:
    """The columns' charsets from the table map's charset metadata, where the library left them
    out: it applies the metadata only together with column names (FULL), but MINIMAL metadata has
    the charsets too, and without them a BINARY column's bytes would be decoded as UTF-8."""
    metadata = table_map.optional_metadata
    if metadata.column_name_list:
        return  # the library applied them
    dbms = table_map.dbms
    text_charsets = iter(metadata.charset_collation_list or [])
    enum_charsets = iter(metadata.enum_and_set_collation_list or [])
    for column in table_map.columns:
        if table_map._is_character_column(column.type, dbms=dbms):
            charset_id = next(text_charsets, None)
        elif table_map._is_enum_or_set_column(column.type):
            charset_id = next(enum_charsets, None)
        else:
            continue
        if charset_id is not None:
            encoding, collation, _name = find_charset(str(charset_id), dbms=dbms)
            column.character_set_name, column.collation_name = encoding, collation


def _net_field_length(data: bytes, at: int) -> tuple[int, int]:
    first = data[at]
    widths = {0xFC: 2, 0xFD: 3, 0xFE: 8}
    width = widths.get(first)
    if width is None:
        return first, at + 1
    return int.from_bytes(data[at + 1 : at + 1 + width], "little"), at + 1 + width


class PayloadHeader(NamedTuple):
    payload_size: int
    compression_type: int
    uncompressed_size: int | None
    header_len: int  # where the payload starts in the event body

    @property
    def compression_name(self) -> str:
        return _COMPRESSION_NAMES.get(self.compression_type, f"unknown type {self.compression_type}")


def payload_header(body: bytes) -> PayloadHeader:
    """The header fields of a TRANSACTION_PAYLOAD event body (without the common header)."""
    values: dict[int, int] = {}
    at = 0
    while True:
        kind, at = _net_field_length(body, at)
        if kind == _FIELD_END:
            break
        length, at = _net_field_length(body, at)
        value, _ = _net_field_length(body, at)
        values[kind] = value
        at += length
    return PayloadHeader(
        values.get(_FIELD_PAYLOAD_SIZE, len(body) - at),
        values.get(_FIELD_COMPRESSION_TYPE, COMPRESSION_NONE),
        values.get(_FIELD_UNCOMPRESSED_SIZE),
        at,
    )


def _zstd(data: bytes, expected: int | None) -> bytes:
    # Imported here: only a compressed transaction needs it (issue 41: time to the first event).
    import zstandard  # noqa: PLC0415

    # The frames need not record their content size, so decompress as a stream.
    try:
        out = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except zstandard.ZstdError as exc:
        raise _UndecompressableError(str(exc)) from None
    return bytes(out)


class _UndecompressableError(PayloadError):
    """A payload its codec refused (the codec's message); ``payload_events`` names the event."""


def _stored(data: bytes, expected: int | None) -> bytes:
    return data


_DECOMPRESSORS = {COMPRESSION_ZSTD: _zstd, COMPRESSION_NONE: _stored}


def payload_events(body: bytes, where: str) -> list[bytes]:
    """The inner events (header + body, no footer) of a TRANSACTION_PAYLOAD event body; ``where``
    (file:position) names the event in errors."""
    try:
        header = payload_header(body)
    except IndexError:
        raise PayloadError(f"the TRANSACTION_PAYLOAD event at {where} has a truncated header") from None
    decompress = _DECOMPRESSORS.get(header.compression_type)
    if decompress is None:
        raise PayloadError(
            f"the TRANSACTION_PAYLOAD event at {where} is compressed with {header.compression_name}, "
            "which the connector cannot decompress (it reads ZSTD and NONE); set "
            "binlog_transaction_compression=OFF on the server"
        )
    compressed = body[header.header_len : header.header_len + header.payload_size]
    try:
        data = decompress(compressed, header.uncompressed_size)
    except _UndecompressableError as exc:
        raise PayloadError(
            f"the TRANSACTION_PAYLOAD event at {where} cannot be decompressed: {exc}"
        ) from None
    if header.uncompressed_size is not None and len(data) != header.uncompressed_size:
        raise PayloadError(
            f"the TRANSACTION_PAYLOAD event at {where} holds {len(data)} bytes uncompressed, its header "
            f"says {header.uncompressed_size}"
        )
    return list(_split_events(data, where))


def _split_events(data: bytes, where: str) -> Iterator[bytes]:
    at = 0
    while at < len(data):
        if len(data) - at < HEADER_LEN:
            raise PayloadError(f"the TRANSACTION_PAYLOAD event at {where} ends inside an event header")
        size = struct.unpack_from("<I", data, at + 9)[0]
        if size < HEADER_LEN or at + size > len(data):
            raise PayloadError(
                f"the TRANSACTION_PAYLOAD event at {where} holds an event of {size} bytes at payload "
                f"offset {at}, past the payload's end ({len(data)} bytes)"
            )
        yield data[at : at + size]
        at += size


def expand_payload(raw: Any, body: bytes, state: ParserState) -> Iterator[Any]:
    """The RawEvents inside the payload event ``raw`` (a ``connector.binlog.server_stream.RawEvent``).

    Positions as Debezium reports them: its streaming source sets the event position once, from the
    payload event's header, then runs the inner events' handlers, so every inner event (and every
    row in it) reports the payload's ``pos``, and the commit inside moves the restart point to the
    payload's end. Timestamp and server id are the payload's too (Debezium's event timestamp is
    the outer event's). Each inner event counts as one event of the transaction in the offset's
    ``event``, so a restart inside a payload re-reads it and skips the inner events already done.
    Debezium instead completes one event for the whole payload (after its inner handlers ran), so
    an offset stored in the middle of a compressed transaction by one connector is not resumed
    exactly by the other; offsets between transactions are the same."""
    where = f"{raw.file}:{raw.start_pos}"
    for inner in payload_events(body, where):
        event = parse_event(state, inner, has_checksum=False)
        yield raw._replace(event=event, event_type=inner[4])


def server_payload(raw: Any) -> Iterator[Any]:
    """Server streaming: the inner events of a payload event mysql-replication handed over as
    ``NotImplementedEvent`` (its packet still holds the bytes; its parser state is the stream's)."""
    event = raw.event
    data = event.packet.packet.get_all_data()[1:]  # the OK byte first
    body = data[HEADER_LEN : HEADER_LEN + int(event.event_size)]
    state = ParserState(
        event._ctl_connection, event.mysql_version, event._post_header_lengths, event.table_map
    )
    return expand_payload(raw, body, state)
