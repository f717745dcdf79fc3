"""The database-free fake: its events equal the connector's for the same rows, field for field."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import orjson
import pytest

from connector.embedded.events import EventWaitTimeout
from connector.records.transactions import java_hashmap_order
from connector.testing.fake import FakeConnector
from mysql_cdc_base.records import ChangeRecord, RecordKind, jsonl_line
from tests.kafka_support import consume_all

# One column per type family (and the odd member of each: unsigned, fractional seconds, negative
# TIME, NOT NULL defaults, non-UTF-8 text, padded BINARY, multi-bit BIT, SET, JSON).
EVERYTHING = """CREATE TABLE everything (
  id INT NOT NULL PRIMARY KEY,
  ti TINYINT, si SMALLINT UNSIGNED, mi MEDIUMINT, bi BIGINT UNSIGNED, bs BIGINT,
  dec1 DECIMAL(10,2), dec0 DECIMAL(5,0) NOT NULL DEFAULT 0, dec30 DECIMAL(40,30),
  f FLOAT, d DOUBLE, fs FLOAT(7,3),
  vc VARCHAR(20), ch CHAR(3), tx TEXT, latin VARCHAR(10) CHARACTER SET latin1,
  en ENUM('small','medium','large') NOT NULL DEFAULT 'small', st SET('a','b','c'),
  js JSON,
  bn BINARY(4), vb VARBINARY(10), bl BLOB,
  dte DATE, dtm DATETIME(3), dt0 DATETIME, ts TIMESTAMP(6) NULL, tm TIME, tm6 TIME(6), yr YEAR,
  bt BIT(5), b1 BIT(1), bo BOOLEAN
)"""
PLAIN = "CREATE TABLE plain (a INT, b VARCHAR(5))"

ROW1: dict[str, Any] = dict(
    id=1,
    ti=-5,
    si=65535,
    mi=-8388608,
    bi=18446744073709551615,
    bs=-9223372036854775808,
    dec1=decimal.Decimal("12345678.91"),
    dec0=7,
    dec30=decimal.Decimal("-1234567890.123456789012345678901234567891"),
    f=0.1,
    d=2.000000000000001,
    fs=1234.567,
    vc="héllo ✓",
    ch="ab",
    tx="long text",
    latin="café",
    en="medium",
    st={"a", "c"},
    js='{"k": [1, 2], "s": "x"}',
    bn=b"\x01\x02",
    vb=b"\xff\x00",
    bl=b"blob",
    dte=dt.date(2024, 2, 29),
    dtm=dt.datetime(2024, 1, 2, 3, 4, 5, 678000),
    dt0=dt.datetime(1999, 12, 31, 23, 59, 59),
    ts=dt.datetime(2024, 5, 6, 7, 8, 9, 123456),
    tm=dt.timedelta(hours=-30, minutes=-1),
    tm6=dt.timedelta(hours=1, microseconds=5),
    yr=2023,
    bt=0b10101,
    b1=True,
    bo=True,
)
ROW2: dict[str, Any] = {
    **ROW1,
    "id": 2,
    "vc": None,
    "dec1": decimal.Decimal("-0.05"),
    "st": set(),
    "bn": b"",
    "ts": None,
    "tm": dt.timedelta(0),
    "b1": False,
    "dte": dt.date(1, 1, 1),
}


def sql_value(value: Any) -> Any:
    """The same value as a pymysql query parameter."""
    if isinstance(value, set):
        return ",".join(sorted(value))
    if isinstance(value, bool):
        return int(value)
    return value


def insert_sql(table: str, rows: list[dict[str, Any]]) -> tuple[str, list[Any]]:
    columns = list(rows[0])
    one = "(" + ",".join(["%s"] * len(columns)) + ")"
    return (
        f"INSERT INTO {table} ({','.join(columns)}) VALUES {','.join([one] * len(rows))}",
        [sql_value(r[c]) for r in rows for c in columns],
    )


SERVER_DEPENDENT = ("ts_ms", "ts_us", "ts_ns", "file", "pos", "gtid", "server_id", "thread")


def normalized(record: ChangeRecord) -> dict[str, Any]:
    """The record as the JSON converter writes it, without what depends on the server and the clock."""
    line = orjson.loads(jsonl_line(record))
    payload = (line["value"] or {}).get("payload")
    if isinstance(payload, dict):
        for key in ("ts_ms", "ts_us", "ts_ns"):
            payload.pop(key, None)
        for key in SERVER_DEPENDENT:
            (payload.get("source") or {}).pop(key, None)
    line["headers"].pop("__debezium.context.runId")
    return dict(line)


def src(record: ChangeRecord) -> dict[str, Any]:
    source = record.source
    assert source is not None
    return source


def value_json(record: ChangeRecord) -> dict[str, Any]:
    raw = record.value_bytes()
    assert raw is not None
    return dict(orjson.loads(raw))


def differences(ours: Any, theirs: Any, path: str = "") -> list[str]:
    """Paths where two JSON values differ, for a readable failure message."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return [
            d
            for key in dict.fromkeys([*ours, *theirs])
            for d in differences(ours.get(key, "<missing>"), theirs.get(key, "<missing>"), f"{path}.{key}")
        ]
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [
            d
            for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
            for d in differences(a, b, f"{path}[{i}]")
        ]
    return [] if ours == theirs else [f"{path}: fake {ours!r} != connector {theirs!r}"]


def run_scenario_live(server, db: str) -> None:
    with server.connect(db) as conn, conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")  # TIMESTAMP parameters are UTC, as for the fake
        cur.execute(EVERYTHING)
        cur.execute(PLAIN)
        cur.execute(*insert_sql("everything", [ROW1, ROW2]))  # one rows event, source.row 0 and 1
        cur.execute("INSERT INTO everything (id, dec0) VALUES (3, 5)")  # defaults and nulls
        cur.execute("UPDATE everything SET vc = 'changed', dec1 = NULL, st = 'b', js = '[]' WHERE id = 1")
        cur.execute("UPDATE everything SET id = 10 WHERE id = 2")  # key change: d + tombstone + c
        cur.execute("BEGIN")
        cur.execute("INSERT INTO plain VALUES (1, 'x'), (NULL, NULL)")
        cur.execute("DELETE FROM everything WHERE id = 3")
        cur.execute("COMMIT")
        cur.execute("TRUNCATE TABLE plain")


def run_scenario_fake(fake: FakeConnector) -> None:
    fake.ddl(EVERYTHING)
    fake.ddl(PLAIN)
    fake.insert("everything", ROW1, ROW2)
    fake.insert("everything", {"id": 3, "dec0": 5})
    fake.update("everything", ROW1, {"vc": "changed", "dec1": None, "st": "b", "js": "[]"})
    fake.update("everything", ROW2, {"id": 10})
    with fake.transaction():
        fake.insert("plain", {"a": 1, "b": "x"}, (None, None))
        fake.delete("everything", {"id": 3, "dec0": 5})
    fake.truncate("plain")


@pytest.mark.parametrize(
    "modes",
    [
        {},
        {
            "decimal.handling.mode": "string",
            "time.precision.mode": "connect",
            "binary.handling.mode": "hex",
            "bigint.unsigned.handling.mode": "precise",
        },
        {
            "decimal.handling.mode": "double",
            "time.precision.mode": "adaptive",
            "binary.handling.mode": "base64",
            "tombstones.on.delete": "false",
            "provide.transaction.metadata": "false",
        },
    ],
    ids=["defaults", "string-connect-hex-precise", "double-adaptive-base64-no-tombstones"],
)
def test_fake_events_equal_the_connectors(cdc_mysql, cdc_database, cdc_engine_factory, modes):
    props = {**modes, "skipped.operations": "none"}  # so the truncate event is emitted too
    engine = cdc_engine_factory(props)
    engine.drain()  # start-up schema events: the fake's tables "exist" only from ddl() on
    run_scenario_live(cdc_mysql, cdc_database)
    live = engine.drain()

    fake = FakeConnector(topic_prefix="cdc", database=cdc_database, flavor=cdc_mysql.flavor, properties=props)
    run_scenario_fake(fake)

    kinds = [(r.kind.value, r.op) for r in live]
    assert kinds == [(r.kind.value, r.op) for r in fake.events]
    expected_data = 2 + 1 + 1 + 2 + 2 + 1 + 1  # inserts, defaults row, update, key change, plain, delete, t
    assert sum(k == "data" for k, _ in kinds) == expected_data
    for index, (ours, theirs) in enumerate(zip(fake.events, live, strict=True)):
        diff = differences(normalized(ours), normalized(theirs))
        assert not diff, f"record #{index} ({theirs.kind}, {theirs.op}) differs:\n" + "\n".join(diff)
    # what the normalisation removed is still there, and deterministic in the fake
    assert all(r.source is not None and src(r)["file"] == "mysql-bin.000001" for r in fake.data_events())


def test_python_values_match_what_the_snapshot_reads(cdc_mysql, cdc_database):
    """The fake's input form (Python values as stored) converts like the server text a snapshot
    SELECT returns (SNAPSHOT_CONVERSIONS, UTC session) - the ``r`` event path."""
    with cdc_mysql.connect(cdc_database) as conn, conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        cur.execute(EVERYTHING)
        cur.execute(*insert_sql("everything", [ROW1, ROW2]))
    snapshot = cdc_mysql.snapshot_connect(cdc_database)
    with snapshot, snapshot.cursor() as cur:
        cur.execute("SELECT * FROM everything ORDER BY id")
        server_rows = list(cur.fetchall())
    fake = FakeConnector(EVERYTHING, database=cdc_database, flavor=cdc_mysql.flavor)
    ts = fake.table_schema("everything")
    assert [ts.value_from_snapshot(row) for row in server_rows] == [
        fake.row_image("everything", ROW1),
        fake.row_image("everything", ROW2),
    ]


def test_equivalent_input_forms_give_the_same_event():
    fake = FakeConnector(EVERYTHING)
    natural = fake.row_image("everything", ROW1)
    as_text = {
        **ROW1,
        "dec1": "12345678.91",
        "dec0": "7",
        "st": "a,c",
        "dte": "2024-02-29",
        "dtm": "2024-01-02 03:04:05.678",
        "tm": "-30:01:00",
        "tm6": dt.time(1, 0, 0, 5),
        "ts": dt.datetime(2024, 5, 6, 9, 8, 9, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2))),
        "bt": bytes([0b10101]),
        "b1": 1,
        "js": '{"k": [1, 2], "s": "x"}',
    }
    assert fake.row_image("everything", as_text) == natural
    assert fake.row_image("everything", [ROW1[c] for c in fake.table("everything").column_names]) == natural
    assert fake.row_image("everything", {**ROW1, "dec1": 12345678.905})["dec1"] == natural["dec1"]  # half-up
    assert fake.row_image("everything", {**ROW1, "js": {"k": [1, 2], "s": "x"}}) == natural


def test_row_errors_name_the_problem():
    fake = FakeConnector(
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, n VARCHAR(5) NOT NULL, "
        "at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, q INT DEFAULT 4)"
    )
    with pytest.raises(KeyError, match=r"no column\(s\) 'nme'; columns: id, n, at, q"):
        fake.insert("t", {"id": 1, "nme": "x"})
    with pytest.raises(ValueError, match=r"inventory.t.id: give its value explicitly"):
        fake.insert("t", {"n": "x"})
    with pytest.raises(ValueError, match=r"inventory.t.at: give its value explicitly"):
        fake.insert("t", {"id": 1, "n": "x"})
    with pytest.raises(ValueError, match=r"inventory.t.n is NOT NULL without a default"):
        fake.insert("t", {"id": 1, "at": dt.datetime(2024, 1, 1)})
    with pytest.raises(ValueError, match=r"has 4 columns \(id, n, at, q\); got 2 values"):
        fake.insert("t", (1, "x"))
    with pytest.raises(KeyError, match=r"table inventory.nope is not defined \(known tables: inventory.t\)"):
        fake.insert("nope", {"id": 1})
    (record,) = fake.insert("t", {"id": 1, "n": "x", "at": dt.datetime(2024, 1, 1)})
    assert record.after == {"id": 1, "n": "x", "at": 1704067200000, "q": 4}  # omitted q: its default
    assert fake.events == [record]  # failed calls emitted nothing


def test_deterministic_sources_positions_and_overrides():
    def build() -> FakeConnector:
        fake = FakeConnector(
            "CREATE TABLE t (id INT PRIMARY KEY, v INT)", topic_prefix="app", database="shop"
        )
        fake.insert("t", {"id": 1, "v": 1}, {"id": 2, "v": 2})
        fake.update("t", {"id": 1, "v": 1}, {"v": 5})
        fake.delete(
            "t", {"id": 2, "v": 2}, source={"ts_ms": 1_800_000_000_000, "thread": 77, "query": "DELETE"}
        )
        return fake

    first, second = build(), build()
    assert [jsonl_line(r) for r in first.events] == [jsonl_line(r) for r in second.events]
    c1, c2, u, d, tombstone = first.events
    assert tombstone.kind == RecordKind.TOMBSTONE
    assert c1.topic == "app.shop.t" and c1.key == {"id": 1}
    assert (src(c1)["file"], src(c1)["row"], src(c2)["row"]) == ("mysql-bin.000001", 0, 1)
    assert src(c1)["pos"] == src(c2)["pos"] < src(u)["pos"] < src(d)["pos"]
    assert [src(r)["gtid"] for r in (c1, c2, u, d)] == [
        "3e11fa47-71ca-11e1-9e33-c80aa9429562:1",
        "3e11fa47-71ca-11e1-9e33-c80aa9429562:1",
        "3e11fa47-71ca-11e1-9e33-c80aa9429562:2",
        "3e11fa47-71ca-11e1-9e33-c80aa9429562:3",
    ]
    assert [src(r)["ts_ms"] for r in (c1, u, d)] == [1_700_000_000_000, 1_700_000_001_000, 1_800_000_000_000]
    assert (src(d)["thread"], src(d)["query"]) == (77, "DELETE")
    assert u.value["ts_ms"] == src(u)["ts_ms"] and u.value["ts_ns"] == src(u)["ts_ms"] * 1_000_000
    assert c2.offset == {
        "ts_sec": 1_700_000_000,
        "file": "mysql-bin.000001",
        "pos": 4,
        "event": 2,
        "row": 2,
        "server_id": 1,
    }
    mariadb = FakeConnector("CREATE TABLE t (id INT PRIMARY KEY)", flavor="mariadb", server_id=9)
    assert src(mariadb.insert("t", {"id": 1})[0])["gtid"] == "0-9-1"
    assert (
        src(FakeConnector("CREATE TABLE t (id INT PRIMARY KEY)", gtids=False).insert("t", {"id": 1})[0])[
            "gtid"
        ]
        is None
    )
    with pytest.raises(KeyError, match="unknown source field"):
        first.insert("t", {"id": 3, "v": 3}, source={"position": 5})


def test_snapshot_markers_follow_debezium():
    fake = FakeConnector(
        [
            "CREATE TABLE a (id INT PRIMARY KEY)",
            "CREATE TABLE b (id INT PRIMARY KEY)",
            "CREATE TABLE c (id INT PRIMARY KEY)",
        ]
    )
    records = fake.snapshot({"a": [{"id": 1}, {"id": 2}, {"id": 3}], "b": [{"id": 1}], "c": []})
    assert [(str(r.table_id), r.op, src(r)["snapshot"]) for r in records] == [
        ("inventory.a", "r", "first"),
        ("inventory.a", "r", "true"),
        ("inventory.a", "r", "last_in_data_collection"),
        ("inventory.b", "r", "last"),
    ]  # the last table is empty: the very last record is "last"
    assert all(src(r)["server_id"] == 0 and src(r)["gtid"] is None and src(r)["row"] == 0 for r in records)
    assert [dict(r.offset or {}).get("snapshot") for r in records] == ["INITIAL", "INITIAL", "INITIAL", None]
    two = FakeConnector(["CREATE TABLE a (id INT PRIMARY KEY)", "CREATE TABLE b (id INT PRIMARY KEY)"])
    markers = [src(r)["snapshot"] for r in two.snapshot([("a", [{"id": 1}]), ("b", [{"id": 1}, {"id": 2}])])]
    assert markers == ["first", "first_in_data_collection", "last"]  # "first" beats the table-level marker
    # the JSON converter writes snapshot=false for streaming records (null + schema default)
    (created,) = two.insert("a", {"id": 5})
    assert value_json(created)["payload"]["source"]["snapshot"] == "false"


def test_transaction_metadata_records():
    fake = FakeConnector(
        ["CREATE TABLE a (id INT PRIMARY KEY)", "CREATE TABLE b (id INT PRIMARY KEY)"],
        topic_prefix="shop",
        properties={"provide.transaction.metadata": "true"},
    )
    with fake.transaction():
        fake.insert("a", {"id": 1}, {"id": 2})
        fake.insert("b", {"id": 1})
        fake.delete("a", {"id": 1})
    begin, *data, end = [r for r in fake.events if r.kind != RecordKind.TOMBSTONE]
    txn_id = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1"
    assert begin.topic == end.topic == "shop.transaction"
    assert begin.kind == end.kind == RecordKind.TRANSACTION and begin.key == {"id": txn_id}
    assert value_json(begin)["payload"] == {
        "status": "BEGIN",
        "id": txn_id,
        "event_count": None,
        "data_collections": None,
        "ts_ms": 1_700_000_000_000,
    }
    assert [r.value["transaction"] for r in data] == [
        {"id": txn_id, "total_order": 1, "data_collection_order": 1},
        {"id": txn_id, "total_order": 2, "data_collection_order": 2},
        {"id": txn_id, "total_order": 3, "data_collection_order": 1},
        {"id": txn_id, "total_order": 4, "data_collection_order": 3},
    ]
    end_value = value_json(end)
    assert end_value["payload"]["event_count"] == 4
    assert {x["data_collection"]: x["event_count"] for x in end_value["payload"]["data_collections"]} == {
        "inventory.a": 3,
        "inventory.b": 1,
    }
    assert end_value["schema"]["name"] == "io.debezium.connector.common.TransactionMetadataValue"
    # without the property: no metadata records, null transaction blocks
    plain = FakeConnector("CREATE TABLE a (id INT PRIMARY KEY)")
    with plain.transaction():
        plain.insert("a", {"id": 1})
    assert [r.value["transaction"] for r in plain.events] == [None]


def test_java_hashmap_order():
    # String.hashCode of one character is its code; "Aa" and "BB" collide (both 2112).
    assert java_hashmap_order(["c", "b", "a"]) == ["a", "b", "c"]
    assert java_hashmap_order(["BB", "Aa"]) == ["BB", "Aa"] and java_hashmap_order(["Aa", "BB"]) == [
        "Aa",
        "BB",
    ]
    # 'a' (97) and 'q' (113) share bucket 1 of 16; past 12 keys the table doubles and 'q' moves to 17.
    small = ["q", "a", *"bcdefghij"]
    assert java_hashmap_order(small)[:3] == ["q", "a", "b"]
    big = ["q", "a", *"bcdefghijklm"]
    assert java_hashmap_order(big).index("q") == len(big) - 1


def test_waiting_helpers_work_on_the_fake():
    fake = FakeConnector("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    fake.insert("t", {"id": 1, "v": 1})
    mark = fake.mark()
    fake.update("t", {"id": 1, "v": 1}, {"v": 2})
    assert fake.wait_for(table="t", op="u", where=lambda row: row["v"] == 2).after == {"id": 1, "v": 2}
    assert [r.op for r in fake.events_since(mark)] == ["u"]
    assert [r.op for r in fake.drain()] == ["c", "u"] and fake.drain() == []
    with pytest.raises(EventWaitTimeout, match=r"(?s)op='d'.*inventory.t  op=u"):
        fake.wait_for(table="t", op="d", timeout=0.1)


def test_publishes_to_jsonl_and_kafka(tmp_path: Path, kafka_broker):
    prefix = kafka_broker.unique("fake")
    out = tmp_path / "fake.jsonl"
    with FakeConnector("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5))", topic_prefix=prefix) as fake:
        fake.publish_to_jsonl(out)
        fake.publish_to_kafka(str(kafka_broker))
        fake.insert("t", {"id": 1, "v": "a"})
        fake.delete("t", {"id": 1, "v": "a"})
        records = fake.events
    assert out.read_bytes().splitlines() == [jsonl_line(r) for r in records]
    consumed = consume_all(str(kafka_broker), [f"{prefix}.inventory.t"])
    assert [(m.key, m.value) for m in consumed] == [(r.key_bytes(), r.value_bytes()) for r in records]
    assert consumed[-1].value is None  # the tombstone
    assert dict(consumed[0].headers)["__debezium.context.connectorLogicalName"] == prefix.encode()


def test_empty_set_equals_the_connectors(cdc_mysql, cdc_database, cdc_connector):
    # mysql-replication yields None for an empty SET; streaming restores '' (converters.restore_empty_sets).
    table = "CREATE TABLE s (id INT PRIMARY KEY, st SET('a','b') NOT NULL, sn SET('a','b'))"
    cdc_connector.drain()
    cdc_mysql.execute(table, "INSERT INTO s VALUES (1, '', '')", database=cdc_database)
    live = [r for r in cdc_connector.drain() if r.kind == RecordKind.DATA]
    fake = FakeConnector(topic_prefix="cdc", database=cdc_database, flavor=cdc_mysql.flavor)
    fake.ddl(table)
    (ours,) = fake.insert("s", {"id": 1, "st": set(), "sn": set()})
    assert ours.after == {"id": 1, "st": "", "sn": ""}
    assert [normalized(ours)] == [normalized(r) for r in live]


def test_fake_incremental_snapshot_events_equal_the_connectors(cdc_mysql, cdc_database, cdc_engine_factory):
    """The fake's incremental_snapshot() gives the records a real signalled incremental snapshot
    does, for the same rows (the rows a real connector reads are passed in)."""
    db = cdc_database
    ddl = "CREATE TABLE inv (id INT PRIMARY KEY, sku VARCHAR(20), price DECIMAL(8,2), seen DATETIME(3))"
    cdc_mysql.execute(ddl, database=db)
    rows = [
        {
            "id": 1,
            "sku": "a-1",
            "price": decimal.Decimal("1.50"),
            "seen": dt.datetime(2026, 1, 2, 3, 4, 5, 6000),
        },
        {"id": 2, "sku": "b-2", "price": None, "seen": None},
    ]
    cdc_mysql.execute(
        "INSERT INTO inv VALUES (1, 'a-1', 1.50, '2026-01-02 03:04:05.006'), (2, 'b-2', NULL, NULL)",
        database=db,
    )
    engine = cdc_engine_factory(
        {"snapshot.mode": "no_data", "read.only": "true", "heartbeat.interval.ms": "100"}
    )
    engine.drain()
    engine.signal("execute-snapshot", {"data-collections": [f"{db}.inv"]})
    engine.wait_for(table="inv", op="r", where=lambda row: row["id"] == 2, timeout=30)
    live = [r for r in engine.data_events("inv")]

    fake = FakeConnector(ddl, topic_prefix="cdc", database=db, flavor=cdc_mysql.flavor)
    ours = fake.incremental_snapshot("inv", *rows)
    assert len(ours) == len(live) == 2
    for mine, theirs in zip(ours, live, strict=True):
        diff = differences(normalized(mine), normalized(theirs))
        assert not diff, "\n".join(diff)
        assert src(mine)["snapshot"] == "incremental"
        assert mine.offset is not None and mine.offset["snapshot"] == "INCREMENTAL"
