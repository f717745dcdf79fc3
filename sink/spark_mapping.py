"""Connect schemas -> Spark types, and Debezium payloads -> Spark rows in Python: the mapping both
the Spark sink and ``sink.spark_reader`` use, and the *changelog layout* they produce: one typed
column per table column (the ``after`` image, or ``before`` for deletes) followed by the metadata
columns of :data:`METADATA_FIELDS`.

Connect → Spark type mapping (Debezium 3.6.1.Final representations):

=========================================  ===================================================
Connect schema                              Spark type
=========================================  ===================================================
int8 / int16 / int32 / int64                TINYINT / SMALLINT / INT / BIGINT
float / double / boolean / string          FLOAT / DOUBLE / BOOLEAN / STRING
bytes (base64 in JSON), ``Bits``            BINARY
``Decimal`` (base64 unscaled bytes)         DECIMAL(p,s); STRING when p > 38 (Spark's limit)
``io.debezium.time.Date``, Connect Date     DATE
``Timestamp``/``MicroTimestamp``/Nano…      TIMESTAMP_NTZ (DATETIME is a wall-clock value)
``ZonedTimestamp`` (MySQL TIMESTAMP)        TIMESTAMP (an instant; shown in the session zone)
``MicroTime``/``Time``/``NanoTime``         INTERVAL DAY TO SECOND (MySQL TIME is a signed duration)
``Year``                                    INT
``Json``/``Enum``/``EnumSet``/Iso* strings  STRING
``Geometry``/``Point`` structs              STRUCT<wkb: BINARY, srid: INT> (Point adds x, y)
array / map (string keys) / struct          ARRAY / MAP / STRUCT of the mapped types
=========================================  ===================================================

Every column of a produced table is nullable: a column that MySQL drops later is kept and
null-filled, so NOT NULL cannot be promised across the table's life.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import orjson
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from mysql_cdc_base.connect import ConnectSchema

SchemaNode = Mapping[str, Any]
"""A Connect schema in the JSON converter's layout (``{"type": ..., "fields": [...], ...}``)."""

SchemaLike = ConnectSchema | SchemaNode
PyConvert = Callable[[Any], Any]
ColConvert = Callable[[Column], Column]

SPARK_MAX_PRECISION = 38
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH_NTZ = dt.datetime(1970, 1, 1)
_EXACT = decimal.Context(prec=200)  # scaleb must never round: MySQL DECIMAL has at most 65 digits


# ------------------------------------------------------------------------------------------------
# Metadata columns of the changelog layout
# ------------------------------------------------------------------------------------------------
METADATA_FIELDS: tuple[StructField, ...] = (
    StructField("__op", StringType(), True),  # c, r, u, d, t
    StructField("__ts_ms", LongType(), True),  # when the connector built the event
    StructField("__source_ts_ms", LongType(), True),  # when the change happened in MySQL
    StructField("__file", StringType(), True),  # binlog file of the change
    StructField("__pos", LongType(), True),  # binlog position of the rows event
    StructField("__row", IntegerType(), True),  # row index inside the rows event
    StructField("__gtid", StringType(), True),
    StructField("__snapshot", StringType(), True),  # source.snapshot: true/first/last/.../false
    StructField("__deleted", BooleanType(), True),  # op == "d"
)
METADATA_NAMES: tuple[str, ...] = tuple(f.name for f in METADATA_FIELDS)


def metadata_values(value: Mapping[str, Any]) -> tuple[Any, ...]:
    """The metadata columns for one envelope payload, in :data:`METADATA_FIELDS` order."""
    source = value.get("source") or {}
    op = value.get("op")
    return (
        op,
        value.get("ts_ms"),
        source.get("ts_ms"),
        source.get("file"),
        source.get("pos"),
        source.get("row"),
        source.get("gtid"),
        # A null snapshot marker is written by the JSON converter as its schema default "false".
        source.get("snapshot") or "false",
        op == "d",
    )


# ------------------------------------------------------------------------------------------------
# Per-schema mapping
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FieldMapping:
    """How one Connect schema becomes a Spark column.

    ``to_python`` converts a non-null payload value (JSON-ready: base64 text for bytes and decimals)
    to the Python object ``createDataFrame`` wants; ``None`` means the value is used as is.
    ``json_type`` is what ``from_json`` reads the payload value as, and ``to_column`` turns that
    column into ``spark_type`` (``None`` = already the right type).
    """

    spark_type: DataType
    json_type: DataType
    to_python: PyConvert | None = None
    to_column: ColConvert | None = None


def schema_node(schema: SchemaLike) -> SchemaNode:
    return schema.to_json() if isinstance(schema, ConnectSchema) else schema


def _identity(spark_type: DataType) -> FieldMapping:
    return FieldMapping(spark_type, spark_type)


def _b64decode(value: Any) -> bytes:
    return base64.b64decode(value)


def _float(value: Any) -> float:
    # Payloads keep Python floats; JSON read back may carry "NaN"/"Infinity" strings.
    return value if isinstance(value, float) else float(value)


_PRIMITIVES: dict[str, FieldMapping] = {
    "int8": _identity(ByteType()),
    "int16": _identity(ShortType()),
    "int32": _identity(IntegerType()),
    "int64": _identity(LongType()),
    # JsonConverter's names for FLOAT32/FLOAT64 are "float"/"double".
    "float": FieldMapping(FloatType(), FloatType(), _float),
    "double": FieldMapping(DoubleType(), DoubleType(), _float),
    "boolean": _identity(BooleanType()),
    "string": _identity(StringType()),
    "bytes": FieldMapping(BinaryType(), StringType(), _b64decode, F.unbase64),
}


# -- decimals --------------------------------------------------------------------------------------
def _decimal_parameters(node: SchemaNode) -> tuple[int, int]:
    params = node.get("parameters") or {}
    scale = int(params.get("scale", 0))
    precision = int(params.get("connect.decimal.precision", SPARK_MAX_PRECISION))
    return precision, scale


def decimal_from_payload(value: Any, scale: int) -> decimal.Decimal:
    """A Connect Decimal payload (base64 two's-complement unscaled bytes, or a plain number when the
    converter writes ``decimal.format=NUMERIC``) as an exact ``Decimal`` with ``scale`` digits."""
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except ValueError:
            return decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-scale), context=_EXACT)
        unscaled = int.from_bytes(raw, "big", signed=True)
        return decimal.Decimal(unscaled).scaleb(-scale, _EXACT)
    return decimal.Decimal(str(value)).quantize(decimal.Decimal(1).scaleb(-scale), context=_EXACT)


def _unscaled_text(column: Column) -> Column:
    """Base64 two's-complement bytes (at most 16: precision <= 38) → signed decimal digits.

    ``conv`` handles 64 bits, so the sign-extended 128-bit value is split into a signed high half
    and an unsigned low half and recombined in DECIMAL(38,0), which is exact for |v| < 10^38."""
    hexed = F.hex(F.unbase64(column))
    negative = F.substring(hexed, 1, 1) >= F.lit("8")
    padded = F.when(negative, F.lpad(hexed, 32, "F")).otherwise(F.lpad(hexed, 32, "0"))
    high = F.conv(F.substring(padded, 1, 16), 16, -10).cast(DecimalType(38, 0))
    low = F.conv(F.substring(padded, 17, 16), 16, 10).cast(DecimalType(38, 0))
    two64 = F.lit(decimal.Decimal(1 << 64)).cast(DecimalType(20, 0))
    # high * 2^64 alone can leave DECIMAL(38) for large negative values; borrowing one from the
    # high half keeps every intermediate no larger than the result.
    combined = F.when((high < 0) & (low > 0), (high + 1) * two64 - (two64 - low)).otherwise(
        high * two64 + low
    )
    return combined.cast(DecimalType(38, 0)).cast(StringType())


@cache
def _wide_decimal_udf(scale: int) -> Callable[[Column], Column]:
    def convert(value: str | None) -> str | None:
        return None if value is None else format(decimal_from_payload(value, scale), "f")

    return F.udf(convert, StringType(), useArrow=False)


def _decimal(node: SchemaNode, decimal_format: str) -> FieldMapping:
    precision, scale = _decimal_parameters(node)
    if precision > SPARK_MAX_PRECISION:

        def wide_to_python(value: Any) -> str:
            return format(decimal_from_payload(value, scale), "f")

        if decimal_format == "numeric":  # from_json keeps the JSON number's text
            return FieldMapping(StringType(), StringType(), wide_to_python)
        return FieldMapping(StringType(), StringType(), wide_to_python, lambda c: _wide_decimal_udf(scale)(c))
    target = DecimalType(precision, scale)

    def to_python(value: Any) -> decimal.Decimal:
        return decimal_from_payload(value, scale)

    def to_column(column: Column) -> Column:
        if decimal_format == "numeric":  # the JSON number's text
            return column.cast(target)
        # "<unscaled>E-<scale>" parses exactly (Java BigDecimal syntax) before the final cast.
        return F.concat(_unscaled_text(column), F.lit(f"E-{scale}")).cast(target)

    return FieldMapping(target, StringType(), to_python, to_column)


# -- temporal ----------------------------------------------------------------------------------------
# Column expressions need a running session, so they are built when a column is converted.
def _interval_from(unit_literal: str) -> ColConvert:
    def to_column(column: Column) -> Column:
        unit = F.expr(f"INTERVAL '{unit_literal}' SECOND")
        return (column.cast(LongType()) * unit).cast(DayTimeIntervalType())

    return to_column


def _ntz_from(unit_literal: str) -> ColConvert:
    def to_column(column: Column) -> Column:
        # A TIMESTAMP_NTZ literal: a Python datetime literal would go through the local time zone.
        epoch = F.expr("TIMESTAMP_NTZ'1970-01-01 00:00:00'")
        return epoch + column.cast(LongType()) * F.expr(f"INTERVAL '{unit_literal}' SECOND")

    return to_column


def _days(value: int) -> dt.date:
    return _EPOCH_DATE + dt.timedelta(days=value)


def _millis_ntz(value: int) -> dt.datetime:
    return _EPOCH_NTZ + dt.timedelta(milliseconds=value)


def _micros_ntz(value: int) -> dt.datetime:
    return _EPOCH_NTZ + dt.timedelta(microseconds=value)


def _nanos_ntz(value: int) -> dt.datetime:
    return _EPOCH_NTZ + dt.timedelta(microseconds=value // 1000)


def _zoned(value: str) -> dt.datetime:
    # Debezium writes UTC with a trailing Z and 0-9 fractional digits; fromisoformat keeps 6.
    return dt.datetime.fromisoformat(value)


def _micro_time(value: int) -> dt.timedelta:
    return dt.timedelta(microseconds=value)


def _milli_time(value: int) -> dt.timedelta:
    return dt.timedelta(milliseconds=value)


def _nano_time(value: int) -> dt.timedelta:
    return dt.timedelta(microseconds=value // 1000)


_INTERVAL = DayTimeIntervalType()

_LOGICAL: dict[str, Callable[[SchemaNode, str], FieldMapping]] = {
    "org.apache.kafka.connect.data.Decimal": _decimal,
    "io.debezium.time.Date": lambda n, f: FieldMapping(
        DateType(), IntegerType(), _days, F.date_from_unix_date
    ),
    "org.apache.kafka.connect.data.Date": lambda n, f: FieldMapping(
        DateType(), IntegerType(), _days, F.date_from_unix_date
    ),
    "io.debezium.time.Timestamp": lambda n, f: FieldMapping(
        TimestampNTZType(), LongType(), _millis_ntz, _ntz_from("0.001")
    ),
    "org.apache.kafka.connect.data.Timestamp": lambda n, f: FieldMapping(
        TimestampNTZType(), LongType(), _millis_ntz, _ntz_from("0.001")
    ),
    "io.debezium.time.MicroTimestamp": lambda n, f: FieldMapping(
        TimestampNTZType(), LongType(), _micros_ntz, _ntz_from("0.000001")
    ),
    "io.debezium.time.NanoTimestamp": lambda n, f: FieldMapping(
        TimestampNTZType(), LongType(), _nanos_ntz, lambda c: _ntz_from("0.000001")(F.floor(c / 1000))
    ),
    "io.debezium.time.ZonedTimestamp": lambda n, f: FieldMapping(
        TimestampType(), StringType(), _zoned, lambda c: c.cast(TimestampType())
    ),
    "io.debezium.time.MicroTime": lambda n, f: FieldMapping(
        _INTERVAL, LongType(), _micro_time, _interval_from("0.000001")
    ),
    "io.debezium.time.Time": lambda n, f: FieldMapping(
        _INTERVAL, IntegerType(), _milli_time, _interval_from("0.001")
    ),
    "org.apache.kafka.connect.data.Time": lambda n, f: FieldMapping(
        _INTERVAL, IntegerType(), _milli_time, _interval_from("0.001")
    ),
    "io.debezium.time.NanoTime": lambda n, f: FieldMapping(
        _INTERVAL, LongType(), _nano_time, lambda c: _interval_from("0.000001")(F.floor(c / 1000))
    ),
}


# -- containers ----------------------------------------------------------------------------------
def _struct(node: SchemaNode, decimal_format: str) -> FieldMapping:
    members = [(f["field"], field_mapping(f, decimal_format)) for f in node.get("fields") or ()]
    spark_type = StructType([StructField(n, m.spark_type, True) for n, m in members])
    json_type = StructType([StructField(n, m.json_type, True) for n, m in members])
    converters = [(n, m.to_python) for n, m in members]

    def to_python(value: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(
            v if conv is None or v is None else conv(v) for n, conv in converters for v in (value.get(n),)
        )

    def to_column(column: Column) -> Column:
        parts = [(m.to_column(column[n]) if m.to_column else column[n]).alias(n) for n, m in members]
        return F.when(column.isNull(), F.lit(None)).otherwise(F.struct(*parts))

    needs_column = any(m.to_column is not None for _, m in members)
    return FieldMapping(spark_type, json_type, to_python, to_column if needs_column else None)


def _array(node: SchemaNode, decimal_format: str) -> FieldMapping:
    item = field_mapping(node["items"], decimal_format)
    item_py, item_col = item.to_python, item.to_column

    def to_python(value: Iterable[Any]) -> list[Any]:
        return list(value) if item_py is None else [None if v is None else item_py(v) for v in value]

    def to_column(column: Column) -> Column:
        assert item_col is not None
        return F.transform(column, item_col)

    return FieldMapping(
        ArrayType(item.spark_type, True),
        ArrayType(item.json_type, True),
        to_python if item_py is not None else None,
        to_column if item_col is not None else None,
    )


def _map(node: SchemaNode, decimal_format: str) -> FieldMapping:
    if node["keys"].get("type") != "string":
        # The JSON converter writes non-string-keyed maps as [[k, v], ...]; keep the JSON text.
        return FieldMapping(StringType(), StringType(), lambda v: orjson.dumps(v).decode())
    values = field_mapping(node["values"], decimal_format)
    value_py, value_col = values.to_python, values.to_column

    def to_python(value: Mapping[str, Any]) -> dict[str, Any]:
        if value_py is None:
            return dict(value)
        return {k: None if v is None else value_py(v) for k, v in value.items()}

    def to_column(column: Column) -> Column:
        assert value_col is not None
        return F.transform_values(column, lambda _k, v: value_col(v))

    return FieldMapping(
        MapType(StringType(), values.spark_type, True),
        MapType(StringType(), values.json_type, True),
        to_python if value_py is not None else None,
        to_column if value_col is not None else None,
    )


_CONTAINERS: dict[str, Callable[[SchemaNode, str], FieldMapping]] = {
    "struct": _struct,
    "array": _array,
    "map": _map,
}


def field_mapping(schema: SchemaLike, decimal_format: str = "base64") -> FieldMapping:
    """The mapping for one Connect schema: logical name first, then container, then primitive."""
    node = schema_node(schema)
    name = node.get("name")
    if name in _LOGICAL:
        return _LOGICAL[name](node, decimal_format)
    kind = node["type"]
    if kind in _CONTAINERS:
        return _CONTAINERS[kind](node, decimal_format)
    try:
        return _PRIMITIVES[kind]
    except KeyError:
        raise ValueError(f"no Spark mapping for Connect schema type {kind!r}") from None


def spark_type(schema: SchemaLike) -> DataType:
    return field_mapping(schema).spark_type


# ------------------------------------------------------------------------------------------------
# Row images
# ------------------------------------------------------------------------------------------------
def row_schema_of(value_schema: SchemaLike) -> SchemaNode:
    """The row-image struct of an envelope schema (its ``after`` field), or the schema itself when
    it already is a row struct (``<topic>.Value``, e.g. after ExtractNewRecordState) without the
    fields named like the changelog's metadata columns (``__op``, ``__deleted``, ... as its
    ``add.fields`` adds them), which ``unwrapped_envelope`` reads instead."""
    node = schema_node(value_schema)
    for member in node.get("fields") or ():
        if member.get("field") == "after":
            return member
    if any(f.get("field") in METADATA_NAMES for f in node.get("fields") or ()):
        return {**node, "fields": [f for f in node["fields"] if f.get("field") not in METADATA_NAMES]}
    return node


def unwrapped_envelope(value: Mapping[str, Any] | None, key: Any) -> dict[str, Any] | None:
    """A record unwrapped by ``ExtractNewRecordState`` seen as the envelope payload it came from.

    The row is the value without the metadata-named fields; ``__op`` (``add.fields=op``) gives the
    operation, ``__deleted: "true"`` (``delete.tombstone.handling.mode=rewrite``) or a null value (the
    ``tombstone``/``delete-to-tombstone`` modes: then the key is the row image) a delete; otherwise
    the operation is unknown (null): an upsert. ``__ts_ms``, ``__source_ts_ms``, ``__file``,
    ``__pos``, ``__row``, ``__gtid``, ``__snapshot`` fill the metadata columns when added.
    None when there is nothing to apply (a null value without a key)."""
    if value is None:
        if not isinstance(key, Mapping):
            return None
        return {"op": "d", "before": dict(key), "after": None, "source": {}}
    row = {k: v for k, v in value.items() if k not in METADATA_NAMES}
    op = value.get("__op")
    deleted = value.get("__deleted")
    if op is None and deleted is not None:
        op = "d" if str(deleted).lower() == "true" else None
    source = {
        "ts_ms": value.get("__source_ts_ms"),
        "file": value.get("__file"),
        "pos": value.get("__pos"),
        "row": value.get("__row"),
        "gtid": value.get("__gtid"),
        "snapshot": value.get("__snapshot"),
    }
    if op == "d":
        return {"op": "d", "before": row, "after": None, "source": source, "ts_ms": value.get("__ts_ms")}
    return {"op": op, "before": None, "after": row, "source": source, "ts_ms": value.get("__ts_ms")}


@lru_cache(maxsize=4096)
def _row_struct_type_cached(row_json: bytes) -> StructType:
    node = orjson.loads(row_json)
    return StructType(
        [StructField(f["field"], field_mapping(f).spark_type, True) for f in node.get("fields") or ()]
    )


def row_struct_type(value_schema: SchemaLike) -> StructType:
    """The Spark struct of a table's row image (all fields nullable)."""
    row = row_schema_of(value_schema)
    return _row_struct_type_cached(orjson.dumps(row))


def changelog_struct_type(row_type: StructType) -> StructType:
    """Row columns followed by the metadata columns."""
    return StructType([*row_type.fields, *METADATA_FIELDS])


RowConvert = Callable[[Mapping[str, Any]], tuple[Any, ...]]


@lru_cache(maxsize=4096)
def _row_converter_cached(row_json: bytes) -> RowConvert:
    node = orjson.loads(row_json)
    plan = [(f["field"], field_mapping(f).to_python) for f in node.get("fields") or ()]
    if all(conv is None for _, conv in plan):
        names = [n for n, _ in plan]

        def plain(row: Mapping[str, Any]) -> tuple[Any, ...]:
            get = row.get
            return tuple(get(n) for n in names)

        return plain

    def convert(row: Mapping[str, Any]) -> tuple[Any, ...]:
        get = row.get
        return tuple(v if conv is None or v is None else conv(v) for n, conv in plan for v in (get(n),))

    return convert


def row_converter(value_schema: SchemaLike) -> RowConvert:
    """A function turning one row-image payload dict into a tuple in :func:`row_struct_type` order."""
    return _row_converter_cached(orjson.dumps(row_schema_of(value_schema)))


# ------------------------------------------------------------------------------------------------
# Schema evolution rules (shared by the sink's tables and the reader's unions)
# ------------------------------------------------------------------------------------------------
_INTEGRAL_RANK: dict[type[DataType], int] = {ByteType: 1, ShortType: 2, IntegerType: 3, LongType: 4}
_INTEGRAL_DIGITS: dict[type[DataType], int] = {ByteType: 3, ShortType: 5, IntegerType: 10, LongType: 19}


def widen(old: DataType, new: DataType) -> DataType | None:
    """The narrowest type that holds every value of ``old`` and ``new`` *and* that Spark's Parquet
    reader can read files of either type as (so history need not be rewritten); None = incompatible.
    """
    if old == new:
        return old
    old_cls, new_cls = type(old), type(new)
    if old_cls in _INTEGRAL_RANK and new_cls in _INTEGRAL_RANK:
        return old if _INTEGRAL_RANK[old_cls] >= _INTEGRAL_RANK[new_cls] else new
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        scale = max(old.scale, new.scale)
        integer = max(old.precision - old.scale, new.precision - new.scale)
        return DecimalType(integer + scale, scale) if integer + scale <= SPARK_MAX_PRECISION else None
    if isinstance(old, DecimalType) and new_cls in _INTEGRAL_DIGITS:
        return widen(old, DecimalType(_INTEGRAL_DIGITS[new_cls], 0))
    if old_cls in _INTEGRAL_DIGITS and isinstance(new, DecimalType):
        return widen(DecimalType(_INTEGRAL_DIGITS[old_cls], 0), new)
    floating = {FloatType, DoubleType}
    if old_cls in floating and new_cls in floating:
        return DoubleType()
    # Parquet INT32 (and narrower) reads as DOUBLE; INT64 does not.
    if {old_cls, new_cls} & floating and (old_cls in _INTEGRAL_RANK or new_cls in _INTEGRAL_RANK):
        integral = old_cls if old_cls in _INTEGRAL_RANK else new_cls
        return DoubleType() if _INTEGRAL_RANK[integral] <= 3 else None
    if {old_cls, new_cls} == {DateType, TimestampNTZType}:
        return TimestampNTZType()
    if isinstance(old, StructType) and isinstance(new, StructType):
        merged, conflicts = merge_struct(old, new)
        return None if conflicts else merged
    if isinstance(old, ArrayType) and isinstance(new, ArrayType):
        element = widen(old.elementType, new.elementType)
        return None if element is None else ArrayType(element, True)
    return None


def merge_struct(old: StructType, new: StructType) -> tuple[StructType, list[str]]:
    """Union of two row structs: ``old``'s fields (types widened) then ``new``-only fields.
    Returns the merged struct and the names whose types cannot be widened."""
    by_name = {f.name.lower(): f for f in new.fields}
    seen: set[str] = set()
    fields: list[StructField] = []
    conflicts: list[str] = []
    for f in old.fields:
        other = by_name.get(f.name.lower())
        seen.add(f.name.lower())
        if other is None:
            fields.append(StructField(f.name, f.dataType, True))
            continue
        merged = widen(f.dataType, other.dataType)
        if merged is None:
            conflicts.append(f.name)
            merged = f.dataType
        fields.append(StructField(f.name, merged, True))
    fields.extend(StructField(f.name, f.dataType, True) for f in new.fields if f.name.lower() not in seen)
    return StructType(fields), conflicts
