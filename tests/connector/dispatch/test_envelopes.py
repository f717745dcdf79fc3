"""Data change records of streamed rows, through the in-memory binlog: the envelope per operation,
the ``source`` block, key changes, tombstones, ``skipped.operations`` and headers (reference digest
3.0, 3a, 3g and 2.4)."""

from __future__ import annotations

from connector.testing.event_source import (
    Begin,
    Commit,
    Query,
    RowsQuery,
    delete,
    insert,
    transaction,
    update,
)
from connector.version import __version__
from mysql_cdc_base.records import RecordKind
from tests.connector.dispatch.stream_support import header_names, in_memory, shape

T = "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))"
UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
A = {"id": 1, "name": "a"}
B = {"id": 1, "name": "b"}
CONTEXT_HEADERS = [
    "__debezium.context.connectorLogicalName",
    "__debezium.context.taskId",
    "__debezium.context.connectorName",
    "__debezium.context.runId",
]


def test_create_update_delete_envelopes() -> None:
    binlog = in_memory(T)
    binlog.write(
        transaction(insert("inventory.t", A)),
        transaction(update("inventory.t", (A, B))),
        transaction(delete("inventory.t", B)),
    )
    records = binlog.run()
    assert shape(records) == ["c", "u", "d", "tombstone"]
    c, u, d, tombstone = records
    assert [list(r.value) for r in (c, u, d)] == [
        ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]
    ] * 3
    assert (c.value["before"], c.value["after"]) == (None, A)
    assert (u.value["before"], u.value["after"]) == (A, B)
    assert (d.value["before"], d.value["after"]) == (B, None)
    assert [r.key for r in records] == [{"id": 1}] * 4
    assert all(r.topic == "fake.inventory.t" and r.partition is None for r in records)
    # Tombstone: same topic, key and key schema, no value and no value schema, the delete's headers.
    assert tombstone.kind is RecordKind.TOMBSTONE
    assert (tombstone.value, tombstone.value_schema) == (None, None)
    assert tombstone.key_schema is d.key_schema and tombstone.headers == d.headers
    assert all(r.value["transaction"] is None for r in (c, u, d))  # provide.transaction.metadata off
    envelope = c.value_schema
    assert envelope is not None and (envelope.name, envelope.version) == ("fake.inventory.t.Envelope", 2)


def test_source_block_of_a_streamed_row() -> None:
    binlog = in_memory(T, properties={"include.query": "true"})
    sql = "INSERT INTO t VALUES (1, 'a'), (2, 'b')"
    binlog.write(
        transaction(
            RowsQuery(sql), insert("inventory.t", A, {"id": 2, "name": "b"}), gtid=f"{UUID}:9", thread=42
        )
    )
    records = binlog.run()
    rows_event = binlog.events[4]  # GTID, BEGIN, ROWS_QUERY, TABLE_MAP, WRITE_ROWS
    assert type(rows_event.event).__name__ == "WriteRowsEvent"
    ts_ms = rows_event.timestamp * 1000
    assert [r.value["source"] for r in records] == [
        {
            "version": __version__,
            "connector": "mysql",
            "name": "fake",
            "ts_ms": ts_ms,
            "snapshot": None,  # written as the schema default "false"
            "db": "inventory",
            "sequence": None,
            "ts_us": ts_ms * 1000,
            "ts_ns": ts_ms * 1_000_000,
            "table": "t",
            "server_id": 1,
            "gtid": f"{UUID}:9",
            "file": rows_event.file,
            "pos": rows_event.start_pos,
            "row": row,
            "thread": 42,
            "query": sql,
        }
        for row in (0, 1)
    ]


def test_query_only_with_include_query() -> None:
    binlog = in_memory(T)
    binlog.write(transaction(RowsQuery("INSERT INTO t VALUES (1, 'a')"), insert("inventory.t", A)))
    assert [r.value["source"]["query"] for r in binlog.run()] == [None]


def test_key_change_is_delete_tombstone_create() -> None:
    binlog = in_memory(T)
    moved = {"id": 2, "name": "a"}
    binlog.write(transaction(update("inventory.t", (A, moved))))
    records = binlog.run()
    assert shape(records) == ["d", "tombstone", "c"]
    d, tombstone, c = records
    assert (d.key, d.value["before"], d.value["after"]) == ({"id": 1}, A, None)
    assert (tombstone.key, tombstone.value) == ({"id": 1}, None)
    assert (c.key, c.value["before"], c.value["after"]) == ({"id": 2}, None, moved)
    # The key headers come before the context headers; their schema is the table's key schema.
    assert header_names(d) == ["__debezium.newkey", *CONTEXT_HEADERS]
    assert header_names(tombstone) == header_names(d)
    assert header_names(c) == ["__debezium.oldkey", *CONTEXT_HEADERS]
    assert (d.headers[0].value, d.headers[0].schema) == ({"id": 2}, d.key_schema)
    assert (c.headers[0].value, c.headers[0].schema) == ({"id": 1}, c.key_schema)
    assert d.value["source"]["row"] == c.value["source"]["row"] == 0


def test_no_tombstones_when_turned_off() -> None:
    binlog = in_memory(T, properties={"tombstones.on.delete": "false"})
    binlog.write(
        transaction(update("inventory.t", (A, {"id": 2, "name": "a"}))), transaction(delete("inventory.t", B))
    )
    assert shape(binlog.run()) == ["d", "c", "d"]


def test_skipped_operations() -> None:
    # Debezium registers no handler for the rows events of a skipped operation (digest 1.4), and its
    # dispatcher drops each record whose own operation is skipped (a key change is a delete and a
    # create; the tombstone goes with its delete).
    cases = {
        "c": ["u", "d", "tombstone", "d", "tombstone"],  # the key change keeps its delete half
        "u": ["c", "d", "tombstone"],  # an update that changes the key is an update too
        "d": ["c", "u", "c"],  # the key change keeps its create half only
        "c,d": ["u"],
    }
    for skipped, expected in cases.items():
        binlog = in_memory(T, properties={"skipped.operations": skipped})
        binlog.write(
            transaction(
                insert("inventory.t", A),
                update("inventory.t", (A, B)),
                update("inventory.t", (B, {"id": 2, "name": "b"})),
                delete("inventory.t", {"id": 2, "name": "b"}),
            )
        )
        assert shape(binlog.run()) == expected, skipped


def test_truncate_is_skipped_by_default() -> None:
    binlog = in_memory(T)
    binlog.write(Query("TRUNCATE TABLE t", "inventory"))
    assert shape(binlog.run()) == []


def test_truncate_event_without_key() -> None:
    binlog = in_memory(T, properties={"skipped.operations": "none"})
    binlog.write(Query("TRUNCATE TABLE t", "inventory"))
    records = binlog.run()
    assert shape(records) == ["t"]
    (t,) = records
    assert (t.key, t.key_schema, t.value["before"], t.value["after"]) == (None, None, None, None)
    assert t.topic == "fake.inventory.t"
    assert (t.value["source"]["table"], t.value["source"]["pos"]) == ("t", binlog.events[0].start_pos)


def test_table_without_primary_key_has_no_key() -> None:
    binlog = in_memory("CREATE TABLE log (n INT, msg VARCHAR(10))")
    binlog.write(
        Begin(),
        insert("inventory.log", {"n": 1, "msg": "x"}),
        delete("inventory.log", {"n": 1, "msg": "x"}),
        Commit(),
    )
    records = binlog.run()
    assert shape(records) == ["c", "d", "tombstone"]
    assert [(r.key, r.key_schema) for r in records] == [(None, None)] * 3


def test_message_key_columns_choose_the_key() -> None:
    binlog = in_memory(T, properties={"message.key.columns": "inventory.t:name"})
    binlog.write(transaction(insert("inventory.t", A)))
    (record,) = binlog.run()
    assert record.key == {"name": "a"}
    assert record.key_schema is not None and record.key_schema.name == "fake.inventory.t.Key"


def test_context_headers_only_when_enabled() -> None:
    on = in_memory(T)
    on.write(transaction(insert("inventory.t", A)))
    (record,) = on.run()
    assert header_names(record) == CONTEXT_HEADERS
    assert [h.value for h in record.headers[:3]] == ["fake", "0", "mysql"]
    off = in_memory(T, properties={"extended.headers.enabled": "false"})
    off.write(transaction(insert("inventory.t", A)))
    assert [header_names(r) for r in off.run()] == [[]]


def test_rows_of_one_event_share_its_position_and_count_their_index() -> None:
    # Digest 3a/3b: source.row is the row's 0-based index in its rows event, offset row the rows done;
    # the records of a key change are one row.
    binlog = in_memory(T)
    binlog.write(
        transaction(
            update(
                "inventory.t",
                (A, B),
                ({"id": 2, "name": "x"}, {"id": 3, "name": "x"}),
                (B, {"id": 1, "name": "c"}),
            )
        )
    )
    records = binlog.run()
    rows_event = binlog.events[3]
    assert [(r.value["op"] if r.value else "tombstone") for r in records] == ["u", "d", "tombstone", "c", "u"]
    assert [r.value["source"]["row"] for r in records if r.value] == [0, 1, 1, 2]
    assert {r.value["source"]["pos"] for r in records if r.value} == {rows_event.start_pos}
    assert [r.offset.row for r in records] == [1, 2, 2, 2, 3]  # type: ignore[union-attr]
