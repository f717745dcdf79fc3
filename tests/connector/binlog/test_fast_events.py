"""The events ``connector.binlog.fast_events`` and ``connector.binlog.table_map_cache`` build
(issue 41) against the ones mysql-replication builds itself, over the same real binlog range:
small transactions on several tables, a column added mid-stream, and the same table maps again."""

from __future__ import annotations

from typing import Any

import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication import binlogstream as library_stream
from pymysqlreplication import packet as library_packet
from pymysqlreplication.event import XidEvent
from pymysqlreplication.row_event import RowsEvent, TableMapEvent

import connector.binlog.server_stream  # noqa: F401 - installs the fast path and the cache
from connector.binlog import table_map_cache
from connector.binlog.direct_reads import events as direct_events
from connector.binlog.fast_events import REST, FastPacketWrapper
from connector.binlog.raw_event import ROWS_BODY
from connector.testing.local_server import MySQLServerHandle

# Fields that hold the reader's own objects (the wrapper, the connection, the shared table map).
_OWN_OBJECTS = {"packet", "_ctl_connection", "table_map"}


def comparable(value: Any) -> Any:
    """A field's value with the library's Column and Table objects as their data."""
    if isinstance(value, list):
        return [comparable(item) for item in value]
    data = getattr(value, "data", None)
    if isinstance(data, dict):
        return {key: comparable(item) for key, item in data.items()}
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {key: comparable(item) for key, item in vars(value).items()}
    return value


def row_images(event: Any) -> bytes | None:
    """A rows event's row images as the connector's decoder reads them (``remaining_body``), the
    packet left where it was."""
    if not isinstance(event, RowsEvent):
        return None
    kept = event.__dict__.get(ROWS_BODY)
    if kept is not None:
        return bytes(kept)
    packet = event.packet.packet
    return bytes(
        packet._data[packet._position : packet._position + event.event_size - event.packet.read_bytes]
    )


def noted(event: Any, left_for_later: list[Any]) -> Any:
    if REST in vars(event):
        left_for_later.append(event)
    return event


def described(event: Any) -> tuple[Any, ...]:
    images = row_images(event)  # before the fields left for later are made
    # Reading a field the connector's loop leaves for later (its wrapper) makes them all.
    wrapper = event.packet
    fields = {key: comparable(value) for key, value in vars(event).items() if key not in _OWN_OBJECTS}
    header = (wrapper.timestamp, wrapper.event_type, wrapper.server_id, wrapper.event_size, wrapper.log_pos)
    # The row images, decoded by the library from where the event's construction left the packet.
    rows = event.rows if hasattr(event, "rows") else None
    read = None if isinstance(event, TableMapEvent) else wrapper.read_bytes
    return type(event).__name__, header, fields, rows, read, images


def read_range(
    server: MySQLServerHandle, start: tuple[str, int], server_id: int, direct: bool = False
) -> tuple[list[Any], tuple[Any, ...]]:
    """The range's events described, and where the reader stood after them (its log file and
    position, the table ids it mapped), read by iterating the reader or by ``direct_reads``."""
    stream = BinLogStreamReader(
        connection_settings={
            "host": server.host,
            "port": server.port,
            "user": server.connector.user,
            "passwd": server.connector.password,
        },
        server_id=server_id,
        log_file=start[0],
        log_pos=start[1],
        resume_stream=True,
        blocking=False,
    )
    try:
        left_for_later: list[Any] = []  # the loop's own events with fields still to make
        events = (
            [described(noted(raw.event, left_for_later)) for raw in direct_events(stream)]
            if direct
            else [described(event) for event in stream]
        )
        if direct:  # the loop's own events, their library fields made when read
            assert left_for_later and all(REST not in vars(event) for event in left_for_later)
        return events, (stream.log_file, stream.log_pos, sorted(stream.table_map))
    finally:
        stream.close()


def test_the_fast_events_are_the_librarys(
    mysql_server: MySQLServerHandle, unique_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = unique_db
    mysql_server.execute(
        f"CREATE TABLE {db}.a (id INT PRIMARY KEY, n INT, s VARCHAR(32), d DECIMAL(10,2), at DATETIME(3))",
        f"CREATE TABLE {db}.b (id INT PRIMARY KEY, e ENUM('x','y'), j JSON, t TEXT)",
    )
    start = tuple(mysql_server.query("SHOW MASTER STATUS")[0][:2])
    statements = []
    for i in range(1, 6):
        statements += [
            "BEGIN",
            f"INSERT INTO {db}.a VALUES ({i}, {i}, 'r{i}', {i}.25, '2024-05-01 12:00:00.123')",
            f"INSERT INTO {db}.b VALUES ({i}, 'y', '{{\"k\": {i}}}', 'text {i}')",
            "COMMIT",
            f"UPDATE {db}.a SET n = n + 1 WHERE id = {i}",
        ]
    statements += [f"ALTER TABLE {db}.a ADD COLUMN extra INT", f"UPDATE {db}.a SET extra = 7 WHERE id < 3"]
    statements += [f"DELETE FROM {db}.b WHERE id = 2", f"UPDATE {db}.a SET s = 'again' WHERE id = 4"]
    mysql_server.execute(*statements)

    table_map_cache._parsed.clear()
    fast, fast_end = read_range(mysql_server, (start[0], start[1]), 7301)
    hits = len(table_map_cache._parsed)
    # The connector's own packet loop (connector.binlog.direct_reads) over the same range.
    direct, direct_end = read_range(mysql_server, (start[0], start[1]), 7303, direct=True)

    # The library's own construction: its wrapper and TableMapEvent.__init__.
    monkeypatch.setattr(library_stream, "BinLogPacketWrapper", library_packet.BinLogPacketWrapper)
    monkeypatch.setattr(TableMapEvent, "__init__", TableMapEvent.__init__.__wrapped__)
    plain, plain_end = read_range(mysql_server, (start[0], start[1]), 7302)

    assert library_packet.BinLogPacketWrapper is not FastPacketWrapper
    kinds = [kind for kind, *_ in plain]
    assert kinds.count("TableMapEvent") >= 16 and "XidEvent" in kinds  # many table maps, few structures
    assert {"WriteRowsEvent", "UpdateRowsEvent", "DeleteRowsEvent"} <= set(kinds)
    assert 2 <= hits < kinds.count("TableMapEvent")  # so the later ones came from the cache
    assert fast == plain
    assert direct == plain and direct_end == fast_end == plain_end
    assert plain_end[1] > start[1] and plain_end[2]  # it moved and mapped tables


def test_a_missing_field_of_a_library_event_is_still_missing() -> None:
    """``BinLogEvent.__getattr__`` (installed with the fast events) makes only the fields a fast
    event left for later: any other missing attribute raises as before, and hasattr says False."""
    event = object.__new__(XidEvent)
    event.__dict__ = {"xid": 7}
    with pytest.raises(AttributeError, match="'XidEvent' object has no attribute 'packet'"):
        _ = event.packet
    assert not hasattr(event, "no_such_field") and event.xid == 7
