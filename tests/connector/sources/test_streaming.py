"""End to end against a real server: binlog → engine → Debezium change events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.records import RecordKind
from sink.jsonl import JsonlSink
from sink.memory import MemorySink
from tests.connector.streaming_support import data


def make_engine(
    server: MySQLServerHandle, db: str, data_dir: Path, *sinks: Any, **extra: str
) -> tuple[Engine, MemorySink]:
    memory = MemorySink()
    config = ConnectorConfig.from_mapping(
        server.connector_properties(
            **{"topic.prefix": "it", "database.include.list": db, "data.dir": str(data_dir), **extra}
        )
    )
    return Engine(config, sinks=[memory, *sinks]), memory


def last_gtid(server: MySQLServerHandle, db: str, *statements: str) -> str | None:
    """Run statements in one session and return the GTID the server gave the last transaction."""
    with server.connect(db) as conn, conn.cursor() as cur:
        for sql in statements:
            cur.execute(sql)
        if server.is_mariadb:
            cur.execute("SELECT @@last_gtid")
            return str(cur.fetchone()[0])
    return None


def test_insert_update_delete_produce_debezium_events(mysql_server, unique_db, tmp_path):
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20), qty INT NOT NULL)", database=db
    )
    engine, memory = make_engine(mysql_server, db, tmp_path)
    engine.catch_up()
    status_file = mysql_server.query("SHOW MASTER STATUS")[0][0]
    gtid_insert = last_gtid(mysql_server, db, "INSERT INTO items VALUES (1, 'apple', 3), (2, 'pear', 5)")
    gtid_update = last_gtid(mysql_server, db, "UPDATE items SET qty = 4 WHERE id = 1")
    gtid_delete = last_gtid(mysql_server, db, "DELETE FROM items WHERE id = 2")
    engine.catch_up()
    engine.close()

    events = data(memory.records, "items")
    ops = [r.op for r in events]
    assert ops == ["c", "c", "u", "d"]
    c1, c2, u, d = events
    assert all(r.topic == f"it.{db}.items" for r in events)
    assert c1.key == {"id": 1} and c2.key == {"id": 2}
    assert c1.before is None and c1.after == {"id": 1, "name": "apple", "qty": 3}
    assert u.before == {"id": 1, "name": "apple", "qty": 3} and u.after == {
        "id": 1,
        "name": "apple",
        "qty": 4,
    }
    assert d.before == {"id": 2, "name": "pear", "qty": 5} and d.after is None and d.key == {"id": 2}

    # Two rows of one rows event: same pos, row 0 and 1.
    assert (c1.source["pos"], c1.source["row"]) == (c2.source["pos"], 0) or c1.source["row"] == 0
    assert c2.source["row"] == 1 and c2.source["pos"] == c1.source["pos"]
    for r in events:
        s = r.source
        assert s["connector"] == "mysql" and s["name"] == "it" and s["db"] == db and s["table"] == "items"
        assert s["file"] == status_file and s["pos"] > 4 and s["server_id"] == 1
        assert s["snapshot"] is None  # written as the schema default "false"
        assert r.value["ts_ms"] >= s["ts_ms"] - 1000
    if mysql_server.is_mariadb:
        assert [r.source["gtid"] for r in events] == [gtid_insert, gtid_insert, gtid_update, gtid_delete]
    else:
        assert all(":" in r.source["gtid"] for r in events)
    # ordering of positions follows the binlog, and each pos is the start of its rows event
    assert c1.source["pos"] < u.source["pos"] < d.source["pos"]
    binlog_events = {
        int(row[1]): str(row[2]) for row in mysql_server.query(f"SHOW BINLOG EVENTS IN '{status_file}'")
    }
    assert [binlog_events[r.source["pos"]] for r in (c1, u, d)] == [
        "Write_rows_v1",
        "Update_rows_v1",
        "Delete_rows_v1",
    ] or all("rows" in binlog_events[r.source["pos"]].lower() for r in (c1, u, d))
    # a tombstone follows the delete, with the same key and a null value
    tombstones = [r for r in memory.records if r.kind == RecordKind.TOMBSTONE]
    assert len(tombstones) == 1 and tombstones[0].key == {"id": 2} and tombstones[0].value is None
    assert memory.records.index(tombstones[0]) == memory.records.index(d) + 1


def test_composite_key_and_table_without_primary_key(mysql_server, unique_db, tmp_path):
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE order_lines (order_no INT NOT NULL, line INT NOT NULL, sku VARCHAR(10), "
        "PRIMARY KEY (line, order_no))",
        "CREATE TABLE logbook (msg VARCHAR(50), at INT)",
        database=db,
    )
    engine, memory = make_engine(mysql_server, db, tmp_path)
    engine.catch_up()
    mysql_server.execute(
        "INSERT INTO order_lines VALUES (10, 1, 'A'), (10, 2, 'B')",
        "UPDATE order_lines SET sku = 'C' WHERE order_no = 10 AND line = 2",
        "INSERT INTO logbook VALUES ('hello', 1)",
        "DELETE FROM logbook",
        database=db,
    )
    engine.catch_up()
    engine.close()

    lines = data(memory.records, "order_lines")
    assert [r.key for r in lines] == [
        {"line": 1, "order_no": 10},
        {"line": 2, "order_no": 10},
        {"line": 2, "order_no": 10},
    ]
    # key field order is the primary key's order, not the column order
    assert list(lines[0].key) == ["line", "order_no"]
    assert lines[0].key_schema is not None and lines[0].key_schema.name == f"it.{db}.order_lines.Key"
    logbook = [r for r in memory.records if r.table_id is not None and r.table_id.table == "logbook"]
    assert [r.op for r in logbook if r.kind == RecordKind.DATA] == ["c", "d"]
    assert all(r.key is None and r.key_schema is None for r in logbook)
    assert logbook[0].key_bytes() is None
    # no key → the tombstone after the delete has a null key too (Debezium still emits it)
    assert logbook[-1].kind == RecordKind.TOMBSTONE


def test_primary_key_change_is_delete_tombstone_create_with_headers(mysql_server, unique_db, tmp_path):
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE k (id INT PRIMARY KEY, v INT)", "INSERT INTO k VALUES (1, 10)", database=db
    )
    engine, memory = make_engine(mysql_server, db, tmp_path)
    engine.catch_up()
    mysql_server.execute("UPDATE k SET id = 2 WHERE id = 1", database=db)
    engine.catch_up()
    engine.close()
    recs = [r for r in memory.records if r.table_id is not None and r.table_id.table == "k"]
    assert [(r.op, r.after) for r in recs[:1]] == [("r", {"id": 1, "v": 10})]  # the initial snapshot
    recs = recs[1:]
    assert [(r.kind, r.op) for r in recs] == [
        (RecordKind.DATA, "d"),
        (RecordKind.TOMBSTONE, None),
        (RecordKind.DATA, "c"),
    ]
    headers_d = {h.name: h.value for h in recs[0].headers}
    headers_c = {h.name: h.value for h in recs[2].headers}
    assert headers_d["__debezium.newkey"] == {"id": 2}
    assert headers_c["__debezium.oldkey"] == {"id": 1}
    assert recs[0].key == {"id": 1} and recs[2].key == {"id": 2}


def test_restart_resumes_after_last_delivered_event(mysql_server, unique_db, tmp_path):
    db = unique_db
    mysql_server.execute("CREATE TABLE r (id INT PRIMARY KEY)", database=db)
    engine, memory = make_engine(mysql_server, db, tmp_path)
    engine.catch_up()
    mysql_server.execute("INSERT INTO r VALUES (1)", "INSERT INTO r VALUES (2)", database=db)
    engine.catch_up()
    engine.close()
    assert [r.key["id"] for r in data(memory.records, "r")] == [1, 2]

    mysql_server.execute(
        "INSERT INTO r VALUES (3)",
        "ALTER TABLE r ADD COLUMN note VARCHAR(10)",
        "INSERT INTO r VALUES (4, 'four')",
        database=db,
    )
    engine2, memory2 = make_engine(mysql_server, db, tmp_path)
    engine2.catch_up()
    engine2.close()
    events = data(memory2.records, "r")
    assert [r.key["id"] for r in events] == [3, 4]
    assert events[0].after == {"id": 3}  # structure before the ALTER, rebuilt from history
    assert events[1].after == {"id": 4, "note": "four"}
    changes = [r for r in memory2.records if r.kind == RecordKind.SCHEMA_CHANGE]
    assert [c.value["ddl"] for c in changes] == ["ALTER TABLE r ADD COLUMN note VARCHAR(10)"]
    assert changes[0].topic == "it" and changes[0].key == {"databaseName": db}


def test_jsonl_sink_writes_converter_json(mysql_server, unique_db, tmp_path):
    db = unique_db
    mysql_server.execute("CREATE TABLE j (id INT PRIMARY KEY, name VARCHAR(5))", database=db)
    out = tmp_path / "events.jsonl"
    plain = tmp_path / "plain.jsonl"
    engine, _ = make_engine(
        mysql_server,
        db,
        tmp_path / "a",
        JsonlSink(out),
        JsonlSink(plain, key_schemas=False, value_schemas=False),
    )
    engine.catch_up()
    mysql_server.execute("INSERT INTO j VALUES (7, 'x')", "DELETE FROM j", database=db)
    engine.catch_up()
    engine.close()
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    rows = [x for x in lines if x["topic"] == f"it.{db}.j"]
    assert [list(x) for x in rows] == [["topic", "key", "value", "headers"]] * 3
    create, delete, tombstone = rows
    assert create["key"] == {
        "schema": {
            "type": "struct",
            "fields": [{"type": "int32", "optional": False, "field": "id"}],
            "optional": False,
            "name": f"it.{db}.j.Key",
        },
        "payload": {"id": 7},
    }
    value = create["value"]
    assert value["schema"]["name"] == f"it.{db}.j.Envelope" and value["schema"]["version"] == 2
    assert [f["field"] for f in value["schema"]["fields"]] == [
        "before",
        "after",
        "source",
        "transaction",
        "op",
        "ts_ms",
        "ts_us",
        "ts_ns",
    ]
    assert value["payload"]["source"]["snapshot"] == "false"
    assert value["payload"]["after"] == {"id": 7, "name": "x"}
    assert tombstone["value"] is None and tombstone["key"]["payload"] == {"id": 7}
    assert create["headers"]["__debezium.context.connectorLogicalName"] == "it"
    plain_rows = [orjson.loads(x) for x in plain.read_bytes().splitlines()]
    plain_rows = [x for x in plain_rows if x["topic"] == f"it.{db}.j"]
    assert plain_rows[0]["key"] == {"id": 7}
    assert plain_rows[0]["value"]["after"] == {"id": 7, "name": "x"}
    assert "schema" not in plain_rows[0]["value"]


def test_excluded_tables_emit_nothing_but_advance_the_offset(mysql_server, unique_db, tmp_path):
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE keep (id INT PRIMARY KEY)", "CREATE TABLE skip (id INT PRIMARY KEY)", database=db
    )
    engine, memory = make_engine(mysql_server, db, tmp_path, **{"table.exclude.list": f"{db}\\.skip"})
    engine.catch_up()
    mysql_server.execute(
        "INSERT INTO skip VALUES (1)",
        "INSERT INTO keep VALUES (1)",
        "INSERT INTO skip VALUES (2)",
        database=db,
    )
    engine.catch_up()
    engine.close()
    assert [(r.table_id.table, r.key) for r in data(memory.records)] == [("keep", {"id": 1})]
    stored = engine.offsets.load()
    assert stored is not None
    status = mysql_server.query("SHOW MASTER STATUS")[0]
    assert (stored["file"], stored["pos"]) == (status[0], status[1])


@pytest.mark.parametrize("mode", ["fail"])
def test_unparseable_ddl_stops_with_statement_and_position(mysql_server, unique_db, tmp_path, mode):
    db = unique_db
    engine, _ = make_engine(mysql_server, db, tmp_path)
    engine.catch_up()
    # A statement the server accepts but that our parser is told to treat as broken is hard to find;
    # instead feed the schema state a statement the server never produced, as the binlog would.
    from connector.dispatch.schema_state import UnparseableDdlError
    from connector.records.builder import SourcePosition

    assert engine.schema is not None
    with pytest.raises(UnparseableDdlError) as exc:
        engine.schema.apply(
            "ALTER TABLE t ADD COLUMN (((", db, {}, SourcePosition("mysql-bin.000001", 1234), None
        )
    assert "mysql-bin.000001:1234" in str(exc.value)
    assert "schema.history.internal.skip.unparseable.ddl=true" in str(exc.value)
    engine.close()


def test_lost_connection_is_retried_then_reported_with_the_real_error(fresh_mysql_server, tmp_path):
    server = fresh_mysql_server
    server.execute("CREATE DATABASE rc", "CREATE TABLE rc.t (id INT PRIMARY KEY)")
    engine, memory = make_engine(server, "rc", tmp_path, **{"connect.max.attempts": "3"})
    engine.catch_up()
    server.execute("INSERT INTO rc.t VALUES (1)")
    engine.catch_up()
    # A short outage within the retry budget: the stream resumes with nothing lost or repeated.
    server.stop()
    server.start()
    server.execute("INSERT INTO rc.t VALUES (2)")
    engine.catch_up(timeout=60)
    assert [r.key["id"] for r in data(memory.records, "t")] == [1, 2]
    # A lasting outage: bounded retries, then a message naming the server, where the stream
    # broke and the real cause.
    lost_at = "{}:{}".format(*engine.streaming.last_end)
    server.stop()
    from connector.binlog.server_stream import ReplicationLost

    with pytest.raises(ReplicationLost) as exc:
        engine.run()
    message = str(exc.value)
    assert f"127.0.0.1:{server.port}" in message and "after 3 attempts" in message
    assert f"after binlog position {lost_at}" in message
    assert "cannot reach MySQL" in message or "Can't connect" in message or "Lost connection" in message
    assert server.connector.password not in message


def test_an_idle_server_wakes_the_stream_five_times_per_poll_interval(
    mysql_server: MySQLServerHandle,
) -> None:
    """A partial batch is due poll.interval.ms after the last went out; the stream notices that at
    the server's next heartbeat, so heartbeats come five times per interval, not once (once, the
    batch could wait up to a whole further interval)."""
    import time

    from pymysqlreplication.event import HeartbeatLogEvent

    from connector.binlog.server_stream import BinlogReader

    file, pos = mysql_server.query("SHOW MASTER STATUS")[0][:2]
    config = ConnectorConfig.from_mapping(
        mysql_server.connector_properties(**{"topic.prefix": "hb", "database.server.id": "6402"})
    )
    reader = BinlogReader(config, file, pos, heartbeat_s=1.0)  # poll.interval.ms=1000
    try:
        beats: list[float] = []
        for raw in reader.events():
            if isinstance(raw.event, HeartbeatLogEvent):
                beats.append(time.monotonic())
                if len(beats) == 6:
                    break
    finally:
        reader.close()
    gaps = [later - earlier for earlier, later in zip(beats[1:], beats[2:], strict=False)]
    assert max(gaps) < 0.5, f"heartbeats {gaps} s apart: a partial batch could wait a whole interval"
