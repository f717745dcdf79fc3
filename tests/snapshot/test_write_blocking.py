"""Writes from another connection are blocked exactly in each locking mode's documented window, and a
write let through after the consistent point lands after the snapshot position (streamed, not lost,
not doubled)."""

from __future__ import annotations

import threading
import time

import pytest

from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.table_id import TableId
from snapshot.snapshotter import SnapshotSettings
from tests.snapshot.conftest import RecordingListener


class Writer(threading.Thread):
    """One autocommit INSERT on its own connection; remembers when it got through."""

    def __init__(self, server: LocalMySQLServer, sql: str) -> None:
        super().__init__(daemon=True)
        self.server, self.sql = server, sql
        self.error: BaseException | None = None
        self.done_at: float | None = None
        self.start()

    def run(self) -> None:
        try:
            self.server.execute(self.sql)
            self.done_at = time.monotonic()
        except BaseException as exc:  # reported by the test
            self.error = exc

    def blocked_for(self, seconds: float) -> bool:
        self.join(seconds)
        return self.is_alive()

    def finished_within(self, seconds: float) -> bool:
        self.join(seconds)
        assert self.error is None, self.error
        return not self.is_alive()


@pytest.fixture
def tables(mysql_server: LocalMySQLServer, unique_db: str) -> tuple[TableId, TableId]:
    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.t1 (id INT PRIMARY KEY)",
        f"INSERT INTO `{unique_db}`.t1 VALUES (1), (2), (3)",
        f"CREATE TABLE `{unique_db}`.t2 (id INT PRIMARY KEY)",
        f"INSERT INTO `{unique_db}`.t2 VALUES (1)",
        f"CREATE TABLE `{unique_db}`.other (id INT PRIMARY KEY)",
    )
    return TableId(unique_db, "t1"), TableId(unique_db, "t2")


def binlog_tables_after(server: LocalMySQLServer, listener: RecordingListener) -> str:
    """Text of the binlog events written after the snapshot position (table maps name the tables)."""
    assert listener.position is not None
    rows = server.query(f"SHOW BINLOG EVENTS IN '{listener.position.file}' FROM {listener.position.pos}")
    return " ".join(str(r[5]) for r in rows)


def captured_only(db: str):
    return lambda t: t.database == db and t.table != "other"


def test_minimal_blocks_writes_only_until_the_structure_is_read(
    mysql_server, unique_db, tables, make_snapshotter
):
    t1, _ = tables
    writers: dict[str, Writer] = {}
    alive_during_schema: list[bool] = []

    def at_position(position):
        writers["captured"] = Writer(mysql_server, f"INSERT INTO `{unique_db}`.t1 VALUES (100)")
        writers["other"] = Writer(mysql_server, f"INSERT INTO `{unique_db}`.other VALUES (1)")
        # The global read lock blocks every table, captured or not.
        assert writers["captured"].blocked_for(0.5)
        assert writers["other"].blocked_for(0.1)

    def at_table_start(table_id, estimate, ts):
        if table_id == t1:
            # UNLOCK TABLES came right after the structure: writers proceed before any row is read.
            assert writers["captured"].finished_within(10)
            assert writers["other"].finished_within(10)

    listener = RecordingListener(
        hooks={
            "on_position": at_position,
            "on_schema_statement": lambda ddl, db: alive_during_schema.append(writers["captured"].is_alive()),
            "on_table_start": at_table_start,
        }
    )
    make_snapshotter(SnapshotSettings(), captured=captured_only(unique_db)).run(listener)
    assert alive_during_schema and all(alive_during_schema)
    # The consistent snapshot predates the write; the write is in the binlog after the position.
    assert listener.rows(t1) == [(1,), (2,), (3,)]
    assert f"({unique_db}.t1)" in binlog_tables_after(mysql_server, listener)


def test_table_locks_block_captured_tables_until_commit(mysql_server, unique_db, tables, make_snapshotter):
    t1, t2 = tables
    user = mysql_server.create_user(
        f"nr_{unique_db[-20:]}", "pw", "SELECT, SHOW DATABASES, REPLICATION CLIENT, LOCK TABLES"
    )
    writers: dict[str, Writer] = {}
    checks: list[str] = []

    def at_position(position):
        writers["captured"] = Writer(mysql_server, f"INSERT INTO `{unique_db}`.t1 VALUES (100)")
        writers["other"] = Writer(mysql_server, f"INSERT INTO `{unique_db}`.other VALUES (1)")
        # Only the captured tables are locked: the other table takes writes at once.
        assert writers["other"].finished_within(10)
        assert writers["captured"].blocked_for(0.5)
        checks.append("position")

    def at_table_end(table_id, rows):
        if table_id == t2:
            assert writers["captured"].blocked_for(0.2)  # still locked while the last table is read
            checks.append("last table")

    def at_complete():
        # COMMIT then UNLOCK TABLES have run: the writer gets through.
        assert writers["captured"].finished_within(10)
        checks.append("complete")

    listener = RecordingListener(
        hooks={"on_position": at_position, "on_table_end": at_table_end, "on_complete": at_complete}
    )
    snapshotter = make_snapshotter(SnapshotSettings(), user=user, captured=captured_only(unique_db))
    snapshotter.run(listener)
    assert checks == ["position", "last table", "complete"]
    assert snapshotter.last_summary is not None and snapshotter.last_summary.locking == "table"
    assert listener.rows(t1) == [(1,), (2,), (3,)]
    assert f"({unique_db}.t1)" in binlog_tables_after(mysql_server, listener)


def test_extended_blocks_writes_for_the_whole_snapshot(mysql_server, unique_db, tables, make_snapshotter):
    t1, t2 = tables
    writers: dict[str, Writer] = {}
    checks: list[str] = []

    def at_position(position):
        writers["w"] = Writer(mysql_server, f"INSERT INTO `{unique_db}`.other VALUES (7)")
        assert writers["w"].blocked_for(0.3)

    def at_table_end(table_id, rows):
        if table_id == t2:
            assert writers["w"].blocked_for(0.2)
            checks.append("blocked after last table")

    def at_complete():
        assert writers["w"].finished_within(10)
        checks.append("released")

    listener = RecordingListener(
        hooks={"on_position": at_position, "on_table_end": at_table_end, "on_complete": at_complete}
    )
    make_snapshotter(SnapshotSettings(locking_mode="extended"), captured=captured_only(unique_db)).run(
        listener
    )
    assert checks == ["blocked after last table", "released"]


def test_none_never_blocks_and_can_double_a_row(mysql_server, unique_db, tables, make_snapshotter):
    """The documented risk of snapshot.locking.mode=none: a write between the position and the scan
    is both in the snapshot and in the binlog after the position."""
    t1, _ = tables

    def at_position(position):
        assert Writer(mysql_server, f"INSERT INTO `{unique_db}`.t1 VALUES (100)").finished_within(10)

    listener = RecordingListener(hooks={"on_position": at_position})
    make_snapshotter(SnapshotSettings(locking_mode="none"), captured=captured_only(unique_db)).run(listener)
    assert (100,) in listener.rows(t1)
    assert f"({unique_db}.t1)" in binlog_tables_after(mysql_server, listener)
