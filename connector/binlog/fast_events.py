"""The events of every small transaction, built without mysql-replication's per-event machinery
(issue 41).

An OLTP binlog is mostly transaction boundaries and table maps: per transaction a GTID event and an
XID (MariaDB; MySQL: a GTID and a BEGIN query), per statement a TABLE_MAP and its rows event. For
each, the library's ``BinLogPacketWrapper`` reads the header through its buffered reader and calls
the event class with thirteen keyword arguments, whose ``BinLogEvent.__init__`` sets its fields
one by one. ``raw_event`` (called by the connector's packet loop, ``connector.binlog.direct_reads``)
reads the header with one ``struct.unpack_from`` and, for an XID, a MariaDB GTID event, a TABLE_MAP
whose structure is already parsed (``connector.binlog.table_map_cache``) and a rows event (v1 and
v2, without extra data) of a mapped table, builds the library's own event class holding only the
fields the connector reads, and its ``RawEvent``. Everything else the library's constructor would
set (its wrapper as ``packet``, the reader's objects, the private fields of a rows event) is made
the first time any of it is read (``BinLogEvent.__getattr__``, installed once), with exactly the
values the library would give it, the packet read as far as the library reads it. A rows event's
row images are kept as bytes for ``connector.binlog.row_decoder``. ``FastPacketWrapper``
(installed as the wrapper the library's own reader builds) makes the same events whole. Every
other event, and every event of a stream that filters in the library or verifies checksums
there, goes through the library's constructor unchanged.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from pymysqlreplication import binlogstream as library_stream
from pymysqlreplication import event as library_event
from pymysqlreplication import packet as library_packet

from connector.binlog.raw_event import ROWS_BODY, RawEvent
from connector.binlog.table_map_cache import TABLE_MAP_EVENT, parsed_table_map, settings_key

XID_EVENT = 0x10
MARIADB_GTID_EVENT = 0xA2
WRITE_ROWS_V1, UPDATE_ROWS_V1, DELETE_ROWS_V1 = 0x17, 0x18, 0x19
WRITE_ROWS_V2, UPDATE_ROWS_V2, DELETE_ROWS_V2 = 0x1E, 0x1F, 0x20
_HEADER = struct.Struct("<xIBIIIH")  # pymysql's OK byte, then the 19-byte event header
_BODY = 20  # where the event's body starts in pymysql's packet
_XID = struct.Struct("<Q")
_MARIADB_GTID = struct.Struct("<QIB")  # sequence number, domain id, flags
_ROWS_V2_POST_HEADER = struct.Struct("<HH")  # flags, extra data length
_ROWS_V1_POST_HEADER = struct.Struct("<H")  # flags
_ROWS_EVENT_TYPES = frozenset(
    (WRITE_ROWS_V1, UPDATE_ROWS_V1, DELETE_ROWS_V1, WRITE_ROWS_V2, UPDATE_ROWS_V2, DELETE_ROWS_V2)
)
# An event's fields ``raw_event`` left for later (how to make them).
REST = "_mysql_cdc_rest"

# ``RawEvent(...)`` without its generated ``__new__``'s frame (one per event).
_new_tuple = tuple.__new__
_EVENT_CLASSES: dict[int, Any] = library_packet.BinLogPacketWrapper._BinLogPacketWrapper__event_map


@dataclass(frozen=True, slots=True)
class Stream:
    """What the library's stream reader passes for every event that a parse below reads; made
    once per table map, control connection and format description (``_stream``)."""

    table_map: dict[int, Any]
    control: Any
    dbms: str
    optional_meta_data: bool
    post_header_lengths: Any
    use_column_name_cache: bool
    enable_logging: bool
    # The rows event types whose declared post-header is the one ``_rows`` reads (checked once).
    plain_rows: frozenset[int] = frozenset()
    # What a TABLE_MAP's parse depends on besides its body (``table_map_cache.settings_key``).
    table_map_settings: tuple[Any, ...] = ()

    def declared_post_header(self, event_type: int, known: int) -> int:
        """``BinLogEvent._declared_post_header_len``."""
        lengths = self.post_header_lengths
        if not lengths or not 0 <= event_type - 1 < len(lengths):
            return known
        return int(lengths[event_type - 1])


_last_stream: list[Stream] = []


def _stream(
    table_map: Any, ctl: Any, optional_meta_data: bool, post_header_lengths: Any, names: bool, logging: bool
) -> Stream:
    """The ``Stream`` of these arguments: the last one made, if made for the same objects."""
    if _last_stream:
        last = _last_stream[0]
        if (
            last.table_map is table_map
            and last.control is ctl
            and last.post_header_lengths is post_header_lengths
            and (last.optional_meta_data, last.use_column_name_cache, last.enable_logging)
            == (optional_meta_data, names, logging)
        ):
            return last
    stream = Stream(table_map, ctl, ctl._get_dbms(), optional_meta_data, post_header_lengths, names, logging)
    known = {event_type: 10 if event_type >= WRITE_ROWS_V2 else 8 for event_type in _ROWS_EVENT_TYPES}
    plain = frozenset(t for t, length in known.items() if stream.declared_post_header(t, length) == length)
    table_map_settings = settings_key(optional_meta_data, stream.dbms, post_header_lengths)
    stream = dataclasses.replace(stream, plain_rows=plain, table_map_settings=table_map_settings)
    _last_stream[:] = [stream]
    return stream


# A parse: (the fields the connector reads, body bytes read, the library's other fields: a dict,
# or None for none or a rows event's, made when read) or None (the library's path must run).
Parsed = tuple[dict[str, Any], int, dict[str, Any] | None] | None


def _xid(data: bytes, size: int, stream: Stream, event_type: int) -> Parsed:
    return {"xid": _XID.unpack_from(data, _BODY)[0]}, _XID.size, None


def _mariadb_gtid(data: bytes, size: int, stream: Stream, event_type: int) -> Parsed:
    sequence, domain, flags = _MARIADB_GTID.unpack_from(data, _BODY)
    server_id = _HEADER.unpack_from(data)[2]
    fields = {"server_id": server_id, "gtid_seq_no": sequence, "domain_id": domain, "flags": flags}
    fields["gtid"] = f"{domain}-{server_id}-{sequence}"
    return fields, _MARIADB_GTID.size, None


def _table_map(data: bytes, size: int, stream: Stream, event_type: int) -> Parsed:
    body = data[_BODY : _BODY + size]
    fields = parsed_table_map(body, stream.table_map_settings)
    if fields is None:
        return None
    table_id, table = fields["table_id"], fields["table_obj"]
    stream.table_map[table_id] = table  # as the library's parse does
    return {"table_id": table_id, "table_obj": table}, size, fields


def _rows(data: bytes, size: int, stream: Stream, event_type: int) -> Parsed:
    """``RowsEvent.__init__`` and its subclasses' up to the row images (their private fields
    when read: ``_rows_private``); the images themselves as ``ROWS_BODY``."""
    table_id = int.from_bytes(data[_BODY : _BODY + 6], "little")
    table = stream.table_map.get(table_id)
    if table is None or event_type not in stream.plain_rows:
        return None
    at = _BODY + 6
    fields: dict[str, Any] = {
        "table_id": table_id,
        "primary_key": table.primary_key,
        "schema": table.schema,
        "table": table.table,
    }
    if event_type >= WRITE_ROWS_V2:
        fields["flags"], fields["extra_data_length"] = _ROWS_V2_POST_HEADER.unpack_from(data, at)
        at += _ROWS_V2_POST_HEADER.size
        if fields["extra_data_length"] > 2:
            return None
    else:
        fields["flags"] = _ROWS_V1_POST_HEADER.unpack_from(data, at)[0]
        at += _ROWS_V1_POST_HEADER.size
    columns = data[at]
    if columns >= 251:  # a longer length-coded number: the library's reader
        return None
    at += 1
    width = (columns + 7) // 8
    fields["number_of_columns"] = columns
    fields["columns"] = table.columns
    fields["columns_present_bitmap"] = data[at : at + width]
    at += width
    if event_type in (UPDATE_ROWS_V1, UPDATE_ROWS_V2):
        fields["columns_present_bitmap2"] = data[at : at + width]
        at += width
    fields[ROWS_BODY] = data[at : _BODY + size]
    return fields, at - _BODY, None


def _rows_private(stream: Stream) -> dict[str, Any]:
    """The private fields ``RowsEvent.__init__`` sets, for a stream without library filters."""
    return {
        "_RowsEvent__rows": None,
        "_RowsEvent__only_tables": None,
        "_RowsEvent__ignored_tables": None,
        "_RowsEvent__only_schemas": None,
        "_RowsEvent__ignored_schemas": None,
        "_RowsEvent__use_column_name_cache": stream.use_column_name_cache,
        "_RowsEvent__enable_logging": stream.enable_logging,
        "_RowsEvent__none_sources": {},
    }


_PARSES: dict[int, Callable[[bytes, int, Stream, int], Parsed]] = {
    XID_EVENT: _xid,
    MARIADB_GTID_EVENT: _mariadb_gtid,
    TABLE_MAP_EVENT: _table_map,
    **dict.fromkeys(_ROWS_EVENT_TYPES, _rows),
}


class Settings(NamedTuple):
    """The reader's settings the fast path reads, checked once for a run of events
    (``settings``): the table map, control connection and server version, and ``Stream``."""

    table_map: Any
    ctl: Any
    mysql_version: Any
    allowed_events: Any
    stream: Stream
    ignore_decode_errors: bool
    post_header_lengths: Any
    # The parses of the event types the reader lets through (the others take the library's path).
    parses: dict[int, Callable[[bytes, int, Stream, int], Parsed]]


def settings(
    table_map: Any,
    ctl: Any,
    mysql_version: Any,
    use_checksum: bool,
    allowed_events: Any,
    only_tables: Any,
    ignored_tables: Any,
    only_schemas: Any,
    ignored_schemas: Any,
    freeze_schema: bool,
    ignore_decode_errors: bool,
    verify_checksum: bool,
    optional_meta_data: bool,
    enable_logging: bool,
    use_column_name_cache: bool = False,
    post_header_lengths: Any = None,
) -> Settings | None:
    """The ``Settings`` of ``BinLogPacketWrapper``'s arguments, or None where every event must
    take the library's path (no checksum, or one verified there, a frozen schema, table filters)."""
    if not use_checksum or verify_checksum or freeze_schema:
        return None
    if not (
        only_tables is None and ignored_tables is None and only_schemas is None and ignored_schemas is None
    ):
        return None
    stream = _stream(
        table_map, ctl, optional_meta_data, post_header_lengths, use_column_name_cache, enable_logging
    )
    parses = {t: parse for t, parse in _PARSES.items() if _EVENT_CLASSES[t] in allowed_events}
    return Settings(
        table_map,
        ctl,
        mysql_version,
        allowed_events,
        stream,
        ignore_decode_errors,
        post_header_lengths,
        parses,
    )


def raw_event(from_packet: Any, given: Settings, file: str) -> RawEvent | None:
    """The RawEvent of the event the library would build of ``from_packet``, or None (nothing
    read or set) where the library's own path must run.

    The event is of the library's class and holds the fields the connector reads (the parse's,
    its type and timestamp); the rest of what the library's constructor sets (its wrapper as
    ``packet``, the reader's objects, private fields) is made the first time any of it is read
    (``_complete``), so an event only dispatched costs two small objects."""
    data = from_packet._data
    parse = given.parses.get(data[5])  # the event type, after pymysql's OK byte
    if parse is None:
        return None
    header = _HEADER.unpack_from(data)
    timestamp, event_type, server_id, event_size, log_pos, _ = header
    cls = _EVENT_CLASSES[event_type]
    parsed = parse(data, event_size - 23, given.stream, event_type)
    if parsed is None:
        return None
    fields, read, rest = parsed
    from_packet._position = _BODY + read  # as far as the library's reads leave it
    fields["event_type"] = event_type
    fields["timestamp"] = timestamp
    fields[REST] = (from_packet, given, header, read, rest)
    event = object.__new__(cls)
    event.__dict__ = fields
    start = log_pos - event_size if log_pos else 0
    return _new_tuple(RawEvent, (event, file, start, log_pos, timestamp, server_id, event_type))


def _complete(event: Any, from_packet: Any, given: Settings, header: Any, read: int, rest: Any) -> None:
    """The fields the library's constructor sets that ``raw_event`` left for later, with the
    wrapper it builds (a ``FastPacketWrapper``) as ``packet``."""
    timestamp, event_type, server_id, event_size, log_pos, flags = header
    stream = given.stream
    ctl = given.ctl
    wrapper = object.__new__(FastPacketWrapper)
    wrapper.__dict__ = {
        "read_bytes": read,
        "_BinLogPacketWrapper__data_buffer": b"",
        "packet": from_packet,
        "charset": ctl.charset,
        "enable_logging": stream.enable_logging,
        "use_column_name_cache": stream.use_column_name_cache,
        "timestamp": timestamp,
        "event_type": event_type,
        "server_id": server_id,
        "event_size": event_size,
        "log_pos": log_pos,
        "flags": flags,
    }
    wrapper.event = event
    fields = event.__dict__
    fields.pop(ROWS_BODY, None)  # read from the packet, where the library leaves it, from now on
    if rest is None and event_type in _ROWS_EVENT_TYPES:
        rest = _rows_private(stream)
    full = {
        # BinLogEvent.__init__'s fields (the checksum not verified: see ``settings``).
        "packet": wrapper,
        "table_map": given.table_map,
        "event_type": event_type,
        "timestamp": timestamp,
        "event_size": event_size - 23,
        "_post_header_lengths": given.post_header_lengths,
        "_ctl_connection": ctl,
        "mysql_version": given.mysql_version,
        "_ignore_decode_errors": given.ignore_decode_errors,
        "_verify_checksum": False,
        "_is_event_valid": None,
        "_processed": True,
        "complete": True,
        "dbms": stream.dbms,
        **(rest or {}),
    }
    for key, value in full.items():
        fields.setdefault(key, value)  # the parse's own values are the library's already


def _read_later(event: Any, name: str) -> Any:
    """``BinLogEvent.__getattr__``: a field ``raw_event`` left for later is made now; any other
    missing attribute is missing as before."""
    rest = event.__dict__.pop(REST, None)
    if rest is None:
        raise AttributeError(f"'{type(event).__name__}' object has no attribute '{name}'")
    _complete(event, *rest)
    return getattr(event, name)


class FastPacketWrapper(library_packet.BinLogPacketWrapper):
    """``BinLogPacketWrapper`` with the fast path above; the same fields on the wrapper and the
    event as the library's."""

    def __init__(self, from_packet: Any, table_map: Any, ctl_connection: Any, *args: Any) -> None:
        given = settings(table_map, ctl_connection, *args) if from_packet._data[5] in _PARSES else None
        raw = raw_event(from_packet, given, "") if given is not None else None
        if raw is None:
            super().__init__(from_packet, table_map, ctl_connection, *args)
        else:
            event = raw.event
            wrapper = event.packet  # made now
            self.__dict__ = wrapper.__dict__
            event.packet = self


def install() -> None:
    """The library's stream reader builds ``FastPacketWrapper``s, and the library's events make
    the fields ``raw_event`` leaves for later when they are read (once; idempotent)."""
    library_stream.BinLogPacketWrapper = FastPacketWrapper
    library_event.BinLogEvent.__getattr__ = _read_later
