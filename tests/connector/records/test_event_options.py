"""Event options on a real server: message.key.columns, column include/exclude lists,
skipped.operations (truncate included), tombstones.on.delete and include.query."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from connector.config import ConfigError, ConnectorConfig
from connector.engine import Engine
from connector.records.builder import EventBuilder, topic_name
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink
from tests.connector.sink_support import FailingSink


def make(
    server: MySQLServerHandle, db: str, data_dir: Path, *sinks: MemorySink, **extra: str
) -> tuple[Engine, MemorySink]:
    memory = sinks[0] if sinks else MemorySink()
    props = server.connector_properties(
        **{"topic.prefix": "eo", "database.include.list": db, "data.dir": str(data_dir), **extra}
    )
    return Engine(ConnectorConfig.from_mapping(props), sinks=[memory]), memory


def stream(
    server: MySQLServerHandle, db: str, data_dir: Path, statements: list[str], **extra: str
) -> list[ChangeRecord]:
    engine, memory = make(server, db, data_dir, **extra)
    engine.catch_up()
    server.execute(*statements, database=db)
    engine.catch_up()
    engine.close()
    return [r for r in memory.records if r.kind in (RecordKind.DATA, RecordKind.TOMBSTONE) and r.op != "r"]


def of(records: list[ChangeRecord], table: str) -> list[ChangeRecord]:
    return [r for r in records if r.table_id is not None and r.table_id.table == table]


def key_schema_fields(record: ChangeRecord) -> list[dict[str, Any]]:
    raw = record.key_bytes()
    assert raw is not None
    return orjson.loads(raw)["schema"]["fields"]


def value_fields(record: ChangeRecord) -> list[str]:
    raw = record.value_bytes()
    assert raw is not None
    envelope = orjson.loads(raw)["schema"]
    return [f["field"] for f in envelope["fields"][1]["fields"]]


def test_message_key_columns(mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE orders (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL, region CHAR(2) NOT NULL, qty INT)",
        "CREATE TABLE logbook (msg VARCHAR(20), at INT)",
        "CREATE TABLE items (id INT PRIMARY KEY, name TEXT)",
        database=db,
    )
    records = stream(
        mysql_server,
        db,
        tmp_path,
        [
            "INSERT INTO orders VALUES (1, 'A-1', 'EU', 5)",
            "INSERT INTO logbook VALUES ('hello', 1)",
            "INSERT INTO items VALUES (7, 'pen')",
            "UPDATE orders SET qty = 6 WHERE id = 1",  # same custom key: a plain update
            "UPDATE orders SET code = 'A-2' WHERE id = 1",  # custom key changes: delete + tombstone + create
        ],
        **{"message.key.columns": f"{db}.orders:region,code;(.*).logbook:msg;nomatch.x:y"},
    )
    orders = of(records, "orders")
    # Debezium's CustomKeyMapper: rule order (region, code), whatever the PK or column order
    assert [(r.kind, r.op, r.key) for r in orders] == [
        (RecordKind.DATA, "c", {"region": "EU", "code": "A-1"}),
        (RecordKind.DATA, "u", {"region": "EU", "code": "A-1"}),
        (RecordKind.DATA, "d", {"region": "EU", "code": "A-1"}),
        (RecordKind.TOMBSTONE, None, {"region": "EU", "code": "A-1"}),
        (RecordKind.DATA, "c", {"region": "EU", "code": "A-2"}),
    ]
    assert key_schema_fields(orders[0]) == [
        {"type": "string", "optional": False, "field": "region"},
        {"type": "string", "optional": False, "field": "code"},
    ]
    (logbook,) = of(records, "logbook")  # a table without primary key gets a key from the rule regex
    assert logbook.key == {"msg": "hello"}
    assert key_schema_fields(logbook) == [{"type": "string", "optional": True, "field": "msg"}]
    (item,) = of(records, "items")  # no rule matches: the primary key
    assert item.key == {"id": 7}


def test_key_keeps_columns_the_column_filter_removes(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    # Debezium builds the key from the table's key columns, without the column filter.
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE t (id INT, code VARCHAR(5) CHARACTER SET latin1, secret VARCHAR(10), "
        "note VARCHAR(10), PRIMARY KEY (id, code))",
        database=db,
    )
    records = stream(
        mysql_server,
        db,
        tmp_path,
        ["INSERT INTO t VALUES (1, _latin1 X'E981', 's', 'n')", "DELETE FROM t"],
        **{"column.exclude.list": f"{db}.t.(id|code|secret)"},
    )
    create, delete, tombstone = of(records, "t")
    assert create.after == {"note": "n"} and value_fields(create) == ["note"]
    # the excluded text key column is still decoded like the server does (0x81 is not cp1252)
    assert create.key == delete.key == tombstone.key == {"id": 1, "code": "é\x81"}
    assert key_schema_fields(create) == [
        {"type": "int32", "optional": False, "field": "id"},
        {"type": "string", "optional": False, "field": "code"},
    ]


@pytest.mark.parametrize(
    ("option", "pattern", "expected"),
    [
        ("column.include.list", r"{db}\.t\.(id|b)", {"id": 1, "b": "bee"}),
        ("column.exclude.list", r"{db}\.t\.b,.*\.C", {"id": 1, "a": "ay"}),  # case-insensitive, full match
        ("column.exclude.list", r"{db}\.t\.(a", None),
    ],
)
def test_column_include_and_exclude_lists(
    mysql_server: MySQLServerHandle,
    unique_db: str,
    tmp_path: Path,
    option: str,
    pattern: str,
    expected: dict[str, Any] | None,
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(5), b VARCHAR(5), c VARCHAR(5))", database=db
    )
    if expected is None:
        with pytest.raises(ConfigError) as exc:
            make(mysql_server, db, tmp_path, **{option: pattern.format(db=db)})
        assert exc.value.key == option and "regular expression" in str(exc.value)
        return
    records = stream(
        mysql_server,
        db,
        tmp_path,
        ["INSERT INTO t VALUES (1, 'ay', 'bee', 'cee')"],
        **{option: pattern.format(db=db)},
    )
    (event,) = of(records, "t")
    assert event.after == expected and value_fields(event) == list(expected)


@pytest.mark.parametrize(
    ("skipped", "ops"),
    [
        (None, ["c", "u", "d", "tomb"]),  # default 't': no truncate event
        ("none", ["c", "u", "d", "tomb", "t"]),
        ("c", ["u", "d", "tomb", "t"]),  # the list replaces the default, so truncates are emitted
        ("u,d", ["c", "t"]),
        ("c,u,d,t", []),
    ],
)
def test_skipped_operations(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, skipped: str | None, ops: list[str]
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "CREATE TABLE other (id INT)", database=db
    )
    extra = {"skipped.operations": skipped} if skipped is not None else {}
    records = stream(
        mysql_server,
        db,
        tmp_path,
        [
            "INSERT INTO t VALUES (1, 1)",
            "UPDATE t SET v = 2",
            "DELETE FROM t",
            "TRUNCATE TABLE t",
        ],
        **extra,
        **{"table.exclude.list": f"{db}.other"},
    )
    assert [r.op or "tomb" for r in of(records, "t")] == ops
    if "t" in ops:
        truncate = of(records, "t")[-1]
        # op t: no key, before/after null, the table in source; one event for the one table
        assert truncate.key is None and truncate.key_schema is None
        assert truncate.before is None and truncate.after is None
        assert truncate.source is not None and truncate.source["table"] == "t" and truncate.source["db"] == db
        assert {h.name for h in truncate.headers} >= {"__debezium.context.connectorLogicalName"}
        assert truncate.topic == f"eo.{db}.t"


def test_skipped_operations_rejects_unknown_values() -> None:
    with pytest.raises(ConfigError) as exc:
        ConnectorConfig.from_mapping(
            {
                "database.hostname": "h",
                "database.user": "u",
                "database.server.id": "1",
                "topic.prefix": "p",
                "skipped.operations": "c,x",
            }
        )
    assert exc.value.key == "skipped.operations" and "'x'" in str(exc.value)


def test_tombstones_on_delete_false(mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path) -> None:
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    records = stream(
        mysql_server,
        db,
        tmp_path,
        ["INSERT INTO t VALUES (1)", "UPDATE t SET id = 2", "DELETE FROM t"],
        **{"tombstones.on.delete": "false"},
    )
    assert [(r.kind, r.op, r.key) for r in of(records, "t")] == [
        (RecordKind.DATA, "c", {"id": 1}),
        (RecordKind.DATA, "d", {"id": 1}),
        (RecordKind.DATA, "c", {"id": 2}),
        (RecordKind.DATA, "d", {"id": 2}),
    ]


def test_include_query_carries_the_statement(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))", database=db)
    statements = [
        "INSERT INTO t VALUES (1, 'ü 😀'), (2, 'b') /* two rows */",
        "UPDATE t SET v = 'x' WHERE id = 2",
    ]
    with_query = stream(mysql_server, db, tmp_path / "on", statements, **{"include.query": "true"})
    mysql_server.execute("DELETE FROM t", database=db)
    without = stream(mysql_server, db, tmp_path / "off", statements)
    # MariaDB's ANNOTATE_ROWS events (binlog_annotate_row_events, on by default) carry the statement
    assert [r.source["query"] for r in of(with_query, "t") if r.source] == [
        statements[0],
        statements[0],
        statements[1],
    ]
    assert [r.source["query"] for r in of(without, "t") if r.source] == [None, None, None]


@pytest.mark.parametrize(("first", "second"), [("true", "false"), ("false", "true")])
def test_restart_with_include_query_toggled_loses_and_repeats_nothing(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, first: str, second: str
) -> None:
    # ANNOTATE_ROWS events only arrive when asked for, so they are not counted in the offset's
    # ``event``; a restart inside a transaction skips the same events either way.
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    failing = FailingSink()
    engine, _ = make(
        mysql_server,
        db,
        tmp_path,
        failing,
        **{"include.query": first, "max.batch.size": "1", "offset.flush.interval.ms": "0"},
    )
    engine.catch_up()
    failing.batches = 2
    with mysql_server.connect(db) as conn, conn.cursor() as cur:
        cur.execute("BEGIN")
        for i in range(1, 6):
            cur.execute(f"INSERT INTO t VALUES ({i})")
        cur.execute("COMMIT")
    with pytest.raises(ConnectionError):
        engine.catch_up()
    engine.close()
    stored = engine.offsets.load()
    assert stored is not None and stored.get("event"), "the failure must land inside the transaction"
    engine, memory = make(mysql_server, db, tmp_path, **{"include.query": second})
    engine.catch_up()
    engine.close()
    ids = [
        r.key["id"]
        for r in failing.records + memory.records
        if r.kind == RecordKind.DATA and r.op == "c" and r.key is not None
    ]
    assert ids == [1, 2, 3, 4, 5]


def test_message_key_columns_format_is_checked() -> None:
    config = ConnectorConfig.from_mapping(
        {
            "database.hostname": "h",
            "database.user": "u",
            "database.server.id": "1",
            "topic.prefix": "p",
            "message.key.columns": "db.t:a;db.u",
        }
    )
    with pytest.raises(ConfigError) as exc:
        EventBuilder(config)
    assert exc.value.key == "message.key.columns" and "'db.u'" in str(exc.value)


@pytest.mark.parametrize(
    ("table", "topic"),
    [
        # As Debezium 3.6.3 names them (tests/golden/debezium/fidelity/names.jsonl):
        ("dbz5743中文", "p.db.dbz5743__"),
        ("special\"[`]$'", "p.db.special______"),
        ("ümlaut-täble", "p.db._mlaut-t_ble"),
        ("plain_Name-1.x", "p.db.plain_Name-1.x"),
    ],
)
def test_topic_names_keep_only_what_kafka_accepts(table: str, topic: str) -> None:
    assert topic_name("p", ".", "db", table) == topic
