"""The embedded API against a real server: start, consume (iterator, callback, waits), stop cleanly."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import orjson
import pytest

from connector import EmbeddedEngine
from connector.config import ConfigError
from connector.embedded.events import EngineFailed, EventWaitTimeout
from connector.server.connection import PrerequisiteError
from connector.stores.offsets import MemoryOffsetStore
from ddl.history.store import MemorySchemaHistory
from mysql_cdc_base.records import ChangeRecord, RecordKind


def dump_threads(server) -> set[int]:
    """Server thread ids of replication (Binlog Dump) connections, seen by the admin user."""
    return {int(row[0]) for row in server.query("SHOW PROCESSLIST") if str(row[4]).startswith("Binlog Dump")}


def test_iterator_from_another_thread_and_clean_shutdown(cdc_mysql, cdc_database, cdc_properties):
    db = cdc_database
    cdc_mysql.execute("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))", database=db)
    engine = EmbeddedEngine(cdc_properties).start()
    seen: list[ChangeRecord] = []

    def consume() -> None:
        for record in engine:  # blocks for new events; ends when the engine stops
            if record.kind == RecordKind.DATA:
                seen.append(record)

    consumer = threading.Thread(target=consume)
    consumer.start()
    cdc_mysql.execute(
        "INSERT INTO items VALUES (1, 'apple')",
        "UPDATE items SET name = 'pear' WHERE id = 1",
        "DELETE FROM items WHERE id = 1",
        database=db,
    )
    engine.wait_for(table="items", op="d")
    ours = engine.replication_thread_ids
    assert ours and ours <= dump_threads(cdc_mysql)  # the replication connection is open...

    engine.stop()
    consumer.join(5)
    assert not consumer.is_alive()  # ...the iterator ended with the engine...
    assert not (ours & dump_threads(cdc_mysql))  # ...and the server no longer holds it
    assert not engine.running
    assert [(r.op, r.before, r.after) for r in seen] == [
        ("c", None, {"id": 1, "name": "apple"}),
        ("u", {"id": 1, "name": "apple"}, {"id": 1, "name": "pear"}),
        ("d", {"id": 1, "name": "pear"}, None),
    ]
    create = seen[0]
    assert create.topic == f"cdc.{db}.items" and create.key == {"id": 1}
    source = create.source
    assert source is not None
    assert source["db"] == db and source["table"] == "items" and source["snapshot"] is None
    headers = {h.name: h.value for h in create.headers}
    assert headers["__debezium.context.connectorLogicalName"] == "cdc"
    engine.stop()  # idempotent


def test_defaults_keep_offsets_and_history_in_memory(
    cdc_mysql, cdc_database, cdc_properties, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    with EmbeddedEngine(cdc_properties) as engine:
        cdc_mysql.execute(
            "CREATE TABLE m (id INT PRIMARY KEY)", "INSERT INTO m VALUES (1)", database=cdc_database
        )
        engine.wait_for(table="m", op="c")
        assert isinstance(engine.engine.offsets, MemoryOffsetStore)
        assert isinstance(engine.engine.history, MemorySchemaHistory)
        stored = engine.engine.offsets.load()
    assert stored is not None and stored["file"].startswith("mysql-bin")
    assert list(tmp_path.iterdir()) == []  # no .mysql-cdc directory, offsets or history files


def test_callback_form_sees_every_record_in_order(cdc_mysql, cdc_database, cdc_engine_factory):
    db = cdc_database
    cdc_mysql.execute("CREATE TABLE cb (id INT PRIMARY KEY)", database=db)
    received: list[tuple[str | None, int]] = []
    thread_names: set[str] = set()

    def on_record(record: ChangeRecord) -> None:
        thread_names.add(threading.current_thread().name)
        if record.kind == RecordKind.DATA:
            received.append((record.op, record.key["id"]))

    engine = cdc_engine_factory(callback=on_record, retain=False)
    cdc_mysql.execute("INSERT INTO cb VALUES (1), (2)", "DELETE FROM cb WHERE id = 1", database=db)
    deadline = time.monotonic() + 10
    while len(received) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    engine.stop()
    assert received == [("c", 1), ("c", 2), ("d", 1)]
    assert thread_names == {"mysql-cdc-cdc"}  # the engine thread, not the test's
    with pytest.raises(RuntimeError, match="retain=True"):
        engine.wait_for(table="cb")


def test_callback_error_stops_the_engine_and_is_reraised(cdc_mysql, cdc_database, cdc_engine_factory):
    db = cdc_database
    cdc_mysql.execute("CREATE TABLE boom (id INT PRIMARY KEY)", database=db)

    def explode(record: ChangeRecord) -> None:
        if record.kind == RecordKind.DATA:
            raise ValueError("consumer cannot handle this row")

    engine = cdc_engine_factory(callback=explode)
    file, pos = cdc_mysql.query("SHOW MASTER STATUS")[0][:2]
    cdc_mysql.execute("INSERT INTO boom VALUES (1)", database=db)
    deadline = time.monotonic() + 10
    while engine.running and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not engine.running
    assert not (engine.replication_thread_ids & dump_threads(cdc_mysql))
    with pytest.raises(EngineFailed, match="consumer cannot handle this row") as failure:
        engine.stop()
    assert isinstance(failure.value.__cause__, ValueError)
    # No offset past the failed batch was stored: a restart delivers the row again.
    stored = engine.engine.offsets.load()
    assert stored is not None and (stored["file"], stored["pos"]) <= (file, pos)
    with pytest.raises(EngineFailed):
        engine.wait_for(table="boom", timeout=0.1)


def test_wait_for_where_and_since(cdc_mysql, cdc_database, cdc_connector):
    db = cdc_database
    cdc_mysql.execute(
        "CREATE TABLE w (id INT PRIMARY KEY, status VARCHAR(10))",
        "INSERT INTO w VALUES (1, 'new'), (2, 'new')",
        database=db,
    )
    first = cdc_connector.wait_for(table="w", op="c")
    assert first.key == {"id": 1}
    mark = cdc_connector.mark()
    cdc_mysql.execute("UPDATE w SET status = 'paid' WHERE id = 2", "DELETE FROM w WHERE id = 1", database=db)
    paid = cdc_connector.wait_for(table=f"{db}.w", op="u", where=lambda row: row["status"] == "paid")
    assert paid.before == {"id": 2, "status": "new"} and paid.after == {"id": 2, "status": "paid"}
    # where looks at `before` for deletes; since= skips earlier matches
    deleted = cdc_connector.wait_for(op=("d",), where=lambda row: row["id"] == 1, since=mark)
    assert deleted.key == {"id": 1} and deleted.after is None
    again = cdc_connector.wait_for(table="w", where=lambda row: row["id"] == 1, since=mark)
    assert again is deleted
    tombstone = cdc_connector.wait_for(table="w", kind="tombstone")
    assert tombstone.value is None and tombstone.key == {"id": 1}
    schema = cdc_connector.wait_for(kind=RecordKind.SCHEMA_CHANGE, where=None, topic="cdc", timeout=1)
    assert schema.topic == "cdc"
    assert [r.op for r in cdc_connector.events_since(mark) if r.kind == RecordKind.DATA] == ["u", "d"]


def test_wait_for_timeout_lists_what_arrived(cdc_mysql, cdc_database, cdc_connector):
    db = cdc_database
    cdc_mysql.execute(
        "CREATE TABLE t1 (id INT PRIMARY KEY, v INT)", "INSERT INTO t1 VALUES (7, 1)", database=db
    )
    cdc_connector.wait_for(table="t1", op="c")
    started = time.monotonic()
    with pytest.raises(EventWaitTimeout) as failure:
        cdc_connector.wait_for(table="t1", op="u", where=lambda row: row["missing"] > 0, timeout=0.5)
    assert 0.5 <= time.monotonic() - started < 3
    message = str(failure.value)
    assert "table='t1', op='u', where=" in message and "within 0.5s" in message
    assert f"cdc.{db}.t1  op=c key={{'id': 7}} row={{'id': 7, 'v': 1}}" in message
    assert "CREATE TABLE t1" in message  # schema change events are listed too
    # the predicate only runs on candidate rows (op filter first), so no error note here
    with pytest.raises(EventWaitTimeout) as failure:
        cdc_connector.wait_for(table="t1", where=lambda row: row["missing"] > 0, timeout=0.2)
    assert "KeyError: 'missing'" in str(failure.value)


def test_drain_returns_everything_written_so_far(cdc_mysql, cdc_database, cdc_connector):
    db = cdc_database
    cdc_connector.drain()  # start-up schema events
    cdc_mysql.execute("CREATE TABLE d (id INT PRIMARY KEY)", database=db)
    with cdc_mysql.connect(db) as conn, conn.cursor() as cur:
        cur.execute("BEGIN")
        for i in range(50):
            cur.execute("INSERT INTO d VALUES (%s)", (i,))
        cur.execute("COMMIT")
    batch = cdc_connector.drain()  # no sleeps, no waiting on a count: everything is there
    assert [r.kind for r in batch[:1]] == [RecordKind.SCHEMA_CHANGE]
    assert [r.key["id"] for r in batch if r.kind == RecordKind.DATA] == list(range(50))
    started = time.monotonic()
    assert cdc_connector.drain() == []
    assert time.monotonic() - started < 2


def test_sinks_from_properties_are_fed_before_the_application(
    cdc_mysql, cdc_database, cdc_engine_factory, tmp_path: Path
):
    out = tmp_path / "events.jsonl"
    lines_when_delivered: list[int] = []

    def on_record(record: ChangeRecord) -> None:
        lines_when_delivered.append(len(out.read_bytes().splitlines()))

    engine = cdc_engine_factory({"sink.type": "jsonl", "sink.jsonl.path": str(out)}, callback=on_record)
    cdc_mysql.execute(
        "CREATE TABLE s (id INT PRIMARY KEY)", "INSERT INTO s VALUES (1)", database=cdc_database
    )
    engine.wait_for(table="s", op="c")
    engine.stop()
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert len(lines) == len(engine.events)
    assert [x["topic"] for x in lines] == [r.topic for r in engine.events]
    # the jsonl sink had flushed each batch before the callback saw it
    assert lines_when_delivered and all(n > 0 for n in lines_when_delivered)


def test_start_up_errors_are_raised_by_start_without_secrets(cdc_mysql, cdc_properties):
    bad = {**cdc_properties, "database.password": "not-the-password"}
    engine = EmbeddedEngine(bad)
    with pytest.raises(PrerequisiteError, match="database.password") as failure:
        engine.start()
    assert "not-the-password" not in str(failure.value)
    assert not engine.running
    with pytest.raises(ConfigError, match="database.port"):
        EmbeddedEngine({**cdc_properties, "database.port": "many"})


def test_stop_from_another_thread_ends_a_blocked_wait(cdc_mysql, cdc_database, cdc_connector):
    stopper = threading.Timer(0.3, cdc_connector.stop)
    stopper.start()
    started = time.monotonic()
    with pytest.raises(EventWaitTimeout, match="stopped"):
        cdc_connector.wait_for(table="never", timeout=20)
    assert time.monotonic() - started < 5
    stopper.join()
    assert not (cdc_connector.replication_thread_ids & dump_threads(cdc_mysql))


def test_signal_runs_a_read_only_incremental_snapshot_from_this_process(
    cdc_mysql, cdc_database, cdc_engine_factory
):
    """EmbeddedEngine.signal: the in-process channel is on by default; with read.only=true the
    snapshot needs no signal table (GTID watermarks; heartbeats close the windows on an idle server)."""
    db = cdc_database
    cdc_mysql.execute(
        "CREATE TABLE stock (id INT PRIMARY KEY, n INT)",
        "INSERT INTO stock VALUES " + ",".join(f"({i}, {i})" for i in range(1, 121)),
        database=db,
    )
    engine = cdc_engine_factory(
        {
            "snapshot.mode": "no_data",
            "read.only": "true",
            "heartbeat.interval.ms": "100",
            "incremental.snapshot.chunk.size": "50",
        }
    )
    signal_id = engine.signal("execute-snapshot", {"data-collections": [f"{db}.stock"]})
    assert signal_id
    engine.wait_for(table="stock", op="r", where=lambda row: row["id"] == 120, timeout=30)
    reads = [r for r in engine.data_events("stock") if r.op == "r"]
    assert [r.key["id"] for r in reads] == list(range(1, 121))
    value = reads[0].value
    assert value is not None and value.get("payload", value)["source"]["snapshot"] == "incremental"
