"""MySQL's type synonyms (``ddl.mysql_types.TYPE_SYNONYMS``) convert exactly as the types they name: one
table of synonyms serves the converters, the fake connector and the Spark sink's evolution."""

from __future__ import annotations

from connector.testing.fake import FakeConnector
from ddl.mysql_types import TYPE_SYNONYMS, canonical_type

COLUMNS = [
    ("INT1", "TINYINT"),
    ("INT2", "SMALLINT"),
    ("INT3", "MEDIUMINT"),
    ("MIDDLEINT", "MEDIUMINT"),
    ("INTEGER", "INT"),
    ("INT4", "INT"),
    ("INT8", "BIGINT"),
    ("DEC(7,2)", "DECIMAL(7,2)"),
    ("NUMERIC(7,2)", "DECIMAL(7,2)"),
    ("FIXED(7,2)", "DECIMAL(7,2)"),
    ("FLOAT4", "FLOAT"),
    ("FLOAT8", "DOUBLE"),
    ("DOUBLE PRECISION", "DOUBLE"),
    ("CHARACTER(3)", "CHAR(3)"),
    ("BOOL", "BOOLEAN"),
]
VALUES = {
    "INT1": 7, "INT2": 7, "INT3": 7, "MIDDLEINT": 7, "INTEGER": 7, "INT4": 7, "INT8": 7,
    "DEC(7,2)": "12.50", "NUMERIC(7,2)": "12.50", "FIXED(7,2)": "12.50", "FLOAT4": 1.5, "FLOAT8": 1.5,
    "DOUBLE PRECISION": 1.5, "CHARACTER(3)": "abc", "BOOL": 1,
}  # fmt: skip


def _table(types: list[str]) -> str:
    columns = ", ".join(f"c{i} {t}" for i, t in enumerate(types))
    return f"CREATE TABLE shop.t (id INT PRIMARY KEY, {columns})"


def test_synonyms_name_their_canonical_types() -> None:
    assert canonical_type("integer") == "INT" and canonical_type("Dec") == "DECIMAL"
    assert canonical_type("VARCHAR") == "VARCHAR"  # not a synonym: itself
    assert all(canonical not in TYPE_SYNONYMS for canonical in TYPE_SYNONYMS.values())


def test_a_synonym_column_gives_the_schema_and_value_of_its_canonical_type() -> None:
    synonyms = FakeConnector(_table([s for s, _ in COLUMNS]), topic_prefix="p")
    canonical = FakeConnector(_table([c for _, c in COLUMNS]), topic_prefix="p")
    row = {"id": 1, **{f"c{i}": VALUES[s] for i, (s, _) in enumerate(COLUMNS)}}
    [written] = synonyms.insert("shop.t", row)
    [expected] = canonical.insert("shop.t", row)
    fields = {f.name: f.schema for f in written.value_schema.fields[1].schema.fields}  # "after"
    wanted = {f.name: f.schema for f in expected.value_schema.fields[1].schema.fields}
    for i, (synonym, _) in enumerate(COLUMNS):
        name = f"c{i}"
        got, want = fields[name], wanted[name]
        assert (got.type, got.name, got.parameters) == (want.type, want.name, want.parameters), synonym
        assert written.after[name] == expected.after[name], synonym


def test_the_jdbc_sink_converter_selects_real_columns_in_every_spelling() -> None:
    """``selector.real`` picks FLOAT, REAL and DOUBLE by the registry's family, so FLOAT4, FLOAT8 and
    DOUBLE PRECISION columns become ``float64`` as FLOAT and DOUBLE do (Debezium 3.6.3's converter
    applies to whatever the selector names); an INT column beside them keeps its ``int32``."""
    properties = {
        "converters": "jdbc",
        "jdbc.type": "io.debezium.connector.binlog.converters.JdbcSinkDataTypesConverter",
        "jdbc.selector.real": r"shop\.t\.c.*",
    }
    types = ["FLOAT4", "FLOAT8", "DOUBLE PRECISION", "FLOAT", "REAL", "DOUBLE", "INT"]
    fake = FakeConnector(_table(types), topic_prefix="p", properties=properties)
    [written] = fake.insert("shop.t", {"id": 1, **{f"c{i}": 1.5 for i in range(6)}, "c6": 7})
    fields = {f.name: f.schema.type for f in written.value_schema.fields[1].schema.fields}
    assert [fields[f"c{i}"] for i in range(7)] == ["float64"] * 6 + ["int32"]
    assert [written.after[f"c{i}"] for i in range(7)] == [1.5] * 6 + [7]
