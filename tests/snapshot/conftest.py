"""Helpers for the snapshot tests: a listener that records every callback, a snapshotter factory that
remembers its connections' thread ids, and the server's general query log."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pymysql
import pytest

from connector.testing.local_server import Credentials, LocalMySQLServer
from mysql_cdc_base.position import BinlogPosition
from mysql_cdc_base.table_id import TableId
from snapshot.progress import NoProgress
from snapshot.snapshotter import SnapshotSettings, Snapshotter


@dataclass
class RecordingListener:
    """Records every callback in order; optional hooks let a test act at a given moment."""

    events: list[tuple[Any, ...]] = field(default_factory=list)
    position: BinlogPosition | None = None
    sql_mode: str | None = None
    hooks: dict[str, Callable[..., None]] = field(default_factory=dict)
    thread_ids: set[int] = field(default_factory=set)

    def _hook(self, name: str, *args: Any) -> None:
        self.thread_ids.add(threading.get_ident())
        hook = self.hooks.get(name)
        if hook is not None:
            hook(*args)

    def on_schema_statement(self, ddl: str, database: str | None) -> None:
        self.events.append(("ddl", database, ddl))
        self._hook("on_schema_statement", ddl, database)

    def on_position(self, position: BinlogPosition) -> None:
        self.position = position
        self.events.append(("position", position))
        self._hook("on_position", position)

    def on_table_start(self, table_id: TableId, estimated_rows: int | None, source_ts_ms: int) -> None:
        self.events.append(("start", table_id, estimated_rows, source_ts_ms))
        self._hook("on_table_start", table_id, estimated_rows, source_ts_ms)

    def on_row(self, table_id: TableId, values: tuple[Any, ...], marker: str) -> None:
        self.events.append(("row", table_id, values, marker))
        self._hook("on_row", table_id, values, marker)

    def on_table_end(self, table_id: TableId, rows: int) -> None:
        self.events.append(("end", table_id, rows))
        self._hook("on_table_end", table_id, rows)

    def on_complete(self) -> None:
        self.events.append(("complete",))
        self._hook("on_complete")

    def on_sql_mode(self, sql_mode: str) -> None:
        self.sql_mode = sql_mode

    # -- views -----------------------------------------------------------------------------------
    def ddl(self) -> list[str]:
        return [e[2] for e in self.events if e[0] == "ddl"]

    def rows(self, table_id: TableId | None = None) -> list[tuple[Any, ...]]:
        return [e[2] for e in self.events if e[0] == "row" and (table_id is None or e[1] == table_id)]

    def markers(self, table_id: TableId | None = None) -> list[str]:
        return [e[3] for e in self.events if e[0] == "row" and (table_id is None or e[1] == table_id)]

    def started_tables(self) -> list[TableId]:
        return [e[1] for e in self.events if e[0] == "start"]


class SnapshotterFactory:
    """Builds snapshotters for a server and user, recording the connection ids they open."""

    def __init__(self, server: LocalMySQLServer) -> None:
        self.server = server
        self.connection_ids: list[int] = []

    def __call__(
        self,
        settings: SnapshotSettings | None = None,
        *,
        user: Credentials | None = None,
        captured: Callable[[TableId], bool] | None = None,
        **kwargs: Any,
    ) -> Snapshotter:
        creds = user or self.server.connector

        def connect() -> pymysql.connections.Connection:
            conn = self.server.connect(user=creds, autocommit=False)
            self.connection_ids.append(conn.thread_id())
            return conn

        kwargs.setdefault("progress", NoProgress())
        return Snapshotter(
            settings or SnapshotSettings(),
            connect,
            captured or (lambda t: True),
            self.server.flavor,
            **kwargs,
        )


class GeneralLog:
    """The server's general query log (log_output=TABLE), read back per connection, in order."""

    def __init__(self, server: LocalMySQLServer) -> None:
        self.server = server
        server.execute("SET GLOBAL log_output = 'TABLE'", "SET GLOBAL general_log = 'ON'")

    def statements(self, thread_ids: Sequence[int]) -> list[str]:
        if not thread_ids:
            return []
        ids = ",".join(str(int(i)) for i in thread_ids)
        # The CSV-engine log table returns rows in the order they were written.
        rows = self.server.query(
            f"SELECT argument FROM mysql.general_log WHERE thread_id IN ({ids}) AND command_type = 'Query'"
        )
        return [r[0].decode() if isinstance(r[0], bytes | bytearray) else str(r[0]) for r in rows]

    def statements_with_threads(self, thread_ids: Sequence[int]) -> list[tuple[int, str]]:
        ids = ",".join(str(int(i)) for i in thread_ids)
        rows = self.server.query(
            f"SELECT thread_id, argument FROM mysql.general_log WHERE thread_id IN ({ids}) "
            "AND command_type = 'Query'"
        )
        return [(int(t), a.decode() if isinstance(a, bytes | bytearray) else str(a)) for t, a in rows]


def fill_rows(server: LocalMySQLServer, table: str, count: int, payload_bytes: int = 0) -> None:
    """Insert ids 1..count (plus a payload column when asked) with one INSERT ... SELECT over a
    digits cross join (no recursion limits, works on MySQL and MariaDB)."""
    digits = (
        "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 "
        "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
    )
    places = max(1, len(str(count)))
    joins = ", ".join(f"{digits} d{i}" for i in range(places))
    number = " + ".join(f"d{i}.d * {10**i}" for i in range(places)) + " + 1"
    payload = f", REPEAT('x', {payload_bytes})" if payload_bytes else ""
    server.execute(
        f"INSERT INTO {table} SELECT * FROM (SELECT {number} AS n{payload} FROM {joins}) q WHERE n <= {count}"
    )


def purge_binlogs(server: LocalMySQLServer) -> None:
    """Purge every binlog but the current one. MariaDB keeps a file until its binlog checkpoint (or a
    reader) lets go of it, so retry for a while."""
    server.execute("FLUSH BINARY LOGS")
    current = server.query("SHOW MASTER STATUS")[0][0]
    deadline = time.monotonic() + 30
    while [r[0] for r in server.query("SHOW BINARY LOGS")] != [current]:
        assert time.monotonic() < deadline, server.query("SHOW BINARY LOGS")
        server.execute(f"PURGE BINARY LOGS TO '{current}'")
        time.sleep(0.2)


@pytest.fixture
def make_snapshotter(mysql_server: LocalMySQLServer) -> SnapshotterFactory:
    return SnapshotterFactory(mysql_server)
