"""Which databases, tables and columns are captured (reference digest 2.2, 1.5): regex lists matched
against the whole name, case-insensitively; built-in databases ignored; the signal table always
captured. First on ``TableFilter`` alone, then what the stream emits."""

from __future__ import annotations

from collections.abc import Mapping

from connector.config import ConnectorConfig
from connector.records.filters import TableFilter
from connector.testing.event_source import ddl, insert, transaction
from mysql_cdc_base.table_id import TableId
from tests.connector.dispatch.stream_support import in_memory, shape

T = "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), secret VARCHAR(20))"
OTHER = "CREATE TABLE other (id INT PRIMARY KEY)"


def _filter(properties: Mapping[str, str]) -> TableFilter:
    return TableFilter.from_config(
        ConnectorConfig(
            {
                "database.hostname": "filters.invalid",
                "database.user": "u",
                "database.server.id": "1",
                "topic.prefix": "p",
                **properties,
            }
        )
    )


def _captured(properties: Mapping[str, str], *names: str) -> list[bool]:
    table_filter = _filter(properties)
    return [table_filter.table_captured(TableId.parse(n)) for n in names]


def test_everything_but_the_builtin_databases_by_default() -> None:
    assert _captured({}, "inventory.t", "shop.orders", "mysql.user", "sys.x", "performance_schema.y") == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert _captured({"table.ignore.builtin": "false"}, "mysql.user") == [True]


def test_database_lists_match_the_whole_name_case_insensitively() -> None:
    assert _captured({"database.include.list": "inv"}, "inventory.t") == [False]
    assert _captured({"database.include.list": "INV.*,shop"}, "inventory.t", "shop.t", "shopping.t") == [
        True,
        True,
        False,
    ]
    assert _captured({"database.exclude.list": "shop"}, "inventory.t", "shop.t") == [True, False]


def test_table_lists_match_db_dot_table() -> None:
    include = {"table.include.list": r"inventory\.t.*"}
    assert _captured(include, "inventory.t", "inventory.things", "inventory.other", "shop.t") == [
        True,
        True,
        False,
        False,
    ]
    # A bare table name is a regex on "db.table": it matches no table.
    assert _captured({"table.include.list": "t"}, "inventory.t") == [False]
    assert _captured({"table.exclude.list": r"inventory\.other"}, "inventory.t", "inventory.other") == [
        True,
        False,
    ]
    # The database lists apply first.
    assert _captured({"database.include.list": "shop", "table.include.list": r".*\.t"}, "inventory.t") == [
        False
    ]


def test_column_lists_match_db_dot_table_dot_column() -> None:
    table = TableId("inventory", "t")
    excluded = _filter({"column.exclude.list": r"inventory\.t\.secret"})
    assert [excluded.column_captured(table, c) for c in ("id", "secret")] == [True, False]
    included = _filter({"column.include.list": r"inventory\.t\.(id|name)"})
    assert [included.column_captured(table, c) for c in ("id", "name", "secret")] == [True, True, False]


def test_the_signal_table_is_always_captured() -> None:
    # Recorded: Debezium adds signal.data.collection to the captured tables even when
    # table.include.list leaves it out (tests/golden/debezium/incremental/FACTS.md, signal_not_included).
    properties = {"table.include.list": r"inventory\.t", "signal.data.collection": "inventory.signals"}
    assert _captured(properties, "inventory.t", "inventory.signals", "inventory.other") == [True, True, False]


# -- what the stream emits ---------------------------------------------------------------------------
def test_rows_of_tables_not_captured_give_no_records() -> None:
    binlog = in_memory(T, OTHER, properties={"table.exclude.list": r"inventory\.other"})
    binlog.write(transaction(insert("inventory.other", {"id": 1}), insert("inventory.t", {"id": 1})))
    records = binlog.run()
    assert [(r.topic, r.value["op"]) for r in records] == [("fake.inventory.t", "c")]


def test_excluded_columns_leave_the_value_but_not_the_key() -> None:
    binlog = in_memory(T, properties={"column.exclude.list": r"inventory\.t\.(secret|id)"})
    binlog.write(transaction(insert("inventory.t", {"id": 1, "name": "a", "secret": "s"})))
    (record,) = binlog.run()
    assert record.value["after"] == {"name": "a"}
    assert record.key == {"id": 1}  # the key is built from the table's key columns, unfiltered
    value_schema = record.value_schema.fields[1].schema  # type: ignore[union-attr]
    assert [f.name for f in value_schema.fields] == ["name"]


def test_ddl_of_tables_not_captured_is_recorded_by_default() -> None:
    # Digest 1.5: only schema.history.internal.store.only.captured.tables.ddl=true leaves it out.
    statement = "CREATE TABLE more (id INT PRIMARY KEY)"
    default = in_memory(T, properties={"table.include.list": r"inventory\.t"})
    default.write(ddl(statement, "inventory"))
    assert shape(default.run()) == ["schema"]
    assert [r.ddl for r in default.fake.history.records()][-1] == statement
    only_captured = in_memory(
        T,
        properties={
            "table.include.list": r"inventory\.t",
            "schema.history.internal.store.only.captured.tables.ddl": "true",
        },
    )
    before = len(list(only_captured.fake.history.records()))
    only_captured.write(ddl(statement, "inventory"))
    assert shape(only_captured.run()) == []
    assert len(list(only_captured.fake.history.records())) == before


def test_dml_of_gtid_sources_left_out_gives_no_records() -> None:
    # gtid.source.excludes with gtid.source.filter.dml.events (default true, digest 2.6).
    kept, left_out = "3e11fa47-71ca-11e1-9e33-c80aa9429562", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"

    def script(properties: dict[str, str]) -> list[int]:
        binlog = in_memory(T, properties={"gtid.source.excludes": left_out, **properties})
        binlog.write(
            transaction(insert("inventory.t", {"id": 1}), gtid=f"{kept}:1"),
            transaction(insert("inventory.t", {"id": 2}), gtid=f"{left_out}:1"),
            transaction(insert("inventory.t", {"id": 3}), gtid=f"{kept}:2"),
        )
        return [r.value["after"]["id"] for r in binlog.run()]

    assert script({}) == [1, 3]
    assert script({"gtid.source.filter.dml.events": "false"}) == [1, 2, 3]
