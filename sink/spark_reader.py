"""Debezium change events as typed Spark columns.

Two ways in, one result:

* the Spark sink (``sink/spark.py``) converts ``ChangeRecord`` payloads in Python
  (:func:`row_converter`) and builds DataFrames with an explicit schema (:func:`row_struct_type`);
* users whose events travel through Kafka or JSON-lines files call :func:`debezium_changelog` on a
  DataFrame of Debezium JSON values; it reads the Connect schema carried in each event and converts
  the payload with Spark SQL expressions only (no Python UDF, except for DECIMALs wider than Spark's
  38 digits).

Both produce the *changelog layout*: one typed column per table column (the ``after`` image, or
``before`` for deletes) followed by the metadata columns of :data:`METADATA_FIELDS`.

Connect → Spark type mapping (Debezium 3.6.1.Final representations, ``debezium-reference.md`` §4):

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
from typing import TYPE_CHECKING, Any

import orjson
from pyspark.sql import Column, DataFrame
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

from sink.connect import ConnectSchema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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


# ------------------------------------------------------------------------------------------------
# Reading Debezium JSON with Spark
# ------------------------------------------------------------------------------------------------
_SOURCE_JSON = StructType(
    [
        StructField("ts_ms", LongType()),
        StructField("snapshot", StringType()),
        StructField("db", StringType()),
        StructField("table", StringType()),
        StructField("file", StringType()),
        StructField("pos", LongType()),
        StructField("row", IntegerType()),
        StructField("gtid", StringType()),
    ]
)


def _payload_json_type(row_json: StructType) -> StructType:
    return StructType(
        [
            StructField("before", row_json),
            StructField("after", row_json),
            StructField("source", _SOURCE_JSON),
            StructField("op", StringType()),
            StructField("ts_ms", LongType()),
        ]
    )


def _is_envelope(node: SchemaNode) -> bool:
    names = {f.get("field") for f in node.get("fields") or ()}
    return node.get("type") == "struct" and {"before", "after", "source", "op"} <= names


def table_of_envelope(node: SchemaNode) -> str:
    """``<prefix>.<db>.<table>.Envelope`` → ``db.table`` (the names Debezium put in the topic)."""
    name = str(node.get("name") or "")
    base = name.removesuffix(".Envelope")
    parts = base.split(".")
    return ".".join(parts[-2:]) if len(parts) >= 2 else base


def _typed_part(
    frame: DataFrame, column: Column, envelope: SchemaNode, decimal_format: str, bare: bool
) -> tuple[DataFrame, StructType]:
    row = row_schema_of(envelope)
    members = [(f["field"], field_mapping(f, decimal_format)) for f in row.get("fields") or ()]
    row_json = StructType([StructField(n, m.json_type, True) for n, m in members])
    payload_type = _payload_json_type(row_json)
    wrapped = F.from_json(column, StructType([StructField("payload", payload_type)]))["payload"]
    payload = F.coalesce(wrapped, F.from_json(column, payload_type)) if bare else wrapped
    parsed = frame.select(payload.alias("p")).where(F.col("p").isNotNull() & F.col("p.op").isNotNull())
    image = F.when(F.col("p.op") == "d", F.col("p.before")).otherwise(F.col("p.after"))
    typed = [
        (m.to_column(image[n]) if m.to_column else image[n]).cast(m.spark_type).alias(n) for n, m in members
    ]
    meta = [
        F.col("p.op").alias("__op"),
        F.col("p.ts_ms").alias("__ts_ms"),
        F.col("p.source.ts_ms").alias("__source_ts_ms"),
        F.col("p.source.file").alias("__file"),
        F.col("p.source.pos").alias("__pos"),
        F.col("p.source.row").alias("__row"),
        F.col("p.source.gtid").alias("__gtid"),
        F.coalesce(F.col("p.source.snapshot"), F.lit("false")).alias("__snapshot"),
        (F.col("p.op") == "d").alias("__deleted"),
    ]
    row_type = StructType([StructField(n, m.spark_type, True) for n, m in members])
    return parsed.select(*typed, *meta), row_type


def _is_unwrapped_row(node: SchemaNode) -> bool:
    """A value schema written by ExtractNewRecordState: the row struct ``<topic>.Value`` itself."""
    return (
        node.get("type") == "struct"
        and str(node.get("name") or "").endswith(".Value")
        and not _is_envelope(node)
    )


def table_of_row(node: SchemaNode) -> str:
    """``<prefix>.<db>.<table>.Value`` → ``db.table``."""
    parts = str(node.get("name") or "").removesuffix(".Value").split(".")
    return ".".join(parts[-2:])


def _typed_unwrapped_part(
    frame: DataFrame, column: Column, node: SchemaNode, decimal_format: str
) -> tuple[DataFrame, StructType]:
    """Like ``_typed_part`` for unwrapped values (see ``unwrapped_envelope``): metadata from the
    ``add.fields`` named like the metadata columns, the operation from ``__op`` or ``__deleted``."""
    row = row_schema_of(node)
    members = [(f["field"], field_mapping(f, decimal_format)) for f in row.get("fields") or ()]
    present = {f.get("field") for f in node.get("fields") or ()}
    meta_types = {f.name: (StringType() if f.name == "__deleted" else f.dataType) for f in METADATA_FIELDS}
    meta_json = [StructField(name, meta_types[name], True) for name in METADATA_NAMES if name in present]
    payload_type = StructType([*(StructField(n, m.json_type, True) for n, m in members), *meta_json])
    payload = F.from_json(column, StructType([StructField("payload", payload_type)]))["payload"]
    parsed = frame.select(payload.alias("p")).where(F.col("p").isNotNull())

    def meta(name: str) -> Column:
        field = next(f for f in METADATA_FIELDS if f.name == name)
        return F.col(f"p.{name}") if name in present else F.lit(None).cast(field.dataType)

    deleted = F.lower(F.col("p.__deleted")) == "true" if "__deleted" in present else F.lit(False)
    op = F.coalesce(meta("__op"), F.when(deleted, F.lit("d")))
    typed = [
        (m.to_column(F.col("p")[n]) if m.to_column else F.col("p")[n]).cast(m.spark_type).alias(n)
        for n, m in members
    ]
    metadata = [
        op.alias("__op"),
        meta("__ts_ms").alias("__ts_ms"),
        meta("__source_ts_ms").alias("__source_ts_ms"),
        meta("__file").alias("__file"),
        meta("__pos").alias("__pos"),
        meta("__row").alias("__row"),
        meta("__gtid").alias("__gtid"),
        F.coalesce(meta("__snapshot"), F.lit("false")).alias("__snapshot"),
        F.coalesce(op == "d", F.lit(False)).alias("__deleted"),
    ]
    row_type = StructType([StructField(n, m.spark_type, True) for n, m in members])
    return parsed.select(*typed, *metadata), row_type


def conform(frame: DataFrame, row_type: StructType, target: StructType) -> DataFrame:
    present = {f.name.lower(): f for f in row_type.fields}
    columns = []
    for f in target.fields:
        source = present.get(f.name.lower())
        if source is None:
            columns.append(F.lit(None).cast(f.dataType).alias(f.name))
        else:
            columns.append(F.col(f"`{source.name}`").cast(f.dataType).alias(f.name))
    return frame.select(*columns, *METADATA_NAMES)


def debezium_changelog(
    frame: DataFrame,
    column: str = "value",
    *,
    value_schema: SchemaLike | str | None = None,
    decimal_format: str = "base64",
) -> dict[str, DataFrame]:
    """Typed changelog DataFrames, one per table, from a DataFrame of Debezium JSON values.

    ``frame[column]`` holds the value of each Kafka record / the ``value`` of each JSON line, as
    text or bytes: ``{"schema": ..., "payload": ...}`` as written with ``schemas.enable=true``.
    Events whose schema is not a change-event envelope (schema changes, heartbeats, transaction
    metadata) and tombstones are dropped. Values unwrapped by ExtractNewRecordState (schema
    ``<topic>.Value``) are read as rows: ``__op``/``__deleted`` and the other metadata-named fields its
    ``add.fields`` adds fill the metadata columns (null when not added; a delete shows only with
    ``delete.tombstone.handling.mode=rewrite``, as the other modes leave no row in the value). Each table's events may carry several schema versions;
    they are unioned by column name with widened types (a type that cannot be widened becomes
    STRING). Pass ``value_schema`` (Connect schema, JSON node or JSON text) for values written
    without schemas; ``decimal_format="numeric"`` when the converter wrote decimals as numbers.

    Keys are ``"db.table"``; each DataFrame has the table's columns then :data:`METADATA_NAMES`.
    Order rows by ``__file``, ``__pos``, ``__row`` for binlog order (snapshot rows share one
    position).
    """
    fmt = decimal_format.lower()
    source = frame.select(F.col(column).cast(StringType()).alias("__value")).where(
        F.col("__value").isNotNull()
    )
    raw = F.col("__value")
    parts: dict[str, list[tuple[DataFrame, StructType]]] = {}
    if value_schema is not None:
        node = orjson.loads(value_schema) if isinstance(value_schema, str) else schema_node(value_schema)
        part = _typed_part(source, raw, node, fmt, bare=True)
        parts.setdefault(table_of_envelope(node), []).append(part)
    else:
        schema_text = F.get_json_object(raw, "$.schema")
        keyed = source.withColumn("__schema_id", F.xxhash64(schema_text))
        distinct = keyed.groupBy("__schema_id").agg(F.first(schema_text).alias("schema")).collect()
        for row in distinct:
            if row["schema"] is None:
                continue
            node = orjson.loads(row["schema"])
            subset = keyed.where(F.col("__schema_id") == F.lit(row["__schema_id"]))
            if _is_envelope(node):
                part = _typed_part(subset, raw, node, fmt, bare=False)
                parts.setdefault(table_of_envelope(node), []).append(part)
            elif _is_unwrapped_row(node):
                part = _typed_unwrapped_part(subset, raw, node, fmt)
                parts.setdefault(table_of_row(node), []).append(part)
    return {table: _union_versions(versions) for table, versions in parts.items()}


def _union_versions(versions: list[tuple[DataFrame, StructType]]) -> DataFrame:
    target = versions[0][1]
    stringify: set[str] = set()
    for _, row_type in versions[1:]:
        target, conflicts = merge_struct(target, row_type)
        stringify.update(c.lower() for c in conflicts)
    if stringify:
        target = StructType(
            [
                StructField(f.name, StringType(), True) if f.name.lower() in stringify else f
                for f in target.fields
            ]
        )
    result: DataFrame | None = None
    for frame, row_type in versions:
        conformed = conform(frame, row_type, target)
        result = conformed if result is None else result.unionByName(conformed)
    assert result is not None
    return result


def read_jsonl_values(spark: SparkSession, path: str) -> DataFrame:
    """The ``value`` column of the ``jsonl`` sink's files, as JSON text (tombstones are null)."""
    lines = spark.read.text(path)
    return lines.select(F.get_json_object("value", "$.value").alias("value"))
