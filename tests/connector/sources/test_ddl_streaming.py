"""Schema changes mid-stream, end to end: server binlog -> engine -> events (issue 3 items 4-5).

Long DDL sequences (every ALTER form, renames across databases, drop and re-create with other
columns) interleaved with DML; after each step the events' key/value schemas and values must follow
the table structure at that binlog position. Then the engine is stopped, more DDL and DML happen
while it is down, and a new engine that rebuilds the structures from the schema history alone must
decode every row with the structure it was written with.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer
from ddl.history.store import FileSchemaHistory
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink


@pytest.fixture
def archive_db(mysql_server: LocalMySQLServer, unique_db: str) -> Iterator[str]:
    name = f"{unique_db}_arch"
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{name}`", f"CREATE DATABASE `{name}`")
    try:
        yield name
    finally:
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{name}`")


class Stream:
    """An engine plus the records it delivered since the last look."""

    def __init__(self, server: LocalMySQLServer, databases: list[str], data_dir: Path) -> None:
        self.memory = MemorySink()
        config = ConnectorConfig.from_mapping(
            server.connector_properties(
                **{
                    "topic.prefix": "it",
                    "database.include.list": ",".join(databases),
                    "data.dir": str(data_dir),
                    "decimal.handling.mode": "string",
                }
            )
        )
        self.engine = Engine(config, sinks=[self.memory])
        self.seen = 0
        self.engine.catch_up()
        self.take()

    def take(self) -> list[ChangeRecord]:
        self.engine.catch_up()
        new = self.memory.records[self.seen :]
        self.seen = len(self.memory.records)
        return new

    def close(self) -> None:
        self.engine.close()


def rows(records: list[ChangeRecord]) -> list[ChangeRecord]:
    return [r for r in records if r.kind == RecordKind.DATA]


def changes(records: list[ChangeRecord]) -> list[ChangeRecord]:
    return [r for r in records if r.kind == RecordKind.SCHEMA_CHANGE]


def after_fields(record: ChangeRecord) -> list[tuple[str, str, bool]]:
    assert record.value_schema is not None
    after = record.value_schema.field("after")
    assert after is not None and after.schema.fields is not None
    return [(f.name, f.schema.type, f.schema.optional) for f in after.schema.fields]


def key_fields(record: ChangeRecord) -> list[str]:
    return [f.name for f in record.key_schema.fields or ()] if record.key_schema is not None else []


EPOCH_2020_MS = 1577836800000  # 2020-01-01T00:00:00Z


def steps(db: str, arch: str) -> list[dict[str, Any]]:
    """(SQL, then what the row events after it must look like)."""
    return [
        {
            "sql": [
                "ALTER TABLE t ADD COLUMN c DATETIME(3) NOT NULL DEFAULT '2020-01-01 00:00:00' FIRST",
                "INSERT INTO t (id, a, b) VALUES (2, 20, 'y')",
            ],
            "topic": f"it.{db}.t",
            "key": ["id"],
            "fields": [
                ("c", "int64", False),
                ("id", "int32", False),
                ("a", "int32", True),
                ("b", "string", True),
            ],
            "after": [{"c": EPOCH_2020_MS, "id": 2, "a": 20, "b": "y"}],
        },
        {
            "sql": [
                "ALTER TABLE t DROP COLUMN a, ADD COLUMN d DECIMAL(5,2) DEFAULT 1.50 AFTER id, "
                "ADD INDEX ib (b), ALGORITHM=COPY",
                "INSERT INTO t (id, b) VALUES (3, 'z')",
            ],
            "topic": f"it.{db}.t",
            "key": ["id"],
            "fields": [
                ("c", "int64", False),
                ("id", "int32", False),
                ("d", "string", True),
                ("b", "string", True),
            ],
            "after": [{"c": EPOCH_2020_MS, "id": 3, "d": "1.50", "b": "z"}],
        },
        {
            "sql": [
                "ALTER TABLE t MODIFY b VARCHAR(20) NOT NULL DEFAULT '' AFTER c, CHANGE COLUMN d dee BIGINT UNSIGNED",
                "INSERT INTO t (id, b, dee) VALUES (4, 'w', 18446744073709551615)",
            ],
            "topic": f"it.{db}.t",
            "key": ["id"],
            "fields": [
                ("c", "int64", False),
                ("b", "string", False),
                ("id", "int32", False),
                ("dee", "int64", True),
            ],
            "after": [{"c": EPOCH_2020_MS, "b": "w", "id": 4, "dee": -1}],
        },
        {
            "sql": [
                "ALTER TABLE t RENAME COLUMN dee TO e, DROP INDEX ib",
                "ALTER TABLE t ALTER COLUMN e SET DEFAULT 7",
                "INSERT INTO t (id, b) VALUES (5, 'v')",
            ],
            "topic": f"it.{db}.t",
            "key": ["id"],
            "fields": [
                ("c", "int64", False),
                ("b", "string", False),
                ("id", "int32", False),
                ("e", "int64", True),
            ],
            "after": [{"c": EPOCH_2020_MS, "b": "v", "id": 5, "e": 7}],
        },
        {
            "sql": [
                "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, b)",
                "UPDATE t SET e = 8 WHERE id = 5",
            ],
            "topic": f"it.{db}.t",
            "key": ["id", "b"],
            "fields": [
                ("c", "int64", False),
                ("b", "string", False),
                ("id", "int32", False),
                ("e", "int64", True),
            ],
            "after": [{"c": EPOCH_2020_MS, "b": "v", "id": 5, "e": 8}],
        },
        {
            "sql": [
                "ALTER TABLE t CONVERT TO CHARACTER SET latin1, ADD COLUMN f ENUM('x','y,z') NOT NULL DEFAULT 'x'",
                "CREATE UNIQUE INDEX ue ON t (id, e)",
                "INSERT INTO t (id, b, e, f) VALUES (6, 'é', 9, 'y,z')",
            ],
            "topic": f"it.{db}.t",
            "key": ["id", "b"],
            "fields": [
                ("c", "int64", False),
                ("b", "string", False),
                ("id", "int32", False),
                ("e", "int64", True),
                ("f", "string", False),
            ],
            "after": [{"c": EPOCH_2020_MS, "b": "é", "id": 6, "e": 9, "f": "y,z"}],
        },
        {
            "sql": [f"RENAME TABLE t TO `{arch}`.t2", f"INSERT INTO `{arch}`.t2 (id, b) VALUES (7, 'u')"],
            "topic": f"it.{arch}.t2",
            "key": ["id", "b"],
            "fields": [
                ("c", "int64", False),
                ("b", "string", False),
                ("id", "int32", False),
                ("e", "int64", True),
                ("f", "string", False),
            ],
            "after": [{"c": EPOCH_2020_MS, "b": "u", "id": 7, "e": 7, "f": "x"}],
        },
        {
            "sql": [
                f"ALTER TABLE `{arch}`.t2 RENAME TO `{db}`.t, DROP COLUMN c",
                "INSERT INTO t (id, b) VALUES (8, 't')",
            ],
            "topic": f"it.{db}.t",
            "key": ["id", "b"],
            "fields": [
                ("b", "string", False),
                ("id", "int32", False),
                ("e", "int64", True),
                ("f", "string", False),
            ],
            "after": [{"b": "t", "id": 8, "e": 7, "f": "x"}],
        },
        {
            "sql": [
                "DROP TABLE t",
                "CREATE TABLE t (id BIGINT NOT NULL, note TEXT, flag TINYINT(1) DEFAULT 1, UNIQUE KEY (id))",
                "INSERT INTO t (id, note) VALUES (9, 'fresh')",
            ],
            "topic": f"it.{db}.t",
            "key": ["id"],
            "fields": [("id", "int64", False), ("note", "string", True), ("flag", "int16", True)],
            "after": [{"id": 9, "note": "fresh", "flag": 1}],
        },
    ]


def test_ddl_sequence_mid_stream_and_restart_from_history(
    mysql_server: LocalMySQLServer, unique_db: str, archive_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10))",
        "INSERT INTO t VALUES (1, 10, 'x')",
        database=db,
    )
    stream = Stream(mysql_server, [db, archive_db], tmp_path)
    try:
        for number, step in enumerate(steps(db, archive_db)):
            mysql_server.execute(*step["sql"], database=db)
            new = stream.take()
            events = rows(new)
            where = (number, step["sql"])
            assert [r.after for r in events] == step["after"], where
            for event in events:
                assert event.topic == step["topic"], where
                assert after_fields(event) == step["fields"], where
                assert key_fields(event) == step["key"], where
            # One schema change record per DDL statement, in order, with the statement text (the
            # server logs DROP TABLE with quoted names; Debezium names a dropped table with its
            # database, as recorded with Debezium 3.6.3 in tests/golden).
            ddl = [
                f"DROP TABLE {db}.{s.split()[-1]}" if s.startswith("DROP TABLE") else s
                for s in step["sql"]
                if not s.startswith(("INSERT", "UPDATE"))
            ]
            assert [c.value["ddl"].replace("`", "") for c in changes(new)] == [
                s.replace("`", "") for s in ddl
            ], where
    finally:
        stream.close()

    # The history now holds every DDL with its table changes.
    history = list(FileSchemaHistory(tmp_path / "schema-history.jsonl").records())
    recorded = [r.ddl for r in history]
    assert f"RENAME TABLE t TO `{archive_db}`.t2" in recorded
    renames = [c for r in history for c in r.table_changes if c.get("previousId")]
    assert {(c["previousId"], c["id"]) for c in renames} >= {
        (f'"{db}"."t"', f'"{archive_db}"."t2"'),
        (f'"{archive_db}"."t2"', f'"{db}"."t"'),
    }

    # While the connector is down: rows and DDL interleave; the restarted engine must decode each row
    # with the structure of its own binlog position, rebuilt from the history (not from the server).
    mysql_server.execute(
        "INSERT INTO t (id, note, flag) VALUES (10, 'before alter', 0)",
        "ALTER TABLE t ADD COLUMN extra VARCHAR(5) NOT NULL DEFAULT 'e' FIRST, MODIFY note VARCHAR(30)",
        "INSERT INTO t (id, note) VALUES (11, 'after alter')",
        "ALTER TABLE t DROP COLUMN flag, RENAME COLUMN note TO remark",
        "INSERT INTO t (id, remark) VALUES (12, 'latest')",
        database=db,
    )
    restarted = Stream(mysql_server, [db, archive_db], tmp_path)
    try:
        events = rows(restarted.memory.records)
        assert [r.after for r in events] == [
            {"id": 10, "note": "before alter", "flag": 0},
            {"extra": "e", "id": 11, "note": "after alter", "flag": 1},
            {"extra": "e", "id": 12, "remark": "latest"},
        ]
        assert [after_fields(r) for r in events] == [
            [("id", "int64", False), ("note", "string", True), ("flag", "int16", True)],
            [
                ("extra", "string", False),
                ("id", "int64", False),
                ("note", "string", True),
                ("flag", "int16", True),
            ],
            [("extra", "string", False), ("id", "int64", False), ("remark", "string", True)],
        ]
        assert [c.value["ddl"] for c in changes(restarted.memory.records)] == [
            "ALTER TABLE t ADD COLUMN extra VARCHAR(5) NOT NULL DEFAULT 'e' FIRST, MODIFY note VARCHAR(30)",
            "ALTER TABLE t DROP COLUMN flag, RENAME COLUMN note TO remark",
        ]
        alter = changes(restarted.memory.records)[0].value["tableChanges"][0]
        assert (alter["type"], alter["id"]) == ("ALTER", f'"{db}"."t"')
        assert [c["name"] for c in alter["table"]["columns"]] == ["extra", "id", "note", "flag"]
        assert alter["table"]["primaryKeyColumnNames"] == ["id"]  # UNIQUE over a NOT NULL column
    finally:
        restarted.close()


def test_rows_read_after_a_ddl_keep_the_structure_they_were_written_with(
    mysql_server: LocalMySQLServer, unique_db: str, tmp_path: Path
) -> None:
    """One catch-up over DML, DDL, DML, DDL...: each row event uses the structure at its position."""
    db = unique_db
    mysql_server.execute("CREATE TABLE w (id INT PRIMARY KEY, v INT)", database=db)
    stream = Stream(mysql_server, [db], tmp_path)
    try:
        mysql_server.execute(
            "INSERT INTO w VALUES (1, 1)",
            "ALTER TABLE w ADD COLUMN s VARCHAR(3) DEFAULT 'abc' AFTER id",
            "INSERT INTO w (id, v) VALUES (2, 2)",
            "ALTER TABLE w CHANGE v v BIGINT NOT NULL FIRST",
            "UPDATE w SET s = 'x' WHERE id = 2",
            "ALTER TABLE w DROP COLUMN s, DROP PRIMARY KEY",
            "DELETE FROM w WHERE id = 1",
            database=db,
        )
        events = rows(stream.take())
        assert [(r.op, r.before, r.after) for r in events] == [
            ("c", None, {"id": 1, "v": 1}),
            ("c", None, {"id": 2, "s": "abc", "v": 2}),
            ("u", {"v": 2, "id": 2, "s": "abc"}, {"v": 2, "id": 2, "s": "x"}),
            ("d", {"v": 1, "id": 1}, None),
        ]
        assert [key_fields(r) for r in events] == [["id"], ["id"], ["id"], []]
        assert [after_fields(r)[0] for r in events] == [
            ("id", "int32", False),
            ("id", "int32", False),
            ("v", "int64", False),
            ("v", "int64", False),
        ]
    finally:
        stream.close()


def test_mariadb_system_versioned_table_streams_its_hidden_period_columns(
    mysql_server: LocalMySQLServer, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    statement = "CREATE TABLE sv (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING"
    if not mysql_server.is_mariadb:
        with pytest.raises(pymysql.err.ProgrammingError):  # MariaDB-only syntax
            mysql_server.execute(statement, database=db)
        return
    stream = Stream(mysql_server, [db], tmp_path)
    try:
        mysql_server.execute(
            statement,
            "INSERT INTO sv VALUES (1, 2)",
            "UPDATE sv SET v = 3 WHERE id = 1",
            "ALTER TABLE sv DROP SYSTEM VERSIONING",
            "INSERT INTO sv VALUES (2, 4)",
            database=db,
        )
        events = rows(stream.take())
        # The binlog carries MariaDB's invisible row_start/row_end; the UPDATE also writes the history row.
        assert [(r.op, list(r.after or {})) for r in events] == [
            ("c", ["id", "v", "row_start", "row_end"]),
            ("u", ["id", "v", "row_start", "row_end"]),
            ("c", ["id", "v", "row_start", "row_end"]),
            ("c", ["id", "v"]),
        ]
        assert events[0].after is not None and events[0].after["row_end"] == "2038-01-19T03:14:07.999999Z"
        assert [r.after["v"] for r in events if r.after] == [2, 3, 2, 4]
    finally:
        stream.close()
