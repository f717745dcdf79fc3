"""The events of every small transaction, built without mysql-replication's per-event machinery
(issue 41).

An OLTP binlog is mostly transaction boundaries and table maps: per transaction a GTID event and an
XID (MariaDB; MySQL: a GTID and a BEGIN query), per statement a TABLE_MAP and its rows event. For
each, the library's ``BinLogPacketWrapper`` reads the header through its buffered reader and calls
the event class with thirteen keyword arguments, whose ``BinLogEvent.__init__`` sets its fields
one by one. ``FastPacketWrapper`` (installed once as the wrapper the library's stream reader
builds, ``install``) reads the header with one ``struct.unpack_from`` and, for an XID, a MariaDB
GTID event and a TABLE_MAP whose structure is already parsed (``connector.binlog.table_map_cache``),
builds the library's own event class with exactly the fields the library would give it. Every
other event, and every event of a stream that filters in the library or verifies checksums there,
goes through the library's constructor unchanged.
"""

from __future__ import annotations

import struct
from typing import Any

from pymysqlreplication import binlogstream as library_stream
from pymysqlreplication import event as library_event
from pymysqlreplication import packet as library_packet
from pymysqlreplication import row_event as library_rows

from connector.binlog.table_map_cache import TABLE_MAP_EVENT, parsed_table_map

XID_EVENT = 0x10
MARIADB_GTID_EVENT = 0xA2
_HEADER = struct.Struct("<xIBIIIH")  # pymysql's OK byte, then the 19-byte event header
_XID = struct.Struct("<Q")
_MARIADB_GTID = struct.Struct("<QIB")  # sequence number, domain id, flags
_Wrapper = library_packet.BinLogPacketWrapper


def _base_fields(
    wrapper: Any, event_size: int, table_map: Any, ctl: Any, options: tuple[Any, ...]
) -> dict[str, Any]:
    """The fields ``BinLogEvent.__init__`` sets (checksums not verified: see ``_fast_path``)."""
    mysql_version, ignore_decode_errors, post_header_lengths = options
    return {
        "packet": wrapper,
        "table_map": table_map,
        "event_type": wrapper.event_type,
        "timestamp": wrapper.timestamp,
        "event_size": event_size,
        "_post_header_lengths": post_header_lengths,
        "_ctl_connection": ctl,
        "mysql_version": mysql_version,
        "_ignore_decode_errors": ignore_decode_errors,
        "_verify_checksum": False,
        "_is_event_valid": None,
        "_processed": True,
        "complete": True,
        "dbms": ctl._get_dbms(),
    }


def _xid(data: bytes, base: dict[str, Any]) -> Any:
    event = library_event.XidEvent.__new__(library_event.XidEvent)
    event.__dict__ = base
    event.xid = _XID.unpack_from(data, 20)[0]
    return event


def _mariadb_gtid(data: bytes, base: dict[str, Any]) -> Any:
    event = library_event.MariadbGtidEvent.__new__(library_event.MariadbGtidEvent)
    event.__dict__ = base
    server_id = base["packet"].server_id
    sequence, domain, flags = _MARIADB_GTID.unpack_from(data, 20)
    base.update(server_id=server_id, gtid_seq_no=sequence, domain_id=domain, flags=flags)
    event.gtid = f"{domain}-{server_id}-{sequence}"
    return event


_BUILDERS = {XID_EVENT: _xid, MARIADB_GTID_EVENT: _mariadb_gtid}
_CLASSES = {
    XID_EVENT: library_event.XidEvent,
    MARIADB_GTID_EVENT: library_event.MariadbGtidEvent,
    TABLE_MAP_EVENT: library_rows.TableMapEvent,
}


class FastPacketWrapper(_Wrapper):  # type: ignore[misc]
    """``BinLogPacketWrapper`` with the fast path above; the same fields on the wrapper and the
    event as the library's."""

    def __init__(self, from_packet: Any, table_map: Any, ctl_connection: Any, *args: Any) -> None:
        data = from_packet._data
        event_type = data[5]
        cls = _CLASSES.get(event_type)
        if cls is None or not self._fast_path(from_packet, table_map, ctl_connection, cls, *args):
            super().__init__(from_packet, table_map, ctl_connection, *args)

    def _fast_path(
        self,
        from_packet: Any,
        table_map: Any,
        ctl: Any,
        cls: type,
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
    ) -> bool:
        """Builds the event and returns True, or returns False (nothing read or set) where the
        library's own path must run."""
        if not use_checksum or verify_checksum or cls not in allowed_events:
            return False
        filtered = freeze_schema or any(
            f is not None for f in (only_tables, ignored_tables, only_schemas, ignored_schemas)
        )
        data = from_packet._data
        timestamp, event_type, server_id, event_size, log_pos, flags = _HEADER.unpack_from(data)
        size = event_size - 23
        fields = None
        if event_type == TABLE_MAP_EVENT:
            if filtered:
                return False
            fields = parsed_table_map(
                data[20 : 20 + size], optional_meta_data, ctl._get_dbms(), post_header_lengths
            )
            if fields is None:
                return False
        from_packet._position = 20  # as the library's header read leaves it
        self.__dict__.update(
            read_bytes=20,
            _BinLogPacketWrapper__data_buffer=b"",
            packet=from_packet,
            charset=ctl.charset,
            enable_logging=enable_logging,
            use_column_name_cache=use_column_name_cache,
            timestamp=timestamp,
            event_type=event_type,
            server_id=server_id,
            event_size=event_size,
            log_pos=log_pos,
            flags=flags,
        )
        base = _base_fields(
            self, size, table_map, ctl, (mysql_version, ignore_decode_errors, post_header_lengths)
        )
        if fields is None:
            self.event = _BUILDERS[event_type](data, base)
            return True
        event = cls.__new__(cls)
        base.update(fields)
        event.__dict__ = base
        table_map[event.table_id] = event.table_obj
        self.event = event
        return True


def install() -> None:
    """The library's stream reader builds ``FastPacketWrapper``s (once; idempotent)."""
    library_stream.BinLogPacketWrapper = FastPacketWrapper
