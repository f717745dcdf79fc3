"""Helpers for the chunked-snapshot tests: a picklable connect for the reader processes, a table
filler, concurrent writers, and the table's state at a binlog position rebuilt from the binlog."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pymysql
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.position import BinlogPosition


def reader_connect(server: LocalMySQLServer) -> Callable[[], pymysql.connections.Connection]:
    """The connector user's connection as a picklable callable (what the reader processes need)."""
    creds = server.connector
    return functools.partial(
        pymysql.connect,
        host=server.host,
        port=server.port,
        user=creds.user,
        password=creds.password,
        charset="utf8mb4",
        autocommit=False,
    )


def fill_items(server: LocalMySQLServer, table: str, rows: int) -> None:
    """``rows`` rows with ids 1..rows (id, marked, note), in 10,000-row INSERT ... SELECT blocks."""
    digits = (
        "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 "
        "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
    )
    database = table.split(".")[0].strip("`")
    with server.connect(database) as conn, conn.cursor() as cur:
        cur.execute(
            f"CREATE TEMPORARY TABLE n (n INT PRIMARY KEY) SELECT a.d + 10*b.d + 100*c.d + 1000*e.d AS n "
            f"FROM {digits} a, {digits} b, {digits} c, {digits} e"
        )
        for start in range(0, rows, 10000):
            cur.execute(
                f"INSERT INTO {table} SELECT %s + n + 1, 0, CONCAT('row-', %s + n + 1) FROM n "
                "WHERE %s + n < %s",
                (start, start, start, rows),
            )


@dataclass
class Writers:
    """Threads that, until stopped, insert rows with ids above ``floor`` and update ``marked`` of
    existing rows (each statement committed on its own)."""

    server: LocalMySQLServer
    table: str
    floor: int
    threads: int = 2
    stop: threading.Event = field(default_factory=threading.Event)
    statements: int = 0
    _workers: list[threading.Thread] = field(default_factory=list)

    def _run(self, number: int) -> None:
        next_id = self.floor + 1 + number
        with self.server.connect() as conn, conn.cursor() as cur:
            while not self.stop.is_set():
                cur.execute(f"INSERT INTO {self.table} VALUES (%s, 1, 'written')", (next_id,))
                cur.execute(
                    f"UPDATE {self.table} SET marked = marked + 1 WHERE id = %s",
                    ((next_id * 7919) % self.floor + 1,),
                )
                next_id += self.threads
                self.statements += 2

    def __enter__(self) -> Writers:
        self._workers = [
            threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(self.threads)
        ]
        for worker in self._workers:
            worker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for worker in self._workers:
            worker.join(timeout=30)


def changes_after(
    server: LocalMySQLServer, position: BinlogPosition, schema: str, table: str, end: tuple[str, int]
) -> Iterator[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]:
    """(kind, before, after) of every row change of ``schema.table`` from ``position`` up to ``end``
    (a ``SHOW MASTER STATUS`` file and position read after the writers stopped)."""
    # Blocking up to ``end``: in non-blocking mode MariaDB may close the dump connection at the end
    # of the binlog while a slow client is still reading.
    stream = BinLogStreamReader(
        connection_settings=server.replication_settings(),
        server_id=98765,
        # Not is_mariadb: the library then ignores log_file/log_pos and starts at the first binlog;
        # the plain COM_BINLOG_DUMP from a file and position works on both servers.
        is_mariadb=False,
        log_file=position.file,
        log_pos=position.pos,
        resume_stream=True,
        blocking=True,
    )
    try:
        for event in stream:
            # Every event is read (no event filter), so that the end position is always reached.
            rows_event = isinstance(event, WriteRowsEvent | UpdateRowsEvent | DeleteRowsEvent)
            for row in event.rows if rows_event and (event.schema, event.table) == (schema, table) else ():
                if isinstance(event, WriteRowsEvent):
                    yield "insert", None, row["values"]
                elif isinstance(event, UpdateRowsEvent):
                    yield "update", row["before_values"], row["after_values"]
                else:
                    yield "delete", row["values"], None
            if (stream.log_file, stream.log_pos) >= end:
                break
    finally:
        stream.close()


def state_at_position(
    now: dict[int, tuple[Any, ...]],
    changes: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]],
    columns: tuple[str, ...],
) -> dict[int, tuple[Any, ...]]:
    """Undo ``changes`` (everything after the position) on the table's current rows, newest first."""
    state = dict(now)
    undo = {
        "insert": lambda before, after: state.pop(after[columns[0]]),
        "update": lambda before, after: state.__setitem__(
            before[columns[0]], tuple(before[c] for c in columns)
        ),
        "delete": lambda before, after: state.__setitem__(
            before[columns[0]], tuple(before[c] for c in columns)
        ),
    }
    for kind, before, after in reversed(changes):
        undo[kind](before, after)
    return state


# -- the engine end to end --------------------------------------------------------------------------
_TIME_FIELDS = frozenset({"ts_ms", "ts_us", "ts_ns"})


def without_times(value: Any) -> Any:
    """A record value without its clock readings (``ts_*`` of the envelope and of ``source``)."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in _TIME_FIELDS}
    return value


def engine_snapshot(server: LocalMySQLServer, database: str, data_dir: str, **extra: str) -> list[Any]:
    """Every record of a ``snapshot.mode=initial_only`` run of the engine, without clock readings:
    (topic, key, value, offset)."""
    from connector.config import ConnectorConfig
    from connector.engine import Engine
    from sink.memory import MemorySink

    props = server.connector_properties(
        **{
            "topic.prefix": "chunked",
            "database.include.list": database,
            "data.dir": data_dir,
            "snapshot.mode": "initial_only",
            **extra,
        }
    )
    memory = MemorySink()
    engine = Engine(ConnectorConfig.from_mapping(props), sinks=[memory])
    try:
        engine.catch_up(120)
    finally:
        engine.close()
    return [
        (r.topic, r.key, without_times(r.value), r.offset.describe() if r.offset is not None else None)
        for r in memory.records
    ]
