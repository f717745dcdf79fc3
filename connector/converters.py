"""Per-column value converters: MySQL column -> Debezium 3.6.1.Final Connect schema and payload value.

``column_converter`` is called once per column whenever a table's structure changes; it picks, through
dispatch tables keyed by the column's type and the connector's modes, two small closures:

* ``from_binlog`` takes the value exactly as mysql-replication 1.0.17 yields it for the column;
* ``from_snapshot`` takes the value pymysql returns for ``SELECT *`` on a connection opened with
  ``conv=SNAPSHOT_CONVERSIONS`` (temporal types and decimals arrive as the server's text, so zero
  dates, negative times and every fractional digit survive).

Both return the same JSON-ready payload value (bytes already base64 text, decimals already encoded);
floats stay Python floats (``connect.java_float`` renders them at serialisation). The rules are
Debezium's (``BinlogValueConverters`` / ``JdbcValueConverters``); section numbers in comments refer
to ``shared/docs/debezium-reference.md``.

mysql-replication quirks handled here (found by probing a real server, see the tests):

* TIME(n) negative values with a fractional part come out wrong: the library negates the integer
  part and the (already negative) fraction separately, giving ``-(H+1) + f`` for ``-(H + f)``.
  The mapping is invertible, so ``_micro_time_binlog`` undoes it.
* zero dates and zero-in-date values (``0000-00-00``, month or day 0) arrive as ``None``, as do
  valid dates in year 0000 (irrecoverable: those become null / the NOT NULL fallback in streaming,
  while the snapshot keeps Debezium's adjusted value).
* a zero TIMESTAMP arrives as ``1970-01-01 00:00:00`` (epoch 0, which no valid TIMESTAMP can be).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pymysql import converters as pymysql_converters
from pymysql.constants import FIELD_TYPE

from connector.connect import NO_DEFAULT, ConnectSchema
from ddl.model import Column, JdbcType, Table

Convert = Callable[[Any], Any]

UTC = dt.UTC


@dataclass(frozen=True)
class ConverterSettings:
    """The connector properties that change how values are represented (reference section 2.3)."""

    decimal_handling_mode: str = "precise"  # precise | double | string
    time_precision_mode: str = "adaptive_time_microseconds"  # adaptive_time_microseconds | adaptive | connect
    bigint_unsigned_handling_mode: str = "long"  # long | precise
    binary_handling_mode: str = "bytes"  # bytes | base64 | base64-url-safe | hex
    enable_time_adjuster: bool = True
    # Time zone of the snapshot connection's session: TIMESTAMP text is in this zone.
    server_time_zone: dt.tzinfo = UTC
    propagate_source_type: tuple[str, ...] = ()
    datatype_propagate_source_type: tuple[str, ...] = ()
    include_schema_comments: bool = False


@dataclass(frozen=True)
class ColumnConverter:
    schema: ConnectSchema
    from_binlog: Convert
    from_snapshot: Convert
    # Python codec mysql-replication must decode this column's text with (set it as the
    # ``character_set_name`` of the library's column before reading rows); None = not a text column.
    binlog_encoding: str | None = None


def identity(value: Any) -> Any:
    """The converter for values that are already payload-ready; readers may skip calling it."""
    return value


# ------------------------------------------------------------------------------------------------
# What a type family contributes
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Mapping:
    type: str
    binlog: Convert  # non-null binlog value -> payload (may return None for invalid values)
    snapshot: Convert  # non-null snapshot value -> payload (may return None for invalid values)
    name: str | None = None
    version: int | None = None
    parameters: Mapping[str, str] | None = None
    # Payload for a NOT NULL column whose value is null/invalid (zero dates) and has no default.
    fallback: Any = None
    # Literal DEFAULT text -> payload; None means "same as the snapshot converter".
    default: Convert | None = None
    doc: str | None = None
    binlog_encoding: str | None = None
    # True when binlog/snapshot may return None for a non-null input (then NOT NULL columns need
    # the fallback substituted after conversion, not only for null inputs).
    may_invalidate: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


# A builder gets the column, the settings and the payload to use for invalid (zero) temporal
# values; it returns the family's mapping.
_Builder = Callable[[Column, ConverterSettings, Any], _Mapping]


# ------------------------------------------------------------------------------------------------
# Integers (4.2)
# ------------------------------------------------------------------------------------------------
_TWO_64 = 1 << 64
_TWO_63 = 1 << 63


def _int_from_text(text: Any) -> int:
    # Snapshot ints already arrive as int (SNAPSHOT_CONVERSIONS); defaults arrive as text, where
    # Debezium accepts decimals (Math.round(Double.parseDouble)) and true/false.
    if isinstance(text, int):
        return text
    return _parse_int_default(str(text))


def _parse_int_default(text: str) -> int:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return 1 if lowered == "true" else 0
    try:
        return int(lowered)
    except ValueError:
        # Java Math.round: floor(x + 0.5)
        import math

        return math.floor(float(lowered) + 0.5)


def _bigint_unsigned_long(value: int) -> int:
    # Debezium hands the binlog's signed long through: values >= 2^63 wrap to negative.
    return value - _TWO_64 if value >= _TWO_63 else value


def _bigint_unsigned_long_text(value: Any) -> int:
    return _bigint_unsigned_long(_int_from_text(value))


def _int_builder(kind: str) -> _Builder:
    def build(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
        return _Mapping(kind, identity, identity, default=_int_from_text)
    return build


def _tinyint(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    # 3.6.1.Final: TINYINT is INT16 signed or unsigned (INT8 only from 3.7.0.Alpha1).
    return _Mapping("int16", identity, identity, default=_int_from_text)


def _smallint(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _Mapping("int32" if column.unsigned else "int16", identity, identity,
                    default=_int_from_text)


def _int(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _Mapping("int64" if column.unsigned else "int32", identity, identity,
                    default=_int_from_text)


def _bigint(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    if not column.unsigned:
        return _Mapping("int64", identity, identity, default=_int_from_text)
    return _BIGINT_UNSIGNED_MODES[settings.bigint_unsigned_handling_mode](column, settings, on_zero)


def _bigint_unsigned_as_long(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _Mapping("int64", _bigint_unsigned_long, _bigint_unsigned_long_text,
                    default=_bigint_unsigned_long_text)


def _bigint_unsigned_precise(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    def convert(value: Any) -> str:
        return _encode_unscaled(_int_from_text(value))
    return _Mapping("bytes", convert, convert, name=_DECIMAL_NAME, version=1,
                    parameters={"scale": "0", "connect.decimal.precision": "20"})


_BIGINT_UNSIGNED_MODES: dict[str, _Builder] = {
    "long": _bigint_unsigned_as_long,
    "precise": _bigint_unsigned_precise,
}


# ------------------------------------------------------------------------------------------------
# DECIMAL / NUMERIC (4.3)
# ------------------------------------------------------------------------------------------------
_DECIMAL_NAME = "org.apache.kafka.connect.data.Decimal"
# Precision wide enough for DECIMAL(65,30) arithmetic without rounding.
_WIDE = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP)


def _encode_unscaled(unscaled: int) -> str:
    """Base64 of Java ``BigInteger.toByteArray()``: minimal big-endian two's complement."""
    size = (~unscaled if unscaled < 0 else unscaled).bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode("ascii")


def _decimal_precision_scale(column: Column) -> tuple[int, int]:
    return (column.length if column.length is not None else 10,
            column.scale if column.scale is not None else 0)


def _decimal(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _DECIMAL_MODES[settings.decimal_handling_mode](column, settings, on_zero)


def _rescale(value: Any, exponent: decimal.Decimal) -> decimal.Decimal:
    # Binlog values already carry the column scale; defaults may not (HALF_UP, like setScale).
    return _WIDE.quantize(decimal.Decimal(value), exponent)


def _decimal_precise(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    precision, scale = _decimal_precision_scale(column)
    exponent = decimal.Decimal(1).scaleb(-scale)

    def from_binlog(value: decimal.Decimal) -> str:
        return _encode_unscaled(int(_WIDE.scaleb(value, scale)))

    def from_snapshot(text: str) -> str:
        # The server prints exactly `scale` fraction digits, so the unscaled value is the digits.
        return _encode_unscaled(int(text.replace(".", "", 1)))

    def from_default(text: str) -> str:
        return _encode_unscaled(int(_WIDE.scaleb(_rescale(text.strip(), exponent), scale)))

    return _Mapping("bytes", from_binlog, from_snapshot, name=_DECIMAL_NAME, version=1,
                    parameters={"scale": str(scale), "connect.decimal.precision": str(precision)},
                    default=from_default)


def _decimal_double(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _Mapping("float64", float, float, default=lambda text: float(text.strip()))


def _decimal_string(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    _, scale = _decimal_precision_scale(column)
    exponent = decimal.Decimal(1).scaleb(-scale)

    def from_binlog(value: decimal.Decimal) -> str:
        # BigDecimal.toPlainString(): never exponent notation ("0E-18" must be "0.000...").
        return format(value, "f")

    def from_default(text: str) -> str:
        return format(_rescale(text.strip(), exponent), "f")

    return _Mapping("string", from_binlog, identity, default=from_default)


_DECIMAL_MODES: dict[str, _Builder] = {
    "precise": _decimal_precise,
    "double": _decimal_double,
    "string": _decimal_string,
}


# ------------------------------------------------------------------------------------------------
# Strings (4.4)
# ------------------------------------------------------------------------------------------------
def _string(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _Mapping("string", identity, identity, default=identity,
                    binlog_encoding=binlog_encoding(column.charset))


# MySQL charset name -> Python codec that decodes it the way the server converts it to utf8mb4.
_CHARSET_CODECS: dict[str, str] = {
    "utf8mb4": "utf-8",
    "utf8mb3": "utf-8",
    "utf8": "utf-8",
    "latin1": "cp1252",
    "ascii": "ascii",
}


def binlog_encoding(charset: str | None) -> str:
    """The Python codec for a MySQL character set (UTF-8 when unknown, as Debezium does)."""
    if charset is None:
        return "utf-8"
    return _CHARSET_CODECS.get(charset.lower(), "utf-8")


# ------------------------------------------------------------------------------------------------
# Temporal (4.5)
# ------------------------------------------------------------------------------------------------
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_EPOCH = dt.datetime(1970, 1, 1)
_ONE_MS = dt.timedelta(milliseconds=1)
_ONE_US = dt.timedelta(microseconds=1)


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date; any year (including 0)."""
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _adjust_year(year: int) -> int:
    # enable.time.adjuster: two-digit years 0-69 -> 20xx, 70-99 -> 19xx.
    if year < 70:
        return year + 2000
    if year < 100:
        return year + 1900
    return year


def _parse_date_text(text: str) -> tuple[int, int, int] | None:
    """``YYYY-MM-DD`` -> (y, m, d); None for zero dates and zero-in-date values."""
    year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
    if month == 0 or day == 0:
        return None
    return year, month, day


def _parse_datetime_text(text: str) -> tuple[int, int, int, int, int] | None:
    """``YYYY-MM-DD HH:MM:SS[.f*]`` -> (y, m, d, seconds of day, microseconds); None if zero."""
    ymd = _parse_date_text(text)
    if ymd is None:
        return None
    seconds = int(text[11:13]) * 3600 + int(text[14:16]) * 60 + int(text[17:19])
    frac = text[20:26]
    micros = int(frac.ljust(6, "0")) if frac else 0
    return (*ymd, seconds, micros)


def _datetime_text_to_micros(text: str, adjust: bool) -> int | None:
    parts = _parse_datetime_text(text)
    if parts is None:
        return None
    year, month, day, seconds, micros = parts
    if adjust:
        year = _adjust_year(year)
    return (_days_from_civil(year, month, day) * 86400 + seconds) * 1_000_000 + micros


def _date_value(year: int, month: int, day: int, adjust: bool) -> int:
    return _days_from_civil(_adjust_year(year) if adjust else year, month, day)


def _date(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    adjust = settings.enable_time_adjuster
    name = ("org.apache.kafka.connect.data.Date" if settings.time_precision_mode == "connect"
            else "io.debezium.time.Date")

    def from_binlog(value: dt.date) -> int:
        if value.year < 100 and adjust:
            return _days_from_civil(_adjust_year(value.year), value.month, value.day)
        return value.toordinal() - _EPOCH_ORDINAL

    def from_text(text: str) -> Any:
        ymd = _parse_date_text(text)
        return on_zero if ymd is None else _date_value(*ymd, adjust)

    def from_default(text: str) -> Any:
        text = text.strip()
        if text == "0" or len(text) < 10:
            return on_zero
        # DATE defaults may be written with a time part; only the date counts.
        return from_text(text[:10])

    return _Mapping("int32", from_binlog, from_text, name=name, version=1, fallback=0,
                    default=from_default, may_invalidate=True)


def _datetime_precision(column: Column) -> int:
    return column.length if column.length is not None and column.length > 0 else 0


def _datetime(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    adjust = settings.enable_time_adjuster
    fsp = _datetime_precision(column)
    if settings.time_precision_mode == "connect":
        name, micro = "org.apache.kafka.connect.data.Timestamp", False
    elif fsp <= 3:
        name, micro = "io.debezium.time.Timestamp", False
    else:
        name, micro = "io.debezium.time.MicroTimestamp", True
    unit = _ONE_US if micro else _ONE_MS
    divisor = 1 if micro else 1000

    def from_binlog(value: dt.datetime) -> int:
        if value.year < 100 and adjust:
            value = value.replace(year=_adjust_year(value.year))
        return (value - _EPOCH) // unit

    def from_text(text: str) -> Any:
        micros = _datetime_text_to_micros(text, adjust)
        return on_zero if micros is None else micros // divisor

    def from_default(text: str) -> Any:
        text = text.strip()
        if _is_current_timestamp(text):
            # CURRENT_TIMESTAMP/NOW() defaults become the epoch (Debezium's parser literal
            # "1970-01-01 00:00:00"): nullable -> no default, NOT NULL -> 0.
            return on_zero
        if text == "0" or len(text) < 10:
            return on_zero
        if len(text) == 10:
            text += " 00:00:00"
        return from_text(text)

    return _Mapping("int64", from_binlog, from_text, name=name, version=1, fallback=0,
                    default=from_default, may_invalidate=True)


def _is_current_timestamp(text: str) -> bool:
    upper = text.upper().replace(" ", "")
    return upper.startswith(("CURRENT_TIMESTAMP", "NOW(", "LOCALTIME", "LOCALTIMESTAMP"))


_ZONED_NAME = "io.debezium.time.ZonedTimestamp"
_ZONED_EPOCH = "1970-01-01T00:00:00Z"


def _zoned_formatter(fsp: int) -> Callable[[dt.datetime], str]:
    """Debezium ZonedTimestamp text of a UTC datetime: exactly ``fsp`` fraction digits for
    TIMESTAMP(1..6) (truncated), ISO_OFFSET_DATE_TIME's minimal fraction for TIMESTAMP(0)."""
    if fsp == 0:
        def minimal(value: dt.datetime) -> str:
            base = value.isoformat(timespec="seconds")
            if value.microsecond:
                return f"{base}.{value.microsecond:06d}".rstrip("0") + "Z"
            return base + "Z"
        return minimal

    def fixed(value: dt.datetime) -> str:
        return f"{value.isoformat(timespec='seconds')}.{value.microsecond:06d}"[:20 + fsp] + "Z"
    return fixed


def _timestamp(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    fsp = _datetime_precision(column)
    render = _zoned_formatter(fsp)
    zone = settings.server_time_zone
    session_is_utc = zone == UTC

    def from_binlog(value: dt.datetime) -> Any:
        # mysql-replication gives the UTC wall clock; epoch 0 is the zero TIMESTAMP.
        if value == _EPOCH:
            return on_zero
        return render(value)

    def from_text(text: str) -> Any:
        parts = _parse_datetime_text(text)
        if parts is None:
            return on_zero
        year, month, day, seconds, micros = parts
        local = dt.datetime(year, month, day, seconds // 3600, seconds // 60 % 60, seconds % 60,
                            micros)
        if session_is_utc:
            return render(local)
        return render(local.replace(tzinfo=zone).astimezone(UTC).replace(tzinfo=None))

    def from_default(text: str) -> Any:
        text = text.strip()
        if _is_current_timestamp(text) or text == "0" or len(text) < 10:
            return on_zero
        # Debezium reads non-zero TIMESTAMP default literals in the JVM default zone; we use the
        # server zone (the zone the literal was written in), see module notes.
        return from_text(text)

    return _Mapping("string", from_binlog, from_text, name=_ZONED_NAME, version=1,
                    fallback=_ZONED_EPOCH, default=from_default, may_invalidate=True)


def _time_text_to_micros(text: str) -> int:
    """``[-]HHH:MM:SS[.ffffff]`` -> signed microseconds."""
    negative = text.startswith("-")
    body = text[1:] if negative else text
    hms, _, frac = body.partition(".")
    hours, minutes, seconds = hms.split(":")
    micros = ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1_000_000
    if frac:
        micros += int(frac[:6].ljust(6, "0"))
    return -micros if negative else micros


def _time_binlog_micros(value: dt.timedelta) -> int:
    micros: int = value // _ONE_US
    if micros < 0:
        fraction = micros % 1_000_000
        if fraction:
            # mysql-replication returns -(H+1)+f for the stored -(H+f); undo it (module notes).
            return micros + 1_000_000 - 2 * fraction
    return micros


def _time(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _TIME_MODES[settings.time_precision_mode](column, settings, on_zero)


def _time_micro(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _Mapping("int64", _time_binlog_micros, _time_text_to_micros,
                    name="io.debezium.time.MicroTime", version=1, fallback=0)


def _millis_toward_floor(micros: int) -> int:
    # Java Duration.toMillis(): seconds * 1000 + nanos / 1e6 with non-negative nanos = floor.
    return micros // 1000


def _time_milli(name: str) -> _Builder:
    def build(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
        return _Mapping("int32", lambda v: _millis_toward_floor(_time_binlog_micros(v)),
                        lambda t: _millis_toward_floor(_time_text_to_micros(t)),
                        name=name, version=1, fallback=0)
    return build


def _time_adaptive(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    if _datetime_precision(column) <= 3:
        return _time_milli("io.debezium.time.Time")(column, settings, on_zero)
    return _time_micro(column, settings, on_zero)


_TIME_MODES: dict[str, _Builder] = {
    "adaptive_time_microseconds": _time_micro,
    "adaptive": _time_adaptive,
    "connect": _time_milli("org.apache.kafka.connect.data.Time"),
}


# ------------------------------------------------------------------------------------------------
# Dispatch
# ------------------------------------------------------------------------------------------------
_BUILDERS: dict[str, _Builder] = {
    "TINYINT": _tinyint,
    "INT1": _tinyint,
    "SMALLINT": _smallint,
    "INT2": _smallint,
    "MEDIUMINT": _int_builder("int32"),
    "MIDDLEINT": _int_builder("int32"),
    "INT3": _int_builder("int32"),
    "INT": _int,
    "INTEGER": _int,
    "INT4": _int,
    "BIGINT": _bigint,
    "INT8": _bigint,
    "DECIMAL": _decimal,
    "DEC": _decimal,
    "NUMERIC": _decimal,
    "FIXED": _decimal,
    "CHAR": _string,
    "CHARACTER": _string,
    "VARCHAR": _string,
    "NCHAR": _string,
    "NVARCHAR": _string,
    "NATIONAL CHAR": _string,
    "NATIONAL VARCHAR": _string,
    "TINYTEXT": _string,
    "TEXT": _string,
    "MEDIUMTEXT": _string,
    "LONGTEXT": _string,
    "LONG": _string,
    "LONG VARCHAR": _string,
    "DATE": _date,
    "DATETIME": _datetime,
    "TIMESTAMP": _timestamp,
    "TIME": _time,
}


def _builder_for(column: Column) -> _Builder:
    key = column.data_type.upper()
    if key == "SERIAL":
        return _bigint
    try:
        return _BUILDERS[key]
    except KeyError:
        raise ValueError(
            f"column {column.name!r}: no converter for MySQL type {column.data_type!r}") from None


def _guard(convert: Convert, when_null: Any, may_invalidate: bool) -> Convert:
    """Wrap a non-null converter with the null rule: null in -> ``when_null`` out."""
    if convert is identity and when_null is None:
        return identity
    if may_invalidate and when_null is not None:
        def guarded_invalid(value: Any) -> Any:
            if value is None:
                return when_null
            result = convert(value)
            return when_null if result is None else result
        return guarded_invalid

    def guarded(value: Any) -> Any:
        return when_null if value is None else convert(value)
    return guarded


def _strip_default_literal(text: str) -> str:
    # Charset introducers (_utf8mb4'x') are stripped by Debezium's default-value listener.
    if text.startswith("_") and "'" in text:
        head, _, rest = text.partition("'")
        if head[1:].isidentifier() and rest.endswith("'"):
            return rest[:-1].replace("''", "'")
    return text


def column_converter(column: Column, table: Table, settings: ConverterSettings) -> ColumnConverter:
    """The schema and converters for one column of ``table`` (called once per structure change)."""
    build = _builder_for(column)
    if column.charset is None and table.default_charset and column.jdbc_type in _TEXT_JDBC_TYPES:
        column = column.with_(charset=table.default_charset)
    optional = column.optional
    # Pass 1: find the default, converting zero-like literals with the type's fallback rule.
    probe = build(column, settings, None if optional else _NEEDS_FALLBACK)
    default: Any = NO_DEFAULT
    if column.has_default and column.default_expression is not None and not column.generated:
        literal = column.default_expression
        if not (literal.startswith("(") and literal.endswith(")")):  # expression defaults: none
            parse = probe.default or probe.snapshot
            try:
                value = parse(_strip_default_literal(literal))
            except (ValueError, ArithmeticError, IndexError):
                value = None
            if value is _NEEDS_FALLBACK:
                value = probe.fallback
            if value is not None:
                default = value
    when_null = None if optional else (default if default is not NO_DEFAULT else probe.fallback)
    mapping = build(column, settings, when_null)
    schema = ConnectSchema(
        mapping.type,
        optional=optional,
        name=mapping.name,
        version=mapping.version,
        doc=_doc(column, settings, mapping),
        parameters=_parameters(column, table, settings, mapping),
        default=default,
    )
    return ColumnConverter(
        schema=schema,
        from_binlog=_guard(mapping.binlog, when_null, mapping.may_invalidate),
        from_snapshot=_guard(mapping.snapshot, when_null, mapping.may_invalidate),
        binlog_encoding=mapping.binlog_encoding,
    )


_NEEDS_FALLBACK: Any = object()
_TEXT_JDBC_TYPES = frozenset((JdbcType.CHAR, JdbcType.VARCHAR, JdbcType.LONGVARCHAR, JdbcType.CLOB,
                              JdbcType.NCHAR, JdbcType.NVARCHAR))


def _doc(column: Column, settings: ConverterSettings, mapping: _Mapping) -> str | None:
    if settings.include_schema_comments and column.comment:
        return column.comment
    return mapping.doc


def _parameters(column: Column, table: Table, settings: ConverterSettings,
                mapping: _Mapping) -> tuple[tuple[str, str], ...] | None:
    params = dict(mapping.parameters or {})
    return tuple(params.items()) if params else None


# ------------------------------------------------------------------------------------------------
# Snapshot connection conversions
# ------------------------------------------------------------------------------------------------
def _build_snapshot_conversions() -> dict[Any, Any]:
    conv: dict[Any, Any] = dict(pymysql_converters.encoders)  # parameter escaping stays standard
    for type_code in (FIELD_TYPE.TINY, FIELD_TYPE.SHORT, FIELD_TYPE.LONG, FIELD_TYPE.INT24,
                      FIELD_TYPE.LONGLONG, FIELD_TYPE.YEAR):
        conv[type_code] = int
    for type_code in (FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE):
        conv[type_code] = float
    # Everything else (DECIMAL, DATE, TIME, DATETIME, TIMESTAMP, BIT, strings, JSON, GEOMETRY)
    # stays as the server sent it: text for character data, bytes for binary data.
    return conv


SNAPSHOT_CONVERSIONS: dict[Any, Any] = _build_snapshot_conversions()
