"""Controlling incremental snapshots on a real server: pause and resume, nullable surrogate keys,
tables that cannot be read in key order, and Debezium's procedure for a newly captured table."""

from __future__ import annotations

import logging

from connector.testing.local_server import MySQLServerHandle
from tests.connector.incremental_support import (
    data_records,
    fill,
    grant_signal_table,
    make_engine,
    payload,
    replay,
    run_until,
    send_signal,
    snapshot_finished,
)


def test_pause_stops_reading_chunks_while_streaming_goes_on_and_resume_finishes(
    mysql_server, orders, tmp_path
):
    db = orders
    fill(mysql_server, db, 1000)
    mysql_server.execute("CREATE TABLE other (id INT PRIMARY KEY)", database=db)
    engine, memory = make_engine(mysql_server, db, tmp_path, **{"incremental.snapshot.chunk.size": "50"})
    engine.catch_up()
    # Both signals in one transaction: the first chunk is read, then the snapshot pauses.
    with mysql_server.connect(db) as conn, conn.cursor() as cur:
        cur.execute("BEGIN")
        cur.execute(
            "INSERT INTO dbz_signal VALUES ('s1', 'execute-snapshot', %s)",
            (f'{{"data-collections": ["{db}.orders"]}}',),
        )
        cur.execute("INSERT INTO dbz_signal VALUES ('s2', 'pause-snapshot', '{}')")
        cur.execute("COMMIT")
    for _ in range(3):
        engine.catch_up()
    paused_rows = len(data_records(memory.records, "orders"))
    assert paused_rows == 50  # the chunk read before the pause, nothing after it
    mysql_server.execute(
        "INSERT INTO other VALUES (1)", "UPDATE orders SET qty = -1 WHERE id = 900", database=db
    )
    engine.catch_up()
    engine.catch_up()
    assert [payload(r)["op"] for r in data_records(memory.records, "other")] == ["c"]
    assert len([r for r in data_records(memory.records, "orders") if payload(r)["op"] == "r"]) == 50
    assert engine.streaming is not None and engine.streaming.signals.incremental.running
    send_signal(mysql_server, db, "s3", "resume-snapshot", {})
    run_until(engine, snapshot_finished(engine))
    engine.close()
    rows = data_records(memory.records, "orders")
    assert sorted(payload(r)["after"]["id"] for r in rows if payload(r)["op"] == "r") == list(range(1, 1001))
    expected = {
        (r[0],): {"id": r[0], "name": r[1], "qty": r[2]}
        for r in mysql_server.query("SELECT * FROM orders", database=db)
    }
    assert replay(rows) == expected
    assert replay(rows)[(900,)]["qty"] == -1


def test_a_nullable_surrogate_key_reads_every_row_including_the_null_keyed_ones(
    mysql_server, unique_db, tmp_path
):
    """A keyless table chunked by a nullable column: more NULLs than a chunk holds are all read."""
    db = unique_db
    grant_signal_table(mysql_server, db)
    mysql_server.execute(
        "CREATE TABLE events (code INT NULL, note VARCHAR(20), UNIQUE KEY (code))", database=db
    )
    values = [f"(NULL, 'null-{i}')" for i in range(7)] + [f"({i}, 'n{i}')" for i in range(1, 31)]
    mysql_server.execute(f"INSERT INTO events VALUES {','.join(values)}", database=db)
    engine, memory = make_engine(mysql_server, db, tmp_path, **{"incremental.snapshot.chunk.size": "5"})
    engine.catch_up()
    send_signal(
        mysql_server,
        db,
        "sig-null",
        "execute-snapshot",
        {"data-collections": [f"{db}.events"], "surrogate-key": "code"},
    )
    run_until(engine, snapshot_finished(engine))
    engine.close()
    notes = sorted(payload(r)["after"]["note"] for r in data_records(memory.records, "events"))
    assert notes == sorted(row[0] for row in mysql_server.query("SELECT note FROM events", database=db))
    assert len(notes) == 37
    codes = [payload(r)["after"]["code"] for r in data_records(memory.records, "events")]
    assert codes[:7] == [None] * 7 and codes[7:] == list(range(1, 31))  # key order, NULL first


def test_a_table_without_a_key_is_refused_with_a_message_and_streaming_goes_on(
    mysql_server, unique_db, tmp_path, caplog
):
    db = unique_db
    grant_signal_table(mysql_server, db)
    mysql_server.execute(
        "CREATE TABLE loose (a INT, b VARCHAR(10))",
        "INSERT INTO loose VALUES (1, 'x'), (2, 'y')",
        database=db,
    )
    engine, memory = make_engine(mysql_server, db, tmp_path)
    engine.catch_up()
    with caplog.at_level(logging.WARNING):
        send_signal(mysql_server, db, "sig-loose", "execute-snapshot", {"data-collections": [f"{db}.loose"]})
        engine.catch_up()
    mysql_server.execute("INSERT INTO loose VALUES (3, 'z')", database=db)
    engine.catch_up()
    engine.close()
    assert f"table {db}.loose has no primary key" in caplog.text
    assert "surrogate-key" in caplog.text
    assert [payload(r)["op"] for r in data_records(memory.records, "loose")] == ["c"]


def test_a_newly_captured_table_is_backfilled_while_the_captured_one_streams(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path
):
    """Debezium's procedure: add the table to table.include.list, restart, send execute-snapshot."""
    db = unique_db
    grant_signal_table(mysql_server, db)
    mysql_server.execute(
        "CREATE TABLE a (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE b (id INT PRIMARY KEY, v INT)",
        "INSERT INTO b VALUES " + ",".join(f"({i}, {i})" for i in range(1, 301)),
        database=db,
    )
    engine, memory = make_engine(mysql_server, db, tmp_path, **{"table.include.list": f"{db}.a"})
    engine.catch_up()
    mysql_server.execute("INSERT INTO a VALUES (1, 1)", "UPDATE b SET v = -1 WHERE id = 5", database=db)
    engine.catch_up()
    engine.close()
    assert data_records(memory.records, "b") == []
    engine, memory = make_engine(mysql_server, db, tmp_path, **{"table.include.list": f"{db}.a,{db}.b"})
    engine.catch_up()
    send_signal(mysql_server, db, "sig-new", "execute-snapshot", {"data-collections": [f"{db}.b"]})
    mysql_server.execute("INSERT INTO a VALUES (2, 2)", "UPDATE b SET v = -2 WHERE id = 6", database=db)
    run_until(engine, snapshot_finished(engine))
    engine.close()
    b_rows = data_records(memory.records, "b")
    assert sorted(payload(r)["after"]["id"] for r in b_rows if payload(r)["op"] == "r") == list(range(1, 301))
    expected = {(r[0],): {"id": r[0], "v": r[1]} for r in mysql_server.query("SELECT * FROM b", database=db)}
    assert replay(b_rows) == expected
    assert [payload(r)["after"]["id"] for r in data_records(memory.records, "a")] == [2]
