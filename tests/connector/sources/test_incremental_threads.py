"""incremental.snapshot.max.threads > 1: each window reads N chunks as key sub-ranges on reader
processes, on a real server, while writers change the same rows."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from connector.sources.incremental_readers import WindowReaders
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.table_id import TableId
from snapshot.rows.chunks import ChunkQuery, read_maximum_key
from tests.connector.incremental_support import (
    data_records,
    fill,
    make_engine,
    orders_in_mysql,
    payload,
    replay,
    run_until,
    send_signal,
    snapshot_finished,
    snapshot_racing_writers,
)
from tests.connector.incremental_threads_support import position_free, reader_connect, snapshot_windows


def _snapshot(
    server: MySQLServerHandle, db: str, tmp_path: Path, signal_id: str, table: str = "orders", **props: str
) -> list:
    engine, memory = make_engine(server, db, tmp_path, **props)
    try:
        engine.catch_up()
        send_signal(server, db, signal_id, "execute-snapshot", {"data-collections": [f"{db}.{table}"]})
        run_until(engine, snapshot_finished(engine))
    finally:
        engine.close()
    return data_records(memory.records, table)


def test_three_threads_emit_the_same_records_as_one_on_a_quiet_table(mysql_server, orders, tmp_path):
    db = orders
    fill(mysql_server, db, 1_000)
    one = _snapshot(
        mysql_server, db, tmp_path / "one", "sig-one", **{"incremental.snapshot.max.threads": "1"}
    )
    three = _snapshot(
        mysql_server, db, tmp_path / "three", "sig-three", **{"incremental.snapshot.max.threads": "3"}
    )
    assert [payload(r)["after"]["id"] for r in three] == list(range(1, 1_001))
    assert [position_free(r) for r in three] == [position_free(r) for r in one]
    # chunk size 100: one thread closes 10 windows of 100 rows, three threads 4 of up to 300
    assert [len(w) for w in snapshot_windows(one)] == [100] * 10
    assert [len(w) for w in snapshot_windows(three)] == [300, 300, 300, 100]


TYPED_DDL = (
    "CREATE TABLE typed (id BIGINT UNSIGNED PRIMARY KEY, d DECIMAL(12,2), dt DATETIME(3), ts TIMESTAMP(6) NULL, "
    "day DATE, t TIME(2), e ENUM('a','b','c'), j JSON, b VARBINARY(16), bits BIT(5), f DOUBLE, txt TEXT)"
)


def test_three_threads_emit_the_same_records_as_one_for_many_column_types(mysql_server, orders, tmp_path):
    """The rows cross a process boundary (pickled) with three threads: every type converts alike."""
    db = orders
    values = ",".join(
        f"({i}, {i * 7}.{i % 100:02d}, '2024-02-{1 + i % 28:02d} 10:{i % 60:02d}:01.{i % 1000:03d}', "
        f"{'NULL' if i % 9 == 0 else repr(f'2023-01-01 00:00:{i % 60:02d}.{i:06d}')}, '1999-12-31', "
        f"'-{i % 800}:01:02.5', '{'abc'[i % 3]}', '{{\"k\": {i}, \"s\": \"x{i}\"}}', UNHEX('{i:08x}'), "
        f"b'{i % 32:05b}', {i / 3}, REPEAT('t', {i % 50}))"
        for i in range(1, 501)
    )
    mysql_server.execute(TYPED_DDL, f"INSERT INTO typed VALUES {values}", database=db)
    one = _snapshot(mysql_server, db, tmp_path / "one", "sig-t1", "typed")
    three = _snapshot(
        mysql_server, db, tmp_path / "three", "sig-t3", "typed", **{"incremental.snapshot.max.threads": "3"}
    )
    assert len(three) == 500
    assert [position_free(r) for r in three] == [position_free(r) for r in one]
    assert len(snapshot_windows(three)) < len(snapshot_windows(one))


def test_three_threads_race_with_writers_and_replay_to_the_table(mysql_server, orders, tmp_path):
    db = orders
    total = 60_000
    chunk = 1_000
    fill(mysql_server, db, total)
    rows = snapshot_racing_writers(
        mysql_server,
        db,
        tmp_path,
        total,
        **{"incremental.snapshot.chunk.size": str(chunk), "incremental.snapshot.max.threads": "3"},
    )
    assert replay(rows) == orders_in_mysql(mysql_server, db)
    windows = snapshot_windows(rows)
    assert sum(len(w) for w in windows) > total // 2
    for window in windows:
        ids = [payload(r)["after"]["id"] for r in window]
        assert ids == sorted(set(ids)), "a window's rows are not in key order"
    # Windows hold three chunks' worth of rows: more than one chunk each (streamed changes remove
    # some), and about total / 3 chunks of them.
    assert max(len(w) for w in windows) > chunk
    assert len(windows) <= total // (3 * chunk) + 2


@pytest.mark.parametrize(
    ("ddl", "rows", "key", "condition"),
    [
        (  # a composite primary key, with an additional condition
            "CREATE TABLE keyed (a INT NOT NULL, b VARCHAR(8) NOT NULL, v INT, PRIMARY KEY (a, b))",
            [f"({i // 7}, 'k{i % 7}', {i})" for i in range(700)],
            ("a", "b"),
            "(MOD(v, 5) <> 3)",
        ),
        (  # a nullable surrogate key whose NULL rows outnumber two chunks
            "CREATE TABLE keyed (a INT NULL, b VARCHAR(8), v INT)",
            [f"(NULL, 'n', {i})" for i in range(120)] + [f"({i}, 'x', {i})" for i in range(200)],
            ("a",),
            None,
        ),
        (  # a condition with LIKE patterns: its % signs are SQL, not query parameters
            "CREATE TABLE keyed (a INT NOT NULL, b VARCHAR(8) NOT NULL, v INT, PRIMARY KEY (a, b))",
            [f"({i // 7}, 'k{i % 7}', {i})" for i in range(700)],
            ("a", "b"),
            "(b LIKE 'k%' AND b NOT LIKE '%3')",
        ),
    ],
    ids=["composite-key", "nullable-surrogate-key", "percent-in-condition"],
)
def test_sub_range_windows_read_every_row_once_in_key_order(
    mysql_server, unique_db, ddl, rows, key, condition
):
    """Window after window as the snapshot reads them (the reader processes on the server), until a
    window comes back empty: every row matching the condition exactly once, in key order."""
    db = unique_db
    mysql_server.execute(ddl, f"INSERT INTO keyed VALUES {','.join(rows)}", database=db)
    query = ChunkQuery(TableId(db, "keyed"), ("a", "b", "v"), key, condition)
    readers = WindowReaders(reader_connect(mysql_server, db), threads=3, chunk_size=50)
    read: list[tuple] = []
    windows = 0
    try:
        with mysql_server.connect(db) as conn:
            maximum = read_maximum_key(conn, query)
            assert maximum is not None
            after = None
            while window := readers.read(conn, query, after, maximum):
                windows += 1
                read.extend(window)
                after = query.key_of(window[-1])
    finally:
        readers.close()
    where = f" WHERE {condition}" if condition else ""
    order = ", ".join(key)
    table = [
        tuple(r)
        for r in mysql_server.query(f"SELECT a, b, v FROM keyed{where} ORDER BY {order}", database=db)
    ]
    assert Counter(read) == Counter(table) and len(read) == len(table)
    assert [query.key_of(r) for r in read] == [query.key_of(r) for r in table]  # key order
    assert windows < len(read) // 50  # windows of several chunks each


def test_a_column_dropped_ahead_of_the_stream_delays_the_window_with_three_threads(
    mysql_server, orders, tmp_path, caplog
):
    """The window after the first is planned while the stream has not reached an ALTER that dropped
    a column: the snapshot waits for the stream to apply it, then reads in the new structure."""
    db = orders
    fill(mysql_server, db, 1_000)
    engine, memory = make_engine(mysql_server, db, tmp_path, **{"incremental.snapshot.max.threads": "3"})
    try:
        engine.catch_up()
        send_signal(mysql_server, db, "sig-drop", "execute-snapshot", {"data-collections": [f"{db}.orders"]})
        engine.catch_up()  # window 1 (300 rows) is read; its markers lie ahead of the stream
        # A reader transaction left open would hold the table's metadata lock: the ALTER would fail
        mysql_server.execute(
            "SET SESSION lock_wait_timeout = 10", "ALTER TABLE orders DROP COLUMN name", database=db
        )
        with caplog.at_level("INFO", logger="connector.sources.incremental"):
            run_until(engine, snapshot_finished(engine))
    finally:
        engine.close()  # stops the reader processes (and their transactions) even when the test fails
    rows = [payload(r)["after"] for r in data_records(memory.records, "orders")]
    assert [a["id"] for a in rows] == list(range(1, 1_001))
    assert all("name" in a for a in rows[:300]) and not any("name" in a for a in rows[300:])
    assert "changed on the server before the stream reached the change" in caplog.text
