"""Numbers: integers, BOOLEAN, BIT, FLOAT/DOUBLE/REAL, DECIMAL/NUMERIC.

The binlog decoder gives DECIMAL as its unscaled integer (the column's scale places the point) and
BIT as an integer; the snapshot's text and bytes are brought to those forms at the edge, so each
mode has one conversion.
"""

from __future__ import annotations

import binascii
import decimal
from typing import Any

from connector.records.conversion.family import (
    Builder,
    ConverterSettings,
    FamilyMapping,
    as_float32,
    base64_text,
    identity,
)
from ddl.model import Column
from ddl.mysql_types import INTEGER_TYPES, canonical_type, is_single_precision

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


def _int_builder(signed: str, unsigned: str) -> Builder:
    """An integer whose Connect type is static (the registry's): every one but BIGINT UNSIGNED.
    3.6.1.Final: TINYINT is INT16 signed or unsigned (INT8 only from 3.7.0.Alpha1)."""

    def build(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
        return FamilyMapping(
            unsigned if column.unsigned else signed, identity, identity, default=_int_from_text
        )

    return build


_STATIC_INTEGERS: dict[str, Builder] = {
    t.name: _int_builder(t.integer.connect_signed, t.integer.connect_unsigned)
    for t in INTEGER_TYPES
    if t.integer is not None and t.integer.connect_unsigned is not None
}


def _bigint(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    if not column.unsigned:
        return FamilyMapping("int64", identity, identity, default=_int_from_text)
    return _BIGINT_UNSIGNED_MODES[settings.bigint_unsigned_handling_mode](column, settings, on_zero)


def _bigint_unsigned_default_long(value: Any) -> int:
    # Debezium's default value for BIGINT UNSIGNED in long mode saturates at Long.MAX_VALUE where the
    # row values wrap (DEFAULT 18446744073709551615 → 9223372036854775807, the value → -1).
    return min(_int_from_text(value), _TWO_63 - 1)


def _bigint_unsigned_as_long(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    return FamilyMapping(
        "int64", _bigint_unsigned_long, _bigint_unsigned_long_text, default=_bigint_unsigned_default_long
    )


def _bigint_unsigned_precise(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    def convert(value: Any) -> str:
        return _encode_unscaled(_int_from_text(value))

    return FamilyMapping(
        "bytes",
        convert,
        convert,
        name=_DECIMAL_NAME,
        version=1,
        parameters={"scale": "0", "connect.decimal.precision": "20"},
    )


_BIGINT_UNSIGNED_MODES: dict[str, Builder] = {
    "long": _bigint_unsigned_as_long,
    "precise": _bigint_unsigned_precise,
}


# ------------------------------------------------------------------------------------------------
# BOOLEAN (4.2), BIT (4.7), FLOAT/DOUBLE/REAL (4.3)
# ------------------------------------------------------------------------------------------------
def _truthy_number(value: Any) -> bool:
    return value != 0


def _boolean_default(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    return _parse_int_default(lowered) != 0


def _boolean(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    # BOOL/BOOLEAN seen literally in a streamed CREATE TABLE; the server stores TINYINT(1).
    return FamilyMapping("boolean", _truthy_number, _truthy_number, default=_boolean_default)


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


def _bit(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    bits = column.length or 1
    # The binlog decoder gives the bits as an integer; the snapshot's big-endian bytes become one.
    if bits == 1:
        # BIT(1) -> BOOLEAN.
        return FamilyMapping(
            "boolean",
            _truthy_number,
            lambda data: _truthy_number(_bits_from_bytes(data)),
            default=lambda t: _bit_literal(t) != 0,
        )
    width = (bits + 7) // 8

    # BIT(n) -> io.debezium.data.Bits: little-endian bytes, ceil(n/8) long.
    def from_bits(value: int) -> str:
        return base64_text(value.to_bytes(width, "little"))

    return FamilyMapping(
        "bytes",
        from_bits,
        lambda data: from_bits(_bits_from_bytes(data)),
        name="io.debezium.data.Bits",
        version=1,
        parameters={"length": str(bits)},
        default=lambda t: base64_text(_bit_literal(t).to_bytes(width, "little")),
    )


def _float_from_text(text: Any) -> float:
    return float(text)


def _float(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    key = canonical_type(column.data_type)
    if is_single_precision(key, column.length, column.scale):
        # FLOAT/FLOAT(p<=24) and the literal REAL -> FLOAT32 (Debezium narrows REAL's double).
        def narrow_text(text: Any) -> float:
            return as_float32(float(text))

        return FamilyMapping("float32", as_float32, narrow_text, default=narrow_text)
    if key == "FLOAT" and column.scale is not None:
        # FLOAT(M,D) stores a float32, which Debezium reads as a Java float and widens to double
        # (FLOAT(7,3) holding 1234.567 → 1234.5670166015625), in the snapshot and in the binlog.
        def widened_text(text: Any) -> float:
            return as_float32(float(text))

        # The default is the literal read as a double (5.6), not the float32 the column stores.
        return FamilyMapping("float64", identity, widened_text, default=_float_from_text)
    if column.scale is not None:
        digits = column.scale

        # FLOAT(M,D)/DOUBLE(M,D): the server shows the value rounded to D decimals (and stores a
        # float32 for FLOAT(M,D)); rounding the binlog's binary value the same way makes the
        # streamed value equal the snapshot's.
        def rounded(value: float) -> float:
            return round(value, digits)

        return FamilyMapping("float64", rounded, _float_from_text, default=_float_from_text)
    return FamilyMapping("float64", identity, _float_from_text, default=_float_from_text)


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


def _decimal(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    return _DECIMAL_MODES[settings.decimal_handling_mode](column, settings, on_zero)


def _rescale(value: Any, exponent: decimal.Decimal) -> decimal.Decimal:
    # Binlog values already carry the column scale; defaults may not (HALF_UP, like setScale).
    return _WIDE.quantize(decimal.Decimal(value), exponent)


def _unscaled_from_text(text: str) -> int:
    """The snapshot's DECIMAL text as the decoder's unscaled integer: the server prints exactly the
    column's scale in fraction digits, so the unscaled value is the digits."""
    return int(text.replace(".", "", 1))


def _decimal_precise(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    precision, scale = _decimal_precision_scale(column)
    exponent = decimal.Decimal(1).scaleb(-scale)

    def from_default(text: str) -> str:
        return _encode_unscaled(int(_WIDE.scaleb(_rescale(text.strip(), exponent), scale)))

    return FamilyMapping(
        "bytes",
        _encode_unscaled,
        lambda text: _encode_unscaled(_unscaled_from_text(text)),
        name=_DECIMAL_NAME,
        version=1,
        parameters={"scale": str(scale), "connect.decimal.precision": str(precision)},
        default=from_default,
    )


def _decimal_double(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    _, scale = _decimal_precision_scale(column)
    divisor = 10**scale

    def from_unscaled(unscaled: int) -> float:
        # int / int is correctly rounded, as float() of the decimal text is.
        return unscaled / divisor

    return FamilyMapping(
        "float64",
        from_unscaled,
        lambda text: from_unscaled(_unscaled_from_text(text)),
        default=lambda text: float(text.strip()),
    )


def _decimal_string(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
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

    return FamilyMapping(
        "string",
        from_unscaled,
        lambda text: from_unscaled(_unscaled_from_text(text)),
        default=from_default,
    )


_DECIMAL_MODES: dict[str, Builder] = {
    "precise": _decimal_precise,
    "double": _decimal_double,
    "string": _decimal_string,
}


BUILDERS: dict[str, Builder] = {
    **_STATIC_INTEGERS,
    "BIGINT": _bigint,
    "SERIAL": _bigint,
    "DECIMAL": _decimal,
    "BOOLEAN": _boolean,
    "BIT": _bit,
    "FLOAT": _float,
    "REAL": _float,
    "DOUBLE": _float,
}
