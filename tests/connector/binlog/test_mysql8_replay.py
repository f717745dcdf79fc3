"""MySQL 8.3+/9 contents through the whole connector: the binlog file source (``mysql-cdc
replay-binlog``) feeding streaming, the dispatcher and the jsonl sink, on files real servers wrote.

``binlog_transaction_with_GTID_TAG.000001`` (MySQL 9.6): PREVIOUS_GTIDS names
``55778904-0299-11f1-b1b8-4ef0c4956feb:1-13`` and tag ``mytag`` 1-2; then one transaction with the
tagged GTID ``...:mytag:3`` (an INSERT into ``test.orders``, whose structure comes from a schema
history: the file has no CREATE TABLE and MINIMAL table-map metadata).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from connector.binlog.files import read_file_events as events_of
from connector.replay import BinlogReplay
from mysql_cdc_base.position import GtidSet, SourceOffset
from tests.connector.binlog_file_support import (
    data_records,
    jsonl,
    replay,
    replay_config,
    sample,
    write_history,
)
from tests.connector.mysql8_support import full_image_partial_json_copy

TAGGED = "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001"
SERVER = "55778904-0299-11f1-b1b8-4ef0c4956feb"
TAGGED_GTID = f"{SERVER}:mytag:3"
# The table map: INT, INT, DECIMAL(10,2); the names are ours (the file does not say them).
ORDERS = (
    "binlog_transaction_with_GTID_TAG.000001",
    "test",
    "CREATE TABLE test.orders (id INT, qty INT, price DECIMAL(10,2))",
)


def settings(data_dir: Path, **extra: str) -> dict[str, str]:
    history = data_dir / "schema-history.jsonl"
    if not history.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        write_history(history, [ORDERS])
    return {
        "schema.history.internal.file.filename": str(history),
        "provide.transaction.metadata": "true",
        "max.batch.size": "1",
        **extra,
    }


def payloads(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        value = line.get("value")
        if isinstance(value, dict) and isinstance(value.get("payload"), dict):
            out.append(value["payload"])
    return out


def stored_offset(data_dir: Path) -> dict[str, Any]:
    (offset,) = orjson.loads((data_dir / "offsets.json").read_bytes()).values()
    return dict(offset)


def test_a_tagged_transaction_is_replayed_with_its_gtid(tmp_path: Path) -> None:
    lines = replay([sample(TAGGED)], tmp_path, **settings(tmp_path))
    (row,) = data_records(lines)
    assert row["op"] == "c" and row["source"]["gtid"] == TAGGED_GTID
    # Transaction metadata: the id is the GTID as MySQL prints it, BEGIN and END around the row.
    boundaries = [(p["status"], p["id"]) for p in payloads(lines) if "status" in p]
    assert boundaries == [("BEGIN", TAGGED_GTID), ("END", TAGGED_GTID)]
    assert row["transaction"]["id"] == TAGGED_GTID
    # The offset holds the file's previous set plus the tagged transaction: what a GTID restart
    # against the server needs, in MySQL's text form (untagged intervals, then the tag's).
    offset = stored_offset(tmp_path)
    assert offset["gtids"] == f"{SERVER}:1-13:mytag:1-3"
    assert SourceOffset.from_map(offset).gtids == GtidSet.parse(f"{SERVER}:1-13:mytag:1-3")


def test_a_restart_in_the_middle_of_the_file_resumes_the_tagged_transaction(tmp_path: Path) -> None:
    full = data_records(replay([sample(TAGGED)], tmp_path / "full", **settings(tmp_path / "full")))
    data_dir = tmp_path / "stopped"
    config = replay_config(data_dir, **settings(data_dir))
    stopped = BinlogReplay(config, [sample(TAGGED)])
    # Stop right after the BEGIN record: inside the tagged transaction, before its row.
    stopped.engine.on_progress = lambda: (
        stopped.stop() if any("status" in p for p in payloads(jsonl(data_dir / "events.jsonl"))) else None
    )
    stopped.run()
    first = payloads(jsonl(data_dir / "events.jsonl"))
    assert [p.get("status") for p in first] == ["BEGIN"]
    middle = stored_offset(data_dir)
    # Inside the transaction: its first event (the GTID event) and the events done; the GTID set
    # does not hold the transaction yet, so a GTID restart would ask for it again.
    assert middle["pos"] == 245 and middle["event"] >= 1 and middle["transaction_id"] == TAGGED_GTID
    assert not GtidSet.parse(middle["gtids"]).contains(GtidSet.parse(TAGGED_GTID))
    BinlogReplay(replay_config(data_dir, **settings(data_dir)), [sample(TAGGED)]).run()
    both = payloads(jsonl(data_dir / "events.jsonl"))
    # Nothing lost, nothing repeated: one BEGIN, the row (with the tagged GTID), one END.
    assert [p.get("status") or p["op"] for p in both] == ["BEGIN", "c", "END"]
    (row,) = data_records(jsonl(data_dir / "events.jsonl"))
    assert row["after"] == full[0]["after"] and row["source"]["gtid"] == TAGGED_GTID
    assert stored_offset(data_dir)["gtids"] == f"{SERVER}:1-13:mytag:1-3"
    # A third run starts after the transaction: nothing more.
    BinlogReplay(replay_config(data_dir, **settings(data_dir)), [sample(TAGGED)]).run()
    assert len(payloads(jsonl(data_dir / "events.jsonl"))) == len(both)


def test_vector_and_json_opaque_files_replay_into_debezium_values(tmp_path: Path) -> None:
    vectors = data_records(replay([sample("rust_mysql_common/vector.binlog")], tmp_path / "v"), "bar")
    # The element counts are VECTOR(2) and VECTOR(4); JSON numbers as Java prints float32s.
    assert all(
        len(r["after"]["vector_column"]) == 2 and len(r["after"]["vector_column2"]) == 4
        for r in vectors
        if r["after"]
    )
    assert [r["after"]["foo"] for r in vectors if r["after"]][:2] == [None, "bar"]
    documents = data_records(replay([sample("rust_mysql_common/json-opaque.binlog")], tmp_path / "j"))
    # Debezium streams JsonBinary's compact text (a TIME beyond 23 hours kept)
    assert [r["after"]["a"] for r in documents][3] == '{"c":"87:31:46.654321"}'


def test_a_full_image_partial_json_update_becomes_a_normal_update(tmp_path: Path) -> None:
    """``json.binlog.000001`` rewritten as a FULL-image server writes it (mysql8_support): the
    PARTIAL_UPDATE_ROWS event streams as 'u' records whose after document is the before document
    with the diff applied; MySQL's own generated columns in the same image (``age`` =
    ``json_col->'$.age'``, ``name`` = ``json_col->>'$.name'``) say what the document holds."""
    copy = full_image_partial_json_copy(tmp_path / "copy" / "json.binlog.000001")
    updates = [r for r in data_records(replay([copy], tmp_path / "out")) if r["op"] == "u"]
    partial_position = next(e.offset for e in events_of(copy) if e.event_type == 0x27)
    partial = [r for r in updates if r["source"]["pos"] == partial_position]
    full = [r for r in updates if r["source"]["pos"] != partial_position]
    assert len(partial) == len(full) == 6
    for record in partial:
        before, after = orjson.loads(record["before"]["json_col"]), orjson.loads(record["after"]["json_col"])
        assert after["age"] == record["after"]["age"] and after["name"] == record["after"]["name"]
        assert {**before, "age": after["age"]} == after and after["age"] == before["age"] + 1
        # The same shape as the full-image UPDATE's records.
        assert list(record["after"]) == list(full[0]["after"])
    # The before image of each partial row is the full UPDATE's after image of the same id.
    assert [r["before"] for r in partial] == [r["after"] for r in full]
