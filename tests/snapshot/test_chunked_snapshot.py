"""Chunked snapshot (``snapshot.max.threads`` > 1): key ranges read by reader processes in one
consistent view, emitted in key order, against a real server."""

from __future__ import annotations

import contextlib
import functools
import logging
import multiprocessing
import os
import time

import pymysql
import pytest

from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.table_id import TableId
from snapshot.errors import SnapshotError
from snapshot.progress import NoProgress
from snapshot.rows.chunked import chunk_boundaries
from snapshot.snapshotter import SnapshotSettings, Snapshotter
from tests.snapshot.chunked_support import (
    Writers,
    changes_after,
    engine_snapshot,
    fill_items,
    reader_connect,
    state_at_position,
)
from tests.snapshot.conftest import RecordingListener

# A few hundred thousand rows keep the test under a minute; MYSQL_CDC_CHUNKED_ROWS=5000000 runs the
# same check on the 5,000,000-row table of issue 31.
ROWS = int(os.environ.get("MYSQL_CDC_CHUNKED_ROWS", "300000"))


def snapshotter(server: LocalMySQLServer, database: str, **settings: object) -> Snapshotter:
    return Snapshotter(
        SnapshotSettings(**settings),  # type: ignore[arg-type]
        reader_connect(server),
        lambda t: t.database == database,
        server.flavor,
        progress=NoProgress(),
    )


def row_events(listener: RecordingListener) -> list[tuple[object, ...]]:
    """The per-table callbacks without their timestamps (``source.ts_ms`` is read per table)."""
    return [
        (e[0], e[1], e[2]) if e[0] == "start" else e
        for e in listener.events
        if e[0] in ("start", "row", "end")
    ]


def chunk_counts(caplog: pytest.LogCaptureFixture) -> dict[str, int]:
    found = {}
    for record in caplog.records:
        if record.getMessage().endswith("chunks") and "will be processed in" in record.getMessage():
            table, count = record.args  # type: ignore[misc]
            found[str(table)] = int(count)
    return found


def test_chunked_snapshot_under_concurrent_writers_is_the_table_at_the_position(
    mysql_server, unique_db, caplog
):
    table = f"`{unique_db}`.items"
    mysql_server.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, marked INT NOT NULL, note VARCHAR(32))")
    fill_items(mysql_server, table, ROWS)
    mysql_server.execute(f"ANALYZE TABLE {table}")
    listener = RecordingListener()
    caplog.set_level(logging.INFO, logger="snapshot.rows.chunked")
    started = time.monotonic()
    with Writers(mysql_server, table, floor=ROWS) as writers:
        while writers.statements < 200:  # the writers are really writing when the lock is taken
            time.sleep(0.01)
        snapshotter(mysql_server, unique_db, max_threads=2).run(listener)
        written_during = writers.statements
    elapsed = time.monotonic() - started
    end = tuple(mysql_server.query("SHOW MASTER STATUS")[0][:2])
    assert listener.position is not None
    assert written_during > 200

    items = TableId(unique_db, "items")
    assert chunk_counts(caplog)[str(items)] >= 3
    snapshot_rows = listener.rows(items)
    keys = [r[0] for r in snapshot_rows]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)

    now = {r[0]: tuple(r) for r in mysql_server.query(f"SELECT id, marked, note FROM {table}")}
    changes = list(changes_after(mysql_server, listener.position, unique_db, "items", end))  # type: ignore[arg-type]
    assert any(kind == "update" for kind, _, _ in changes) and any(kind == "insert" for kind, _, _ in changes)
    at_position = state_at_position(now, changes, ("id", "marked", "note"))
    assert dict(zip(keys, map(tuple, snapshot_rows), strict=True)) == at_position
    markers = listener.markers(items)
    assert markers[0] == "first" and markers[-1] == "last" and set(markers[1:-1]) == {"true"}
    assert elapsed < 120 * max(1, ROWS // 300_000)


def test_composite_varchar_key_matches_the_one_thread_snapshot(mysql_server, unique_db, caplog):
    table = f"`{unique_db}`.regions"
    mysql_server.execute(
        f"CREATE TABLE {table} (region VARCHAR(12), code VARCHAR(24), n INT, PRIMARY KEY (region, code))"
    )
    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.seed (id INT PRIMARY KEY, marked INT NOT NULL, note VARCHAR(32))"
    )
    fill_items(mysql_server, f"`{unique_db}`.seed", 60_000)
    mysql_server.execute(
        f"INSERT INTO {table} SELECT CONCAT('r', id % 7), CONCAT('c-', id), id FROM `{unique_db}`.seed",
        f"DROP TABLE `{unique_db}`.seed",
        f"ANALYZE TABLE {table}",
    )
    caplog.set_level(logging.INFO, logger="snapshot.rows.chunked")
    chunked, single = RecordingListener(), RecordingListener()
    snapshotter(mysql_server, unique_db, max_threads=2, max_threads_multiplier=3).run(chunked)
    snapshotter(mysql_server, unique_db).run(single)
    assert chunk_counts(caplog)[str(TableId(unique_db, "regions"))] >= 6
    assert len(single.rows()) == 60_000
    assert row_events(chunked) == row_events(single)
    assert chunked.ddl() == single.ddl()


def test_keyless_and_small_tables_fall_back_to_one_chunk(mysql_server, unique_db, caplog):
    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.a_keyless (n INT, note VARCHAR(16))",
        f"CREATE TABLE `{unique_db}`.b_keyed (id INT PRIMARY KEY, marked INT NOT NULL, note VARCHAR(32))",
        f"CREATE TABLE `{unique_db}`.c_empty (id INT PRIMARY KEY)",
        f"CREATE TABLE `{unique_db}`.d_one (id INT PRIMARY KEY)",
        f"INSERT INTO `{unique_db}`.d_one VALUES (7)",
    )
    fill_items(mysql_server, f"`{unique_db}`.b_keyed", 150_000)
    mysql_server.execute(
        f"INSERT INTO `{unique_db}`.a_keyless SELECT id % 10, note FROM `{unique_db}`.b_keyed WHERE id <= 5000",
        f"ANALYZE TABLE `{unique_db}`.a_keyless, `{unique_db}`.b_keyed",
    )
    caplog.set_level(logging.INFO, logger="snapshot.rows.chunked")
    chunked, single = RecordingListener(), RecordingListener()
    snapshotter(mysql_server, unique_db, max_threads=2, fetch_size=700).run(chunked)
    snapshotter(mysql_server, unique_db, fetch_size=700).run(single)
    counts = chunk_counts(caplog)
    assert str(TableId(unique_db, "a_keyless")) not in counts
    assert counts[str(TableId(unique_db, "b_keyed"))] >= 2
    assert row_events(chunked) == row_events(single)
    markers = chunked.markers()
    assert markers[0] == "first" and markers[-1] == "last"
    assert chunked.rows(TableId(unique_db, "d_one")) == [(7,)]


def test_legacy_max_threads_reads_one_table_per_thread(mysql_server, unique_db, caplog):
    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.t (id INT PRIMARY KEY, marked INT NOT NULL, note VARCHAR(32))"
    )
    fill_items(mysql_server, f"`{unique_db}`.t", 120_000)
    mysql_server.execute(f"ANALYZE TABLE `{unique_db}`.t")
    caplog.set_level(logging.INFO, logger="snapshot.rows.chunked")
    listener = RecordingListener()
    snapshotter(mysql_server, unique_db, max_threads=2, legacy_max_threads=True).run(listener)
    assert chunk_counts(caplog) == {}
    assert [r[0] for r in listener.rows()] == list(range(1, 120_001))


def test_a_failing_chunk_names_the_table_and_stops_the_snapshot(mysql_server, unique_db):
    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.t (id INT PRIMARY KEY, marked INT NOT NULL, note VARCHAR(32))"
    )
    fill_items(mysql_server, f"`{unique_db}`.t", 120_000)
    mysql_server.execute(f"ANALYZE TABLE `{unique_db}`.t")
    # The readers connect as a user that may not read the table: each chunk fails on the server.
    with contextlib.suppress(Exception):
        mysql_server.execute("DROP USER 'chunk_reader'@'%'")
    blind = mysql_server.create_user("chunk_reader", "chunk-pw", "REPLICATION CLIENT")
    readers = functools.partial(
        pymysql.connect,
        host=mysql_server.host,
        port=mysql_server.port,
        user=blind.user,
        password=blind.password,
    )
    listener = RecordingListener()
    chunked = Snapshotter(
        SnapshotSettings(max_threads=2),
        reader_connect(mysql_server),
        lambda t: t.database == unique_db,
        mysql_server.flavor,
        progress=NoProgress(),
        reader_connect=readers,
    )
    with pytest.raises(
        SnapshotError, match=rf"chunk 1 of \d+ of {unique_db}\.t .*failed: OperationalError.*1142"
    ):
        chunked.run(listener)
    assert listener.rows() == []
    # Nothing is left behind: the lock is gone and the reader processes exited.
    mysql_server.execute(f"INSERT INTO `{unique_db}`.t VALUES (999999, 0, 'after')")
    assert not multiprocessing.active_children()


def test_engine_records_with_two_threads_equal_the_one_thread_records(
    mysql_server, unique_db, tmp_path, caplog
):
    table = f"`{unique_db}`.typed"
    mysql_server.execute(
        f"CREATE TABLE {table} (id BIGINT PRIMARY KEY, price DECIMAL(12,2), at DATETIME(3), "
        "stamp TIMESTAMP(6) NULL, doc JSON, name VARCHAR(40), d DATE)"
    )
    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.seed (id INT PRIMARY KEY, marked INT NOT NULL, note VARCHAR(32))"
    )
    fill_items(mysql_server, f"`{unique_db}`.seed", 40_000)
    mysql_server.execute(
        f"INSERT INTO {table} SELECT id * 3, id / 7, TIMESTAMP('2024-02-29 23:59:59.125') + INTERVAL id SECOND, "
        "IF(id % 5 = 0, NULL, TIMESTAMP('2001-01-01 00:00:00.5') + INTERVAL id MINUTE), "
        f"JSON_OBJECT('n', id, 'odd', id % 2 = 1), note, DATE('1999-12-31') + INTERVAL id DAY FROM `{unique_db}`.seed",
        f"DROP TABLE `{unique_db}`.seed",
        f"ANALYZE TABLE {table}",
    )
    caplog.set_level(logging.INFO, logger="snapshot.rows.chunked")
    two = engine_snapshot(mysql_server, unique_db, str(tmp_path / "two"), **{"snapshot.max.threads": "2"})
    # The engine's connect (a partial over the connector config) went to the reader processes.
    assert chunk_counts(caplog) == {f"{unique_db}.typed": 2}
    one = engine_snapshot(mysql_server, unique_db, str(tmp_path / "one"))
    assert sum(1 for r in one if r[0].endswith(".typed")) == 40_000
    assert two == one


def test_table_lock_workflow_chunked_matches_the_one_thread_snapshot(mysql_server, unique_db, caplog):
    """Without RELOAD the main connection holds LOCK TABLES ... READ while the readers begin their
    transactions; the boundaries are read under those locks."""
    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.t (id INT PRIMARY KEY, marked INT NOT NULL, note VARCHAR(32))",
        f"CREATE TABLE `{unique_db}`.u (id INT PRIMARY KEY)",
        f"INSERT INTO `{unique_db}`.u VALUES (1), (2)",
    )
    fill_items(mysql_server, f"`{unique_db}`.t", 90_000)
    mysql_server.execute(f"ANALYZE TABLE `{unique_db}`.t")
    with contextlib.suppress(Exception):
        mysql_server.execute("DROP USER 'chunk_no_reload'@'%'")
    user = mysql_server.create_user(
        "chunk_no_reload", "pw-nr", "SELECT, SHOW DATABASES, REPLICATION CLIENT, LOCK TABLES"
    )
    connect = functools.partial(
        pymysql.connect,
        host=mysql_server.host,
        port=mysql_server.port,
        user=user.user,
        password=user.password,
        charset="utf8mb4",
        autocommit=False,
    )

    def run(threads: int) -> tuple[RecordingListener, Snapshotter]:
        listener = RecordingListener()
        snap = Snapshotter(
            SnapshotSettings(max_threads=threads),
            connect,
            lambda t: t.database == unique_db,
            mysql_server.flavor,
            progress=NoProgress(),
        )
        snap.run(listener)
        return listener, snap

    caplog.set_level(logging.INFO, logger="snapshot.rows.chunked")
    chunked, chunked_run = run(2)
    single, _ = run(1)
    assert chunked_run.last_summary is not None and chunked_run.last_summary.locking == "table"
    assert chunk_counts(caplog)[f"{unique_db}.t"] >= 4
    assert row_events(chunked) == row_events(single)
    assert chunked.ddl() == single.ddl()


def test_a_row_estimate_above_the_table_still_cuts_every_promised_chunk(mysql_server, unique_db):
    # InnoDB's statistics can estimate twice the rows a table has: the step from that estimate finds
    # too few boundaries, so the table is cut again by its exact count.
    table = f"`{unique_db}`.pairs"
    mysql_server.execute(
        f"CREATE TABLE {table} (region VARCHAR(12), code VARCHAR(24), PRIMARY KEY (region, code))"
    )
    values = ", ".join(f"('r{n % 3}', 'c-{n:03d}')" for n in range(60))
    mysql_server.execute(f"INSERT INTO {table} VALUES {values}")
    table_id = TableId(unique_db, "pairs")
    with mysql_server.connect(unique_db) as conn, conn.cursor() as cur:
        exact = chunk_boundaries(cur, table_id, ("region", "code"), 6, 60)
        inflated = chunk_boundaries(cur, table_id, ("region", "code"), 6, 120)
        cur.execute(f"SELECT region, code FROM {table} ORDER BY region, code")
        keys = [tuple(row) for row in cur.fetchall()]
    assert inflated == exact == [keys[n] for n in (9, 19, 29, 39, 49)]  # six ranges of ten rows
