"""Character and binary strings and ENUM/SET (docs/fidelity.md lists where we differ from Debezium).

Text arrives decoded with the column's character set on both paths (``binlog_encoding`` tells the
row decoder which codec); binary strings follow ``binary.handling.mode``; a SET arrives as its
members' text in definition order from the decoder and from the server.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

from connector.records.charsets import binlog_encoding
from connector.records.conversion.family import (
    Builder,
    ConverterSettings,
    FamilyMapping,
    base64_text,
    identity,
)
from ddl.model import BINARY_TYPES, CHARACTER_TYPES, Column


# ------------------------------------------------------------------------------------------------
# Strings (4.4): decoded with the column's character set
# ------------------------------------------------------------------------------------------------
def _string(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    return FamilyMapping(
        "string", identity, identity, default=identity, binlog_encoding=binlog_encoding(column.charset)
    )


# ------------------------------------------------------------------------------------------------
# Binary strings (4.4): binary.handling.mode
# ------------------------------------------------------------------------------------------------
def _hex_text(data: bytes) -> str:
    return data.hex()


def _base64_url_text(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


# The "codec" of binary strings: the row decoder keeps their bytes. Named explicitly because the
# library's own choice, without a charset in the TABLE_MAP (binlog_row_metadata=MINIMAL, e.g. a
# replayed binlog file), is to decode them as UTF-8 text.
BINARY_CHARSET = "binary"

# mode -> (Connect type, bytes -> payload). Connect BYTES payloads are standard base64 in JSON.
_BINARY_MODES: dict[str, tuple[str, Callable[[bytes], str]]] = {
    "bytes": ("bytes", base64_text),
    "base64": ("string", base64_text),
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


def _binary(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
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
        return FamilyMapping(
            kind,
            padded,
            padded,
            default=lambda t: plain(_binary_literal(t)),
            binlog_encoding=BINARY_CHARSET,
        )

    return FamilyMapping(
        kind, plain, plain, default=lambda t: plain(_binary_literal(t)), binlog_encoding=BINARY_CHARSET
    )


# ------------------------------------------------------------------------------------------------
# ENUM / SET (4.6)
# ------------------------------------------------------------------------------------------------
def _allowed(options: Sequence[str]) -> str:
    # EnumeratedValues: options joined with ',', a ',' inside an option escaped as '\,'.
    return ",".join(option.replace(",", "\\,") for option in options)


def _enum(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    # mysql-replication maps the binlog index through the table map's option list (index 0, an
    # invalid value, is ''), so both paths carry the option text.
    return FamilyMapping(
        "string",
        identity,
        identity,
        name="io.debezium.data.Enum",
        version=1,
        parameters={"allowed": _allowed(column.enum_values)},
        fallback="",
        default=identity,
    )


def _set(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    options = column.enum_values

    # Both paths give the members' text in definition order (Debezium's form).
    return FamilyMapping(
        "string",
        identity,
        identity,
        name="io.debezium.data.EnumSet",
        version=1,
        parameters={"allowed": _allowed(options)},
        fallback="",
        default=identity,
    )


BUILDERS: dict[str, Builder] = {
    **dict.fromkeys(CHARACTER_TYPES - {"ENUM"}, _string),
    **dict.fromkeys(BINARY_TYPES, _binary),
    "ENUM": _enum,
    "SET": _set,
}
