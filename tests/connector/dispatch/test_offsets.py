"""Offsets of streamed records, through the in-memory binlog (reference digest 3b, 1.6, 1.11): the
restart point inside a transaction is its first event plus ``event`` = events done and ``row`` = rows
of the current rows event done; after a commit it is the end of the XID event, and ``gtids`` names
the completed transactions only. A restart from any stored offset loses and repeats nothing."""

from __future__ import annotations

from typing import Any

import pytest

from connector.testing.event_source import (
    Begin,
    Commit,
    Gtid,
    InMemoryBinlog,
    Query,
    ddl,
    delete,
    insert,
    transaction,
    update,
)
from mysql_cdc_base.position import GtidSet, SourceOffset
from mysql_cdc_base.records import ChangeRecord, RecordKind
from tests.connector.dispatch.stream_support import data, in_memory, offset_map

T = "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))"
UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def _position(binlog: InMemoryBinlog, index: int) -> tuple[str, int, int]:
    raw = binlog.events[index]
    return raw.file, raw.start_pos, raw.end_pos


def test_rows_of_one_insert_count_rows_done_in_the_begin_offset() -> None:
    # Digest 3b's example: BEGIN(pos P) -> TABLE_MAP -> WRITE_ROWS of 3 rows gives the rows
    # {file, pos: P, event: 2, row: 1 / 2 / 3}; the commit moves the restart point past the XID.
    binlog = in_memory(T)
    binlog.write(Begin(), insert("inventory.t", *({"id": i, "name": "x"} for i in (1, 2, 3))), Commit())
    records = binlog.run()
    file, begin_pos, _ = _position(binlog, 0)
    ts_sec = binlog.events[0].timestamp
    assert [offset_map(r) for r in records] == [
        {"ts_sec": ts_sec, "file": file, "pos": begin_pos, "event": 2, "row": row, "server_id": 1}
        for row in (1, 2, 3)
    ]
    _, _, xid_end = _position(binlog, 3)
    assert [o.to_map() for o in binlog.recorder.advanced] == [
        {"ts_sec": ts_sec, "file": file, "pos": xid_end, "server_id": 1}
    ]


def test_every_event_of_the_transaction_counts() -> None:
    binlog = in_memory(T)
    binlog.write(
        Begin(),
        insert("inventory.t", {"id": 1, "name": "a"}),
        update("inventory.t", ({"id": 1, "name": "a"}, {"id": 1, "name": "b"})),
        delete("inventory.t", {"id": 1, "name": "b"}),
        Commit(),
    )
    records = binlog.run()
    # BEGIN, then TABLE_MAP + rows event per statement: the rows events are events 3, 5 and 7.
    assert [(offset_map(r)["event"], offset_map(r)["row"], r.kind) for r in records] == [
        (2, 1, RecordKind.DATA),
        (4, 1, RecordKind.DATA),
        (6, 1, RecordKind.DATA),
        (6, 1, RecordKind.TOMBSTONE),
    ]


def test_gtids_name_the_completed_transactions_only() -> None:
    start = SourceOffset("mysql-bin.000001", 4, GtidSet.parse(f"{UUID}:1-5"))
    binlog = in_memory(T, start=start)
    binlog.write(
        transaction(insert("inventory.t", {"id": 1, "name": "a"}), gtid=f"{UUID}:6"),
        transaction(insert("inventory.t", {"id": 2, "name": "b"}), gtid=f"{UUID}:7"),
    )
    records = binlog.run()
    assert [offset_map(r)["gtids"] for r in records] == [f"{UUID}:1-5", f"{UUID}:1-6"]
    assert [r.value["source"]["gtid"] for r in data(records)] == [f"{UUID}:6", f"{UUID}:7"]
    assert [o.to_map()["gtids"] for o in binlog.recorder.advanced] == [f"{UUID}:1-6", f"{UUID}:1-7"]


def test_ddl_moves_the_restart_point_past_its_event() -> None:
    binlog = in_memory(T)
    binlog.write(ddl("ALTER TABLE t ADD COLUMN n INT", "inventory", gtid=f"{UUID}:1"))
    records = binlog.run()
    _, _, query_end = _position(binlog, 1)
    assert [r.kind for r in records] == [RecordKind.SCHEMA_CHANGE]
    assert binlog.stored_offset.pos == query_end
    assert str(binlog.stored_offset.gtids) == f"{UUID}:1"


# -- restarts ------------------------------------------------------------------------------------------
def _script(binlog: InMemoryBinlog) -> None:
    t = "inventory.t"
    binlog.write(
        transaction(insert(t, {"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"})),
        transaction(
            update(
                t,
                ({"id": 1, "name": "a"}, {"id": 1, "name": "A"}),
                ({"id": 2, "name": "b"}, {"id": 20, "name": "b"}),
            ),
            delete(t, {"id": 3, "name": "c"}),
            insert(t, {"id": 4, "name": "d"}),
        ),
        ddl("ALTER TABLE t ADD COLUMN n INT", "inventory"),
        transaction(insert(t, {"id": 5, "name": "e", "n": 1}, {"id": 6, "name": "f", "n": 2})),
        [Gtid(), Begin(), Query("COMMIT")],  # a transaction that touches no table
    )


def _identity(record: ChangeRecord) -> tuple[Any, ...]:
    value = record.value or {}
    source = value.get("source") or {}
    return (
        record.topic,
        repr(record.key),
        value.get("op") or value.get("status") or value.get("ddl"),
        repr(value.get("before")),
        repr(value.get("after")),
        repr(value.get("transaction")),
        source.get("pos"),
        source.get("row"),
    )


@pytest.mark.parametrize("metadata", ["false", "true"])
def test_a_restart_after_any_event_loses_and_repeats_nothing(metadata: str) -> None:
    properties = {"provide.transaction.metadata": metadata}
    straight = in_memory(T, properties=properties)
    _script(straight)
    expected = [_identity(r) for r in straight.run()]
    assert len(expected) >= 13
    for crash_after in range(1, len(straight.events)):
        binlog = in_memory(T, properties=properties)
        _script(binlog)
        binlog.run(stop_after=crash_after)
        binlog.run()
        got = [_identity(r) for r in binlog.records]
        assert got == expected, f"restart after event {crash_after} ({binlog.events[crash_after - 1].event})"


def test_each_record_of_a_key_change_carries_the_counters_of_its_own_event() -> None:
    # Debezium's EventDispatcher counts each record of a row change (TransactionMonitor.dataEvent)
    # before it builds that record with the offset context's current offset, and the tombstone is
    # a copy of the delete record (SourceRecord.newRecord): so the delete and its tombstone carry the
    # delete's data_collection_order, the create its own.
    binlog = in_memory(T, properties={"provide.transaction.metadata": "true"})
    binlog.write(
        transaction(
            insert("inventory.t", {"id": 1, "name": "a"}),
            update("inventory.t", ({"id": 1, "name": "a"}, {"id": 2, "name": "a"})),
        )
    )
    records = [r for r in binlog.run() if r.kind is not RecordKind.TRANSACTION]
    counter = "transaction_data_collection_order_inventory.t"
    assert [(r.value["op"] if r.value else "tombstone", offset_map(r)[counter]) for r in records] == [
        ("c", 1),
        ("d", 2),
        ("tombstone", 2),
        ("c", 3),
    ]
    assert [r.value["transaction"]["data_collection_order"] for r in data(records)] == [1, 2, 3]


def _restart_point(record: ChangeRecord) -> tuple[Any, ...]:
    offset = record.offset
    assert offset is not None
    return offset.file, offset.pos, offset.event, offset.row, str(offset.gtids)


def _rows_script(binlog: InMemoryBinlog) -> None:
    t = "inventory.t"
    binlog.write(
        transaction(insert(t, *({"id": i, "name": "n"} for i in range(1, 5)))),
        transaction(
            update(
                t,
                ({"id": 1, "name": "n"}, {"id": 1, "name": "m"}),
                ({"id": 2, "name": "n"}, {"id": 9, "name": "n"}),
            ),
            delete(t, {"id": 3, "name": "n"}, {"id": 4, "name": "n"}),
        ),
    )


@pytest.mark.parametrize("metadata", ["false", "true"])
def test_a_restart_from_any_row_s_offset_continues_with_the_next_row(metadata: str) -> None:
    # Digest 3b: a record's offset is the state after it ("row: k" = k rows of the event done), so a
    # connector restarted from it emits exactly what followed that row.
    properties = {"provide.transaction.metadata": metadata}
    straight = in_memory(T, properties=properties)
    _rows_script(straight)
    records = straight.run()
    expected = [_identity(r) for r in records]
    # The last record of each row change (the records of one row share the restart point).
    points = [_restart_point(r) for r in records]
    row_ends = [k for k in range(len(records) - 1) if points[k] != points[k + 1]]
    assert len(row_ends) >= 7
    for k in row_ends:
        binlog = in_memory(T, properties=properties, start=records[k].offset)
        _rows_script(binlog)
        assert [_identity(r) for r in binlog.run()] == expected[k + 1 :], f"restart from record {k}"
