"""provide.transaction.metadata on a real server: BEGIN/END records, transaction blocks, offsets, and
a restart in the middle of a transaction that continues the numbering without a second BEGIN."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.records.transactions import (
    TransactionMetadata,
    java_hashmap_order,
)
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.debezium_schemas import TRANSACTION_KEY_SCHEMA, TRANSACTION_VALUE_SCHEMA
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink
from tests.connector.sink_support import FailingSink

META = {"provide.transaction.metadata": "true"}


def make(
    server: MySQLServerHandle, db: str, data_dir: Path, *sinks: MemorySink, **extra: str
) -> tuple[Engine, MemorySink]:
    memory = sinks[0] if sinks else MemorySink()
    props = server.connector_properties(
        **{"topic.prefix": "tx", "database.include.list": db, "data.dir": str(data_dir), **META, **extra}
    )
    return Engine(ConnectorConfig.from_mapping(props), sinks=[memory]), memory


def run_in_session(server: MySQLServerHandle, db: str, *statements: str) -> str:
    """Runs the statements in one session; the GTID MariaDB gave the last transaction."""
    with server.connect(db) as conn, conn.cursor() as cur:
        for sql in statements:
            cur.execute(sql)
        cur.execute("SELECT @@last_gtid")
        return str(cur.fetchone()[0])


def streamed(records: Sequence[ChangeRecord]) -> list[ChangeRecord]:
    """Transaction and data records (no schema changes, tombstones or snapshot reads)."""
    return [
        r for r in records if r.kind == RecordKind.TRANSACTION or (r.kind == RecordKind.DATA and r.op != "r")
    ]


def summary(r: ChangeRecord) -> tuple[Any, ...]:
    if r.kind == RecordKind.TRANSACTION:
        return ("TX", r.value["status"], r.value["event_count"])
    assert r.table_id is not None
    block = r.value["transaction"]
    return (r.table_id.table, r.op, block and (block["total_order"], block["data_collection_order"]))


def test_begin_end_and_blocks(mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE a (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE b (id INT PRIMARY KEY)",
        "CREATE TABLE ignored (id INT PRIMARY KEY)",
        database=db,
    )
    engine, memory = make(
        mysql_server, db, tmp_path, **{"table.exclude.list": f"{db}.ignored", "topic.transaction": "txmeta"}
    )
    engine.catch_up()
    gtid = run_in_session(
        mysql_server,
        db,
        "BEGIN",
        "INSERT INTO a VALUES (1, 1), (2, 2)",
        "INSERT INTO b VALUES (1)",
        "UPDATE a SET v = 3 WHERE id = 1",
        "UPDATE a SET id = 5 WHERE id = 2",  # key change: delete + create, 2 events
        "DELETE FROM b",
        "INSERT INTO ignored VALUES (1)",
        "COMMIT",
    )
    only_ignored = run_in_session(mysql_server, db, "INSERT INTO ignored VALUES (2)")
    run_in_session(mysql_server, db, "TRUNCATE TABLE b")  # DDL: no BEGIN/END, no block
    engine.catch_up()
    engine.close()

    records = streamed(memory.records)
    assert [summary(r) for r in records] == [
        ("TX", "BEGIN", None),
        ("a", "c", (1, 1)),
        ("a", "c", (2, 2)),
        ("b", "c", (3, 1)),
        ("a", "u", (4, 3)),
        ("a", "d", (5, 4)),
        ("a", "c", (6, 5)),
        ("b", "d", (7, 2)),
        ("TX", "END", 7),
        # a transaction touching only a table that is not captured still has its BEGIN and END
        ("TX", "BEGIN", None),
        ("TX", "END", 0),
    ]
    begin, end = records[0], records[8]
    assert gtid.count("-") == 2  # MariaDB GTID domain-server-sequence is the transaction id
    assert begin.topic == end.topic == "tx.txmeta"
    assert begin.key == end.key == {"id": gtid}
    assert all(r.value["transaction"]["id"] == gtid for r in records[1:8])
    assert records[9].key == {"id": only_ignored}
    assert records[10].value["data_collections"] == []
    assert end.value["data_collections"] == [
        {"data_collection": name, "event_count": {f"{db}.a": 5, f"{db}.b": 2}[name]}
        for name in java_hashmap_order([f"{db}.a", f"{db}.b"])
    ]
    # ts_ms = binlog event time (seconds resolution), like the change events' source.ts_ms
    assert begin.value["ts_ms"] % 1000 == 0 and begin.value["ts_ms"] <= (records[1].source or {})["ts_ms"]
    # no context headers, producer-chosen partition (TransactionMonitor builds bare SourceRecords)
    assert begin.headers == end.headers == () and begin.partition is end.partition is None
    assert orjson.loads(begin.value_bytes() or b"")["schema"] == TRANSACTION_VALUE_SCHEMA.to_json()
    assert orjson.loads(end.key_bytes() or b"")["schema"] == TRANSACTION_KEY_SCHEMA.to_json()
    # offsets: counters inside the transaction, none after its END
    assert begin.offset is not None and begin.offset["transaction_id"] == gtid
    assert records[7].offset is not None and {
        k: v for k, v in records[7].offset.items() if k.startswith("transaction_")
    } == {
        "transaction_id": gtid,
        f"transaction_data_collection_order_{db}.a": 5,
        f"transaction_data_collection_order_{db}.b": 2,
    }
    assert end.offset is not None and not any(k.startswith("transaction_") for k in end.offset)
    truncate = [r for r in memory.records if r.op == "t"]
    assert truncate == []  # skipped.operations defaults to t
    stored = engine.offsets.load()
    assert stored is not None and not any(k.startswith("transaction_") for k in stored)


def test_truncate_and_ddl_have_no_transaction(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    engine, memory = make(mysql_server, db, tmp_path, **{"skipped.operations": "none"})
    engine.catch_up()
    mysql_server.execute(
        "INSERT INTO t VALUES (1)", "TRUNCATE TABLE t", "ALTER TABLE t ADD COLUMN x INT", database=db
    )
    engine.catch_up()
    engine.close()
    assert [summary(r) for r in streamed(memory.records)] == [
        ("TX", "BEGIN", None),
        ("t", "c", (1, 1)),
        ("TX", "END", 1),
        ("t", "t", None),
    ]


def test_disabled_by_default(mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path) -> None:
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    engine, memory = make(mysql_server, db, tmp_path, **{"provide.transaction.metadata": "false"})
    engine.catch_up()
    mysql_server.execute("INSERT INTO t VALUES (1), (2)", database=db)
    engine.catch_up()
    engine.close()
    assert [summary(r) for r in streamed(memory.records)] == [("t", "c", None), ("t", "c", None)]
    assert all(r.offset is not None and "transaction_id" not in r.offset for r in memory.records)


@pytest.mark.parametrize(("batch_size", "delivered_batches"), [(1, 1), (2, 1), (2, 2), (2, 4)])
def test_restart_inside_a_transaction_continues_numbering(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, batch_size: int, delivered_batches: int
) -> None:
    # (1, 1): the stored offset is the BEGIN record's; the others stop after some rows.
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE a (id INT PRIMARY KEY)", "CREATE TABLE b (id INT PRIMARY KEY)", database=db
    )
    statements = [
        "BEGIN",
        "INSERT INTO a VALUES (1), (2), (3)",
        "INSERT INTO b VALUES (1)",
        "INSERT INTO a VALUES (4)",
        "INSERT INTO b VALUES (2), (3)",
        "COMMIT",
    ]
    # The reference: the same transaction streamed without interruption.
    reference_dir = tmp_path / "reference"
    engine, memory = make(mysql_server, db, reference_dir)
    engine.catch_up()
    engine.close()
    failing = FailingSink()
    engine, _ = make(
        mysql_server,
        db,
        tmp_path / "crash",
        failing,
        **{"max.batch.size": str(batch_size), "offset.flush.interval.ms": "0"},
    )
    engine.catch_up()
    failing.batches = delivered_batches
    run_in_session(mysql_server, db, *statements)
    with pytest.raises(ConnectionError):
        engine.catch_up()
    engine.close()
    first_run = streamed(failing.records)
    stored = engine.offsets.load()
    assert stored is not None and stored.get("transaction_id"), "the failure must land inside the transaction"

    engine, second = make(mysql_server, db, tmp_path / "crash")
    engine.catch_up()
    engine.close()
    engine, memory = make(mysql_server, db, reference_dir)
    engine.catch_up()
    engine.close()
    reference = [summary(r) for r in streamed(memory.records)]
    resumed = [summary(r) for r in streamed(second.records)]
    # Nothing lost, nothing repeated whose offset was stored, and no second BEGIN.
    assert [summary(r) for r in first_run] + resumed == reference
    assert ("TX", "BEGIN", None) not in resumed
    assert [r.value["transaction"] for r in streamed(second.records) if r.kind == RecordKind.DATA] == [
        r.value["transaction"]
        for r in streamed(memory.records)[len(first_run) :]
        if r.kind == RecordKind.DATA
    ]


def test_offset_round_trip_and_fake_share_the_format() -> None:
    context = TransactionMetadata.from_offset(
        "p.transaction",
        {
            "file": "f",
            "pos": 4,
            "transaction_id": "0-1-7",
            "transaction_data_collection_order_db.a": 2,
            "transaction_data_collection_order_db.b": 3,
        },
    )
    assert (context.id, context.total, context.per_table) == ("0-1-7", 5, {"db.a": 2, "db.b": 3})
    assert context.begin("0-1-7", 0, {}) is None  # the replayed start of the restored transaction
    offset: dict[str, Any] = {}
    context.store(offset)
    assert offset == {
        "transaction_id": "0-1-7",
        "transaction_data_collection_order_db.a": 2,
        "transaction_data_collection_order_db.b": 3,
    }
