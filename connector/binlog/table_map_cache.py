"""TABLE_MAP events parsed once per table structure, not once per event (issue 41).

An OLTP binlog brings a TABLE_MAP before every rows event: per row change, mysql-replication's
``TableMapEvent`` parses the column types, their metadata and the optional metadata (names,
charsets, keys) into ``Column`` and ``Table`` objects, about half of the connector's CPU on small
transactions. What it builds depends only on the event's body (table id, names, column types,
metadata, optional metadata: the bytes between the header and the checksum) and on the stream's
settings (optional metadata on or off, the server's kind, the declared post-header length): the
same body gives the same table. ``install`` wraps ``TableMapEvent.__init__`` once (idempotent) so
that a body seen before takes the parsed fields of its first parse, and the per-event fields (the
packet, the timestamp...) from the library's own ``BinLogEvent.__init__``; the stream's table map
is filled as the library fills it. Streams that filter tables or schemas in the library (the
connector never asks it to) parse every event as before.

A new structure has new bytes (an ALTER gives the table a new table id, and the column types or
names differ), so nothing stale is served; the cache is emptied when it reaches ``MAX_ENTRIES``.
"""

from __future__ import annotations

from typing import Any

from pymysqlreplication import event as library_event
from pymysqlreplication import row_event as library_rows

MAX_ENTRIES = 4096
TABLE_MAP_EVENT = 0x13
# The fields BinLogEvent.__init__ sets: the event's own, never taken from the cache.
_PER_EVENT_FIELDS = frozenset(
    {
        "packet",
        "table_map",
        "event_type",
        "timestamp",
        "event_size",
        "_post_header_lengths",
        "_ctl_connection",
        "mysql_version",
        "_ignore_decode_errors",
        "_verify_checksum",
        "_is_event_valid",
        "_processed",
        "complete",
        "dbms",
    }
)
# Library-side filters make a table map's parse depend on more than its bytes: no cache then.
_FILTERS = ("only_tables", "ignored_tables", "only_schemas", "ignored_schemas")

_parsed: dict[tuple[Any, ...], dict[str, Any]] = {}


def cache_key(body: bytes, optional_meta_data: bool, dbms: str, post_header_lengths: Any) -> tuple[Any, ...]:
    """What a TABLE_MAP's parse depends on: its body (between the header and the checksum) and
    the stream's settings (``settings_key``)."""
    return (body, *settings_key(optional_meta_data, dbms, post_header_lengths))


def settings_key(optional_meta_data: bool, dbms: str, post_header_lengths: Any) -> tuple[Any, ...]:
    """The stream's settings a TABLE_MAP's parse depends on (``cache_key`` without the body)."""
    lengths = post_header_lengths
    declared = lengths[TABLE_MAP_EVENT - 1] if lengths and len(lengths) >= TABLE_MAP_EVENT else None
    return (bool(optional_meta_data), dbms, declared)


def parsed_table_map(body: bytes, settings: tuple[Any, ...]) -> dict[str, Any] | None:
    """The parsed fields of a TABLE_MAP with this body, if one was parsed before with these
    ``settings_key`` settings."""
    return _parsed.get((body, *settings))


def _cache_key(
    from_packet: Any, event_size: int, ctl_connection: Any, kwargs: dict[str, Any]
) -> tuple[Any, ...]:
    packet = from_packet.packet  # pymysql's MysqlPacket, read up to the end of the header
    start = packet._position
    return cache_key(
        packet._data[start : start + event_size],
        kwargs.get("optional_meta_data", False),
        ctl_connection._get_dbms(),
        kwargs.get("post_header_lengths"),
    )


def install() -> None:
    """Wrap ``TableMapEvent.__init__`` with the cache (once)."""
    original = library_rows.TableMapEvent.__init__
    if getattr(original, "mysql_cdc_cached", False):
        return
    base_init = library_event.BinLogEvent.__init__

    def cached_init(
        self: Any, from_packet: Any, event_size: int, table_map: Any, ctl_connection: Any, **kwargs: Any
    ) -> None:
        if kwargs.get("freeze_schema") or any(kwargs.get(name) is not None for name in _FILTERS):
            original(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
            return
        key = _cache_key(from_packet, event_size, ctl_connection, kwargs)
        fields = _parsed.get(key)
        if fields is None:
            original(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
            if self._processed:
                if len(_parsed) >= MAX_ENTRIES:
                    _parsed.clear()
                _parsed[key] = {k: v for k, v in vars(self).items() if k not in _PER_EVENT_FIELDS}
            return
        base_init(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
        self.__dict__.update(fields)
        table_map[self.table_id] = self.table_obj

    cached_init.mysql_cdc_cached = True  # type: ignore[attr-defined]
    cached_init.__wrapped__ = original  # type: ignore[attr-defined]
    library_rows.TableMapEvent.__init__ = cached_init
