"""Incremental snapshots (DDD-3 watermarks) on a real server, while writers change the same rows."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from connector.engine import Engine
from connector.errors import MysqlCdcError
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.records import ChangeRecord, RecordKind
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


def table_rows(
    server: MySQLServerHandle, db: str, sql: str, columns: tuple[str, ...]
) -> dict[Any, dict[str, Any]]:
    return {
        tuple(row[: len(columns)]): dict(zip(columns + ("v",), row, strict=False))
        for row in server.query(sql, database=db)
    }


def test_incremental_snapshot_reads_every_row_as_r_events_in_key_order(mysql_server, orders, tmp_path):
    db = orders
    fill(mysql_server, db, 250)
    engine, memory = make_engine(mysql_server, db, tmp_path)
    engine.catch_up()
    assert data_records(memory.records, "orders") == []
    send_signal(
        mysql_server,
        db,
        "sig-1",
        "execute-snapshot",
        {"data-collections": [f"{db}.orders"], "type": "incremental"},
    )
    run_until(
        engine,
        lambda: (
            len(data_records(memory.records, "orders")) >= 250
            and not engine.streaming.signals.incremental.running
        ),
    )
    engine.close()
    rows = data_records(memory.records, "orders")
    assert [payload(r)["after"]["id"] for r in rows] == list(range(1, 251))
    assert {payload(r)["op"] for r in rows} == {"r"}
    assert {payload(r)["source"]["snapshot"] for r in rows} == {"incremental"}
    assert rows[0].offset["snapshot"] == "INCREMENTAL"
    assert json.loads(rows[0].offset["incremental_snapshot_primary_key"]) == [1]
    assert json.loads(rows[-1].offset["incremental_snapshot_maximum_key"]) == [250]
    # The signal table's own rows are emitted, as Debezium does: the signal and every window marker.
    signal_rows = data_records(memory.records, "dbz_signal")
    kinds = [payload(r)["after"]["type"] for r in signal_rows]
    assert kinds[0] == "execute-snapshot"
    assert (
        kinds.count("snapshot-window-open") == kinds.count("snapshot-window-close") == 4
    )  # 3 chunks + the empty one


@pytest.mark.slow  # a minute of writer races; the chunk and watermark tests above stay in the fast tier
def test_incremental_snapshot_races_with_writers_and_replays_to_the_table(mysql_server, orders, tmp_path):
    db = orders
    total = 200_000
    fill(mysql_server, db, total)
    rows = snapshot_racing_writers(
        mysql_server, db, tmp_path, total, **{"incremental.snapshot.chunk.size": "1024"}
    )
    assert sum(1 for r in rows if payload(r)["op"] == "r") > total // 2
    assert replay(rows) == orders_in_mysql(mysql_server, db)


def test_an_offset_debezium_stored_mid_snapshot_reads_the_table_again(mysql_server, orders, tmp_path, caplog):
    """Debezium stores the chunk keys Java-serialized (hex); a stored offset taken from Debezium in
    the middle of an incremental snapshot restarts that table from its first key instead of failing."""
    db = orders
    fill(mysql_server, db, 250)
    engine, _ = make_engine(mysql_server, db, tmp_path)
    engine.catch_up()
    engine.close()
    # Debezium's own offset from the recording (its keys: after id 3, maximum 10), on our position.
    recorded = json.loads(
        (Path(__file__).parents[2] / "golden/debezium/incremental/insert_insert.offsets.json").read_text()
    )
    theirs = next(
        e["value"]
        for e in recorded
        if e["value"].get("incremental_snapshot_primary_key", "aced000570") != "aced000570"
    )
    offsets_path = tmp_path / "offsets.json"
    stored = json.loads(offsets_path.read_text())
    (key,) = stored
    collections = json.loads(theirs["incremental_snapshot_collections"])
    collections[0]["incremental_snapshot_collections_id"] = f"{db}.orders"
    stored[key].update(
        {
            "incremental_snapshot_collections": json.dumps(collections),
            "incremental_snapshot_correlation_id": theirs["incremental_snapshot_correlation_id"],
            "incremental_snapshot_primary_key": theirs["incremental_snapshot_primary_key"],
            "incremental_snapshot_maximum_key": theirs["incremental_snapshot_maximum_key"],
        }
    )
    offsets_path.write_text(json.dumps(stored))
    engine, memory = make_engine(mysql_server, db, tmp_path)
    with caplog.at_level("WARNING", logger="connector.sources.incremental"):
        run_until(
            engine,
            snapshot_finished(engine),
        )
    engine.close()
    rows = data_records(memory.records, "orders")
    assert [payload(r)["after"]["id"] for r in rows] == list(range(1, 251))
    assert "not this connector's encoding" in caplog.text


def _snapshot_orders(engine: Engine, server: MySQLServerHandle, db: str) -> None:
    send_signal(server, db, "sig-s", "execute-snapshot", {"data-collections": [f"{db}.orders"]})
    run_until(
        engine,
        snapshot_finished(engine),
    )


@pytest.mark.parametrize("strategy", ["insert_insert", "insert_delete"])
def test_watermarking_strategy_decides_what_stays_in_the_signal_table(
    mysql_server, orders, tmp_path, strategy
):
    db = orders
    fill(mysql_server, db, 250)
    engine, memory = make_engine(
        mysql_server, db, tmp_path, **{"incremental.snapshot.watermarking.strategy": strategy}
    )
    engine.catch_up()
    _snapshot_orders(engine, mysql_server, db)
    engine.close()
    rows = data_records(memory.records, "orders")
    assert [payload(r)["after"]["id"] for r in rows] == list(range(1, 251))
    left = dict(
        mysql_server.query(
            "SELECT type, COUNT(*) FROM dbz_signal WHERE type LIKE 'snapshot-window-%' GROUP BY type",
            database=db,
        )
    )
    markers = [payload(r) for r in data_records(memory.records, "dbz_signal")]
    if strategy == "insert_insert":
        assert left == {"snapshot-window-open": 4, "snapshot-window-close": 4}
        assert not any(m["op"] == "d" for m in markers)
    else:  # the open row is deleted when the window closes; no close row is written
        assert left == {}
        assert sum(1 for m in markers if m["op"] == "d") == 4


@pytest.mark.parametrize("allow", [True, False])
def test_allow_schema_changes_reads_a_chunk_again_with_the_new_structure(
    mysql_server, orders, tmp_path, allow
):
    """A column added while a chunk waits for its window: with
    incremental.snapshot.allow.schema.changes the chunk is read again and its rows carry the new
    column; without it they are emitted as read, in the structure before the change."""
    db = orders
    fill(mysql_server, db, 250)
    engine, memory = make_engine(
        mysql_server, db, tmp_path, **{"incremental.snapshot.allow.schema.changes": str(allow).lower()}
    )
    engine.catch_up()
    send_signal(mysql_server, db, "sig-ddl", "execute-snapshot", {"data-collections": [f"{db}.orders"]})
    engine.catch_up()  # the signal is read: chunk 1 is read, its markers lie ahead of the stream
    mysql_server.execute("ALTER TABLE orders ADD COLUMN extra INT NOT NULL DEFAULT 7", database=db)
    run_until(
        engine,
        snapshot_finished(engine),
    )
    engine.close()
    changed_at = next(
        i
        for i, r in enumerate(memory.records)
        if r.kind == RecordKind.SCHEMA_CHANGE and "ADD COLUMN extra" in str(r.value)
    )
    after_change = [payload(r)["after"] for r in data_records(memory.records[changed_at:], "orders")]
    assert sorted(a["id"] for a in data_records_ids(memory.records)) == list(range(1, 251))
    assert after_change, "no chunk was emitted after the structure changed"
    with_column = [a for a in after_change if "extra" in a]
    if allow:
        assert with_column == after_change and {a["extra"] for a in with_column} == {7}
    else:
        assert len(with_column) < len(after_change)


def data_records_ids(records: list[ChangeRecord]) -> list[dict[str, Any]]:
    return [payload(r)["after"] for r in data_records(records, "orders")]


def test_a_column_dropped_ahead_of_the_stream_delays_the_chunk_until_the_stream_applies_it(
    mysql_server, orders, tmp_path, caplog
):
    """The chunk after a window is read while the stream has not yet reached an ALTER that dropped
    a column: the read fails on the server, so the snapshot waits for the stream to apply the DDL
    and then reads the chunk in the new structure (nothing lost, the connector keeps running)."""
    db = orders
    fill(mysql_server, db, 250)
    engine, memory = make_engine(mysql_server, db, tmp_path)
    engine.catch_up()
    send_signal(mysql_server, db, "sig-drop", "execute-snapshot", {"data-collections": [f"{db}.orders"]})
    engine.catch_up()  # chunk 1 is read; its markers lie ahead of the stream
    mysql_server.execute("ALTER TABLE orders DROP COLUMN name", database=db)
    with caplog.at_level("INFO", logger="connector.sources.incremental"):
        run_until(engine, snapshot_finished(engine))
    engine.close()
    rows = [payload(r)["after"] for r in data_records(memory.records, "orders")]
    assert [a["id"] for a in rows] == list(range(1, 251))
    assert all("name" in a for a in rows[:100]) and not any("name" in a for a in rows[100:])
    assert "changed on the server before the stream reached the change" in caplog.text


def _revoke_watermark_grant(server: MySQLServerHandle, db: str) -> None:
    server.execute(f"REVOKE INSERT, DELETE ON `{db}`.`dbz_signal` FROM '{server.connector.user}'@'%'")


def _grant_watermark_grant(server: MySQLServerHandle, db: str) -> None:
    server.execute(f"GRANT INSERT, DELETE ON `{db}`.`dbz_signal` TO '{server.connector.user}'@'%'")


def test_a_failed_watermark_write_is_retried_as_signal_emit_failure_says(mysql_server, orders, tmp_path):
    db = orders
    fill(mysql_server, db, 150)
    engine, memory = make_engine(
        mysql_server,
        db,
        tmp_path,
        **{"signal.emit.failure.max.retries": "-1", "signal.emit.failure.backoff.ms": "300"},
    )
    engine.catch_up()
    _revoke_watermark_grant(mysql_server, db)
    send_signal(mysql_server, db, "sig-r", "execute-snapshot", {"data-collections": [f"{db}.orders"]})
    # The grant comes back while the connector retries its first window's open watermark.
    regrant = threading.Timer(2.0, _grant_watermark_grant, (mysql_server, db))
    regrant.start()
    run_until(engine, lambda: len(data_records(memory.records, "orders")) >= 150)
    regrant.join()
    engine.close()
    assert sorted(payload(r)["after"]["id"] for r in data_records(memory.records, "orders")) == list(
        range(1, 151)
    )


def test_without_retries_a_failed_watermark_write_stops_naming_the_key(mysql_server, orders, tmp_path):
    db = orders
    fill(mysql_server, db, 10)
    engine, _ = make_engine(mysql_server, db, tmp_path)
    engine.catch_up()
    _revoke_watermark_grant(mysql_server, db)
    try:
        send_signal(mysql_server, db, "sig-f", "execute-snapshot", {"data-collections": [f"{db}.orders"]})
        with pytest.raises(MysqlCdcError) as stopped:
            run_until(engine, lambda: False, timeout=30)
    finally:
        engine.close()
        _grant_watermark_grant(mysql_server, db)
    assert "signal.emit.failure.max.retries" in str(stopped.value)
    assert "dbz_signal" in str(stopped.value)
