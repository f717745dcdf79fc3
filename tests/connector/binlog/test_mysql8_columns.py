"""MySQL 8/9 column kinds on bytes real servers wrote (``shared/mysql8-binlogs``), through the
connector's own pieces: the DDL parser (the files' CREATE TABLE statements), mysql-replication's
TABLE_MAP column parser (as taught by ``connector.binlog.library_support``), the generated row decoder, and the
converters of the table's ``TableSchema``.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import struct
from types import SimpleNamespace
from typing import Any

import pytest

from connector.binlog.image_reader import compile_image_reader
from connector.binlog.json.binary import JsonOpaque, JsonTime, decimal_from_binary, parse_mysql_json
from connector.binlog.json.diff import read_length_encoded
from connector.config import ConnectorConfig
from connector.records.builder import EventBuilder, TableSchema
from connector.records.conversion import ConverterSettings
from ddl.model import SchemaModel
from ddl.parsing.parser import parser_for
from mysql_cdc_base.table_id import TableId
from tests.connector.mysql8_support import bodies, events, rows_event_parts, table_map

QUERY, TABLE_MAP, WRITE_ROWS, UPDATE_ROWS = 0x02, 0x13, 0x1E, 0x1F
CONFIG = ConnectorConfig.from_mapping(
    {"topic.prefix": "t", "database.hostname": "127.0.0.1", "database.user": "u", "database.server.id": "1"}
)


def statements(name: str) -> list[str]:
    """The SQL of the file's QUERY events (status variables and the schema name skipped)."""
    out = []
    for body in bodies(name, QUERY):
        schema_length, status_length = body[8], int.from_bytes(body[11:13], "little")
        out.append(body[13 + status_length + schema_length + 1 :].decode())
    return out


def model_of(name: str, database: str) -> SchemaModel:
    parser, model = parser_for("mysql"), SchemaModel()
    for sql in statements(name):
        if sql.upper().startswith(("CREATE TABLE", "DROP", "CREATE DATABASE")):
            model = parser.parse(sql, model, database).model
    return model


_BINARY_TYPES = frozenset({"BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"})


def images(name: str, table: str, model: SchemaModel | None = None, database: str = "") -> list[list[Any]]:
    """Every row image of ``table`` in the file (updates: before, then after), decoded by the
    generated reader over the columns the file's TABLE_MAP describes. With ``model``, text and
    binary columns get the character sets the DDL gives them (what binlog_row_metadata=FULL's
    COLUMN_CHARSET says; these helpers do not read the optional metadata)."""
    maps = {}
    out: list[list[Any]] = []
    for event in events(name):
        if event.event_type == TABLE_MAP:
            found = table_map(event.body)
            maps[found.table_id] = found
        elif event.event_type in (WRITE_ROWS, UPDATE_ROWS, 0x20):
            parts = rows_event_parts(event.body, event.event_type == UPDATE_ROWS)
            mapped = maps[parts.table_id]
            if mapped.table != table:
                continue
            declared = model.table(TableId(database, table)) if model is not None else None
            if declared is not None:
                for column, model_column in zip(mapped.columns, declared.columns, strict=True):
                    binary = model_column.data_type in _BINARY_TYPES
                    column.character_set_name = "binary" if binary else model_column.charset or "utf8mb4"
            reader = compile_image_reader(mapped.columns, {})
            p = 0
            while p < len(parts.rows):
                image, p = reader(parts.rows, p)
                out.append(image)
    return out


def table_schema(model: SchemaModel, database: str, table: str) -> TableSchema:
    found = model.table(TableId(database, table))
    assert found is not None
    return EventBuilder(CONFIG, converter_settings=ConverterSettings()).table_schema(found)


# -- VECTOR (MySQL 9.0) -------------------------------------------------------------------------
VECTOR_FILE = "rust_mysql_common/vector.binlog"


def test_vector_ddl_table_map_and_schema() -> None:
    model = model_of(VECTOR_FILE, "dtb")
    bar = model.table(TableId("dtb", "bar"))
    assert bar is not None
    assert [(c.name, c.data_type, c.length) for c in bar.columns[1:]] == [
        ("vector_column", "VECTOR", 2),
        ("foo", "TEXT", None),
        ("vector_column2", "VECTOR", 4),
    ]
    # TABLE_MAP: type 242 with one metadata byte (the length prefix size); the columns after it
    # keep their own metadata (the TEXT column's 2-byte length prefix).
    mapped = table_map(next(b for b in bodies(VECTOR_FILE, TABLE_MAP) if b"bar" in b))
    assert [(c.type, getattr(c, "length_size", None)) for c in mapped.columns] == [
        (8, None),
        (242, 4),
        (252, 2),
        (242, 4),
    ]
    # Debezium 3.x: VECTOR → ARRAY<FLOAT32> io.debezium.data.FloatVector v1 (reference 4.9).
    schema = json.loads(table_schema(model, "dtb", "bar").value_schema.json_bytes)
    vector = next(f for f in schema["fields"] if f["field"] == "vector_column")
    assert vector == {
        "type": "array",
        "items": {"type": "float", "optional": False},
        "optional": False,
        "name": "io.debezium.data.FloatVector",
        "version": 1,
        "field": "vector_column",
    }


def test_vector_values_from_the_binlog_and_the_snapshot_agree() -> None:
    model = model_of(VECTOR_FILE, "dtb")
    schema = table_schema(model, "dtb", "bar")
    rows = images(VECTOR_FILE, "bar")
    assert rows
    for image in rows:
        value = schema.value_from_binlog(image)
        # As many float32 elements as the VECTOR(n) dimension; the column after it still reads.
        assert len(value["vector_column"]) == 2 and len(value["vector_column2"]) == 4
        assert value["foo"] in (None, "bar")  # the null bitmap's third bit says which
        # Each element is the little-endian float32 at its place in the value's bytes.
        assert value["vector_column"] == [x for (x,) in struct.iter_unpack("<f", image[1])]
        # A snapshot SELECT returns the same bytes (VECTOR has the binary charset).
        assert schema.value_from_snapshot(image) == value
    assert "bar" in [schema.value_from_binlog(image)["foo"] for image in rows]
    # Written as Java prints floats: the float32 nearest 1.1 is "1.1", not 1.100000023841858.
    first = schema.value_from_binlog(rows[0])
    rendered = schema.value_schema.payload_for_json(first)
    assert [repr(x) for x in rendered["vector_column"]] == [
        repr(float(f"{x:.7g}")) for x in first["vector_column"]
    ]


# -- INVISIBLE columns (8.0.23+) -----------------------------------------------------------------
INVISIBLE_FILE = "rust_mysql_common/binlog-invisible-columns.000001"


def test_invisible_columns_are_in_the_model_the_images_and_the_records() -> None:
    model = model_of(INVISIBLE_FILE, "test")
    t1 = model.table(TableId("test", "t1"))
    assert t1 is not None
    assert [(c.name, c.invisible) for c in t1.columns] == [
        ("f1", True),
        ("f2", True),
        ("f3", False),
        ("f4", False),
        ("f5", False),
        ("f6", True),
    ]
    schema = table_schema(model, "test", "t1")
    # Debezium's record has a field per column, invisible or not (its parser ignores the keyword).
    assert [f["field"] for f in json.loads(schema.value_schema.json_bytes)["fields"]] == [
        "f1",
        "f2",
        "f3",
        "f4",
        "f5",
        "f6",
    ]
    first = schema.value_from_binlog(images(INVISIBLE_FILE, "t1", model, "test")[0])
    # The sample's first row numbers its columns 1 to 6 (f3 negative, f6 above 2^32): every
    # invisible column is in the image and each value sits in its own column.
    assert first["f1"] == 1 and first["f2"] == 2 and first["f3"] == -3 and first["f4"] == "4"
    assert base64.b64decode(first["f5"]) == b"\x05" and first["f6"] == 6_000_000_000


def test_set_visible_and_invisible_change_the_model() -> None:
    model = model_of(INVISIBLE_FILE, "test")
    parser = parser_for("mysql")
    altered = parser.parse(
        "ALTER TABLE t1 ALTER COLUMN f1 SET VISIBLE, ALTER COLUMN f3 SET INVISIBLE", model, "test"
    )
    t1 = altered.model.table(TableId("test", "t1"))
    assert t1 is not None
    assert {c.name for c in t1.columns if c.invisible} == {"f2", "f3", "f6"}
    # SHOW CREATE TABLE writes the keyword in a versioned comment.
    shown = parser.parse(
        "CREATE TABLE `t2` (\n  `a` int DEFAULT NULL /*!80023 INVISIBLE */,\n  `b` int DEFAULT NULL\n)",
        SchemaModel(),
        "test",
    )
    t2 = shown.model.table(TableId("test", "t2"))
    assert t2 is not None and [c.invisible for c in t2.columns] == [True, False]


# -- JSON opaque values (MySQL 9.0.1 sample) -----------------------------------------------------
OPAQUE_FILE = "rust_mysql_common/json-opaque.binlog"


def test_json_opaque_values_decode_and_render_as_debezium_streams_them() -> None:
    model = model_of(OPAQUE_FILE, "foo")
    schema = table_schema(model, "foo", "test")
    values = [image[0] for image in images(OPAQUE_FILE, "test")]
    documents = [value.document() for value in values]
    assert documents == [
        {b"a": JsonOpaque(15, b"U")},  # an opaque VARCHAR value
        {b"b": dt.date(2012, 3, 18)},
        {b"c": dt.datetime(2012, 3, 18, 11, 30, 45)},
        {b"c": JsonTime(False, 87, 31, 46, 654321)},  # TIME beyond 23 hours
        {b"d": decimal.Decimal("123.456")},
        {b"e": decimal.Decimal("9.00")},
        {b"e": [0, 1, True, False]},
        {b"e": None},
    ]
    rendered = [schema.value_from_binlog([value])["a"] for value in values]
    # What Debezium streams (mysql-binlog-connector-java's JsonBinary.parseAsString, as its jar
    # prints these values in test_mysql8_binlogs_java.py): compact, temporal values quoted with the
    # fraction's trailing zeros trimmed, decimals as numbers, other opaque values as plain base64.
    assert rendered == [
        '{"a":"VQ=="}',
        '{"b":"2012-03-18"}',
        '{"c":"2012-03-18 11:30:45"}',
        '{"c":"87:31:46.654321"}',
        '{"d":123.456}',
        '{"e":9.00}',
        '{"e":[0,1,true,false]}',
        '{"e":null}',
    ]


@pytest.mark.parametrize(
    ("precision", "scale", "hex_bytes", "expected"),
    [
        # MySQL's decimal_bin examples (strings/decimal.cc): 1234567890.1234 as DECIMAL(14,4).
        (14, 4, "810DFB38D204D2", "1234567890.1234"),
        (14, 4, "7EF204C72DFB2D", "-1234567890.1234"),
        (4, 2, "8A0A", "10.10"),
        (5, 0, "800000", "0"),
    ],
)
def test_decimal_binary_form(precision: int, scale: int, hex_bytes: str, expected: str) -> None:
    assert decimal_from_binary(precision, scale, bytes.fromhex(hex_bytes)) == decimal.Decimal(expected)


def test_truncated_json_is_refused_with_the_byte_offset() -> None:
    document = images(OPAQUE_FILE, "test")[6][0].document()
    assert document == {b"e": [0, 1, True, False]}
    raw = bytes.fromhex("0001001c000b000100020c006504001000050000050100040100040200")
    assert parse_mysql_json(raw) == document
    with pytest.raises(ValueError, match="byte"):
        parse_mysql_json(raw[:-6])


# -- TIME2 with an hour above 23, BIT, ENUM, SET --------------------------------------------------


def test_time2_beyond_23_hours() -> None:
    """The sample's TIME value, 3 bytes 0x6043E5: TIME2 stores value + 0x800000; a negative one
    (below the offset) is -(0x800000 - 0x6043E5) = -0x1FBC1B, whose fields hour (10 bits), minute
    (6), second (6) are 507, 48, 27: -507:48:27."""
    name = "rust_mysql_common/time_issue.000001"
    (image,) = images(name, "t")
    assert image == [-(507 * 3600 + 48 * 60 + 27) * 1_000_000]  # signed microseconds
    column = table_map(bodies(name, TABLE_MAP)[0]).columns[0]
    assert column.type == 19 and column.fsp == 0
    model = parser_for("mysql").parse("CREATE TABLE t (a TIME)", SchemaModel(), "db").model
    schema = table_schema(model, "db", "t")
    # io.debezium.time.MicroTime: microseconds, negative for a negative TIME.
    assert schema.value_from_binlog(image) == {"a": -(507 * 3600 + 48 * 60 + 27) * 1_000_000}


def test_bit_columns() -> None:
    name = "rust_mysql_common/mysql_type_bit.000001"
    model = model_of(name, "test")
    (image,) = images(name, "foo")
    value = table_schema(model, "test", "foo").value_from_binlog(image)
    # BIT(3) and BIT(8): Debezium's io.debezium.data.Bits, bytes little-endian, base64 in JSON;
    # the image's bit strings are 100 and 00100000.
    assert value["a"] == base64.b64encode(bytes([0b100])).decode()
    assert value["b"] == "foo"
    assert value["c"] == base64.b64encode(bytes([0b00100000])).decode()


def test_enum_and_set_columns() -> None:
    name = "rust_mysql_common/mysql-enum-string-set.000001"
    model = model_of(name, "test")
    t = model.table(TableId("test", "t"))
    assert t is not None
    # The connector needs binlog_row_metadata=FULL, so ENUM/SET members come from the table map's
    # optional metadata; the sample has them (ENUM/SET_STR_VALUE), equal to the DDL's members.
    enum_column, set_column = t.columns[2], t.columns[3]
    assert enum_column.enum_values == ("var1", "variant2", "foo")
    assert set_column.enum_values == ("one", "two", "three", "four")
    # As mysql-replication's TableMapEvent sets them from ENUM_STR_VALUE / SET_STR_VALUE: ENUM
    # indexes count from 1 (0 is the invalid value ''), SET bits from the first member.
    mapped = table_map(bodies(name, TABLE_MAP)[0])
    mapped.columns[2].enum_values = ["", *enum_column.enum_values]
    mapped.columns[3].set_values = list(set_column.enum_values)
    assert (mapped.columns[2].type, mapped.columns[2].size) == (247, 1)  # ENUM, 1-byte index
    assert (mapped.columns[3].type, mapped.columns[3].size) == (248, 1)  # SET, 1-byte bitmap
    for column, declared in zip(mapped.columns, t.columns, strict=True):
        column.character_set_name = declared.charset or "utf8mb4"
    reader = compile_image_reader(mapped.columns, {})
    schema = table_schema(model, "test", "t")
    values = []
    for event in events(name):
        if event.event_type in (WRITE_ROWS, UPDATE_ROWS, 0x20):
            rows = rows_event_parts(event.body, event.event_type == UPDATE_ROWS).rows
            p = 0
            while p < len(rows):
                image, p = reader(rows, p)
                value = schema.value_from_binlog(image)
                values.append((value["f3"], value["f4"]))
    # Written, updated (before, after), deleted: the update changes both columns and the delete's
    # image is the update's after image. Sets list members in definition order (Debezium).
    assert values[0] == values[1] and values[2] == values[3] and values[0] != values[2]
    assert all(f3 in enum_column.enum_values for f3, _ in values)
    assert all(set(f4.split(",")) <= set(set_column.enum_values) for _, f4 in values)
    # The images' bytes: ENUM index 1 and SET bitmap 0b0101 (written), index 2 and 0b1010 (updated).
    assert values == [
        ("var1", "one,three"),
        ("var1", "one,three"),
        ("variant2", "two,four"),
        ("variant2", "two,four"),
    ]


def _optional_metadata_types(data: bytes, start: int, end: int) -> list[int]:
    types, pos = [], start
    while pos < end:
        length, value = read_length_encoded(data, pos + 1)
        types.append(data[pos])
        pos = value + length
    return types


def test_the_library_is_not_shown_optional_metadata_it_cannot_read() -> None:
    """MySQL 9 adds VECTOR_DIMENSIONALITY (type 13) to TABLE_MAP's optional metadata, before the
    column names; mysql-replication fails on a type it does not know. The entry is taken out of the
    packet's bytes before the library reads them; the others stay as they were."""
    from pymysql.protocol import MysqlPacket

    from connector.binlog.library_support import _drop_unknown_optional_metadata

    body = next(b for b in bodies(VECTOR_FILE, TABLE_MAP) if b"bar" in b)
    mapped = table_map(body)
    # Optional metadata starts after the column metadata block and the null bitmap.
    pos = body.index(bytes([8, 0xF2, 0xFC, 0xF2])) + 4
    pos += 1 + body[pos] + (len(mapped.columns) + 7) // 8
    checksum = b"\x00\x00\x00\x00"
    assert _optional_metadata_types(body, pos, len(body)) == [1, 2, 13, 4, 8, 12]
    packet = MysqlPacket(body + checksum, "utf8")
    packet._position = pos
    _drop_unknown_optional_metadata(SimpleNamespace(packet=packet))
    data = packet._data
    assert data[:pos] == body[:pos] and data.endswith(checksum)
    assert _optional_metadata_types(data, pos, len(data) - 4) == [1, 2, 4, 8, 12]
    # What went: type 13, length 2, one byte per VECTOR column, the DDL's VECTOR(2) and VECTOR(4).
    dropped = body.index(b"\x0d\x02", pos)
    assert body[dropped : dropped + 4] == bytes([13, 2, 2, 4])
    assert data == body[:dropped] + body[dropped + 4 :] + checksum
