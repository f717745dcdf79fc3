"""Transaction metadata of the stream (``provide.transaction.metadata``; reference digest 1.11, 3e),
through the in-memory binlog. The exact records of a recorded workload are compared with Debezium in
``test_golden_in_memory``; these cover ids, times, topics and what does not count."""

from __future__ import annotations

from connector.testing.event_source import Begin, Commit, Idle, ddl, delete, insert, transaction, update
from mysql_cdc_base.records import RecordKind
from tests.connector.dispatch.stream_support import data, in_memory, of_kind, shape

T = "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))"
OTHER = "CREATE TABLE other (id INT PRIMARY KEY)"
UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
METADATA = {"provide.transaction.metadata": "true"}


def test_begin_and_end_of_a_gtid_transaction() -> None:
    binlog = in_memory(T, properties=METADATA)
    gtid = f"{UUID}:5"
    binlog.write(transaction(insert("inventory.t", {"id": 1, "name": "a"}), Idle(3000), gtid=gtid))
    records = binlog.run()
    assert shape(records) == ["BEGIN", "c", "END"]
    begin, row, end = records
    begin_event = next(e for e in binlog.events if type(e.event).__name__ == "QueryEvent")
    xid_event = next(e for e in binlog.events if type(e.event).__name__ == "XidEvent")
    assert xid_event.timestamp == begin_event.timestamp + 3
    assert begin.value == {
        "status": "BEGIN",
        "id": gtid,
        "event_count": None,
        "data_collections": None,
        "ts_ms": begin_event.timestamp * 1000,
    }
    assert end.value == {
        "status": "END",
        "id": gtid,
        "event_count": 1,
        "data_collections": [{"data_collection": "inventory.t", "event_count": 1}],
        "ts_ms": xid_event.timestamp * 1000,
    }
    assert row.value["transaction"] == {"id": gtid, "total_order": 1, "data_collection_order": 1}
    for record in (begin, end):
        assert (record.topic, record.key, record.partition, record.headers) == (
            "fake.transaction",
            {"id": gtid},
            None,
            (),
        )
        assert (
            record.key_schema is not None
            and record.key_schema.name == "io.debezium.connector.common.TransactionMetadataKey"
        )
        assert record.value_schema is not None
        assert record.value_schema.name == "io.debezium.connector.common.TransactionMetadataValue"


def test_without_gtids_the_id_is_the_begin_position() -> None:
    binlog = in_memory(T, properties=METADATA)
    binlog.write(Begin(), insert("inventory.t", {"id": 1, "name": "a"}), Commit())
    begin_event = binlog.events[0]
    expected = f"file={begin_event.file},pos={begin_event.start_pos}"
    records = binlog.run()
    assert [r.key["id"] for r in of_kind(records, RecordKind.TRANSACTION)] == [expected, expected]
    assert data(records)[0].value["transaction"]["id"] == expected


def test_a_transaction_without_captured_rows_still_has_begin_and_end() -> None:
    binlog = in_memory(T, OTHER, properties={**METADATA, "table.include.list": "inventory.t"})
    binlog.write(transaction(insert("inventory.other", {"id": 1})))
    records = binlog.run()
    assert shape(records) == ["BEGIN", "END"]
    assert (records[1].value["event_count"], records[1].value["data_collections"]) == (0, [])


def test_only_emitted_data_events_count() -> None:
    # Rows of a table that is not captured, tombstones and skipped operations are no data events.
    binlog = in_memory(
        T, OTHER, properties={**METADATA, "table.include.list": "inventory.t", "skipped.operations": "u"}
    )

    binlog.write(
        transaction(
            insert("inventory.other", {"id": 1}),
            insert("inventory.t", {"id": 1, "name": "a"}),
            update("inventory.t", ({"id": 1, "name": "a"}, {"id": 1, "name": "b"})),
            delete("inventory.t", {"id": 1, "name": "b"}),
            insert("inventory.t", {"id": 2, "name": "c"}),
        )
    )
    records = binlog.run()
    assert shape(records) == ["BEGIN", "c", "d", "tombstone", "c", "END"]
    assert [
        (r.value["transaction"]["total_order"], r.value["transaction"]["data_collection_order"])
        for r in data(records)
    ] == [
        (1, 1),
        (2, 2),
        (3, 3),
    ]
    assert records[-1].value["event_count"] == 3


def test_ddl_has_no_begin_or_end() -> None:
    binlog = in_memory(T, properties=METADATA)
    binlog.write(ddl("ALTER TABLE t ADD COLUMN n INT", "inventory"))
    assert shape(binlog.run()) == ["schema"]


def test_transaction_topic_name() -> None:
    binlog = in_memory(T, properties={**METADATA, "topic.transaction": "txn"})
    binlog.write(transaction(insert("inventory.t", {"id": 1, "name": "a"})))
    assert [r.topic for r in of_kind(binlog.run(), RecordKind.TRANSACTION)] == ["fake.txn", "fake.txn"]
