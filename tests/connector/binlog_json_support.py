"""MySQL binary JSON built in tests, and mysql-binlog-connector-java's rendering of it.

``encode`` writes the binary form MySQL stores (json_binary.cc's layout: a type byte, then for
objects and arrays the element count, the byte size, key entries, value entries with inlined small
values or offsets, keys, values; small containers use 16-bit counts and offsets, large ones 32-bit).
Values are plain Python values, or ``Typed`` / ``Opaque`` for the encodings Python values cannot
choose (UINT16/UINT32, MySQL column values inside JSON). ``java_render`` runs the binlog client's
``JsonBinary.parseAsString`` on each value (``java/JsonBinaryRender.java``).
"""

from __future__ import annotations

import base64
import shutil
import struct
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.connector.binlog_java_support import binlog_java_jars, compile_against_binlog_client

JAVA_SOURCE = Path(__file__).parent / "java" / "JsonBinaryRender.java"

SMALL_OBJECT, LARGE_OBJECT, SMALL_ARRAY, LARGE_ARRAY = 0x00, 0x01, 0x02, 0x03
LITERAL, INT16, UINT16, INT32, UINT32 = 0x04, 0x05, 0x06, 0x07, 0x08
INT64, UINT64, DOUBLE, STRING, OPAQUE = 0x09, 0x0A, 0x0B, 0x0C, 0x0F

# MySQL column types (field_types.h).
MYSQL_TIMESTAMP, MYSQL_DATE, MYSQL_TIME, MYSQL_DATETIME, MYSQL_YEAR = 0x07, 0x0A, 0x0B, 0x0C, 0x0D
MYSQL_VARCHAR, MYSQL_BIT, MYSQL_NEWDECIMAL, MYSQL_BLOB = 0x0F, 0x10, 0xF6, 0xFC

_FIXED = {INT16: "<h", UINT16: "<H", INT32: "<i", UINT32: "<I", INT64: "<q", UINT64: "<Q"}
_LITERALS = {None: 0x00, True: 0x01, False: 0x02}


@dataclass(frozen=True)
class Typed:
    """An integer stored with a chosen binary JSON type (INT16 ... UINT64)."""

    kind: int
    value: int


@dataclass(frozen=True)
class Opaque:
    """An opaque value: a MySQL column type and that type's binary payload."""

    mysql_type: int
    payload: bytes


@dataclass(frozen=True)
class Large:
    """An object or array written in the large (32-bit) form even when it would fit the small one."""

    value: dict[str, Any] | list[Any]


def encode(value: Any) -> bytes:
    """The binary JSON of ``value`` (type byte first)."""
    kind, body = _encode(value)
    return bytes([kind]) + body


def _encode(value: Any) -> tuple[int, bytes]:
    if isinstance(value, Large):
        return _container(value.value, large=True)
    if isinstance(value, dict | list):
        try:
            return _container(value, large=False)
        except struct.error:  # an offset or size above 65535: MySQL writes the large form
            return _container(value, large=True)
    if value is None or isinstance(value, bool):
        return LITERAL, bytes([_LITERALS[value]])
    if isinstance(value, Typed):
        return value.kind, struct.pack(_FIXED[value.kind], value.value)
    if isinstance(value, int):
        kind = (
            next(
                k
                for k, bits in ((INT16, 16), (INT32, 32), (INT64, 64))
                if -(1 << bits - 1) <= value < 1 << bits - 1
            )
            if value < 1 << 63
            else UINT64
        )
        return kind, struct.pack(_FIXED[kind], value)
    if isinstance(value, float):
        return DOUBLE, struct.pack("<d", value)
    if isinstance(value, str | bytes):
        data = value.encode() if isinstance(value, str) else value
        return STRING, _variable_length(len(data)) + data
    if isinstance(value, Opaque):
        return OPAQUE, bytes([value.mysql_type]) + _variable_length(len(value.payload)) + value.payload
    raise TypeError(f"no binary JSON form for {value!r}")


def _variable_length(length: int) -> bytes:
    out = bytearray()
    while True:
        byte, length = length & 0x7F, length >> 7
        out.append(byte | (0x80 if length else 0))
        if not length:
            return bytes(out)


def _inlined(kind: int, large: bool) -> bool:
    return kind in (LITERAL, INT16, UINT16) or (large and kind in (INT32, UINT32))


def _container(value: dict[str, Any] | list[Any], large: bool) -> tuple[int, bytes]:
    width = 4 if large else 2
    offset_format = "<I" if large else "<H"
    is_object = isinstance(value, dict)
    keys = [k.encode() for k in value] if isinstance(value, dict) else []
    items = list(value.values()) if isinstance(value, dict) else list(value)
    encoded = [_encode(v) for v in items]
    header = 2 * width + len(keys) * (width + 2) + len(items) * (1 + width)
    key_bytes = b"".join(keys)
    position = header + len(key_bytes)
    entries, payloads = bytearray(), bytearray()
    for kind, body in encoded:
        entries.append(kind)
        if _inlined(kind, large):
            entries += body.ljust(width, b"\0")
        else:
            entries += struct.pack(offset_format, position + len(payloads))
            payloads += body
    key_entries, key_position = bytearray(), header
    for key in keys:
        key_entries += struct.pack(offset_format, key_position) + struct.pack("<H", len(key))
        key_position += len(key)
    size = header + len(key_bytes) + len(payloads)
    body = struct.pack(offset_format, len(items)) + struct.pack(offset_format, size)
    body += key_entries + entries + key_bytes + payloads
    kinds = (LARGE_OBJECT, LARGE_ARRAY) if large else (SMALL_OBJECT, SMALL_ARRAY)
    return kinds[0] if is_object else kinds[1], body


# -- MySQL column values inside JSON -----------------------------------------------------------------
def packed_datetime(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, micros: int = 0
) -> bytes:
    """MySQL's packed DATETIME (TIME_to_longlong_datetime_packed), as JSON stores it."""
    ymd = ((year * 13 + month) << 5) | day
    hms = (hour << 12) | (minute << 6) | second
    return struct.pack("<q", (((ymd << 17) | hms) << 24) + micros)


def packed_time(negative: bool, hour: int, minute: int, second: int, micros: int = 0) -> bytes:
    """MySQL's packed TIME (TIME_to_longlong_time_packed): a negative TIME is the negated value."""
    packed = (((hour << 12) | (minute << 6) | second) << 24) + micros
    return struct.pack("<q", -packed if negative else packed)


_DIGITS_TO_BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_payload(text: str, precision: int, scale: int) -> bytes:
    """Precision, scale and DECIMAL's binary form (groups of 9 digits in 4 big-endian bytes)."""
    value = Decimal(text)
    whole, _, fraction = format(abs(value), "f").partition(".")
    whole = whole.zfill(precision - scale)
    fraction = fraction.ljust(scale, "0")
    lead = len(whole) % 9
    groups = ([whole[:lead]] if lead else []) + [whole[i : i + 9] for i in range(lead, len(whole), 9)]
    groups += [fraction[i : i + 9] for i in range(0, len(fraction), 9)]
    raw = bytearray()
    for group in groups:
        raw += int(group).to_bytes(_DIGITS_TO_BYTES[len(group)], "big")
    if value.is_signed():
        raw = bytearray(b ^ 0xFF for b in raw)
    raw[0] ^= 0x80
    return bytes([precision, scale]) + bytes(raw)


# -- the Java side ---------------------------------------------------------------------------------
def compile_json_render(classes: Path) -> None:
    compile_against_binlog_client(JAVA_SOURCE, classes)


def java_render(classes: Path, values: Sequence[bytes]) -> list[str]:
    """``JsonBinary.parseAsString`` of each value; an exception fails with the client's message."""
    java = shutil.which("java")
    assert java, "JsonBinaryRender needs a Java runtime"
    done = subprocess.run(
        [java, "-cp", f"{binlog_java_jars() / '*'}:{classes}", "JsonBinaryRender"],
        input="".join(v.hex() + "\n" for v in values).encode(),
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    lines = done.stdout.decode().splitlines()
    assert len(lines) == len(values), f"{len(lines)} answers for {len(values)} values"
    texts = []
    for index, line in enumerate(lines):
        status, _, payload = line.partition(" ")
        assert status == "ok", f"value {index} ({values[index].hex()[:80]}): {payload}"
        texts.append(base64.b64decode(payload).decode("utf-8"))
    return texts


def java_version() -> str:
    done = subprocess.run(
        [shutil.which("java") or "java", "-version"], capture_output=True, text=True, timeout=60
    )
    return done.stderr.splitlines()[0] if done.stderr else "unknown"
