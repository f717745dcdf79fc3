"""History documents and schema change payloads in Debezium's exact form (reference 3c/3d)."""

from __future__ import annotations

import orjson
import pytest

from ddl.history.record import HistoryRecord, history_record_from_json, history_record_to_json
from ddl.history.serialize import (
    parse_quoted_table_id,
    quote_enum_value,
    table_change_to_history,
    table_change_to_schema_change_payload,
    table_from_history,
    unquote_enum_value,
)
from ddl.model import ChangeType, TableChange
from mysql_cdc_base.errors import SchemaHistoryError
from mysql_cdc_base.table_id import TableId
from tests.ddl.helpers import parse, table

CUSTOMERS = "CREATE TABLE `customers` (`id` INT NOT NULL AUTO_INCREMENT PRIMARY KEY) DEFAULT CHARSET=utf8mb4"


def test_history_record_matches_the_reference_line_byte_for_byte() -> None:
    # The illustrative file-history line of the reference digest, section 3c.
    expected = (
        b'{"source":{"server":"dbserver1"},"position":{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":157,'
        b'"snapshot":"INITIAL"},"ts_ms":1700000000123,"databaseName":"inventory","ddl":"CREATE TABLE `customers` '
        b'(...)","tableChanges":[{"type":"CREATE","id":"\\"inventory\\".\\"customers\\"","table":{"defaultCharsetName":'
        b'"utf8mb4","primaryKeyColumnNames":["id"],"columns":[{"name":"id","jdbcType":4,"typeName":"INT",'
        b'"typeExpression":"INT","charsetName":null,"position":1,"optional":false,"autoIncremented":true,'
        b'"generated":true,"comment":null,"hasDefaultValue":false,"enumValues":[]}],"attributes":[]},"comment":null}]}'
    )
    result = parse(CUSTOMERS, database="inventory")
    change = result.statements[0].table_changes[0]
    record = HistoryRecord(
        source={"server": "dbserver1"},
        position={"ts_sec": 1700000000, "file": "mysql-bin.000003", "pos": 157, "snapshot": "INITIAL"},
        ts_ms=1700000000123,
        ddl="CREATE TABLE `customers` (...)",
        database_name="inventory",
        table_changes=(table_change_to_history(change),),
    )
    assert history_record_to_json(record) == expected
    assert history_record_from_json(expected) == record


def test_history_column_keys_in_order_with_optional_members() -> None:
    r = parse(
        "CREATE TABLE t (d DECIMAL(10,2) NOT NULL DEFAULT '1.50', e ENUM('a','it''s') CHARACTER SET latin1,"
        " x INT) DEFAULT CHARSET=utf8mb4"
    )
    document = table_change_to_history(r.statements[0].table_changes[0])
    d, e, x = document["table"]["columns"]
    assert list(d) == [
        "name",
        "jdbcType",
        "typeName",
        "typeExpression",
        "charsetName",
        "length",
        "scale",
        "position",
        "optional",
        "autoIncremented",
        "generated",
        "comment",
        "hasDefaultValue",
        "defaultValueExpression",
        "enumValues",
    ]
    assert (d["length"], d["scale"], d["defaultValueExpression"], d["hasDefaultValue"]) == (
        10,
        2,
        "1.50",
        True,
    )
    assert e["enumValues"] == ["'a'", "'it''s'"]
    assert (e["charsetName"], e["length"]) == ("latin1", 1)
    assert "length" not in x and "scale" not in x and "defaultValueExpression" not in x
    assert list(document) == ["type", "id", "table", "comment"]


def test_rename_and_drop_changes() -> None:
    r = parse("CREATE TABLE a (x INT); RENAME TABLE a TO b; DROP TABLE b")
    rename = table_change_to_history(r.statements[1].table_changes[0])
    assert list(rename) == ["type", "id", "previousId", "table", "comment"]
    assert (rename["type"], rename["id"], rename["previousId"]) == ("ALTER", '"db"."b"', '"db"."a"')
    assert table_change_to_history(r.statements[2].table_changes[0]) == {"type": "DROP", "id": '"db"."b"'}


def test_schema_change_payload() -> None:
    r = parse(
        "CREATE TABLE t (id INT NOT NULL AUTO_INCREMENT, s SET('a','b') DEFAULT 'a', PRIMARY KEY (id))"
        " CHARSET=latin1 COMMENT='c'",
        include_comments=True,
    )
    payload = table_change_to_schema_change_payload(r.statements[0].table_changes[0])
    assert list(payload) == ["type", "id", "table"]
    assert payload["type"] == "CREATE" and payload["id"] == '"db"."t"'
    assert list(payload["table"]) == ["defaultCharsetName", "primaryKeyColumnNames", "columns", "comment"]
    assert payload["table"]["comment"] == "c"
    ident, s = payload["table"]["columns"]
    assert list(ident) == [
        "name",
        "jdbcType",
        "nativeType",
        "typeName",
        "typeExpression",
        "charsetName",
        "length",
        "scale",
        "position",
        "optional",
        "autoIncremented",
        "generated",
        "comment",
        "defaultValueExpression",
        "enumValues",
    ]
    assert ident["enumValues"] is None and ident["length"] is None and ident["nativeType"] is None
    assert (s["enumValues"], s["length"], s["charsetName"], s["defaultValueExpression"]) == (
        ["'a'", "'b'"],
        3,
        "latin1",
        "a",
    )
    drop = TableChange(ChangeType.DROP, TableId("db", "t"), None)
    assert table_change_to_schema_change_payload(drop) == {"type": "DROP", "id": '"db"."t"', "table": None}


def test_table_round_trips_through_history() -> None:
    r = parse(
        "CREATE TABLE t (id BIGINT(20) UNSIGNED ZEROFILL NOT NULL, v VARCHAR(20) CHARACTER SET latin1 "
        "DEFAULT 'x', e ENUM('a','b''c','d\\\\e') NOT NULL, ts TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3), "
        "d DECIMAL(5,2), PRIMARY KEY (id)) DEFAULT CHARSET=utf8mb4"
    )
    original = table(r, "db.t")
    change = r.statements[0].table_changes[0]
    document = orjson.loads(orjson.dumps(table_change_to_history(change)))
    restored = table_from_history(document)
    assert table_change_to_history(TableChange(ChangeType.CREATE, restored.id, restored)) == document
    assert [c.enum_values for c in restored.columns] == [c.enum_values for c in original.columns]
    assert [(c.name, c.type_name, c.unsigned, c.zerofill) for c in restored.columns] == [
        (c.name, c.type_name, c.unsigned, c.zerofill) for c in original.columns
    ]
    assert restored.primary_key == ("id",)


@pytest.mark.parametrize("value", ["a", "it's", "back\\slash", "a,b", "", "''"])
def test_enum_literal_quoting_round_trips(value: str) -> None:
    assert unquote_enum_value(quote_enum_value(value)) == value


def test_quoted_table_ids() -> None:
    assert parse_quoted_table_id('"db"."t"') == TableId("db", "t")
    assert parse_quoted_table_id('"d.b"."t""x"') == TableId("d.b", 't"x')
    with pytest.raises(SchemaHistoryError):
        parse_quoted_table_id('"a"."b"."c"."d"')


@pytest.mark.parametrize("line", [b"not json", b"[1,2]", b'{"position":{}}', b'{"source":1,"position":{}}'])
def test_invalid_history_lines_raise_history_errors(line: bytes) -> None:
    with pytest.raises(SchemaHistoryError):
        history_record_from_json(line)


def test_signed_type_names_round_trip_through_history() -> None:
    """Debezium keeps an explicit SIGNED in the type name of streamed DDL (fidelity/oddities.jsonl);
    read back from the history it is the same column with the same data type."""
    r = parse("CREATE TABLE s (id INT PRIMARY KEY, x TINYINT SIGNED, y INT(4) SIGNED DEFAULT -1, z SMALLINT)")
    original = table(r, "db.s")
    assert [c.type_name for c in original.columns] == ["INT", "TINYINT SIGNED", "INT SIGNED", "SMALLINT"]
    document = orjson.loads(orjson.dumps(table_change_to_history(r.statements[0].table_changes[0])))
    restored = table_from_history(document)
    assert restored.columns == original.columns


def test_table_ids_double_embedded_quotes() -> None:
    table_id = TableId("db", "special\"[`]$'")
    assert table_id.quoted == '"db"."special""[`]$\'"'
    assert parse_quoted_table_id(table_id.quoted) == table_id
