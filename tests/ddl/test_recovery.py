"""Rebuilding the model from the schema history (restart path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ddl.history.filters import DdlFilter
from ddl.history.record import HistoryRecord
from ddl.history.recovery import is_position_at_or_before, recover
from ddl.history.serialize import table_change_to_history
from ddl.history.store import FileSchemaHistory, MemorySchemaHistory
from ddl.model import ChangeType, SchemaModel, TableChange
from ddl.parsing.parser import parser_for
from mysql_cdc_base.errors import SchemaHistoryError
from mysql_cdc_base.position import GtidSet
from tests.ddl.helpers import column, table

UUID = "8a94f357-aab4-11df-86ab-c80aa9429562"
UUID2 = "0d3ba0b4-4bb1-11ee-9b4a-0242ac120002"


@pytest.mark.parametrize(
    ("recorded", "desired", "expected"),
    [
        ({"file": "b.000001", "pos": 100}, {"file": "b.000001", "pos": 100}, True),
        ({"file": "b.000001", "pos": 100}, {"file": "b.000001", "pos": 99}, False),
        ({"file": "b.000001", "pos": 900}, {"file": "b.000002", "pos": 4}, True),
        ({"file": "b.000010", "pos": 4}, {"file": "b.000009", "pos": 900}, False),
        ({"file": "b.000001", "pos": 100, "event": 3}, {"file": "b.000001", "pos": 100, "event": 2}, False),
        (
            {"file": "b.000001", "pos": 100, "event": 2, "row": 1},
            {"file": "b.000001", "pos": 100, "event": 2, "row": 1},
            True,
        ),
        (
            {"file": "b.000001", "pos": 100, "event": 2, "row": 2},
            {"file": "b.000001", "pos": 100, "event": 2, "row": 1},
            False,
        ),
        ({"file": "old.000009", "pos": 100}, {"file": "new.000001", "pos": 4}, True),
        (
            {"server_id": 1, "ts_sec": 10, "file": "b.000009", "pos": 1},
            {"server_id": 2, "ts_sec": 11, "file": "b.000001", "pos": 1},
            True,
        ),
        (
            {"server_id": 1, "ts_sec": 12, "file": "b.000001", "pos": 1},
            {"server_id": 2, "ts_sec": 11, "file": "b.000009", "pos": 1},
            False,
        ),
        (
            {"gtids": f"{UUID}:1-5", "file": "b.000009", "pos": 1},
            {"gtids": f"{UUID}:1-7", "file": "b.000001", "pos": 1},
            True,
        ),
        ({"gtids": f"{UUID}:1-8"}, {"gtids": f"{UUID}:1-7"}, False),
        ({"gtids": f"{UUID}:1-5,{UUID2}:1-2"}, {"gtids": f"{UUID2}:1-3,\n{UUID.upper()}:1-3:4-9"}, True),
        ({"gtids": f"{UUID}:1-5", "event": 2}, {"gtids": f"{UUID}:1-5", "event": 3}, True),
        ({"gtids": f"{UUID}:1-5", "event": 4}, {"gtids": f"{UUID}:1-5", "event": 3}, False),
        ({"gtids": f"{UUID}:1-5"}, {"gtids": f"{UUID}:1-5", "snapshot": "INITIAL"}, False),
        ({"gtids": f"{UUID}:1-5", "snapshot": True}, {"gtids": f"{UUID}:1-5", "snapshot": "INITIAL"}, True),
        ({"file": "b.000001", "pos": 4}, {"gtids": f"{UUID}:1-5"}, True),
        ({"gtids": f"{UUID}:1-5"}, {"file": "b.000001", "pos": 4}, False),
        ({"gtids": "0-1-10,1-2-5"}, {"gtids": "0-1-12,1-3-5"}, True),
        ({"gtids": "0-1-10,2-1-1"}, {"gtids": "0-1-12"}, False),
    ],
)
def test_binlog_history_comparator(recorded: dict[str, Any], desired: dict[str, Any], expected: bool) -> None:
    assert is_position_at_or_before(recorded, desired) is expected


def test_gtid_set_parsing() -> None:
    assert GtidSet.parse(f"{UUID}:1-3:5:4").mysql == {UUID: ((1, 5),)}
    with pytest.raises(SchemaHistoryError, match="invalid GTID set"):
        GtidSet.parse("not-a-gtid")


DDL_SEQUENCE = [
    ("", "SET character_set_server=utf8mb4, collation_server=utf8mb4_general_ci"),
    ("", "CREATE DATABASE shop CHARACTER SET latin1"),
    ("shop", "USE shop"),
    ("shop", "CREATE TABLE customers (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20))"),
    ("shop", "CREATE TABLE orders (id INT PRIMARY KEY, customer INT, total DECIMAL(10,2) DEFAULT '0.00')"),
    ("shop", "ALTER TABLE customers ADD COLUMN email VARCHAR(50) NOT NULL AFTER id, MODIFY name TEXT"),
    ("shop", "RENAME TABLE orders TO archive.orders_old"),
    ("shop", "CREATE TABLE orders (id BIGINT PRIMARY KEY, note ENUM('a','b'))"),
    ("shop", "DROP TABLE customers"),
    ("shop", "ALTER TABLE archive.orders_old DROP COLUMN customer, RENAME TO archive.orders_2019"),
]


def build_history(
    positions: list[dict[str, Any]], source: str = "server1"
) -> tuple[MemorySchemaHistory, list[SchemaModel]]:
    """Run the DDL sequence through the parser like the connector does, recording each statement."""
    parser = parser_for("mysql")
    history = MemorySchemaHistory()
    model, database = SchemaModel(), None
    models = []
    for (record_db, ddl), position in zip(DDL_SEQUENCE, positions, strict=True):
        result = parser.parse(ddl, model, database)
        model, database = result.model, result.default_database
        for statement in result.statements:
            history.record(
                HistoryRecord(
                    source={"server": source},
                    position=position,
                    ts_ms=1,
                    ddl=statement.ddl,
                    database_name=statement.database if statement.database is not None else record_db,
                    table_changes=tuple(table_change_to_history(c) for c in statement.table_changes),
                )
            )
        models.append(model)
    return history, models


def tables_document(model: SchemaModel) -> list[dict[str, Any]]:
    return [
        table_change_to_history(TableChange(ChangeType.CREATE, t.id, t))
        for t in sorted(model, key=lambda t: t.id)
    ]


POSITIONS_FILE = [{"file": "mysql-bin.000001", "pos": 100 + 10 * i} for i in range(len(DDL_SEQUENCE))]
POSITIONS_GTID = [
    {"gtids": f"{UUID}:1-{i + 1}", "file": "mysql-bin.000001", "pos": 4} for i in range(len(DDL_SEQUENCE))
]
POSITIONS_MARIADB = [
    {"gtids": f"0-1-{i + 1}", "file": "mysql-bin.000001", "pos": 4} for i in range(len(DDL_SEQUENCE))
]


@pytest.mark.parametrize(
    "positions",
    [POSITIONS_FILE, POSITIONS_GTID, POSITIONS_MARIADB],
    ids=["file-pos", "mysql-gtid", "mariadb-gtid"],
)
@pytest.mark.parametrize("prefer_ddl", [False, True])
def test_recover_rebuilds_the_model_at_each_stored_offset(
    positions: list[dict[str, Any]], prefer_ddl: bool
) -> None:
    history, models = build_history(positions)
    parser = parser_for("mysql")
    for index, expected in enumerate(models):
        recovered = recover(history, {"server": "server1"}, positions[index], parser, prefer_ddl=prefer_ddl)
        assert tables_document(recovered) == tables_document(expected), (index, DDL_SEQUENCE[index][1])
    everything = recover(history, {"server": "server1"}, None, parser)
    assert tables_document(everything) == tables_document(models[-1])


def test_recovered_model_keeps_database_and_server_charsets_for_later_ddl() -> None:
    history, _ = build_history(POSITIONS_FILE)
    recovered = recover(history, {"server": "server1"}, POSITIONS_FILE[-1], parser_for("mysql"))
    assert recovered.server_charset == "utf8mb4"
    after = parser_for("mysql").parse("CREATE TABLE later (s VARCHAR(3))", recovered, "shop")
    assert column(after, "shop.later.s").charset == "latin1"
    assert table(after, "shop.orders").column("note") is not None


def test_recover_ignores_other_sources_and_positions_after_the_offset() -> None:
    history, models = build_history(POSITIONS_FILE)
    other, _ = build_history([{"file": "mysql-bin.000001", "pos": 1} for _ in DDL_SEQUENCE], source="other")
    for item in other.records():
        history.record(item)
    recovered = recover(history, {"server": "server1"}, POSITIONS_FILE[4], parser_for("mysql"))
    assert tables_document(recovered) == tables_document(models[4])


def test_recover_applies_the_ddl_filter_to_replayed_statements() -> None:
    history = MemorySchemaHistory(
        [
            HistoryRecord({"server": "s"}, {"file": "f.000001", "pos": 1}, 1, "CREATE DATABASE keep", "keep"),
            HistoryRecord({"server": "s"}, {"file": "f.000001", "pos": 2}, 1, "# Dummy event", "keep"),
        ]
    )
    model = recover(
        history,
        {"server": "s"},
        {"file": "f.000001", "pos": 9},
        parser_for("mariadb"),
        ddl_filter=DdlFilter(),
    )
    assert "keep" in model.databases


def test_missing_history_with_an_offset_points_to_recovery_mode(tmp_path: Path) -> None:
    with pytest.raises(SchemaHistoryError, match="snapshot.mode=recovery"):
        recover(
            FileSchemaHistory(tmp_path / "absent.dat"),
            {"server": "s"},
            {"file": "f.000001", "pos": 4},
            parser_for("mysql"),
        )
    assert recover(MemorySchemaHistory(), {"server": "s"}, None, parser_for("mysql")) == SchemaModel()


def test_corrupt_history_with_an_offset_points_to_recovery_mode(tmp_path: Path) -> None:
    path = tmp_path / "history.dat"
    path.write_text('{"source":{"server":"s"}\n{"also broken"\n')
    with pytest.raises(SchemaHistoryError, match="snapshot.mode=recovery"):
        recover(FileSchemaHistory(path), {"server": "s"}, {"file": "f.000001", "pos": 4}, parser_for("mysql"))


def test_unparseable_history_ddl_is_an_error_unless_skipped() -> None:
    history = MemorySchemaHistory(
        [
            HistoryRecord({"server": "s"}, {"file": "f.000001", "pos": 1}, 1, "CREATE DATABASE ok", ""),
            HistoryRecord({"server": "s"}, {"file": "f.000001", "pos": 2}, 1, "THIS IS NOT SQL", ""),
        ]
    )
    with pytest.raises(SchemaHistoryError, match="snapshot.mode=recovery"):
        recover(history, {"server": "s"}, {"file": "f.000001", "pos": 9}, parser_for("mysql"))
    model = recover(
        history, {"server": "s"}, {"file": "f.000001", "pos": 9}, parser_for("mysql"), skip_unparseable=True
    )
    assert "ok" in model.databases


def test_history_written_by_the_file_store_recovers_after_reopen(tmp_path: Path) -> None:
    memory, models = build_history(POSITIONS_GTID)
    stored = FileSchemaHistory(tmp_path / "h.dat")
    stored.start()
    for item in memory.records():
        stored.record(item)
    reopened = FileSchemaHistory(tmp_path / "h.dat")
    reopened.start()
    recovered = recover(reopened, {"server": "server1"}, POSITIONS_GTID[-1], parser_for("mysql"))
    assert tables_document(recovered) == tables_document(models[-1])
