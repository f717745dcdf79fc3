"""Schema evolution: the row type a schema change event implies, column renames in DDL, and the
values MySQL gives existing rows for a new column."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from ddl.model import BINARY_TYPES, CHARACTER_TYPES
from ddl.model import Column as MysqlColumn
from ddl.mysql_types import (
    INTEGER_TYPES,
    Family,
    IntegerFacts,
    canonical_type,
    is_single_precision,
    spellings_of,
)
from mysql_cdc_base.connect import ValueModes
from sink.spark_mapping import RowConvert, field_mapping, row_converter, row_struct_type

_IDENT = r"(?:`((?:[^`]|``)+)`|([A-Za-z0-9_$\u0080-\uffff]+))"
_RENAME_PATTERNS = (
    re.compile(rf"\bRENAME\s+COLUMN\s+{_IDENT}\s+TO\s+{_IDENT}", re.IGNORECASE),
    re.compile(rf"\bCHANGE\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?{_IDENT}\s+{_IDENT}", re.IGNORECASE),
)


def renames_in_ddl(ddl: str) -> list[tuple[str, str]]:
    """Column renames an ALTER TABLE statement performs (``RENAME COLUMN a TO b``, ``CHANGE a b``)."""
    found: list[tuple[int, str, str]] = []
    for pattern in _RENAME_PATTERNS:
        for match in pattern.finditer(ddl or ""):
            quoted_old, plain_old, quoted_new, plain_new = match.groups()
            old = (quoted_old or "").replace("``", "`") or plain_old
            new = (quoted_new or "").replace("``", "`") or plain_new
            if old.lower() != new.lower():
                found.append((match.start(), old, new))
    return [(old, new) for _, old, new in sorted(found)]


def add_renames(
    pending: Sequence[tuple[str, str]], renames: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """``pending`` followed by ``renames``; a column renamed twice keeps its first name
    (``a→b`` then ``b→c`` is ``a→c``)."""
    out = list(pending)
    for old, new in renames:
        for i, (first, last) in enumerate(out):
            if last.lower() == old.lower():
                out[i] = (first, new)
                break
        else:
            out.append((old, new))
    return [(old, new) for old, new in out if old.lower() != new.lower()]


# The Connect schemas Debezium gives MySQL column types (reference section 4), for the types whose
# Spark column is certain from the ``tableChanges`` column alone. A schema change event evolves the
# Spark tables at once only when every column is covered; otherwise the table follows its next
# change event, whose Connect schema is authoritative. Temporal types differ between
# ``time.precision.mode`` values only in ways the Spark column does not show.
_INT_TYPES: dict[str, IntegerFacts] = {t.name: t.integer for t in INTEGER_TYPES if t.integer is not None}
_STRING_TYPES = CHARACTER_TYPES | {"SET"}
_FLOAT_TYPES = spellings_of(Family.FLOAT)
_TEMPORAL_TYPES: dict[str, dict[str, Any]] = {
    "DATE": {"type": "int32", "name": "io.debezium.time.Date"},
    "DATETIME": {"type": "int64", "name": "io.debezium.time.MicroTimestamp"},
    "TIMESTAMP": {"type": "string", "name": "io.debezium.time.ZonedTimestamp"},
    "TIME": {"type": "int64", "name": "io.debezium.time.MicroTime"},
    "YEAR": {"type": "int32", "name": "io.debezium.time.Year"},
}
_INTEGER_LITERAL = re.compile(r"[+-]?\d+")


def _decimal_node(precision: int, scale: int) -> dict[str, Any]:
    return {
        "type": "bytes",
        "name": "org.apache.kafka.connect.data.Decimal",
        "parameters": {"scale": str(scale), "connect.decimal.precision": str(precision)},
    }


def _column_type_node(column: MysqlColumn, modes: ValueModes) -> dict[str, Any] | None:
    """The Connect type of a column's values (without name, optionality and default); None when it
    is not certain from the column alone."""
    kind = canonical_type(column.data_type)
    if kind in _INT_TYPES:
        facts = _INT_TYPES[kind]
        if not column.unsigned:
            return {"type": facts.connect_signed}
        if facts.connect_unsigned is not None:  # else bigint.unsigned.handling.mode
            return {"type": facts.connect_unsigned}
        return {
            "long": {"type": "int64"},
            "precise": _decimal_node(20, 0),
        }.get(modes.bigint_unsigned_handling_mode)
    if kind in _STRING_TYPES or kind == "JSON":
        return {"type": "string"}
    if kind == "BOOLEAN" or (kind == "BIT" and (column.length or 1) == 1):
        return {"type": "boolean"}
    if kind == "BIT":
        return {"type": "bytes", "name": "io.debezium.data.Bits"}
    if kind in _FLOAT_TYPES:
        return {"type": "float" if is_single_precision(kind, column.length, column.scale) else "double"}
    if kind == "DECIMAL":
        precision = column.length if column.length is not None else 10
        scale = column.scale if column.scale is not None else 0
        return {
            "precise": _decimal_node(precision, scale),
            "double": {"type": "double"},
            "string": {"type": "string"},
        }.get(modes.decimal_handling_mode)
    if kind in BINARY_TYPES:
        binary = {"bytes": "bytes", "base64": "string", "base64-url-safe": "string", "hex": "string"}
        mode = binary.get(modes.binary_handling_mode)
        return {"type": mode} if mode is not None else None
    return dict(_TEMPORAL_TYPES[kind]) if kind in _TEMPORAL_TYPES else None


def _default_literal(text: str) -> str:
    # A charset introducer (_utf8mb4'x') is not part of the value.
    if text.startswith("_") and "'" in text:
        head, _, rest = text.partition("'")
        if head[1:].isidentifier() and rest.endswith("'"):
            return rest[:-1].replace("''", "'")
    return text


_NO_DEFAULT = object()


def _column_default(column: MysqlColumn, node: Mapping[str, Any]) -> Any:
    """The Connect default of a column: ``_NO_DEFAULT`` when it has none, None when it is not
    certain from the column alone."""
    literal = column.default_expression
    if literal is None or column.generated or (literal.startswith("(") and literal.endswith(")")):
        return _NO_DEFAULT
    kind = canonical_type(column.data_type)
    if kind in _INT_TYPES:
        if kind in ("BIGINT", "INT8") and column.unsigned:  # wrapped or a decimal: not certain here
            return None
        return int(literal) if _INTEGER_LITERAL.fullmatch(literal.strip()) else None
    if kind in _STRING_TYPES:
        return _default_literal(literal)
    return None


def field_of_column(column: MysqlColumn, modes: ValueModes, with_default: bool) -> dict[str, Any] | None:
    """The Connect field (JSON layout) a change event carries for ``column``, as far as its Spark
    column shows; ``with_default``: the default matters (the column is new and fills old rows).
    None when that is not certain from the ``tableChanges`` column alone."""
    node = _column_type_node(column, modes)
    if node is None:
        return None
    node = {**node, "optional": column.optional, "field": column.name}
    if with_default:
        default = _column_default(column, node)
        if default is None:
            return None
        if default is not _NO_DEFAULT:
            node["default"] = default
    return node


# Delta has no interval type: TIME columns (INTERVAL DAY TO SECOND in ``sink/spark_reader.py``'s
# mapping) are kept as BIGINT microseconds, Debezium's MicroTime value.
_MICROSECOND = dt.timedelta(microseconds=1)


def delta_row(value_schema: Any) -> tuple[StructType, RowConvert]:
    """The Delta row type of a row-image (or envelope) schema and the converter of its payloads:
    :func:`row_struct_type` and :func:`row_converter` with interval columns as BIGINT microseconds."""
    row_type, convert = row_struct_type(value_schema), row_converter(value_schema)
    intervals = [i for i, f in enumerate(row_type.fields) if isinstance(f.dataType, DayTimeIntervalType)]
    if not intervals:
        return row_type, convert
    delta_type = StructType(
        [
            StructField(f.name, LongType(), True) if i in intervals else f
            for i, f in enumerate(row_type.fields)
        ]
    )

    def convert_micros(row: Mapping[str, Any]) -> tuple[Any, ...]:
        values = list(convert(row))
        for i in intervals:
            if values[i] is not None:
                values[i] = values[i] // _MICROSECOND
        return tuple(values)

    return delta_type, convert_micros


_ZERO: dict[type[DataType], Any] = {
    StringType: "",
    BinaryType: b"",
    BooleanType: False,
    DateType: dt.date(1970, 1, 1),
    TimestampNTZType: dt.datetime(1970, 1, 1),
    TimestampType: dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
    DayTimeIntervalType: dt.timedelta(0),
}


def literal(value: Any, data_type: DataType) -> Column:
    """A literal of ``data_type``. Temporal values go through text so no time zone applies."""
    if value is None:
        return F.lit(None).cast(data_type)
    if isinstance(value, dt.datetime):
        text = (value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value).isoformat()
        if isinstance(data_type, TimestampType):
            return F.lit(text + "Z").cast(TimestampType())
        return F.lit(text).cast(TimestampNTZType()).cast(data_type)
    if isinstance(value, dt.date):
        return F.lit(value.isoformat()).cast(DateType()).cast(data_type)
    if isinstance(value, tuple) and isinstance(data_type, StructType):
        return F.struct(
            *[literal(v, f.dataType).alias(f.name) for v, f in zip(value, data_type.fields, strict=True)]
        )
    return F.lit(value).cast(data_type)


def fill_value(node: Mapping[str, Any], data_type: DataType) -> Any:
    """What MySQL puts into existing rows for a new column: its default, else for NOT NULL columns
    the type's zero value (Debezium's fallback), else null."""
    if "default" in node:
        mapping = field_mapping(node)
        value = node["default"]
        value = value if mapping.to_python is None or value is None else mapping.to_python(value)
        return value // _MICROSECOND if isinstance(value, dt.timedelta) else value  # see delta_row
    if node.get("optional", True):
        return None
    if isinstance(data_type, DecimalType):
        return Decimal(0)
    zero = _ZERO.get(type(data_type))
    return zero if zero is not None else (None if isinstance(data_type, StructType) else 0)
