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
* an empty SET arrives as ``None`` like NULL; ``binlog_row_values`` tells them apart from the row's
  ``none_sources`` (the row decoder calls it before converting).
* text is decoded with the library's own charset guess (latin1 as strict cp1252, utf16/utf32 in
  the wrong byte order, nothing for dec8/swe7/armscii8/keybcs2/geostd8; a strict decode error would
  stop the stream). ``ColumnConverter.binlog_encoding`` names a codec (``connector.records.charsets``) that decodes
  like the server converts to utf8mb4; ``connector.binlog.row_decoder`` reads the rows with it.
* YEAR 0000 arrives as 1900; FLOAT(M,D) arrives as the stored float32 (emitted widened to double).
* MySQL binary JSON arrives parsed into Python values (rendered back as MySQL prints JSON; partial
  JSON updates are refused). MariaDB stores JSON as text, so there both paths carry the same text.

Contract for callers: call the converters for null values too (a NOT NULL column's null -- a zero
date -- becomes the column default or the epoch fallback); ``identity`` converters may be skipped.
Snapshot connections must use ``SNAPSHOT_CONVERSIONS`` and a session time zone equal to
``ConverterSettings.server_time_zone`` (UTC by default).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import decimal
import functools
import logging
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from pymysql import converters as pymysql_converters
from pymysql.constants import FIELD_TYPE

from connector.binlog.json_render import render_binlog_json, render_json_document
from connector.binlog.mysql_json import BinaryJson
from connector.records.charsets import binlog_encoding
from connector.records.conversion.calendar import adjust_year as _adjust_year
from connector.records.conversion.calendar import adjusted_days, adjusted_micros, days_from_civil
from ddl.errors import MysqlCdcError
from ddl.model import Column, JdbcType, Table, canonical_type
from sink.connect import NO_DEFAULT, ConnectSchema, Field

Convert = Callable[[Any], Any]

log = logging.getLogger(__name__)

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
    # Custom converters (connector.records.custom_converters, property ``converters``), in order.
    custom: tuple[Any, ...] = ()


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
    fields: tuple[Field, ...] | None = None
    items: ConnectSchema | None = None  # an array's element schema


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
    return _Mapping("int32" if column.unsigned else "int16", identity, identity, default=_int_from_text)


def _int(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _Mapping("int64" if column.unsigned else "int32", identity, identity, default=_int_from_text)


def _bigint(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    if not column.unsigned:
        return _Mapping("int64", identity, identity, default=_int_from_text)
    return _BIGINT_UNSIGNED_MODES[settings.bigint_unsigned_handling_mode](column, settings, on_zero)


def _bigint_unsigned_default_long(value: Any) -> int:
    # Debezium's default value for BIGINT UNSIGNED in long mode saturates at Long.MAX_VALUE where the
    # row values wrap (DEFAULT 18446744073709551615 → 9223372036854775807, the value → -1).
    return min(_int_from_text(value), _TWO_63 - 1)


def _bigint_unsigned_as_long(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _Mapping(
        "int64", _bigint_unsigned_long, _bigint_unsigned_long_text, default=_bigint_unsigned_default_long
    )


def _bigint_unsigned_precise(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    def convert(value: Any) -> str:
        return _encode_unscaled(_int_from_text(value))

    return _Mapping(
        "bytes",
        convert,
        convert,
        name=_DECIMAL_NAME,
        version=1,
        parameters={"scale": "0", "connect.decimal.precision": "20"},
    )


_BIGINT_UNSIGNED_MODES: dict[str, _Builder] = {
    "long": _bigint_unsigned_as_long,
    "precise": _bigint_unsigned_precise,
}


# ------------------------------------------------------------------------------------------------
# BOOLEAN (4.2), BIT (4.7), YEAR (4.5), FLOAT/DOUBLE/REAL (4.3)
# ------------------------------------------------------------------------------------------------
def _truthy_number(value: Any) -> bool:
    return value != 0


def _boolean_default(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    return _parse_int_default(lowered) != 0


def _boolean(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    # BOOL/BOOLEAN seen literally in a streamed CREATE TABLE; the server stores TINYINT(1).
    return _Mapping("boolean", _truthy_number, _truthy_number, default=_boolean_default)


def _bit_literal(text: str) -> int:
    # DEFAULT b'101' / B'101' / 0b101 are bit strings, and so is the parser's defaultValueExpression of
    # one ("101", Debezium's form: its converter reads it base 2); another plain literal is a number.
    stripped = text.strip()
    if stripped and not stripped.strip("01"):
        return int(stripped, 2)
    if stripped[:2] in ("b'", "B'") and stripped.endswith("'"):
        return int(stripped[2:-1] or "0", 2)
    if stripped[:2] in ("0b", "0B"):
        return int(stripped[2:], 2)
    if stripped[:2] in ("x'", "X'") and stripped.endswith("'"):
        return int(stripped[2:-1] or "0", 16)
    if stripped[:2] in ("0x", "0X"):
        return int(stripped[2:], 16)
    lowered = stripped.lower()
    if lowered in ("true", "false"):
        return int(lowered == "true")
    return int(stripped)


def _bits_from_bytes(data: bytes) -> int:
    """The snapshot's BIT value (the server sends big-endian bytes) as the decoder's integer."""
    return int.from_bytes(data, "big")


def _bit(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    bits = column.length or 1
    # The binlog decoder gives the bits as an integer; the snapshot's big-endian bytes become one.
    if bits == 1:
        # BIT(1) -> BOOLEAN.
        return _Mapping(
            "boolean",
            _truthy_number,
            lambda data: _truthy_number(_bits_from_bytes(data)),
            default=lambda t: _bit_literal(t) != 0,
        )
    width = (bits + 7) // 8

    # BIT(n) -> io.debezium.data.Bits: little-endian bytes, ceil(n/8) long.
    def from_bits(value: int) -> str:
        return _base64_text(value.to_bytes(width, "little"))

    return _Mapping(
        "bytes",
        from_bits,
        lambda data: from_bits(_bits_from_bytes(data)),
        name="io.debezium.data.Bits",
        version=1,
        parameters={"length": str(bits)},
        default=lambda t: _base64_text(_bit_literal(t).to_bytes(width, "little")),
    )


def _year(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    adjust = settings.enable_time_adjuster

    # Both paths give the year (0 for YEAR 0000). Debezium runs it through the two-digit-year
    # adjuster, so 0000 becomes 2000 while enable.time.adjuster is on.
    def from_number(value: int) -> int:
        return _adjust_year(value) if adjust and value < 100 else value

    def from_text(text: Any) -> int:
        return from_number(int(text))

    return _Mapping(
        "int32", from_number, from_text, name="io.debezium.time.Year", version=1, default=from_text
    )


_FLOAT32 = struct.Struct("<f")


def _as_float32(value: float) -> float:
    """A double narrowed to the float32 it denotes (the value a Java float holds)."""
    return float(_FLOAT32.unpack(_FLOAT32.pack(value))[0])


def _float_from_text(text: Any) -> float:
    return float(text)


def _float(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    key = canonical_type(column.data_type)
    single = key == "REAL" or (
        key == "FLOAT" and column.scale is None and (column.length is None or column.length <= 24)
    )
    if single:
        # FLOAT/FLOAT(p<=24) and the literal REAL -> FLOAT32 (Debezium narrows REAL's double).
        def narrow_text(text: Any) -> float:
            return _as_float32(float(text))

        return _Mapping("float32", _as_float32, narrow_text, default=narrow_text)
    if key == "FLOAT" and column.scale is not None:
        # FLOAT(M,D) stores a float32, which Debezium reads as a Java float and widens to double
        # (FLOAT(7,3) holding 1234.567 → 1234.5670166015625), in the snapshot and in the binlog.
        def widened_text(text: Any) -> float:
            return _as_float32(float(text))

        # The default is the literal read as a double (5.6), not the float32 the column stores.
        return _Mapping("float64", identity, widened_text, default=_float_from_text)
    if column.scale is not None:
        digits = column.scale

        # FLOAT(M,D)/DOUBLE(M,D): the server shows the value rounded to D decimals (and stores a
        # float32 for FLOAT(M,D)); rounding the binlog's binary value the same way makes the
        # streamed value equal the snapshot's.
        def rounded(value: float) -> float:
            return round(value, digits)

        return _Mapping("float64", rounded, _float_from_text, default=_float_from_text)
    return _Mapping("float64", identity, _float_from_text, default=_float_from_text)


# ------------------------------------------------------------------------------------------------
# DECIMAL / NUMERIC (4.3)
# ------------------------------------------------------------------------------------------------
_DECIMAL_NAME = "org.apache.kafka.connect.data.Decimal"
# Precision wide enough for DECIMAL(65,30) arithmetic without rounding.
_WIDE = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP)


def _encode_unscaled(unscaled: int) -> str:
    """Base64 of Java ``BigInteger.toByteArray()``: minimal big-endian two's complement."""
    size = (~unscaled if unscaled < 0 else unscaled).bit_length() // 8 + 1
    return binascii.b2a_base64(unscaled.to_bytes(size, "big", signed=True), newline=False).decode("ascii")


def _decimal_precision_scale(column: Column) -> tuple[int, int]:
    return (
        column.length if column.length is not None else 10,
        column.scale if column.scale is not None else 0,
    )


def _decimal(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _DECIMAL_MODES[settings.decimal_handling_mode](column, settings, on_zero)


def _rescale(value: Any, exponent: decimal.Decimal) -> decimal.Decimal:
    # Binlog values already carry the column scale; defaults may not (HALF_UP, like setScale).
    return _WIDE.quantize(decimal.Decimal(value), exponent)


def _unscaled_from_text(text: str) -> int:
    """The snapshot's DECIMAL text as the decoder's unscaled integer: the server prints exactly the
    column's scale in fraction digits, so the unscaled value is the digits."""
    return int(text.replace(".", "", 1))


def _decimal_precise(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    precision, scale = _decimal_precision_scale(column)
    exponent = decimal.Decimal(1).scaleb(-scale)

    def from_default(text: str) -> str:
        return _encode_unscaled(int(_WIDE.scaleb(_rescale(text.strip(), exponent), scale)))

    return _Mapping(
        "bytes",
        _encode_unscaled,
        lambda text: _encode_unscaled(_unscaled_from_text(text)),
        name=_DECIMAL_NAME,
        version=1,
        parameters={"scale": str(scale), "connect.decimal.precision": str(precision)},
        default=from_default,
    )


def _decimal_double(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    _, scale = _decimal_precision_scale(column)
    divisor = 10**scale

    def from_unscaled(unscaled: int) -> float:
        # int / int is correctly rounded, as float() of the decimal text is.
        return unscaled / divisor

    return _Mapping(
        "float64",
        from_unscaled,
        lambda text: from_unscaled(_unscaled_from_text(text)),
        default=lambda text: float(text.strip()),
    )


def _decimal_string(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    _, scale = _decimal_precision_scale(column)
    exponent = decimal.Decimal(1).scaleb(-scale)

    def from_unscaled(unscaled: int) -> str:
        # BigDecimal.toPlainString() at the column's scale: never exponent notation.
        if not scale:
            return str(unscaled)
        digits = str(-unscaled if unscaled < 0 else unscaled).rjust(scale + 1, "0")
        return f"{'-' if unscaled < 0 else ''}{digits[:-scale]}.{digits[-scale:]}"

    def from_default(text: str) -> str:
        return format(_rescale(text.strip(), exponent), "f")

    return _Mapping(
        "string",
        from_unscaled,
        lambda text: from_unscaled(_unscaled_from_text(text)),
        default=from_default,
    )


_DECIMAL_MODES: dict[str, _Builder] = {
    "precise": _decimal_precise,
    "double": _decimal_double,
    "string": _decimal_string,
}


# ------------------------------------------------------------------------------------------------
# Strings (4.4): decoded with the column's character set
# ------------------------------------------------------------------------------------------------
def _string(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _Mapping(
        "string", identity, identity, default=identity, binlog_encoding=binlog_encoding(column.charset)
    )


# ------------------------------------------------------------------------------------------------
# Binary strings (4.4): binary.handling.mode
# ------------------------------------------------------------------------------------------------
def _hex_text(data: bytes) -> str:
    return data.hex()


def _base64_text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _base64_url_text(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


# The "codec" of binary strings: the row decoder keeps their bytes. Named explicitly because the
# library's own choice, without a charset in the TABLE_MAP (binlog_row_metadata=MINIMAL, e.g. a
# replayed binlog file), is to decode them as UTF-8 text.
BINARY_CHARSET = "binary"

# mode -> (Connect type, bytes -> payload). Connect BYTES payloads are standard base64 in JSON.
_BINARY_MODES: dict[str, tuple[str, Callable[[bytes], str]]] = {
    "bytes": ("bytes", _base64_text),
    "base64": ("string", _base64_text),
    "base64-url-safe": ("string", _base64_url_text),
    "hex": ("string", _hex_text),
}


def _binary_literal(text: str) -> bytes:
    # DEFAULT literals: X'0A0B' / 0x0A0B hex, else the literal's text.
    stripped = text.strip()
    if stripped[:2] in ("x'", "X'") and stripped.endswith("'"):
        return bytes.fromhex(stripped[2:-1])
    if stripped[:2] in ("0x", "0X"):
        return bytes.fromhex(stripped[2:])
    return text.encode("utf-8")


def _binary(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    kind, encode = _BINARY_MODES[settings.binary_handling_mode]

    def plain(value: Any) -> str:
        return encode(value or b"")

    if column.data_type.upper() == "BINARY" and column.length:
        width = column.length

        # DBZ-254: BINARY(n) is right-padded with 0x00 (the binlog strips trailing zeros).
        def padded(value: Any) -> str:
            data = value or b""  # an empty binary value arrives as '' (str)
            return encode(data.ljust(width, b"\0") if len(data) < width else data)

        # The default is the literal's bytes, unpadded, as Debezium converts it (a streamed DEFAULT 'ab'
        # of BINARY(4) is 'ab'; SHOW CREATE TABLE already writes the padding, 'ab\0\0').
        return _Mapping(
            kind,
            padded,
            padded,
            default=lambda t: plain(_binary_literal(t)),
            binlog_encoding=BINARY_CHARSET,
        )

    return _Mapping(
        kind, plain, plain, default=lambda t: plain(_binary_literal(t)), binlog_encoding=BINARY_CHARSET
    )


# ------------------------------------------------------------------------------------------------
# ENUM / SET (4.6)
# ------------------------------------------------------------------------------------------------
def _allowed(options: Sequence[str]) -> str:
    # EnumeratedValues: options joined with ',', a ',' inside an option escaped as '\,'.
    return ",".join(option.replace(",", "\\,") for option in options)


def _enum(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    # mysql-replication maps the binlog index through the table map's option list (index 0, an
    # invalid value, is ''), so both paths carry the option text.
    return _Mapping(
        "string",
        identity,
        identity,
        name="io.debezium.data.Enum",
        version=1,
        parameters={"allowed": _allowed(column.enum_values)},
        fallback="",
        default=identity,
    )


def _set(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    options = column.enum_values

    # Both paths give the members' text in definition order (Debezium's form).
    return _Mapping(
        "string",
        identity,
        identity,
        name="io.debezium.data.EnumSet",
        version=1,
        parameters={"allowed": _allowed(options)},
        fallback="",
        default=identity,
    )


# ------------------------------------------------------------------------------------------------
# JSON (4.8)
# ------------------------------------------------------------------------------------------------
def _json(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    return _Mapping(
        "string",
        _json_from_binlog,
        identity,
        name="io.debezium.data.Json",
        version=1,
        fallback="{}",
        default=identity,
        binlog_encoding=binlog_encoding("utf8mb4"),
    )


def _json_from_binlog(value: Any) -> Any:
    # MariaDB stores JSON as LONGTEXT: the binlog carries the very text the snapshot SELECT returns.
    if isinstance(value, str):
        return value
    # MySQL binary JSON: Debezium streams it as its binlog client renders it (compact, its own
    # number and date forms; connector.binlog.json_render), while its snapshot reads MySQL's text. A
    # partial update's diff reaches this point only through the library's fallback decoder
    # (images without every column), which cannot rebuild the document (connector.binlog.row_decoder
    # does, from a full before image, and gives the parsed document rendered here).
    if isinstance(value, BinaryJson):
        return render_binlog_json(value.data)
    if type(value).__name__ == "JsonDiff":
        raise ValueError(
            "a JSON partial update (binlog_row_value_options=PARTIAL_JSON) without the whole "
            "before image cannot be rebuilt: set binlog_row_image=FULL, or "
            "binlog_row_value_options='' on the server"
        )
    return render_json_document(value)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


# ------------------------------------------------------------------------------------------------
# VECTOR (4.9, MySQL 9)
# ------------------------------------------------------------------------------------------------
_FLOAT_VECTOR_NAME = "io.debezium.data.FloatVector"


def _vector_value(value: Any) -> list[float]:
    # The binlog image and the snapshot result carry the same bytes (little-endian float32s); a
    # text rendering ('[1.1,2.2]', VECTOR_TO_STRING in an overridden select) is read as a list.
    if isinstance(value, bytes | bytearray):
        if len(value) % 4:
            raise ValueError(f"a VECTOR value of {len(value)} bytes is not a whole number of float32s")
        return [element for (element,) in _FLOAT32.iter_unpack(value)]
    if isinstance(value, str):
        return [_as_float32(float(v)) for v in orjson.loads(value)]
    return [_as_float32(float(v)) for v in value]


def _vector(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    # Debezium maps MySQL's VECTOR to ARRAY<FLOAT32> io.debezium.data.FloatVector v1; its elements
    # are Java floats (connector.sink's JSON writer prints them as Java does).
    return _Mapping(
        "array",
        _vector_value,
        _vector_value,
        name=_FLOAT_VECTOR_NAME,
        version=1,
        items=ConnectSchema("float32"),
        default=_no_default,
    )


# ------------------------------------------------------------------------------------------------
# Temporal (4.5)
# ------------------------------------------------------------------------------------------------
_EPOCH = dt.datetime(1970, 1, 1)


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


# -- the snapshot's text in the decoder's forms (None: a zero date) --
def _days_from_text(text: str) -> int | None:
    """DATE text as days since the epoch of its literal year."""
    ymd = _parse_date_text(text)
    return None if ymd is None else days_from_civil(*ymd)


def _micros_from_text(text: str) -> int | None:
    """DATETIME text as microseconds since the epoch of its literal wall clock."""
    parts = _parse_datetime_text(text)
    if parts is None:
        return None
    year, month, day, seconds, micros = parts
    return (days_from_civil(year, month, day) * 86400 + seconds) * 1_000_000 + micros


def _zone_micros_from_text(zone: dt.tzinfo) -> Callable[[str], int | None]:
    """TIMESTAMP text, a wall clock in the snapshot session's ``zone``, as microseconds since the epoch."""
    if zone == UTC:
        return _micros_from_text

    def micros(text: str) -> int | None:
        parts = _parse_datetime_text(text)
        if parts is None:
            return None
        year, month, day, seconds, us = parts
        local = dt.datetime(year, month, day, seconds // 3600, seconds // 60 % 60, seconds % 60, us)
        utc = local.replace(tzinfo=zone).astimezone(UTC).replace(tzinfo=None)
        return (utc - _EPOCH) // _ONE_US

    return micros


_ONE_US = dt.timedelta(microseconds=1)


def _or_none(core: Callable[[int], Any], adapt: Callable[[str], int | None]) -> Convert:
    """``core`` after ``adapt``, None (a zero date: the null rule applies) passed through."""

    def convert(text: str) -> Any:
        value = adapt(text)
        return None if value is None else core(value)

    return convert


def _date(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    name = (
        "org.apache.kafka.connect.data.Date"
        if settings.time_precision_mode == "connect"
        else "io.debezium.time.Date"
    )
    # Days since the epoch (the decoder's form), two-digit years adjusted when the adjuster is on.
    from_days: Convert = adjusted_days if settings.enable_time_adjuster else identity
    from_text = _or_none(from_days, _days_from_text)

    def from_default(text: str) -> Any:
        text = text.strip()
        if text == "0" or len(text) < 10:
            return on_zero
        # DATE defaults may be written with a time part; only the date counts.
        value = from_text(text[:10])
        return on_zero if value is None else value

    return _Mapping(
        "int32",
        from_days,
        from_text,
        name=name,
        version=1,
        fallback=0,
        default=from_default,
        may_invalidate=True,
    )


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
    divisor = 1 if micro else 1000

    # Microseconds since the epoch (the decoder's form), two-digit years adjusted when the adjuster
    # is on, in the schema's unit.
    def from_micros(micros: int) -> int:
        return (adjusted_micros(micros) if adjust else micros) // divisor

    from_snapshot = _or_none(from_micros, _micros_from_text)

    def from_text(text: str) -> Any:
        value = from_snapshot(text)
        return on_zero if value is None else value

    def from_default(text: str) -> Any:
        text = text.strip()
        if _is_current_timestamp(text):
            # CURRENT_TIMESTAMP/NOW() (the parser writes Debezium's "1970-01-01 00:00:00") is 0, with
            # or without ON UPDATE, nullable or not; only zero dates are "no default" when nullable.
            text = _EPOCH_TEXT
        if text == "0" or len(text) < 10:
            return on_zero
        if len(text) == 10:
            text += " 00:00:00"
        return from_text(text)

    return _Mapping(
        "int64",
        from_micros,
        from_snapshot,
        name=name,
        version=1,
        fallback=0,
        default=from_default,
        may_invalidate=True,
    )


def _is_current_timestamp(text: str) -> bool:
    upper = text.upper().replace(" ", "")
    return upper.startswith(("CURRENT_TIMESTAMP", "NOW(", "LOCALTIME", "LOCALTIMESTAMP"))


_EPOCH_TEXT = "1970-01-01 00:00:00"  # the parser's CURRENT_TIMESTAMP (Debezium's EPOCH_TIMESTAMP)
_ZONED_NAME = "io.debezium.time.ZonedTimestamp"
_ZONED_EPOCH = "1970-01-01T00:00:00Z"


def _zoned_formatter(fsp: int) -> Callable[[int], str]:
    """Debezium ZonedTimestamp text of microseconds since the epoch (UTC): exactly ``fsp`` fraction
    digits for TIMESTAMP(1..6) (truncated), ISO_OFFSET_DATE_TIME's minimal fraction for TIMESTAMP(0).
    Cached: formatting costs ~1 us and rows written together share their timestamps."""
    zeros = "." + "0" * fsp + "Z"

    if fsp == 0:

        def minimal(micros: int) -> str:
            value = _EPOCH + dt.timedelta(microseconds=micros)
            # isoformat() prints 6 fraction digits when there are microseconds, none otherwise.
            return (value.isoformat().rstrip("0") + "Z") if value.microsecond else value.isoformat() + "Z"

        return functools.lru_cache(maxsize=4096)(minimal)

    def fixed(micros: int) -> str:
        value = _EPOCH + dt.timedelta(microseconds=micros)
        return value.isoformat()[: 20 + fsp] + "Z" if value.microsecond else value.isoformat() + zeros

    return functools.lru_cache(maxsize=4096)(fixed)


def _timestamp(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    fsp = _datetime_precision(column)
    # Microseconds since the epoch (the decoder's form; the snapshot's text is in the session's zone).
    render = _zoned_formatter(fsp)

    def from_default(text: str) -> Any:
        # Debezium's convertToTimestamp: CURRENT_TIMESTAMP (the parser's epoch literal), "0" and zero
        # dates are no default for a nullable column and the epoch for a NOT NULL one; another
        # literal is read as a UTC wall clock (Debezium reads it in the JVM's zone, UTC in Connect
        # deployments and in the recordings), whatever zone the snapshot session runs in. The
        # snapshot reads SHOW CREATE TABLE in the server's zone, so both paths see the literal as
        # written.
        text = text.strip()
        if _is_current_timestamp(text) or text in ("0", _EPOCH_TEXT) or len(text) < 10:
            return on_zero
        micros = _micros_from_text(text)
        return on_zero if micros is None else render(micros)

    return _Mapping(
        "string",
        render,
        _or_none(render, _zone_micros_from_text(settings.server_time_zone)),
        name=_ZONED_NAME,
        version=1,
        fallback=_ZONED_EPOCH,
        default=from_default,
        may_invalidate=True,
    )


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


def _time(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    mapping = _TIME_MODES[settings.time_precision_mode](column, settings, on_zero)
    convert = mapping.default or mapping.snapshot
    return dataclasses.replace(mapping, default=lambda text: convert(_time_part(text)))


def _time_part(text: str) -> str:
    """A TIME default's time: MySQL accepts a datetime literal (``'0000-00-00 01:00:00.000'``, kept
    verbatim in a streamed DDL), of which Debezium reads the part after the date."""
    text = text.strip()
    return text.rpartition(" ")[2] if " " in text else text


def _time_micro(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    # Signed microseconds: the decoder's form already.
    return _Mapping(
        "int64",
        identity,
        _time_text_to_micros,
        name="io.debezium.time.MicroTime",
        version=1,
        fallback=0,
    )


def _millis_toward_floor(micros: int) -> int:
    # Java Duration.toMillis(): seconds * 1000 + nanos / 1e6 with non-negative nanos = floor.
    return micros // 1000


def _time_milli(name: str, large_values: bool) -> _Builder:
    """TIME as int32 milliseconds. Kafka Connect's Time (connect mode) only holds a time of day:
    Debezium fails to convert negative or >= 24h values there and, with the default
    event.converting.failure.handling.mode=warn, leaves the field null."""

    def build(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
        if large_values:

            def from_binlog(micros: int) -> Any:
                return _millis_toward_floor(micros)

            def from_text(text: str) -> Any:
                return _millis_toward_floor(_time_text_to_micros(text))
        else:
            # Out of range: null in a nullable column (Debezium warns); a NOT NULL column (a key) has
            # no value to give that another row could not have, so the event fails, as in Debezium.
            outside = (
                _time_outside_day(column.name) if on_zero is None else _time_unrepresentable(column.name)
            )

            def from_binlog(micros: int) -> Any:
                return _time_of_day_millis(micros, outside)

            def from_text(text: str) -> Any:
                return _time_of_day_millis(_time_text_to_micros(text), outside)

        return _Mapping(
            "int32", from_binlog, from_text, name=name, version=1, fallback=0, may_invalidate=not large_values
        )

    return build


_DAY_MICROS = 86_400_000_000


class UnrepresentableValueError(MysqlCdcError, ValueError):
    """A value that the configured representation cannot hold, in a column that has no null to give
    instead: the event cannot be emitted without replacing the value by one another row can have."""


def _time_of_day_millis(micros: int, outside: Callable[[int], None]) -> int | None:
    if 0 <= micros <= _DAY_MICROS:
        return micros // 1000
    outside(micros)
    return None


def _time_outside_day(name: str) -> Callable[[int], None]:
    def warn(micros: int) -> None:
        log.warning(
            "column %r: TIME value of %d us is outside 00:00-24:00 and cannot be represented with "
            "time.precision.mode=connect; the field is set to null",
            name,
            micros,
        )

    return warn


def _time_unrepresentable(name: str) -> Callable[[int], None]:
    def fail(micros: int) -> None:
        raise UnrepresentableValueError(
            f"column {name!r} is NOT NULL and its TIME value of {micros} us is outside 00:00-24:00, "
            "which time.precision.mode=connect cannot represent (Debezium stops too); use "
            "time.precision.mode=adaptive_time_microseconds to capture such values"
        )

    return fail


def _time_adaptive(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    if _datetime_precision(column) <= 3:
        return _time_milli("io.debezium.time.Time", True)(column, settings, on_zero)
    return _time_micro(column, settings, on_zero)


_TIME_MODES: dict[str, _Builder] = {
    "adaptive_time_microseconds": _time_micro,
    "adaptive": _time_adaptive,
    "connect": _time_milli("org.apache.kafka.connect.data.Time", False),
}


# ------------------------------------------------------------------------------------------------
# Spatial types (4.9): Geometry v1 {wkb, srid} (3.6.1.Final), POINT as Point {x, y, wkb, srid}
# ------------------------------------------------------------------------------------------------
_SRID = struct.Struct("<I")
_WKB_POINT = struct.Struct("<dd")
_GEOMETRY_NAME = "io.debezium.data.geometry.Geometry"
_POINT_NAME = "io.debezium.data.geometry.Point"
_EMPTY_COLLECTION_WKB = bytes.fromhex("010700000000000000")


def _split_srid(data: bytes) -> tuple[bytes, int | None]:
    # MySQL's internal geometry value: 4-byte little-endian SRID, then WKB. SRID 0 -> null.
    srid = _SRID.unpack_from(data)[0]
    return data[4:], (srid or None)


def _geometry_value(data: bytes) -> dict[str, Any]:
    wkb, srid = _split_srid(data)
    return {"wkb": _base64_text(wkb), "srid": srid}


def _point_value(data: bytes) -> dict[str, Any]:
    wkb, srid = _split_srid(data)
    if len(wkb) != 21:
        raise ValueError(f"a POINT column holds a non-point geometry ({len(wkb)} WKB bytes)")
    order = "<" if wkb[0] else ">"
    x, y = struct.unpack_from(order + "dd", wkb, 5)
    return {"x": x, "y": y, "wkb": _base64_text(wkb), "srid": srid}


def _geometry(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    fields = (Field("wkb", ConnectSchema("bytes")), Field("srid", ConnectSchema("int32", optional=True)))
    return _Mapping(
        "struct",
        _geometry_value,
        _geometry_value,
        name=_GEOMETRY_NAME,
        version=1,
        doc="Geometry",
        fields=fields,
        fallback={"wkb": _base64_text(_EMPTY_COLLECTION_WKB), "srid": None},
        default=_no_default,
    )


def _point(column: Column, settings: ConverterSettings, on_zero: Any) -> _Mapping:
    fields = (
        Field("x", ConnectSchema("float64")),
        Field("y", ConnectSchema("float64")),
        Field("wkb", ConnectSchema("bytes", optional=True)),
        Field("srid", ConnectSchema("int32", optional=True)),
    )
    return _Mapping(
        "struct",
        _point_value,
        _point_value,
        name=_POINT_NAME,
        version=1,
        doc="Geometry (POINT)",
        fields=fields,
        default=_no_default,
    )


def _no_default(text: str) -> None:
    # Spatial columns take no literal defaults in MySQL (only expression defaults).
    return None


# ------------------------------------------------------------------------------------------------
# Dispatch
# ------------------------------------------------------------------------------------------------
_BUILDERS: dict[str, _Builder] = {
    "TINYINT": _tinyint,
    "SMALLINT": _smallint,
    "MEDIUMINT": _int_builder("int32"),
    "INT": _int,
    "BIGINT": _bigint,
    "DECIMAL": _decimal,
    "CHAR": _string,
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
    "BOOLEAN": _boolean,
    "BIT": _bit,
    "YEAR": _year,
    "FLOAT": _float,
    "REAL": _float,
    "DOUBLE": _float,
    "BINARY": _binary,
    "VARBINARY": _binary,
    "TINYBLOB": _binary,
    "BLOB": _binary,
    "MEDIUMBLOB": _binary,
    "LONGBLOB": _binary,
    "LONG VARBINARY": _binary,
    "ENUM": _enum,
    "SET": _set,
    "JSON": _json,
    "GEOMETRY": _geometry,
    "LINESTRING": _geometry,
    "POLYGON": _geometry,
    "MULTIPOINT": _geometry,
    "MULTILINESTRING": _geometry,
    "MULTIPOLYGON": _geometry,
    "GEOMETRYCOLLECTION": _geometry,
    "POINT": _point,
    "VECTOR": _vector,
    "DATE": _date,
    "DATETIME": _datetime,
    "TIMESTAMP": _timestamp,
    "TIME": _time,
}


def _builder_for(column: Column) -> _Builder:
    key = canonical_type(column.data_type)
    if key == "SERIAL":
        return _bigint
    try:
        return _BUILDERS[key]
    except KeyError:
        raise ValueError(
            f"column {column.name!r}: no converter for MySQL type {column.data_type!r}"
        ) from None


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
    # Generated columns have no default; ON UPDATE CURRENT_TIMESTAMP columns, which Debezium's model
    # also marks generated, keep theirs.
    if column.has_default and column.default_expression is not None and column.generation_expression is None:
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
    for custom in settings.custom:
        conversion = custom.converter_for(column, table)
        if conversion is not None:
            return _custom_converter(conversion, optional, default, when_null, mapping)
    schema = ConnectSchema(
        mapping.type,
        optional=optional,
        name=mapping.name,
        version=mapping.version,
        doc=_doc(column, settings, mapping),
        parameters=_parameters(column, table, settings, mapping),
        default=default,
        fields=mapping.fields,
        items=mapping.items,
    )
    return ColumnConverter(
        schema=schema,
        from_binlog=_guard(mapping.binlog, when_null, mapping.may_invalidate),
        from_snapshot=_guard(mapping.snapshot, when_null, mapping.may_invalidate),
        binlog_encoding=mapping.binlog_encoding,
    )


def _custom_converter(
    conversion: Any, optional: bool, default: Any, when_null: Any, mapping: _Mapping
) -> ColumnConverter:
    """A custom converter (connector.records.custom_converters) on top of the built-in payload value."""
    convert = conversion.convert
    base = conversion.schema
    schema = ConnectSchema(
        base.type,
        optional=optional,
        name=base.name,
        version=base.version,
        doc=base.doc,
        parameters=base.parameters,
        default=convert(default) if default is not NO_DEFAULT and default is not None else NO_DEFAULT,
        fields=base.fields,
        items=base.items,
        keys=base.keys,
        values=base.values,
    )

    def chain(builtin: Convert) -> Convert:
        def converted(value: Any) -> Any:
            payload = builtin(value)
            return None if payload is None else convert(payload)

        return converted

    return ColumnConverter(
        schema=schema,
        from_binlog=chain(_guard(mapping.binlog, when_null, mapping.may_invalidate)),
        from_snapshot=chain(_guard(mapping.snapshot, when_null, mapping.may_invalidate)),
        binlog_encoding=mapping.binlog_encoding,
    )


_NEEDS_FALLBACK: Any = object()
_TEXT_JDBC_TYPES = frozenset(
    (JdbcType.CHAR, JdbcType.VARCHAR, JdbcType.LONGVARCHAR, JdbcType.CLOB, JdbcType.NCHAR, JdbcType.NVARCHAR)
)


def _doc(column: Column, settings: ConverterSettings, mapping: _Mapping) -> str | None:
    if settings.include_schema_comments and column.comment:
        return column.comment
    return mapping.doc


def _parameters(
    column: Column, table: Table, settings: ConverterSettings, mapping: _Mapping
) -> tuple[tuple[str, str], ...] | None:
    params = dict(mapping.parameters or {})
    if _propagates_source_type(column, table, settings):
        # PropagateSourceTypeToSchemaParameter, appended after the type's own parameters.
        params["__debezium.source.column.type"] = column.type_name.upper()
        if column.length is not None:
            params["__debezium.source.column.length"] = str(column.length)
        if column.scale is not None:
            params["__debezium.source.column.scale"] = str(column.scale)
        if column.comment:
            params["__debezium.source.column.comment"] = column.comment
        params["__debezium.source.column.name"] = column.name
    return tuple(params.items()) if params else None


def _propagates_source_type(column: Column, table: Table, settings: ConverterSettings) -> bool:
    # Debezium matches each regex case-insensitively against the whole of "db.table.column"
    # (column.propagate.source.type) or "db.table.TYPE NAME" (datatype.propagate.source.type).
    if settings.propagate_source_type:
        qualified = f"{table.id.database}.{table.id.table}.{column.name}"
        if any(_full_match(p, qualified) for p in settings.propagate_source_type):
            return True
    if settings.datatype_propagate_source_type:
        qualified = f"{table.id.database}.{table.id.table}.{column.type_name}"
        if any(_full_match(p, qualified) for p in settings.datatype_propagate_source_type):
            return True
    return False


def _full_match(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern.strip(), text, re.IGNORECASE) is not None


# ------------------------------------------------------------------------------------------------
# Snapshot connection conversions
# ------------------------------------------------------------------------------------------------
def _build_snapshot_conversions() -> dict[Any, Any]:
    conv: dict[Any, Any] = dict(pymysql_converters.encoders)  # parameter escaping stays standard
    for type_code in (
        FIELD_TYPE.TINY,
        FIELD_TYPE.SHORT,
        FIELD_TYPE.LONG,
        FIELD_TYPE.INT24,
        FIELD_TYPE.LONGLONG,
        FIELD_TYPE.YEAR,
    ):
        conv[type_code] = int
    for type_code in (FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE):
        conv[type_code] = float
    # Everything else (DECIMAL, DATE, TIME, DATETIME, TIMESTAMP, BIT, strings, JSON, GEOMETRY)
    # stays as the server sent it: text for character data, bytes for binary data.
    return conv


SNAPSHOT_CONVERSIONS: dict[Any, Any] = _build_snapshot_conversions()
