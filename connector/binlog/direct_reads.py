"""mysql-replication's ``BinLogStreamReader.fetchone`` loop, for the reader settings the connector
uses, with its per-event overhead left out (issue 41).

Iterating the library's reader calls ``fetchone`` once per event, which reads seventeen
name-mangled attributes to build each event's ``BinLogPacketWrapper`` and checks settings the
connector never sets (an end position, a start timestamp). ``events`` reads the packets off the
same pymysql connection and keeps exactly the reader's bookkeeping (log position and file, table
map, server version and post-header lengths after a format description, the allowed events); the
wrapper's arguments are read once and again only after the events that change them (a rotate, a
format description), and the events ``connector.binlog.fast_events`` builds are built from them
directly (``fast_events.raw_event``), without the library's wrapper. The loop yields ``RawEvent``s
(a TRANSACTION_PAYLOAD's inner events in its place). Connecting, and reconnecting after a read the
library retries, stay the library's: whenever the reader is not connected, the next event comes
from ``fetchone``. A reader with an end position or a start timestamp is iterated as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pymysql
from pymysqlreplication import binlogstream as library_stream
from pymysqlreplication.constants.BINLOG import FORMAT_DESCRIPTION_EVENT, ROTATE_EVENT, TABLE_MAP_EVENT
from pymysqlreplication.event import NotImplementedEvent

from connector.binlog import fast_events
from connector.binlog.packets import TRANSACTION_PAYLOAD_EVENT, server_payload
from connector.binlog.raw_event import RawEvent

_PRIVATE = "_BinLogStreamReader__"
# fetchone's BinLogPacketWrapper arguments after the table map, control connection and version.
_WRAPPER_SETTINGS = (
    "use_checksum",
    "allowed_events_in_packet",
    "only_tables",
    "ignored_tables",
    "only_schemas",
    "ignored_schemas",
    "freeze_schema",
    "ignore_decode_errors",
    "verify_checksum",
    "optional_meta_data",
    "enable_logging",
    "use_column_name_cache",
    "post_header_lengths",
)
_REREAD_AFTER = frozenset({ROTATE_EVENT, FORMAT_DESCRIPTION_EVENT})


_CONNECTED = (_PRIVATE + "connected_stream", _PRIVATE + "connected_ctl")


def _connected(fields: dict[str, Any]) -> bool:
    return bool(fields[_CONNECTED[0]] and fields[_CONNECTED[1]])


def _settings(fields: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(fields[_PRIVATE + name] for name in _WRAPPER_SETTINGS)


def raw_of(event: Any, file: str) -> Iterator[RawEvent]:
    """The RawEvent of an event the library built (a TRANSACTION_PAYLOAD: its inner events')."""
    packet = event.packet
    # The header's fields: ints as struct unpacked them. packet.event_size is the whole event
    # (header + body + checksum); the event object's own event_size excludes the header.
    end_pos = packet.log_pos
    start_pos = end_pos - packet.event_size if end_pos else 0
    etype = event.event_type
    raw = RawEvent(event, file, start_pos, end_pos, event.timestamp, packet.server_id, etype)
    if etype == TRANSACTION_PAYLOAD_EVENT and isinstance(event, NotImplementedEvent):
        return server_payload(raw)
    return iter((raw,))


def events(stream: Any, default_file: str = "") -> Iterator[RawEvent]:
    """The RawEvents of the events ``iter(stream)`` gives, in order, until ``fetchone`` would
    return None; ``default_file`` is their file until the reader knows its own."""
    if stream.end_log_pos or stream.skip_to_timestamp:
        for event in stream:
            yield from raw_of(event, stream.log_file or default_file)
        return
    fields = stream.__dict__
    allowed = fields[_PRIVATE + "allowed_events"]
    settings: tuple[Any, ...] | None = None
    fast: fast_events.Settings | None = None
    file = stream.log_file or default_file
    stream_key, control_key = _CONNECTED
    fast_raw = fast_events.raw_event
    read_packet: Any = None
    while True:
        if not (fields[stream_key] and fields[control_key]):
            event = stream.fetchone()  # connects (or refuses to reconnect: server_stream)
            if event is None:
                return
            settings = None
            yield from raw_of(event, stream.log_file or default_file)
            continue
        if settings is None:
            settings = _settings(fields)
            fast = fast_events.settings(
                stream.table_map, stream._ctl_connection, stream.mysql_version, *settings
            )
            file = stream.log_file or default_file
            read_packet = stream._stream_connection._read_packet  # the (re)connected one
        try:
            packet = read_packet()
        except pymysql.OperationalError as error:
            if _lost(stream, error):
                continue  # as fetchone: the reader reconnects
            raise
        data = packet._data
        if data[0] != 0 or len(data) < 7:  # not an OK packet
            if packet.is_eof_packet():
                stream.close()
                return
            continue
        raw = fast_raw(packet, fast, file) if fast is not None else None
        if raw is not None:
            # The table map is in the reader's map already (the parse puts it there).
            if raw.end_pos:
                stream.log_pos = raw.end_pos
            yield raw
            continue
        wrapper = library_stream.BinLogPacketWrapper(
            packet, stream.table_map, stream._ctl_connection, stream.mysql_version, *settings
        )
        event = wrapper.event
        event_type = wrapper.event_type
        if event_type in _REREAD_AFTER:
            _bookkeeping(stream, wrapper)
            settings = None
        elif wrapper.log_pos:
            stream.log_pos = wrapper.log_pos
        if event_type == TABLE_MAP_EVENT and event is not None:
            stream.table_map[event.table_id] = event.get_table()
        if event is not None and event.__class__ in allowed:
            yield from raw_of(event, stream.log_file or default_file)


def _lost(stream: Any, error: pymysql.OperationalError) -> bool:
    """Whether a failed read lost the connection the library reconnects from (then closed and
    marked so, as ``fetchone`` does); otherwise the error is raised."""
    if error.args[0] in library_stream.MYSQL_EXPECTED_ERROR_CODES:
        stream._stream_connection.close()
        stream.__dict__[_PRIVATE + "connected_stream"] = False
        return True
    return False


def _bookkeeping(stream: Any, wrapper: Any) -> None:
    """fetchone's updates after a rotate or a format description."""
    event = wrapper.event
    if wrapper.event_type == ROTATE_EVENT:
        stream.log_pos = event.position
        stream.log_file = event.next_binlog
        if wrapper.timestamp != 0:
            stream.table_map = {}  # table ids do not survive a server restart (the library's note)
    elif wrapper.log_pos:
        stream.log_pos = wrapper.log_pos
    if wrapper.event_type == FORMAT_DESCRIPTION_EVENT and event is not None:
        stream.mysql_version = event.mysql_version
        stream.__dict__[_PRIVATE + "post_header_lengths"] = event.post_header_len
