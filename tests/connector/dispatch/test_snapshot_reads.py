"""Snapshot ``r`` records through the dispatcher (the fake connector's snapshot, the initial
snapshot's record path; reference digest 3.0, 3a, 3b): markers, source and offsets, and the records
of a recorded golden snapshot."""

from __future__ import annotations

from connector.testing.fake import FakeConnector
from mysql_cdc_base.records import RecordKind
from tests.connector.dispatch.stream_support import as_json
from tests.golden.compare import compare, load, recording
from tests.golden.workloads import CASES, mode_db

T = "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))"
U = "CREATE TABLE u (id INT PRIMARY KEY)"


def test_snapshot_markers_and_offsets() -> None:
    fake = FakeConnector([T, U])
    records = fake.snapshot({"t": [(1, "a"), (2, "b"), (3, "c")], "u": [(1,), (2,)]})
    # Digest 3a: first row of the first table "first", a table's first/last rows
    # first_in_data_collection / last_in_data_collection, the very last record "last", else "true".
    assert [(r.value["source"]["table"], r.value["source"]["snapshot"]) for r in records] == [
        ("t", "first"),
        ("t", "true"),
        ("t", "last_in_data_collection"),
        ("u", "first_in_data_collection"),
        ("u", "last"),
    ]
    for record in records:
        value = record.value
        assert (value["op"], value["before"], value["transaction"]) == ("r", None, None)
        assert (value["source"]["server_id"], value["source"]["row"], value["source"]["gtid"]) == (0, 0, None)
    # Digest 3b: snapshot offsets carry snapshot=INITIAL until the last record, no server_id, no
    # event/row counters.
    offsets = [r.offset.to_map() for r in records]  # type: ignore[union-attr]
    assert [o.get("snapshot") for o in offsets] == ["INITIAL"] * 4 + [None]
    assert not any(key in o for o in offsets for key in ("server_id", "event", "row", "transaction_id"))


def test_the_last_record_is_last_even_when_the_last_table_is_empty() -> None:
    fake = FakeConnector([T, U])
    records = fake.snapshot({"t": [(1, "a"), (2, "b")], "u": []})
    assert [r.value["source"]["snapshot"] for r in records] == ["first", "last"]


def test_snapshot_reads_match_debezium() -> None:
    # tests/golden/debezium/modes/column_mappers.jsonl: two rows read by the initial snapshot, with
    # column masks, hashes, truncation, source-type propagation and a custom message key.
    case = CASES["column_mappers"]
    db = mode_db("column_mappers")
    fake = FakeConnector(
        list(case.setup[:1]), database=db, topic_prefix="golden", properties=case.properties(db)
    )
    rows = [
        (1, "Ann Lee", "ann@example.com", "AB-12", "Likes 😀 and long walks", bytes(range(7)), 41, "first"),
        (2, None, "bo@example.com", None, None, None, None, None),
    ]
    ours = as_json([r for r in fake.snapshot({"people": rows}) if r.kind is RecordKind.DATA])
    theirs = [
        r
        for r in load(recording("modes/column_mappers.jsonl").read_bytes().splitlines())
        if r["topic"].endswith(".people") and r["value"] and r["value"]["payload"]["op"] == "r"
    ]
    outcome = compare("modes/column_mappers.jsonl snapshot (fake)", ours, theirs)
    assert outcome.ok, "\n".join(outcome.problems)
    assert outcome.compared == len(theirs) == 2
