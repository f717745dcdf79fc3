"""MySQL binary JSON rendered as Debezium streams it (mysql-binlog-connector-java's ``JsonBinary``).

Debezium's MySQL connector reads a JSON column of a binlog row with the binlog client's
``JsonBinary.parseAsString`` and its ``JsonStringFormatter``; its snapshot reads MySQL's own text
through JDBC. Records must equal Debezium's, so streamed values take the client's form, which is
not MySQL's: compact (``{"a":1,"b":[true,null]}``), keys in the binary document's order, and

* strings: ``"`` and ``\\`` escaped with a backslash, control characters below 0x20 as ``\\b \\t
  \\n \\f \\r`` or ``\\u00XX`` (upper-case hex), everything else (``/``, DEL, non-ASCII) as is;
* doubles: Java's ``Double.toString`` unless it has an exponent, then the double's exact decimal
  expansion (``BigDecimal(double).toPlainString()``: 1e300 prints 301 digits);
* UINT64: the unsigned number; UINT32 read as a *signed* 32-bit number (the client's mask is an
  ``int``), and a UINT32 inlined in a large container prints nothing at all (the client keeps a
  ``Long``, which its container loop does not print): such documents are not valid JSON;
* opaque DECIMAL: ``toPlainString`` of the value (its scale kept); DATE / DATETIME / TIMESTAMP:
  ``"YYYY-MM-DD[ hh:mm:ss[.fraction without trailing zeros]]"``; TIME likewise, and a negative TIME
  the way the client's Java integer arithmetic prints it (``"01:0-1:0-1"`` for -00:00:01); any
  other opaque type: ``"<base64 of the payload>"``.

These quirks are reproduced on purpose and checked against the jar (tests/connector/
test_binlog_json.py). ``render_binlog_json`` reads the bytes; ``render_json_document`` renders a
document already parsed by ``connector.binlog.json.binary`` (the result of a partial JSON update, or the
library decoder's value), where the byte-level quirks above cannot be known and do not apply.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import re
import struct
from collections.abc import Callable
from typing import Any

from connector.binlog.json.binary import JsonDecodeError, JsonOpaque, JsonTime, decimal_from_binary

_SMALL_OBJECT, _LARGE_OBJECT, _SMALL_ARRAY, _LARGE_ARRAY = 0x00, 0x01, 0x02, 0x03
_LITERAL, _INT16, _UINT16, _INT32, _UINT32 = 0x04, 0x05, 0x06, 0x07, 0x08
_INT64, _UINT64, _DOUBLE, _STRING, _OPAQUE = 0x09, 0x0A, 0x0B, 0x0C, 0x0F
_LITERAL_TEXT = {0x00: "null", 0x01: "true", 0x02: "false"}

# MySQL column types (field_types.h) whose opaque payload the client decodes.
_DECIMAL, _NEWDECIMAL, _DATE = 0x00, 0xF6, 0x0A
_TIME, _TIME2, _DATETIME, _DATETIME2, _TIMESTAMP, _TIMESTAMP2 = 0x0B, 0x13, 0x0C, 0x12, 0x07, 0x11

# The client's escapes: control characters (generic \u00XX unless named), quote and backslash.
_NAMED_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}
_ESCAPES = {i: _NAMED_ESCAPES.get(i, f"\\u{i:04X}") for i in range(0x20)} | _NAMED_ESCAPES
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')


def render_binlog_json(data: bytes) -> str:
    """The text Debezium streams for one binary JSON column value (``data`` starts with its type)."""
    if not data:
        raise JsonDecodeError("empty binary JSON value")
    if 0x0F < data[0] < 0x80:  # the client's (signed byte) check for MariaDB's text JSON
        return data.decode("utf-8", "replace")
    out: list[str] = []
    _render(data[0], data, 1, out)
    return "".join(out)


# -- Java arithmetic the client's decoders rely on -------------------------------------------------
def _java_int(value: int) -> int:
    """Java's ``(int)`` cast: the low 32 bits, signed."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _java_rem(dividend: int, divisor: int) -> int:
    """Java's ``%``: the remainder takes the dividend's sign."""
    remainder = abs(dividend) % abs(divisor)
    return -remainder if dividend < 0 else remainder


# -- scalars ---------------------------------------------------------------------------------------
def json_string(text: str) -> str:
    """A string quoted and escaped as ``JsonStringFormatter.appendString`` does."""
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES[ord(m.group())], text) + '"'


def java_double(value: float) -> str:
    """``JsonStringFormatter.value(double)``: ``Double.toString`` unless in E notation, then the
    exact decimal value. Java 19+'s ``Double.toString`` gives the shortest digits, as ``repr``."""
    if value == 0.0 or 1e-3 <= abs(value) < 1e7:  # Double.toString's plain range
        return repr(value)
    return format(decimal.Decimal(value), "f")


def plain_decimal(value: decimal.Decimal) -> str:
    """``BigDecimal.toPlainString``: no exponent, the scale kept (and no negative zero)."""
    return format(value.copy_abs() if value.is_zero() else value, "f")


def _two(value: int) -> str:
    # appendTwoDigitUnsignedInt: a zero before anything below 10, negative numbers included
    return f"0{value}" if value < 10 else str(value)


def _four(value: int) -> str:
    return "0" * (4 - len(str(value))) + str(value) if value < 1000 else str(value)


def _fraction(micros: int) -> str:
    """appendSixDigitUnsignedInt(micros, trim): zeros for the width of the value, then the value
    with up to six trailing zeros divided away (Java's ``%`` for a negative value)."""
    if micros == 0:
        return ""
    padding = next(
        (6 - width for width, bound in enumerate((10, 100, 1000, 10000, 100000), 1) if micros < bound), 0
    )
    for _ in range(6):
        if _java_rem(micros, 10) == 0:
            micros = int(micros / 10)
        # Java's integer division truncates towards zero (int(a / b) is exact below 2**53)
    return "." + "0" * padding + str(micros)


def _date_text(year: int, month: int, day: int) -> str:
    sign = "-" if year < 0 else ""
    return f"{sign}{_four(abs(year))}-{_two(month)}-{_two(day)}"


def _time_text(hour: int, minute: int, second: int, micros: int) -> str:
    return f"{_two(hour)}:{_two(minute)}:{_two(second)}{_fraction(micros)}"


def _datetime_fields(raw: int) -> tuple[int, ...]:
    value = raw >> 24
    year_month = _java_rem(_java_int(value >> 22), 1 << 17)
    day = _java_rem(_java_int(value >> 17), 1 << 5)
    hour = _java_rem(_java_int(value >> 12), 1 << 5)
    minute = _java_rem(_java_int(value >> 6), 1 << 6)
    second = _java_int(_java_rem(value, 1 << 6))
    micros = _java_int(_java_rem(raw, 1 << 24))
    year, month = int(year_month / 13), _java_rem(year_month, 13)  # Java's int / and %
    return year, month, day, hour, minute, second, micros


def _opaque_date(payload: bytes) -> str:
    year, month, day, *_ = _datetime_fields(_int64(payload))
    return f'"{_date_text(year, month, day)}"'


def _opaque_datetime(payload: bytes) -> str:
    year, month, day, hour, minute, second, micros = _datetime_fields(_int64(payload))
    return f'"{_date_text(year, month, day)} {_time_text(hour, minute, second, micros)}"'


def _opaque_time(payload: bytes) -> str:
    raw = _int64(payload)
    value = raw >> 24
    hour = _java_rem(_java_int(value >> 12), 1 << 10)
    minute = _java_rem(_java_int(value >> 6), 1 << 6)
    second = _java_rem(_java_int(value), 1 << 6)
    hour = -hour if value < 0 else hour
    micros = _java_int(_java_rem(raw, 1 << 24))
    sign = "-" if hour < 0 else ""
    return f'"{sign}{_time_text(abs(hour), minute, second, micros)}"'


def _opaque_decimal(payload: bytes) -> str:
    return plain_decimal(decimal_from_binary(payload[0], payload[1], payload[2:]))


def _int64(payload: bytes) -> int:
    # the client reads eight bytes whatever the payload's length says; a short one is an error here
    if len(payload) < 8:
        raise JsonDecodeError(f"opaque temporal JSON value of {len(payload)} bytes, 8 expected")
    return int(struct.unpack_from("<q", payload)[0])


_OPAQUE_RENDERERS: dict[int, Callable[[bytes], str]] = {
    _DECIMAL: _opaque_decimal,
    _NEWDECIMAL: _opaque_decimal,
    _DATE: _opaque_date,
    **dict.fromkeys((_TIME, _TIME2), _opaque_time),
    **dict.fromkeys((_DATETIME, _DATETIME2, _TIMESTAMP, _TIMESTAMP2), _opaque_datetime),
}


# -- the byte walk ---------------------------------------------------------------------------------
def _render(kind: int, data: bytes, start: int, out: list[str]) -> None:
    renderer = _RENDERERS.get(kind)
    if renderer is None:
        raise JsonDecodeError(f"binary JSON type 0x{kind:02X} at byte {start - 1} is not known")
    try:
        renderer(data, start, out)
    except (IndexError, struct.error) as exc:
        raise JsonDecodeError(
            f"binary JSON value of type 0x{kind:02X} at byte {start - 1} is truncated"
        ) from exc


def _container(large: bool, is_object: bool) -> Callable[[bytes, int, list[str]], None]:
    index = struct.Struct("<I" if large else "<H").unpack_from
    width = 4 if large else 2
    # Values the entry holds itself: literals and 16-bit numbers, 32-bit ones in large containers.
    inlined: dict[int, Callable[[bytes, int], str]] = {
        _LITERAL: _inline_literal,
        _INT16: lambda data, pos: str(struct.unpack_from("<h", data, pos)[0]),
        _UINT16: lambda data, pos: str(struct.unpack_from("<H", data, pos)[0]),
    }
    if large:
        inlined[_INT32] = lambda data, pos: str(struct.unpack_from("<i", data, pos)[0])
        inlined[_UINT32] = lambda data, pos: ""  # a Long in the client's loop: printed as nothing

    def render(data: bytes, start: int, out: list[str]) -> None:
        count, size = index(data, start)[0], index(data, start + width)[0]
        pos = start + 2 * width
        names: list[str] = []
        if is_object:
            for _ in range(count):
                key_offset, key_length = index(data, pos)[0], struct.unpack_from("<H", data, pos + width)[0]
                key = bytes(data[start + key_offset : start + key_offset + key_length])
                names.append(json_string(key.decode("utf-8", "replace")) + ":")
                pos += width + 2
        out.append("{" if is_object else "[")
        for i in range(count):
            if i:
                out.append(",")
            if is_object:
                out.append(names[i])
            kind = data[pos]
            inline = inlined.get(kind)
            if inline is not None:
                out.append(inline(data, pos + 1))
            else:
                offset = index(data, pos + 1)[0]
                if offset >= size:
                    raise JsonDecodeError(
                        f"binary JSON value offset {offset} at byte {pos + 1} is past the "
                        f"container's {size} bytes"
                    )
                _render(kind, data, start + offset, out)
            pos += 1 + width
        out.append("}" if is_object else "]")

    return render


def _inline_literal(data: bytes, pos: int) -> str:
    text = _LITERAL_TEXT.get(data[pos])
    if text is None:
        raise JsonDecodeError(f"binary JSON literal 0x{data[pos]:02X} at byte {pos} is not known")
    return text


def _variable_length(data: bytes, pos: int) -> tuple[int, int]:
    """MySQL's JSON length: 7 bits per byte, low bits first, high bit = more bytes follow."""
    length = 0
    for i in range(5):
        byte = data[pos + i]
        length |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return length, pos + i + 1
    raise JsonDecodeError(f"binary JSON length at byte {pos} is longer than 5 bytes")


def _payload(data: bytes, start: int) -> tuple[bytes, int]:
    length, pos = _variable_length(data, start)
    if pos + length > len(data):
        raise JsonDecodeError(f"binary JSON value at byte {start} runs past the end ({len(data)} bytes)")
    return bytes(data[pos : pos + length]), pos + length


def _string(data: bytes, start: int, out: list[str]) -> None:
    out.append(json_string(_payload(data, start)[0].decode("utf-8", "replace")))


def _opaque(data: bytes, start: int, out: list[str]) -> None:
    mysql_type = data[start]
    payload, _end = _payload(data, start + 1)
    renderer = _OPAQUE_RENDERERS.get(mysql_type)
    out.append(renderer(payload) if renderer is not None else f'"{base64.b64encode(payload).decode()}"')


def _scalar(fmt: str, text: Callable[[Any], str]) -> Callable[[bytes, int, list[str]], None]:
    unpack = struct.Struct(fmt).unpack_from
    return lambda data, start, out: out.append(text(unpack(data, start)[0]))


_RENDERERS: dict[int, Callable[[bytes, int, list[str]], None]] = {
    _SMALL_OBJECT: _container(large=False, is_object=True),
    _LARGE_OBJECT: _container(large=True, is_object=True),
    _SMALL_ARRAY: _container(large=False, is_object=False),
    _LARGE_ARRAY: _container(large=True, is_object=False),
    _LITERAL: lambda data, start, out: out.append(_inline_literal(data, start)),
    _INT16: _scalar("<h", str),
    _UINT16: _scalar("<H", str),
    _INT32: _scalar("<i", str),
    _UINT32: _scalar("<i", str),  # the client's readUInt32 sign-extends (see the module docstring)
    _INT64: _scalar("<q", str),
    _UINT64: _scalar("<Q", str),
    _DOUBLE: _scalar("<d", java_double),
    _STRING: _string,
    _OPAQUE: _opaque,
}


# -- parsed documents ------------------------------------------------------------------------------
def render_json_document(value: Any) -> str:
    """A document parsed by ``connector.binlog.json.binary`` (or the library) in the client's form."""
    if isinstance(value, dict):
        items = (f"{json_string(_text(k))}:{render_json_document(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(render_json_document(v) for v in value) + "]"
    for kind, render in _DOCUMENT_SCALARS:
        if isinstance(value, kind):
            return render(value)
    return str(value)  # int


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _document_datetime(value: dt.datetime) -> str:
    date = _date_text(value.year, value.month, value.day)
    return f'"{date} {_time_text(value.hour, value.minute, value.second, value.microsecond)}"'


def _document_time(value: JsonTime) -> str:
    # a parsed TIME keeps its sign apart: printed with it, as MySQL would (no Java arithmetic here)
    sign = "-" if value.negative else ""
    return f'"{sign}{_time_text(value.hours, value.minutes, value.seconds, value.microseconds)}"'


def _document_timedelta(value: dt.timedelta) -> str:
    micros = abs(value) // dt.timedelta(microseconds=1)
    seconds, fraction = divmod(micros, 1_000_000)
    sign = "-" if value < dt.timedelta(0) else ""
    return f'"{sign}{_time_text(seconds // 3600, seconds // 60 % 60, seconds % 60, fraction)}"'


_DOCUMENT_SCALARS: tuple[tuple[type | tuple[type, ...], Callable[[Any], str]], ...] = (
    ((bytes, str), lambda v: json_string(_text(v))),
    (type(None), lambda v: "null"),
    (bool, lambda v: "true" if v else "false"),
    (float, java_double),
    (decimal.Decimal, plain_decimal),
    (dt.datetime, _document_datetime),
    (dt.date, lambda v: f'"{_date_text(v.year, v.month, v.day)}"'),
    (dt.time, lambda v: f'"{_time_text(v.hour, v.minute, v.second, v.microsecond)}"'),
    (dt.timedelta, _document_timedelta),
    (JsonTime, _document_time),
    (JsonOpaque, lambda v: f'"{base64.b64encode(v.data).decode()}"'),
)
