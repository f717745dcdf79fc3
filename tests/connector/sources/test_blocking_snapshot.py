"""Blocking snapshots (``execute-snapshot`` with ``"type": "blocking"``) on a real server: the stream
pauses, the listed tables are read as a snapshot (their structure first, then ``op: r`` rows marked
like Debezium's, offset ``snapshot: BLOCKING``), then the stream resumes where it paused, so
nothing written meanwhile is lost; a restarted engine does not take it again."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.records import ChangeRecord, RecordKind, jsonl_line
from sink.memory import MemorySink
from tests.connector.incremental_support import (
    data_records,
    fill,
    grant_signal_table,
    make_engine,
    payload,
    replay,
    send_signal,
)
from tests.connector.signal_support import FAST, running, streamed, table_state

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "debezium" / "incremental" / "blocking.jsonl"


def setup_tables(server: MySQLServerHandle, db: str, orders: int) -> None:
    grant_signal_table(server, db)
    server.execute(
        "CREATE TABLE orders (id INT PRIMARY KEY, name VARCHAR(40), qty INT)",
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40), qty INT)",
        database=db,
    )
    fill(server, db, orders)


def blocking(db: str, *tables: str, conditions: dict[str, str] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"data-collections": [f"{db}.{t}" for t in tables], "type": "blocking"}
    if conditions:
        data["additional-conditions"] = [
            {"data-collection": f"{db}.{t}", "filter": f} for t, f in conditions.items()
        ]
    return data


def orders_shape(lines: list[dict[str, Any]], db: str) -> list[tuple[str, ...]]:
    """Records as the JSON converter writes them, from the blocking signal's row on, reduced to
    what the comparison with Debezium looks at: ``orders``' schema changes by their statement's
    first words and its data by op and ``source.snapshot``, middle snapshot rows as one."""
    signal_at = next(
        i for i, x in enumerate(lines) if x["topic"].endswith(".dbz_signal") and x["value"] is not None
    )
    out: list[tuple[str, ...]] = []
    for line in lines[signal_at + 1 :]:
        body = line["value"]["payload"] if line["value"] is not None else None
        if body is None:
            continue
        if "ddl" in body and body["source"]["table"] == "orders":
            item: tuple[str, ...] = ("schema", " ".join(body["ddl"].split()[:2]), body["source"]["snapshot"])
        elif line["topic"] == f"inc.{db}.orders":
            item = (body["op"], body["source"]["snapshot"])
        else:
            continue
        if not (item == ("r", "true") and out and out[-1] == item):
            out.append(item)
    return out


def as_json(records: list[ChangeRecord]) -> list[dict[str, Any]]:
    return [json.loads(jsonl_line(r)) for r in records]


def xid_after(server: MySQLServerHandle, file: str, pos: int) -> int:
    """Start of the first COMMIT (Xid) event at or after ``pos``: the end of the signal's transaction."""
    events = server.query(f"SHOW BINLOG EVENTS IN '{file}' FROM {pos}")
    return next(int(e[1]) for e in events if str(e[2]) == "Xid")


def test_blocking_snapshot_of_one_table_with_a_condition_while_another_streams(
    mysql_server, unique_db, tmp_path
):
    db = unique_db
    setup_tables(mysql_server, db, 250)
    engine, memory = make_engine(mysql_server, db, tmp_path, **FAST)
    with running(engine) as run:
        # After the initial snapshot: an insert committed before its binlog position is read
        # (the engine's thread starts late on a loaded machine) is a snapshot row, never streamed.
        run.wait(lambda: engine.streaming is not None, "streaming")
        mysql_server.execute("INSERT INTO items VALUES (1, 'before', 1)", database=db)
        run.wait(streamed(memory, "items", 1), "item 1")
        send_signal(
            mysql_server,
            db,
            "block-1",
            "execute-snapshot",
            blocking(db, "orders", conditions={"orders": "qty > 50"}),
        )
        mysql_server.execute("INSERT INTO items VALUES (2, 'after', 2)", database=db)
        mysql_server.execute("INSERT INTO orders VALUES (1000, 'after', 99)", database=db)
        run.wait(streamed(memory, "orders", 1000), "the insert after the snapshot")
        run.wait(streamed(memory, "items", 2), "item 2")
    records = memory.records
    signal_index = next(
        i
        for i, r in enumerate(records)
        if r.kind == RecordKind.DATA
        and r.table_id.table == "dbz_signal"
        and payload(r)["after"]["id"] == "block-1"
    )
    # The same sequence as real Debezium's: DROP, CREATE, first, true..., last, then streaming.
    golden = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    assert orders_shape(as_json(records), db) == orders_shape(golden, "inc")

    # The structure first: the two schema changes of orders, right after the signal.
    ddl = [payload(r)["ddl"] for r in records[signal_index + 1 :] if r.kind == RecordKind.SCHEMA_CHANGE]
    assert ddl[0] == f"DROP TABLE IF EXISTS `{db}`.`orders`"
    assert ddl[1].startswith("CREATE TABLE `orders`")
    # Only the rows the condition selects, in key order, as snapshot rows.
    rows = [r for r in data_records(records, "orders") if payload(r)["op"] == "r"]
    assert [payload(r)["after"]["id"] for r in rows] == [i for i in range(1, 251) if i % 97 > 50]
    signal = records[signal_index]
    for row in rows:
        assert row.offset["snapshot"] == "BLOCKING"
        assert (row.offset["file"], row.offset["pos"]) == (signal.offset["file"], signal.offset["pos"])
        assert "row" not in row.offset
    # source.file/pos: the COMMIT of the signal's transaction, where the stream paused (as Debezium).
    source = payload(rows[0])["source"]
    assert (source["file"], source["pos"]) == (
        signal.offset["file"],
        xid_after(mysql_server, signal.offset["file"], signal.offset["pos"]),
    )
    # Streaming resumed: the later changes of both tables, as streamed records.
    after = records[records.index(rows[-1]) + 1 :]
    streamed_after = [(r.table_id.table, payload(r)["op"]) for r in after if r.kind == RecordKind.DATA]
    assert ("items", "c") in streamed_after and ("orders", "c") in streamed_after
    assert "snapshot" not in after[-1].offset
    # Nothing else was snapshotted; items streamed all along.
    assert [payload(r)["op"] for r in data_records(records, "items")] == ["c", "c"]


def test_blocking_snapshot_races_with_writers_to_both_tables_and_loses_nothing(
    mysql_server, unique_db, tmp_path
):
    db = unique_db
    total = 30_000
    setup_tables(mysql_server, db, total)
    engine, memory = make_engine(mysql_server, db, tmp_path, **FAST)
    stop = threading.Event()
    writes = {"orders": 0, "items": 0}

    def writer(seed: int) -> None:
        rnd = random.Random(seed)
        next_id = total + 1 + seed * 1_000_000
        with mysql_server.connect(db) as conn, conn.cursor() as cur:
            # A few hundred writes a second: the stream keeps up on two cores shared with the server.
            while not stop.wait(0.003):
                table = "orders" if rnd.random() < 0.6 else "items"
                key, roll = rnd.randint(1, total), rnd.random()
                if roll < 0.4:
                    cur.execute(
                        f"UPDATE {table} SET qty = qty + 1, name = %s WHERE id = %s", (f"w{seed}", key)
                    )
                elif roll < 0.6:
                    cur.execute(f"DELETE FROM {table} WHERE id = %s", (key,))
                elif roll < 0.8:
                    cur.execute(f"REPLACE INTO {table} VALUES (%s, %s, 1)", (key, f"back{seed}"))
                else:
                    cur.execute(f"INSERT INTO {table} VALUES (%s, %s, 2)", (next_id, f"new{seed}"))
                    next_id += 1
                writes[table] += 1

    with running(engine) as run:
        run.wait(lambda: engine.streaming is not None, "streaming")
        writers = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
        for thread in writers:
            thread.start()
        try:
            send_signal(mysql_server, db, "block-race", "execute-snapshot", blocking(db, "orders"))
            run.wait(
                lambda: sum(1 for r in data_records(memory.records, "orders") if payload(r)["op"] == "r") > 0,
                "the blocking snapshot to start",
            )
            # Writes made while the snapshot runs (its rows reach the sink as it goes), and after it.
            started = dict(writes)
            run.wait(lambda: _snapshot_ended(memory), "the blocking snapshot to end", timeout=60)
            ended = dict(writes)
            run.wait(lambda: writes["orders"] > ended["orders"] + 50, "writes after the snapshot")
        finally:
            stop.set()
            for thread in writers:
                thread.join()
        marker = 10_000_000
        mysql_server.execute(
            f"INSERT INTO orders VALUES ({marker}, 'end', 0)",
            f"INSERT INTO items VALUES ({marker}, 'end', 0)",
            database=db,
        )
        run.wait(streamed(memory, "orders", marker), "the last orders insert")
        run.wait(streamed(memory, "items", marker), "the last items insert")
    assert ended["orders"] > started["orders"] and ended["items"] > started["items"]
    orders = data_records(memory.records, "orders")
    snapshot = [r for r in orders if payload(r)["op"] == "r"]
    assert len(snapshot) > total // 2
    assert [payload(r)["source"]["snapshot"] for r in (snapshot[0], snapshot[-1])] == ["first", "last"]
    assert replay(orders) == table_state(mysql_server, db, "orders")
    assert replay(data_records(memory.records, "items")) == table_state(mysql_server, db, "items")


def snapshot_rows(memory: MemorySink) -> list[ChangeRecord]:
    return [r for r in data_records(memory.records, "orders") if payload(r)["op"] == "r"]


def _snapshot_ended(memory: MemorySink) -> bool:
    rows = snapshot_rows(memory)
    return bool(rows) and payload(rows[-1])["source"]["snapshot"] == "last"


def test_a_completed_blocking_snapshot_is_not_taken_again_after_a_restart(mysql_server, unique_db, tmp_path):
    db = unique_db
    setup_tables(mysql_server, db, 100)
    engine, memory = make_engine(mysql_server, db, tmp_path, **FAST)
    with running(engine) as run:
        run.wait(lambda: engine.streaming is not None, "streaming")
        send_signal(mysql_server, db, "block-once", "execute-snapshot", blocking(db, "orders"))
        run.wait(lambda: _snapshot_ended(memory), "the blocking snapshot")
    assert len(snapshot_rows(memory)) == 100
    stored = engine.offsets.load()
    assert stored is not None and "snapshot" not in stored

    # The restart streams on from after the signal: no second snapshot, no schema change again.
    engine, memory = make_engine(mysql_server, db, tmp_path, **FAST)
    with running(engine) as run:
        mysql_server.execute("INSERT INTO orders VALUES (500, 'later', 1)", database=db)
        run.wait(streamed(memory, "orders", 500), "the insert after the restart")
    assert snapshot_rows(memory) == []
    assert [r for r in memory.records if r.kind == RecordKind.SCHEMA_CHANGE] == []
    assert [payload(r)["after"]["id"] for r in data_records(memory.records, "orders")] == [500]
