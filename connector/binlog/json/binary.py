"""MySQL's binary JSON (the JSON column's storage and binlog form), decoded with its opaque values.

mysql-replication's ``parse_json`` reads MySQL 5.7/8 binary JSON but not all of its *opaque* values
(type 0x0F: a MySQL column type byte, a length, and that column type's binary value), which JSON
documents hold when built from SQL values: ``JSON_OBJECT('d', CAST(1.5 AS DECIMAL(4,2)))``,
``JSON_ARRAY(CURDATE(), NOW(), CAST('87:31:46' AS TIME))``. It cannot read a TIME above 23 hours (a
Python ``time``) and leaves DECIMAL and other types as raw bytes. This decoder reads the whole format
and gives opaque values a Python form (the structure partial JSON updates are applied to;
``connector.binlog.json.render`` renders documents as Debezium streams them):

* DECIMAL → ``decimal.Decimal`` (precision and scale bytes, then DECIMAL's binary form);
* DATE → ``datetime.date``; DATETIME / TIMESTAMP → ``datetime.datetime`` (MySQL's packed 64-bit
  form); TIME → ``JsonTime`` (signed, hours up to 838);
* anything else → ``JsonOpaque`` (MySQL prints ``"base64:type<N>:<base64>"``).

The other values have the shapes ``parse_json`` gives (objects as dicts with bytes keys, strings as
bytes), so documents from either decoder render the same.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connector.errors import ReplicationError

_SMALL_OBJECT, _LARGE_OBJECT, _SMALL_ARRAY, _LARGE_ARRAY = 0x00, 0x01, 0x02, 0x03
_LITERAL, _INT16, _UINT16, _INT32, _UINT32 = 0x04, 0x05, 0x06, 0x07, 0x08
_INT64, _UINT64, _DOUBLE, _STRING, _OPAQUE = 0x09, 0x0A, 0x0B, 0x0C, 0x0F
_LITERALS = {0x00: None, 0x01: True, 0x02: False}

# MySQL column types an opaque value may carry (field_types.h).
_MYSQL_DATE, _MYSQL_TIME, _MYSQL_DATETIME, _MYSQL_TIMESTAMP = 0x0A, 0x0B, 0x0C, 0x07
_MYSQL_NEWDECIMAL = 0xF6


class JsonDecodeError(ReplicationError, ValueError):
    """Bytes that are not MySQL binary JSON (the message names the byte offset)."""


@dataclass(frozen=True, slots=True)
class JsonTime:
    """A TIME inside a JSON document: MySQL's range is -838:59:59.999999 to 838:59:59.999999."""

    negative: bool
    hours: int
    minutes: int
    seconds: int
    microseconds: int

    def __str__(self) -> str:
        sign = "-" if self.negative else ""
        return f"{sign}{self.hours:02d}:{self.minutes:02d}:{self.seconds:02d}.{self.microseconds:06d}"


@dataclass(frozen=True, slots=True)
class JsonOpaque:
    """An opaque JSON value of a MySQL type without a JSON form of its own (BLOB, BIT, YEAR...)."""

    mysql_type: int
    data: bytes


@dataclass(frozen=True, slots=True)
class BinaryJson:
    """A binlog row's JSON column value as its bytes: rendered as Debezium streams it
    (``connector.binlog.json.render``), parsed only where a partial update needs the document."""

    data: bytes

    def document(self) -> Any:
        return parse_mysql_json(self.data)


def parse_mysql_json(data: bytes) -> Any:
    """The document a binary JSON value holds (``data`` starts with its type byte)."""
    if not data:
        raise JsonDecodeError("empty binary JSON value")
    return _value(data[0], data, 1, len(data))


def _value(kind: int, data: bytes, start: int, end: int) -> Any:
    reader = _READERS.get(kind)
    if reader is None:
        raise JsonDecodeError(f"binary JSON type 0x{kind:02X} at byte {start - 1} is not known")
    try:
        return reader(data, start, end)
    except (IndexError, struct.error) as exc:
        raise JsonDecodeError(
            f"binary JSON value of type 0x{kind:02X} at byte {start - 1} is truncated"
        ) from exc


def _container(large: bool, is_object: bool) -> Callable[[bytes, int, int], Any]:
    offset_format = "<I" if large else "<H"
    width = 4 if large else 2

    def read(data: bytes, start: int, end: int) -> Any:
        count = struct.unpack_from(offset_format, data, start)[0]
        pos = start + 2 * width
        keys: list[bytes] = []
        if is_object:
            for _ in range(count):
                key_offset = struct.unpack_from(offset_format, data, pos)[0]
                key_length = struct.unpack_from("<H", data, pos + width)[0]
                keys.append(bytes(data[start + key_offset : start + key_offset + key_length]))
                pos += width + 2
        values = []
        for _ in range(count):
            kind = data[pos]
            if _inlined(kind, large):
                values.append(_inline(kind, data, pos + 1, large))
            else:
                value_offset = struct.unpack_from(offset_format, data, pos + 1)[0]
                values.append(_value(kind, data, start + value_offset, end))
            pos += 1 + width
        return dict(zip(keys, values, strict=True)) if is_object else values

    return read


def _inlined(kind: int, large: bool) -> bool:
    return kind in (_LITERAL, _INT16, _UINT16) or (large and kind in (_INT32, _UINT32))


def _inline(kind: int, data: bytes, pos: int, large: bool) -> Any:
    if kind == _LITERAL:
        return _literal(data, pos, pos + 1)
    return _FIXED[kind](data, pos, pos)


def _fixed(fmt: str) -> Callable[[bytes, int, int], Any]:
    unpack = struct.Struct(fmt).unpack_from
    return lambda data, start, end: unpack(data, start)[0]


def _literal(data: bytes, start: int, end: int) -> Any:
    if data[start] not in _LITERALS:
        raise JsonDecodeError(f"binary JSON literal 0x{data[start]:02X} at byte {start} is not known")
    return _LITERALS[data[start]]


def _variable_length(data: bytes, pos: int) -> tuple[int, int]:
    """MySQL's JSON length: 7 bits per byte, low bits first, high bit = more bytes follow."""
    length = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        length |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return length, pos
        shift += 7
        if shift > 28:
            raise JsonDecodeError(f"binary JSON length at byte {pos} is longer than 5 bytes")


def _string(data: bytes, start: int, end: int) -> bytes:
    length, pos = _variable_length(data, start)
    if pos + length > len(data):
        raise JsonDecodeError(f"binary JSON string at byte {start} runs past the end")
    return bytes(data[pos : pos + length])


def _opaque(data: bytes, start: int, end: int) -> Any:
    mysql_type = data[start]
    length, pos = _variable_length(data, start + 1)
    payload = bytes(data[pos : pos + length])
    if len(payload) != length:
        raise JsonDecodeError(f"opaque JSON value at byte {start} runs past the end")
    reader = _OPAQUE_READERS.get(mysql_type)
    return reader(payload) if reader is not None else JsonOpaque(mysql_type, payload)


# -- opaque values ------------------------------------------------------------------------------
_DIGITS_PER_BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_from_binary(precision: int, scale: int, data: bytes) -> decimal.Decimal:
    """DECIMAL's binary form: groups of 9 digits in 4 big-endian bytes, leftover digits in the
    fewest bytes, integer part first; the sign bit is inverted and a negative value's bytes too."""
    integral = precision - scale
    sizes = [_DIGITS_PER_BYTES[integral % 9]] * (integral % 9 > 0) + [4] * (integral // 9)
    sizes += [4] * (scale // 9) + [_DIGITS_PER_BYTES[scale % 9]] * (scale % 9 > 0)
    if sum(sizes) != len(data):
        raise JsonDecodeError(
            f"DECIMAL({precision},{scale}) needs {sum(sizes)} bytes, the value has {len(data)}"
        )
    raw = bytearray(data)
    negative = not raw[0] & 0x80
    raw[0] ^= 0x80
    if negative:
        raw = bytearray(b ^ 0xFF for b in raw)
    digits_of = [(integral % 9) or 9] * (integral % 9 > 0) + [9] * (integral // 9)
    digits_of += [9] * (scale // 9) + [(scale % 9) or 9] * (scale % 9 > 0)
    text, pos = [], 0
    for size, digits in zip(sizes, digits_of, strict=True):
        text.append(str(int.from_bytes(raw[pos : pos + size], "big")).zfill(digits))
        pos += size
    whole_groups = (integral % 9 > 0) + integral // 9
    whole = "".join(text[:whole_groups]).lstrip("0") or "0"
    fraction = "".join(text[whole_groups:])
    value = decimal.Decimal(f"{'-' if negative else ''}{whole}{'.' + fraction if fraction else ''}")
    return value


def _opaque_decimal(payload: bytes) -> decimal.Decimal:
    return decimal_from_binary(payload[0], payload[1], payload[2:])


def _packed(payload: bytes) -> tuple[bool, int, int]:
    """MySQL's packed temporal (``TIME_to_longlong_*_packed``): sign, the date/time part above the
    low 24 bits, and the microseconds in them."""
    packed = struct.unpack("<q", payload[:8])[0]
    negative = packed < 0
    packed = abs(packed)
    return negative, packed >> 24, packed & 0xFFFFFF


def _ymd_hms(whole: int) -> tuple[int, int, int, int, int, int]:
    ymd, hms = whole >> 17, whole & 0x1FFFF
    year_month = ymd >> 5
    return year_month // 13, year_month % 13, ymd & 0x1F, hms >> 12, (hms >> 6) & 0x3F, hms & 0x3F


def _opaque_datetime(payload: bytes) -> Any:
    _negative, whole, micros = _packed(payload)
    year, month, day, hour, minute, second = _ymd_hms(whole)
    if not (year and month and day):
        return JsonOpaque(_MYSQL_DATETIME, payload)  # a zero date has no datetime form
    return dt.datetime(year, month, day, hour, minute, second, micros)


def _opaque_date(payload: bytes) -> Any:
    _negative, whole, _micros = _packed(payload)
    year, month, day, *_ = _ymd_hms(whole)
    if not (year and month and day):
        return JsonOpaque(_MYSQL_DATE, payload)
    return dt.date(year, month, day)


def _opaque_time(payload: bytes) -> JsonTime:
    negative, whole, micros = _packed(payload)
    return JsonTime(negative, (whole >> 12) & 0x3FF, (whole >> 6) & 0x3F, whole & 0x3F, micros)


_OPAQUE_READERS: dict[int, Callable[[bytes], Any]] = {
    _MYSQL_NEWDECIMAL: _opaque_decimal,
    _MYSQL_DATE: _opaque_date,
    _MYSQL_DATETIME: _opaque_datetime,
    _MYSQL_TIMESTAMP: _opaque_datetime,
    _MYSQL_TIME: _opaque_time,
}

_FIXED: dict[int, Callable[[bytes, int, int], Any]] = {
    _INT16: _fixed("<h"),
    _UINT16: _fixed("<H"),
    _INT32: _fixed("<i"),
    _UINT32: _fixed("<I"),
    _INT64: _fixed("<q"),
    _UINT64: _fixed("<Q"),
    _DOUBLE: _fixed("<d"),
}

_READERS: dict[int, Callable[[bytes, int, int], Any]] = {
    _SMALL_OBJECT: _container(large=False, is_object=True),
    _LARGE_OBJECT: _container(large=True, is_object=True),
    _SMALL_ARRAY: _container(large=False, is_object=False),
    _LARGE_ARRAY: _container(large=True, is_object=False),
    _LITERAL: _literal,
    _STRING: _string,
    _OPAQUE: _opaque,
    **_FIXED,
}
