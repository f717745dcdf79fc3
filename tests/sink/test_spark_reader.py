"""Debezium JSON → typed Spark columns (``sink/spark_reader.py``).

Records come from real table models and the connector's converters and event builder; the JSON
path reads what the real jsonl sink wrote. Expected values are the MySQL values the rows were
built from, so both conversion paths (Python for the sink, Spark SQL for users' own jobs) are
checked against the source of truth and against each other.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from connector.records.builder import schema_change_record
from ddl.model import JdbcType
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.jsonl import JsonlSink
from sink.spark_mapping import (
    METADATA_NAMES,
    changelog_struct_type,
    decimal_from_payload,
    field_mapping,
    metadata_values,
    row_converter,
    row_struct_type,
    widen,
)
from sink.spark_reader import debezium_changelog, read_jsonl_values
from tests.sink.spark_support import Emitter, col, make_table, utc

J = JdbcType
TYPES = make_table(
    "db",
    "types",
    [
        col("id", "INT", J.INTEGER, optional=False),
        col("ti", "TINYINT", J.TINYINT),
        col("siu", "SMALLINT", J.SMALLINT, unsigned=True),
        col("bi", "BIGINT", J.BIGINT),
        col("biu", "BIGINT", J.BIGINT, unsigned=True),
        col("d102", "DECIMAL", J.DECIMAL, length=10, scale=2),
        col("d3810", "DECIMAL", J.DECIMAL, length=38, scale=10),
        col("d6530", "DECIMAL", J.DECIMAL, length=65, scale=30),
        col("f", "FLOAT", J.FLOAT),
        col("db", "DOUBLE", J.DOUBLE),
        col("vc", "VARCHAR", J.VARCHAR, length=40),
        col("tx", "TEXT", J.VARCHAR),
        col("da", "DATE", J.DATE),
        col("dt0", "DATETIME", J.TIMESTAMP),
        col("dt6", "DATETIME", J.TIMESTAMP, length=6),
        col("ts3", "TIMESTAMP", J.TIMESTAMP_WITH_TIMEZONE, length=3),
        col("tm6", "TIME", J.TIME, length=6),
        col("yr", "YEAR", J.INTEGER),
        col("vb", "VARBINARY", J.VARBINARY, length=10),
        col("en", "ENUM", J.CHAR, enum_values=("a", "b,c")),
        col("st", "SET", J.CHAR, enum_values=("x", "y", "z")),
        col("js", "JSON", J.OTHER),
        col("b1", "BIT", J.BIT, length=1),
        col("b12", "BIT", J.BIT, length=12),
        col("g", "GEOMETRY", J.OTHER),
        col("pt", "POINT", J.OTHER),
    ],
    primary_key=["id"],
)

POINT_WKB = bytes.fromhex("0101000000000000000000F03F0000000000000040")  # POINT(1 2)
LINE_WKB = bytes.fromhex("010200000002000000" + "0" * 64)  # LINESTRING(0 0, 0 0)

# Column values as the snapshot SELECT returns them (text for decimals and temporals) ...
ROW_A: list[Any] = [
    1,
    -128,
    65535,
    -9223372036854775808,
    18446744073709551615,
    "-12345678.90",
    "-1234567890123456789012345678.0123456789",
    "12345678901234567890123456789012345.123456789012345678901234567890",
    1.1,
    1e300,
    "héllo wörld ✓",
    "x" * 1000,
    "1969-07-20",
    "2020-01-02 03:04:05",
    "1960-01-02 03:04:05.123456",
    "2021-03-04 05:06:07.123",
    "-838:59:59.000000",
    2155,
    b"\x00\x01\xff",
    "b,c",
    "x,z",
    '{"k": [1, 2.5, "s"]}',
    b"\x01",
    b"\x0a\xbc",
    (4326).to_bytes(4, "little") + LINE_WKB,
    b"\0\0\0\0" + POINT_WKB,
]
ROW_NULLS: list[Any] = [2] + [None] * (len(ROW_A) - 1)

# ... and the values Spark must show for them.
F32_1_1 = struct.unpack("<f", struct.pack("<f", 1.1))[0]
EXPECTED_A: dict[str, Any] = {
    "id": 1,
    "ti": -128,
    "siu": 65535,
    "bi": -9223372036854775808,
    "biu": -1,  # bigint.unsigned.handling.mode=long wraps like Debezium
    "d102": Decimal("-12345678.90"),
    "d3810": Decimal("-1234567890123456789012345678.0123456789"),
    "d6530": "12345678901234567890123456789012345.123456789012345678901234567890",
    "f": F32_1_1,
    "db": 1e300,
    "vc": "héllo wörld ✓",
    "tx": "x" * 1000,
    "da": dt.date(1969, 7, 20),
    "dt0": dt.datetime(2020, 1, 2, 3, 4, 5),
    "dt6": dt.datetime(1960, 1, 2, 3, 4, 5, 123456),
    "ts3": dt.datetime(2021, 3, 4, 5, 6, 7, 123000, tzinfo=dt.UTC),
    "tm6": -dt.timedelta(hours=838, minutes=59, seconds=59),
    "yr": 2155,
    "vb": b"\x00\x01\xff",
    "en": "b,c",
    "st": "x,z",
    "js": '{"k": [1, 2.5, "s"]}',
    "b1": True,
    "b12": b"\xbc\x0a",  # io.debezium.data.Bits is little-endian
    "g": (LINE_WKB, 4326),
    "pt": (1.0, 2.0, POINT_WKB, None),
}
EXPECTED_TYPES = {
    "id": IntegerType(),
    "ti": ShortType(),
    "siu": IntegerType(),
    "bi": LongType(),
    "biu": LongType(),
    "d102": DecimalType(10, 2),
    "d3810": DecimalType(38, 10),
    "d6530": StringType(),
    "f": FloatType(),
    "db": DoubleType(),
    "vc": StringType(),
    "tx": StringType(),
    "da": DateType(),
    "dt0": TimestampNTZType(),
    "dt6": TimestampNTZType(),
    "ts3": TimestampType(),
    "tm6": DayTimeIntervalType(),
    "yr": IntegerType(),
    "vb": BinaryType(),
    "en": StringType(),
    "st": StringType(),
    "js": StringType(),
    "b1": BooleanType(),
    "b12": BinaryType(),
    "g": StructType([StructField("wkb", BinaryType()), StructField("srid", IntegerType())]),
    "pt": StructType(
        [
            StructField("x", DoubleType()),
            StructField("y", DoubleType()),
            StructField("wkb", BinaryType()),
            StructField("srid", IntegerType()),
        ]
    ),
}


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    """Collected values in comparable form (bytearray → bytes, Rows → tuples, TIMESTAMP → UTC)."""
    out = {}
    for name, value in row.items():
        if isinstance(value, bytearray):
            value = bytes(value)
        elif isinstance(value, tuple):  # pyspark Row
            value = tuple(bytes(v) if isinstance(v, bytearray) else v for v in value)
        elif isinstance(value, dt.datetime) and name == "ts3":
            value = utc(value)
        out[name] = value
    return out


def workload() -> tuple[list[ChangeRecord], list[tuple[str, dict[str, Any]]]]:
    """c, c, u, d, key change (d + c), truncate; with the (op, image) each changelog row must hold."""
    em = Emitter()
    row_a2 = list(ROW_A)
    row_a2[10] = "changed"
    row_a3 = list(row_a2)
    row_a3[0] = 3
    records = [
        *em.insert(TYPES, ROW_A, ROW_NULLS),
        *em.update(TYPES, ROW_A, row_a2),
        *em.delete(TYPES, ROW_NULLS),
        *em.update(TYPES, row_a2, row_a3),  # primary key change
        *em.truncate(TYPES),
    ]
    nulls = {name: None for name in EXPECTED_A} | {"id": 2}
    a2 = EXPECTED_A | {"vc": "changed"}
    expected = [
        ("c", EXPECTED_A),
        ("c", nulls),
        ("u", a2),
        ("d", nulls),
        ("d", a2),
        ("c", a2 | {"id": 3}),
        ("t", {name: None for name in EXPECTED_A}),
    ]
    return records, expected


def ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Binlog order; the two halves of a key change share a position: delete first.
    return sorted(rows, key=lambda r: (r["__file"], r["__pos"], r["__row"], r["__op"] != "d"))


def check_changelog(rows: list[dict[str, Any]], expected: list[tuple[str, dict[str, Any]]]) -> None:
    assert len(rows) == len(expected)
    for row, (op, image) in zip(ordered(rows), expected, strict=True):
        assert row["__op"] == op
        assert row["__deleted"] is (op == "d")
        assert row["__snapshot"] == "false"
        assert row["__file"] == "mysql-bin.000001"
        assert row["__source_ts_ms"] == 1_700_000_000_000 + row["__pos"]
        data = normalise({k: v for k, v in row.items() if k not in METADATA_NAMES})
        assert data == image


def test_connect_schemas_map_to_spark_types() -> None:
    ts = Emitter().schema(TYPES)
    row_type = row_struct_type(ts.envelope_schema)
    assert {f.name: f.dataType for f in row_type.fields} == EXPECTED_TYPES
    assert all(f.nullable for f in row_type.fields)
    assert row_struct_type(ts.value_schema) == row_type  # a Value schema works as well
    assert [f.name for f in changelog_struct_type(row_type).fields][-len(METADATA_NAMES) :] == list(
        METADATA_NAMES
    )


def test_python_conversion_matches_mysql_values(spark: SparkSession) -> None:
    records, expected = workload()
    data = [r for r in records if r.kind is RecordKind.DATA]
    convert = row_converter(data[0].value_schema)  # type: ignore[arg-type]
    rows = []
    for r in data:
        image = r.before if r.op == "d" else r.after
        rows.append((*(convert(image) if image else (None,) * len(TYPES.columns)), *metadata_values(r.value)))
    frame = spark.createDataFrame(rows, changelog_struct_type(row_struct_type(data[0].value_schema)))  # type: ignore[arg-type]
    check_changelog([r.asDict() for r in frame.collect()], expected)


def test_jsonl_output_reads_back_as_typed_columns(spark: SparkSession, tmp_path: Path) -> None:
    records, expected = workload()
    em = Emitter()
    ddl = schema_change_record(
        em.builder,
        "db",
        "CREATE TABLE types (id INT)",
        [],
        em.builder.source(None, em._where()[0]),
        {"file": "f", "pos": 1},
        1,
    )
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path)
    sink.start()
    sink.send([ddl, *records])  # schema change records and tombstones are not change events
    sink.flush()
    sink.close()
    assert sum(1 for r in records if r.kind is RecordKind.TOMBSTONE) == 2

    tables = debezium_changelog(read_jsonl_values(spark, str(path)))
    assert list(tables) == ["db.types"]
    frame = tables["db.types"]
    assert {f.name: f.dataType for f in frame.schema.fields if f.name not in METADATA_NAMES} == EXPECTED_TYPES
    check_changelog([r.asDict() for r in frame.collect()], expected)


def test_values_written_without_schemas_need_the_schema_passed(spark: SparkSession, tmp_path: Path) -> None:
    records, expected = workload()
    path = tmp_path / "bare.jsonl"
    sink = JsonlSink(path, value_schemas=False)
    sink.start()
    sink.send(records)
    sink.flush()
    sink.close()
    envelope = records[0].value_schema
    assert envelope is not None
    tables = debezium_changelog(read_jsonl_values(spark, str(path)), value_schema=envelope)
    check_changelog([r.asDict() for r in tables["db.types"].collect()], expected)


def test_schema_versions_are_unioned_with_widened_types(spark: SparkSession, tmp_path: Path) -> None:
    v1 = make_table(
        "db", "evo", [col("id", "INT", J.INTEGER, optional=False), col("a", "INT", J.INTEGER)], ["id"]
    )
    v2 = make_table(
        "db",
        "evo",
        [
            col("id", "INT", J.INTEGER, optional=False),
            col("a", "BIGINT", J.BIGINT),
            col("b", "DECIMAL", J.DECIMAL, length=5, scale=2),
        ],
        ["id"],
    )
    v3 = make_table(
        "db",
        "evo",
        [col("id", "INT", J.INTEGER, optional=False), col("b", "DECIMAL", J.DECIMAL, length=12, scale=4)],
        ["id"],
    )
    em = Emitter()
    records = [
        *em.insert(v1, [1, 7]),
        *em.insert(v2, [2, 2**40, "1.25"]),
        *em.insert(v3, [3, "-99999999.1234"]),
    ]
    path = tmp_path / "evo.jsonl"
    sink = JsonlSink(path)
    sink.send(records)
    sink.flush()
    sink.close()
    frame = debezium_changelog(read_jsonl_values(spark, str(path)))["db.evo"]
    types = {f.name: f.dataType for f in frame.schema.fields if f.name not in METADATA_NAMES}
    assert types == {"id": IntegerType(), "a": LongType(), "b": DecimalType(12, 4)}
    rows = sorted((r["id"], r["a"], r["b"]) for r in frame.collect())
    assert rows == [(1, 7, None), (2, 2**40, Decimal("1.2500")), (3, None, Decimal("-99999999.1234"))]


def test_incompatible_versions_fall_back_to_string(spark: SparkSession, tmp_path: Path) -> None:
    v1 = make_table(
        "db", "clash", [col("id", "INT", J.INTEGER, optional=False), col("a", "INT", J.INTEGER)], ["id"]
    )
    v2 = make_table(
        "db",
        "clash",
        [col("id", "INT", J.INTEGER, optional=False), col("a", "VARCHAR", J.VARCHAR, length=5)],
        ["id"],
    )
    em = Emitter()
    path = tmp_path / "clash.jsonl"
    sink = JsonlSink(path)
    sink.send([*em.insert(v1, [1, 42]), *em.insert(v2, [2, "x"])])
    sink.flush()
    sink.close()
    frame = debezium_changelog(read_jsonl_values(spark, str(path)))["db.clash"]
    assert frame.schema["a"].dataType == StringType()
    assert sorted((r["id"], r["a"]) for r in frame.collect()) == [(1, "42"), (2, "x")]


@pytest.mark.parametrize(
    "text,scale",
    [
        ("0", 0),
        ("-1", 0),
        ("127", 0),
        ("128", 0),
        ("-129", 3),
        ("18446744073709551615", 0),
        ("-99999999999999999999999999999999999999", 0),
        ("99999999999999999999.999999999999999999", 18),
    ],
)
def test_decimal_payloads_decode_exactly(spark: SparkSession, text: str, scale: int) -> None:
    value = Decimal(text)
    unscaled = int(value.scaleb(scale, decimal.Context(prec=100)))
    raw = unscaled.to_bytes((unscaled.bit_length() + 8) // 8 or 1, "big", signed=True)
    payload = base64.b64encode(raw).decode()
    assert decimal_from_payload(payload, scale) == value
    mapping = field_mapping(
        {
            "type": "bytes",
            "name": "org.apache.kafka.connect.data.Decimal",
            "parameters": {"scale": str(scale), "connect.decimal.precision": "38"},
        }
    )
    assert mapping.to_column is not None
    got = spark.range(1).select(mapping.to_column(F.lit(payload)).alias("v")).collect()[0]["v"]
    assert got == value


def test_widening_rules() -> None:
    assert widen(IntegerType(), LongType()) == LongType()
    assert widen(LongType(), ShortType()) == LongType()
    assert widen(DecimalType(5, 2), DecimalType(10, 0)) == DecimalType(12, 2)
    assert widen(IntegerType(), DecimalType(5, 2)) == DecimalType(12, 2)
    assert widen(FloatType(), DoubleType()) == DoubleType()
    assert widen(IntegerType(), DoubleType()) == DoubleType()
    assert widen(LongType(), DoubleType()) is None  # Parquet INT64 cannot be read as DOUBLE
    assert widen(IntegerType(), StringType()) is None
    assert widen(DecimalType(38, 0), DecimalType(38, 10)) is None
