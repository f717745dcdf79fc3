"""A table's structure from its TABLE_MAP event's FULL row metadata, as a CREATE TABLE statement.

With ``binlog_row_metadata=FULL`` (MySQL 8.0.1+) a table map carries the column names, signedness,
charsets, ENUM/SET values, the primary key and the columns' visibility, besides the column types
and their lengths every table map has. That is enough to describe the table when neither the
binlog's own DDL nor a schema history does (a replay of archived binlogs). The statement goes
through the connector's own DDL parser, so the table model (JDBC types, lengths, charsets) is the
one the same CREATE TABLE from the server would give. Not in the metadata, so not in the
statement: defaults, comments, auto-increment, and the exact integer display widths.

``create_table_statement`` returns None when the table map has no column names (MINIMAL metadata).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pymysqlreplication.constants import FIELD_TYPE

from ddl.mysql_types import INTEGER_TYPES

# Bytes per character (mbmaxlen) of the charsets whose columns' lengths are stored in bytes.
_MAX_BYTES_PER_CHAR = {
    "utf8mb4": 4,
    "utf8mb3": 3,
    "utf8": 3,
    "ucs2": 2,
    "utf16": 4,
    "utf16le": 4,
    "utf32": 4,
    "big5": 2,
    "cp932": 2,
    "eucjpms": 3,
    "euckr": 2,
    "gb18030": 4,
    "gb2312": 2,
    "gbk": 2,
    "sjis": 2,
    "ujis": 3,
}
_BLOB_SIZES = {1: "TINY", 2: "", 3: "MEDIUM", 4: "LONG"}
_INTEGERS = {t.integer.binlog_type: t.name for t in INTEGER_TYPES if t.integer is not None}


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _charset_of(column: Any) -> str | None:
    collation = getattr(column, "collation_name", None)
    if not collation:
        return None
    return "binary" if collation == "binary" else str(collation).split("_")[0]


def _chars(column: Any, byte_length: int) -> int:
    charset = _charset_of(column) or "utf8mb4"
    return byte_length // _MAX_BYTES_PER_CHAR.get(charset, 1)


def _text_attributes(column: Any) -> str:
    charset = _charset_of(column)
    if charset is None or charset == "binary":
        return ""
    return f" CHARACTER SET {charset} COLLATE {column.collation_name}"


def _string(column: Any, binary: str, text: str, byte_length: int) -> str:
    if _charset_of(column) == "binary":
        return f"{binary}({byte_length})"
    return f"{text}({_chars(column, byte_length)}){_text_attributes(column)}"


def _quoted_values(values: Any) -> str:
    return ",".join("'" + str(v).replace("\\", "\\\\").replace("'", "''") + "'" for v in values)


def _enum(column: Any) -> str:
    values = [v for v in (column.enum_values or []) if v != ""]  # the library puts "" first
    return f"ENUM({_quoted_values(values)}){_text_attributes(column)}"


def _set(column: Any) -> str:
    return f"SET({_quoted_values(column.set_values or [])}){_text_attributes(column)}"


def _blob(column: Any) -> str:
    size = _BLOB_SIZES.get(int(column.length_size), "LONG")
    if _charset_of(column) in (None, "binary"):
        return f"{size}BLOB"
    return f"{size}TEXT{_text_attributes(column)}"


def _fsp(name: str) -> Callable[[Any], str]:
    return lambda c: f"{name}({c.fsp})" if getattr(c, "fsp", 0) else name


_TYPES: dict[int, Callable[[Any], str]] = {
    FIELD_TYPE.FLOAT: lambda c: "FLOAT",
    FIELD_TYPE.DOUBLE: lambda c: "DOUBLE",
    FIELD_TYPE.NEWDECIMAL: lambda c: f"DECIMAL({c.precision},{c.decimals})",
    FIELD_TYPE.YEAR: lambda c: "YEAR",
    FIELD_TYPE.DATE: lambda c: "DATE",
    FIELD_TYPE.TIME2: _fsp("TIME"),
    FIELD_TYPE.DATETIME2: _fsp("DATETIME"),
    FIELD_TYPE.TIMESTAMP2: _fsp("TIMESTAMP"),
    FIELD_TYPE.VARCHAR: lambda c: _string(c, "VARBINARY", "VARCHAR", c.max_length),
    FIELD_TYPE.VAR_STRING: lambda c: _string(c, "VARBINARY", "VARCHAR", c.max_length),
    FIELD_TYPE.STRING: lambda c: _string(c, "BINARY", "CHAR", c.max_length),
    FIELD_TYPE.BLOB: _blob,
    FIELD_TYPE.JSON: lambda c: "JSON",
    FIELD_TYPE.GEOMETRY: lambda c: "GEOMETRY",
    FIELD_TYPE.BIT: lambda c: f"BIT({c.bits})",
    FIELD_TYPE.ENUM: _enum,
    FIELD_TYPE.SET: _set,
}


def column_type_sql(column: Any) -> str | None:
    """The SQL type of one table-map column (None: a type this module does not know)."""
    integer = _INTEGERS.get(column.type)
    if integer is not None:
        return integer + (" UNSIGNED" if column.unsigned else "")
    render = _TYPES.get(column.type)
    return render(column) if render is not None else None


def create_table_statement(table_map: Any) -> str | None:
    """``CREATE TABLE`` for the table a TableMapEvent describes, or None without column names."""
    metadata = table_map.optional_metadata
    names = list(metadata.column_name_list or [])
    columns = list(table_map.columns)
    if not names or len(names) != len(columns):
        return None
    nullable = int.from_bytes(bytes(table_map.null_bitmask), "little")
    visibility = list(metadata.visibility_list or [])
    parts = []
    for index, (name, column) in enumerate(zip(names, columns, strict=True)):
        sql_type = column_type_sql(column)
        if sql_type is None:
            return None
        null = "" if nullable >> index & 1 else " NOT NULL"
        invisible = " INVISIBLE" if visibility and not visibility[index] else ""
        parts.append(f"{_quote(name)} {sql_type}{null}{invisible}")
    key = [names[i] for i in metadata.simple_primary_key_list or []]
    key += [names[i] for i in dict(metadata.primary_keys_with_prefix or {})]
    if key:
        parts.append("PRIMARY KEY (" + ", ".join(_quote(k) for k in key) + ")")
    table = f"{_quote(str(table_map.schema))}.{_quote(str(table_map.table))}"
    return f"CREATE TABLE {table} ({', '.join(parts)})"
