"""``replay-binlog`` end to end: every sample binlog a real MySQL 8.0-9.6 server wrote runs through
the file source into jsonl; compressed transactions give what their uncompressed twins give; a
second run resumes; a MariaDB server's own binlog file replays into the records streaming gave."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import orjson
import pytest

from connector.binlog.files import read_file_events
from connector.binlog.guard import UnsafeEventError
from connector.cli import main
from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.replay import BinlogReplay, UnknownTableStructureError
from connector.testing.local_server import LocalMySQLServer, MySQLServerHandle
from tests.connector.binlog_file_support import (
    PREFIX,
    comparable,
    data_records,
    jsonl,
    replay,
    replay_config,
    sample,
    uncompressed_twin,
    without_processing_time,
    write_history,
)

# Tables whose files hold no CREATE TABLE and whose table maps carry MINIMAL metadata: the
# structure comes from a schema history file (as a server-backed connector would have written it).
# Column types follow the table maps; names and ENUM/SET members are ours (the files do not say).
HISTORIES: dict[str, list[tuple[str, str, str]]] = {
    "rust_mysql_common/transaction_compression.000001": [
        ("transaction_compression.000001", "test", "CREATE TABLE test.tb1 (a INT)"),
    ],
    "rust_mysql_common/minimal_row_metadata.000001": [
        (
            "minimal_row_metadata.000001",
            "noria",
            "CREATE TABLE noria.t1 (id INT NOT NULL, b BLOB, c CHAR(2) COLLATE utf8mb4_0900_ai_ci, "
            "d INT, u INT UNSIGNED)",
        ),
    ],
    "rust_mysql_common/time_issue.000001": [
        ("time_issue.000001", "noria", "CREATE TABLE noria.t (t TIME)"),
    ],
    # Table map: INT, INT, DECIMAL(10,2) (SIGNEDNESS only).
    "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001": [
        (
            "binlog_transaction_with_GTID_TAG.000001",
            "test",
            "CREATE TABLE test.orders (id INT, qty INT, price DECIMAL(10,2))",
        ),
    ],
    "osheroff/mysql-bin.compressed": [
        (
            "mysql-bin.compressed",
            "demo",
            "CREATE TABLE demo.movies (id INT NOT NULL, title VARCHAR(256) NOT NULL, "
            "year INT NOT NULL, country VARCHAR(256) NOT NULL, genre VARCHAR(256) NOT NULL, "
            "actors VARCHAR(1024) NOT NULL, director VARCHAR(512) NOT NULL, "
            "composer VARCHAR(256) NOT NULL, screenwriter VARCHAR(256) NOT NULL, "
            "cinematographer VARCHAR(256) NOT NULL, company VARCHAR(256) NOT NULL, PRIMARY KEY (id))",
        ),
    ],
    "apecloud/mysql-bin.000057": [
        (
            "mysql-bin.000057",
            "a",
            "CREATE TABLE a.test_table_3 (product_id INT NOT NULL, product_item VARCHAR(255) "
            "CHARACTER SET utf8mb3, d1 DATE, n1 INT, description TEXT CHARACTER SET utf8mb3, "
            "ts1 TIMESTAMP NULL, enum_field ENUM('tiny','small','medium','large'), "
            "set_field SET('a','b','c','d'), bin_field BINARY(3), js JSON, "
            "product_item_2 VARCHAR(255) CHARACTER SET utf8mb3, d2 DATE, d3 DATE, n2 INT, "
            "description_3 TEXT CHARACTER SET utf8mb3, ts2 TIMESTAMP NULL, d4 DATE, n3 INT, "
            "description_4 TEXT CHARACTER SET utf8mb3, ts3 TIMESTAMP NULL, PRIMARY KEY (product_id))",
        ),
    ],
}

# Every sample file, with the settings its contents need.
SAMPLE_FILES = [
    "apecloud/mysql-bin.000057",
    "osheroff/mysql-bin.compressed",
    "percona-operator/binlog.000001",
    "percona-operator/binlog.000002",
    "rust-us/8.0_02_query.binlog.000001",
    "rust-us/8.0_02_query_bigger.binlog.000733",
    "rust-us/8.0_19_30_table_map_write_rows.binlog.000018",
    "rust-us/8.0_31_update_rows_v2.binlog.000001",
    "rust-us/8.0_32_delete_rows_v2.binlog.000001",
    "rust_mysql_common/binlog-invisible-columns.000001",
    "rust_mysql_common/binlog_transaction_previous_GTID_no_tag.000001",
    "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001",
    "rust_mysql_common/json-opaque.binlog",
    "rust_mysql_common/mysql-enum-string-set.000001",
    "rust_mysql_common/mysql_type_bit.000001",
    "rust_mysql_common/time_issue.000001",
    "rust_mysql_common/transaction_compression.000001",
    "rust_mysql_common/vector.binlog",
    "zongji/zongji-mysql84-fullmeta-head.000003.bin",
    "zongji/zongji-mysql84-head.000002.bin",
]
# Written with binlog_row_image=NOBLOB (an update's image leaves BLOB/TEXT columns out) or MINIMAL:
# the connector stops there unless told to pass such events (tested below).
PARTIAL_IMAGE_FILES = [
    "zongji/zongji-mysql84-part.000001.bin",
    "zongji/zongji-mysql84-fullmeta-part.000002.bin",
    "rust_mysql_common/minimal_row_metadata.000001",
]
COMPRESSED_FILES = [
    "rust_mysql_common/transaction_compression.000001",
    "osheroff/mysql-bin.compressed",
    "apecloud/mysql-bin.000057",
]


def replay_sample(name: str, data_dir: Path, **extra: str) -> list[dict]:
    return replay_files([sample(name)], name, data_dir, **extra)


def replay_files(files: list[Path], name: str, data_dir: Path, **extra: str) -> list[dict]:
    if name in HISTORIES:
        history = data_dir / "schema-history.jsonl"
        if not history.exists():
            write_history(history, HISTORIES[name])
        extra.setdefault("schema.history.internal.file.filename", str(history))
    return replay(files, data_dir, **extra)


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_every_sample_file_replays_into_jsonl(tmp_path, name):
    lines = replay_sample(name, tmp_path, **{"provide.transaction.metadata": "true"})
    events = list(read_file_events(sample(name)))
    rows_events = [e for e in events if e.event_type in (0x1E, 0x1F, 0x20)]
    if rows_events:
        assert data_records(lines), name
    stored = (
        orjson.loads((tmp_path / "offsets.json").read_bytes()) if (tmp_path / "offsets.json").exists() else {}
    )
    for offset in stored.values():
        assert offset["file"] == sample(name).name


@pytest.mark.parametrize("name", PARTIAL_IMAGE_FILES)
def test_partial_images_stop_and_pass_with_warn(tmp_path, name, caplog):
    with pytest.raises(UnsafeEventError, match=r"binlog_row_image=FULL") as caught:
        replay_sample(name, tmp_path / "fail")
    with caplog.at_level(logging.WARNING):
        replay_sample(name, tmp_path / "warn", **{"event.deserialization.failure.handling.mode": "warn"})
    where = str(caught.value).split("binlog event at ")[1].split(" ")[0]
    assert any(where in r.getMessage() and "binlog_row_image=FULL" in r.getMessage() for r in caplog.records)


def test_partial_json_stops_at_its_event_and_passes_with_warn(tmp_path, caplog):
    name = "rust_mysql_common/json.binlog.000001"
    partial = next(e for e in read_file_events(sample(name)) if e.event_type == 0x27)
    with pytest.raises(UnsafeEventError) as caught:
        replay_sample(name, tmp_path / "fail")
    message = str(caught.value)
    assert f"json.binlog.000001:{partial.offset} " in message
    assert "binlog_row_value_options" in message
    stored = orjson.loads((tmp_path / "fail" / "offsets.json").read_bytes())
    assert all(o["pos"] <= partial.offset for o in stored.values())  # nothing past it
    with caplog.at_level(logging.WARNING):
        lines = replay_sample(
            name, tmp_path / "warn", **{"event.deserialization.failure.handling.mode": "warn"}
        )
    assert any(f"json.binlog.000001:{partial.offset}" in r.getMessage() for r in caplog.records)
    assert data_records(lines, "t")


@pytest.mark.parametrize("name", COMPRESSED_FILES)
def test_compressed_transactions_give_what_their_uncompressed_twin_gives(tmp_path, name):
    twin = uncompressed_twin(sample(name), tmp_path / "twin" / sample(name).name)
    assert not any(e.event_type == 0x28 for e in read_file_events(twin))
    settings = {"provide.transaction.metadata": "true", "include.query": "true"}
    compressed = replay_files([sample(name)], name, tmp_path / "compressed", **settings)
    uncompressed = replay_files([twin], name, tmp_path / "uncompressed", **settings)
    assert data_records(compressed)
    assert comparable(compressed) == comparable(uncompressed)
    transaction_ends = [
        line["value"]["payload"]
        for line in compressed
        if line["topic"] == f"{PREFIX}.transaction" and line["value"]["payload"]["status"] == "END"
    ]
    assert transaction_ends and all(end["event_count"] >= 1 for end in transaction_ends)


def test_compressed_rows_report_the_payload_position_and_time(tmp_path):
    name = "osheroff/mysql-bin.compressed"
    payload = next(e for e in read_file_events(sample(name)) if e.event_type == 0x28)
    (update,) = data_records(replay_sample(name, tmp_path), "movies")
    assert update["op"] == "u" and update["source"]["pos"] == payload.offset
    assert update["source"]["ts_ms"] == payload.timestamp * 1000
    # What the row holds: the first movie (its values are in the event itself).
    assert update["before"]["id"] == 1 and update["before"]["title"] == "Once Upon a Time in the West"
    assert update["before"]["year"] == 1968 and update["after"]["id"] == 1


def test_row_values_match_the_statements_in_the_file(tmp_path):
    # apecloud: ROWS_QUERY events carry the statements; the rows inside the payloads must say the same.
    lines = replay_sample("apecloud/mysql-bin.000057", tmp_path, **{"include.query": "true"})
    (insert_b,) = data_records(lines, "b")
    assert insert_b["after"] == {"id": 1} and insert_b["source"]["query"] == "insert into b values(1)"
    update, insert = data_records(lines, "test_table_3")
    assert update["op"] == "u" and update["after"]["product_id"] == 55555
    assert update["after"]["product_item_2"] == "product_3_value"
    assert update["source"]["query"].startswith("update test_table_3 set enum_field='large'")
    assert insert["op"] == "c" and insert["after"]["product_id"] == 6666
    assert insert["after"]["product_item"] == "product_item_value_2" and insert["after"]["n2"] == 2222
    assert insert["after"]["description_4"] == "description_4_value"


def test_rust_us_rows_match_their_create_and_query_events(tmp_path):
    lines = replay_sample("rust-us/8.0_32_delete_rows_v2.binlog.000001", tmp_path)
    records = data_records(lines, "int_table")
    assert [r["op"] for r in records] == ["c", "u", "d"]
    assert records[1]["before"] == records[0]["after"] and records[2]["before"] == records[1]["after"]


def test_a_table_nothing_describes_stops_naming_it_and_the_fixes(tmp_path):
    name = "rust_mysql_common/minimal_row_metadata.000001"
    table_map = next(e for e in read_file_events(sample(name)) if e.event_type == 0x13)
    with pytest.raises(UnknownTableStructureError) as caught:
        replay([sample(name)], tmp_path)
    message = str(caught.value)
    assert f"noria.t1 at minimal_row_metadata.000001:{table_map.offset}" in message
    assert "schema.history.internal.file.filename" in message and "binlog_row_metadata=FULL" in message


def test_full_row_metadata_stands_in_for_a_missing_create_table(tmp_path):
    name = "rust_mysql_common/mysql-enum-string-set.000001"
    with_ddl = data_records(replay_sample(name, tmp_path / "ddl"), "t")
    # The CREATE TABLE filtered out: the structure comes from the table maps alone.
    without = data_records(
        replay_sample(
            name, tmp_path / "map", **{"schema.history.internal.ddl.filter": "CREATE TABLE t\\(.*"}
        ),
        "t",
    )
    assert [r["op"] for r in with_ddl] == ["c", "u", "d"]
    assert [(r["before"], r["after"]) for r in without] == [(r["before"], r["after"]) for r in with_ddl]


def test_a_second_run_resumes_after_what_the_first_stored(tmp_path):
    first_file = sample("percona-operator/binlog.000002")
    second_file = sample("percona-operator/binlog.000003")
    first = replay([first_file], tmp_path)
    assert not data_records(first)
    offsets = orjson.loads((tmp_path / "offsets.json").read_bytes())
    # The last commit's end (a ROTATE moves the restart point, but stores nothing by itself).
    last = list(read_file_events(first_file))[-1]
    assert [(o["file"], o["pos"]) for o in offsets.values()] == [("binlog.000002", last.offset)]
    # Both files again: the first is not repeated, the second's row arrives once (the table's
    # structure recovered from the schema history the first run wrote).
    both = replay([first_file, second_file], tmp_path)
    assert both[: len(first)] == first
    inserts = data_records(both[len(first) :])
    assert [(r["op"], r["after"], r["source"]["file"]) for r in inserts] == [
        ("c", {"id": n}, "binlog.000003") for n in (1, 2, 3)
    ]
    again = replay([first_file, second_file], tmp_path)
    assert again == both


def test_a_rotate_continues_with_the_next_file(tmp_path):
    files = [sample("percona-operator/binlog.000002"), sample("percona-operator/binlog.000003")]
    lines = replay(files, tmp_path)
    # binlog.000002 creates t.a (no row metadata names it); binlog.000003 inserts three rows.
    inserts = data_records(lines, "a")
    assert [r["after"] for r in inserts] == [{"id": 1}, {"id": 2}, {"id": 3}]
    assert {(r["source"]["file"], r["source"]["db"]) for r in inserts} == {("binlog.000003", "t")}


def test_the_command_replays_and_exits(tmp_path):
    props = tmp_path / "replay.properties"
    props.write_text(
        "name=replay\ndatabase.hostname=127.0.0.1\ndatabase.port=1\ndatabase.user=nobody\n"
        f"database.server.id=1\ntopic.prefix={PREFIX}\nsink.type=jsonl\ndata.dir={tmp_path}\n"
    )
    files = [str(sample("percona-operator/binlog.000002")), str(sample("percona-operator/binlog.000003"))]
    assert main(["replay-binlog", "--config", str(props), *files]) == 0
    assert len(data_records(jsonl(tmp_path / "events.jsonl"), "a")) == 3
    bad = tmp_path / "bad.000001"
    bad.write_bytes(b"nope")
    assert main(["replay-binlog", "--config", str(props), str(bad)]) == 1
    refused = ["replay-binlog", "--config", str(props), "--set", "heartbeat.action.query=SELECT 1", files[0]]
    assert main(refused) == 2


def test_a_mariadb_binlog_file_replays_into_what_streaming_gave(
    mysql_server: MySQLServerHandle, unique_db, tmp_path
):
    assert isinstance(mysql_server, LocalMySQLServer), "reads the binlog from the server's data directory"
    db = unique_db
    mysql_server.execute("FLUSH BINARY LOGS")
    binlog_name = mysql_server.query("SHOW MASTER STATUS")[0][0]
    settings = {
        "topic.prefix": PREFIX,
        "database.include.list": db,
        "provide.transaction.metadata": "true",
        "snapshot.mode": "no_data",
    }
    config = ConnectorConfig.from_mapping(
        mysql_server.connector_properties(
            **settings, **{"data.dir": str(tmp_path / "server"), "sink.type": "jsonl"}
        )
    )
    engine = Engine(config)
    engine.catch_up()
    mysql_server.execute(
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2), raw VARBINARY(4), at DATETIME(3))",
        "INSERT INTO items VALUES (1, 'apple', 1.25, x'00ff10be', '2024-02-29 12:34:56.789'), (2, 'pear', NULL, NULL, NULL)",
        "UPDATE items SET name = 'grüne Birne', price = 2.50 WHERE id = 2",
        "DELETE FROM items WHERE id = 1",
        database=db,
    )
    engine.catch_up()
    engine.close()
    mysql_server.execute("FLUSH BINARY LOGS")  # closes the file: complete, ROTATE at its end
    binlog = Path(mysql_server.datadir) / binlog_name
    copied = tmp_path / "archive" / binlog_name
    copied.parent.mkdir()
    shutil.copyfile(binlog, copied)
    streamed = data_records(jsonl(tmp_path / "server" / "events.jsonl"), "items")
    replayed = data_records(replay([copied], tmp_path / "file", **settings), "items")
    assert [r["op"] for r in streamed] == ["c", "c", "u", "d"]
    assert [without_processing_time(r) for r in replayed] == [without_processing_time(r) for r in streamed]


def test_settings_that_would_ask_a_server_work_from_the_files_alone(tmp_path):
    """GTID source filters (a restart merges the server's executed set), a signal table, heartbeats
    and transaction metadata: the replay asks no server (database.port=1: nothing listens), and a
    second run over a file without a closing ROTATE (its offset is the file's end) adds nothing."""
    files = [sample("rust-us/8.0_32_delete_rows_v2.binlog.000001")]
    settings = {
        "gtid.source.includes": ".*",
        "signal.enabled.channels": "source,in-process",
        "signal.data.collection": "test.signals",
        "heartbeat.interval.ms": "1",
        "provide.transaction.metadata": "true",
    }
    first = replay(files, tmp_path, **settings)
    assert [r["op"] for r in data_records(first, "int_table")] == ["c", "u", "d"]
    offsets = orjson.loads((tmp_path / "offsets.json").read_bytes())
    assert [o["pos"] for o in offsets.values()] == [files[0].stat().st_size]
    assert replay(files, tmp_path, **settings) == first


def test_a_stop_inside_a_compressed_transaction_resumes_inside_it(tmp_path):
    """The second payload of the apecloud sample holds one transaction with two rows events (an
    UPDATE, then an INSERT). Stopped right after the UPDATE was delivered, the stored offset is
    inside that transaction; the next run re-reads the payload and emits only the INSERT."""
    name = "apecloud/mysql-bin.000057"
    expected = [without_processing_time(r) for r in data_records(replay_sample(name, tmp_path / "full"))]
    data_dir = tmp_path / "stopped"
    history = data_dir / "schema-history.jsonl"
    data_dir.mkdir()
    write_history(history, HISTORIES[name])
    settings = {"schema.history.internal.file.filename": str(history), "max.batch.size": "1"}
    stopped = BinlogReplay(replay_config(data_dir, **settings), [sample(name)])
    # Right after the UPDATE's rows event (on_progress runs after every event, on the engine thread).
    stopped.engine.on_progress = lambda: stopped.stop() if stopped.engine.metrics.streaming.updates else None
    stopped.run()
    first = data_records(jsonl(data_dir / "events.jsonl"))
    assert [r["op"] for r in first] == ["c", "u"]
    offsets = orjson.loads((data_dir / "offsets.json").read_bytes())
    (stored,) = offsets.values()
    assert stored["event"] > 0  # inside the transaction
    BinlogReplay(replay_config(data_dir, **settings), [sample(name)]).run()
    both = data_records(jsonl(data_dir / "events.jsonl"))
    assert [without_processing_time(r) for r in both] == expected


def test_a_second_run_needs_no_history_when_table_maps_described_the_tables(tmp_path):
    # Every DDL filtered out: the first run learns foo's structure from its FULL table map only, so
    # the schema history holds nothing; the second run resumes all the same and adds nothing.
    files = [sample("rust_mysql_common/mysql_type_bit.000001")]
    settings = {"schema.history.internal.ddl.filter": "CREATE TABLE foo.*|ALTER USER.*|CREATE DATABASE.*"}
    first = replay(files, tmp_path, **settings)
    assert [r["op"] for r in data_records(first, "foo")] == ["c"]
    assert replay(files, tmp_path, **settings) == first


def test_filters_and_transforms_apply_as_when_streaming(tmp_path):
    # rust-us query_bigger: rows of test.LINEITEM and test.Demo; only Demo captured, flattened.
    name = "rust-us/8.0_02_query_bigger.binlog.000733"
    everything = data_records(replay_sample(name, tmp_path / "all"))
    assert {r["source"]["table"] for r in everything} == {"LINEITEM", "Demo"}
    lines = replay_sample(
        name,
        tmp_path / "demo",
        **{
            "table.include.list": "test.Demo",
            "transforms": "unwrap",
            "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
            "transforms.unwrap.add.fields": "op",
        },
    )
    rows = [line["value"]["payload"] for line in lines if line["topic"] == f"{PREFIX}.test.Demo"]
    demo = [r for r in everything if r["source"]["table"] == "Demo"]
    assert rows and len(rows) == len(demo)
    assert [{k: v for k, v in r.items() if k != "__op"} for r in rows] == [r["after"] for r in demo]
    assert [r["__op"] for r in rows] == [r["op"] for r in demo]
