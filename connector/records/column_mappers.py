"""Debezium's column mappers: truncate, mask and hash column values.

Properties (the value is a comma-separated list of regexes matched, case-insensitively and in full,
against ``db.table.column``):

* ``column.truncate.to.<N>.chars`` (N > 0): text longer than N UTF-16 code units is cut to N, binary
  values (``binary.handling.mode=bytes``) to N bytes; schema parameter ``truncateLength`` = N. Only
  applies when the column's length is unknown or greater than N (``TruncateColumn``).
* ``column.mask.with.<N>.chars`` (N >= 0): text values become N ``*`` (nulls too: Debezium's mask
  converter ignores its input); schema parameter ``masked`` = ``true`` (``MaskStrings``).
* ``column.mask.hash.<algorithm>.with.salt.<salt>`` / ``column.mask.hash.v2.<algorithm>.with.salt.<salt>``:
  text values become the lower-case hex digest of ``salt + bytes`` (a Java ``MessageDigest``
  algorithm: MD5, SHA-1, SHA-256, ...), cut to the column length when it has one; nulls stay null.
  ``bytes`` are the Java serialization of the string (``ObjectOutputStream``, "V1", the
  ``column.mask.hash.`` default) or its UTF-8 bytes (``v2``). Schema parameter ``masked`` = ``true``.

Masks and hashes change only character columns (CHAR, VARCHAR, TEXT types, ENUM, SET); other
columns keep their values but still get the ``masked`` parameter, as in Debezium.

Like Debezium's ``ColumnMappers#mapperFor``, a column gets at most one mapper: the first rule that
matches in the order truncate, mask, (``column.propagate.source.type``, then
``datatype.propagate.source.type``), hash v1, hash v2. A truncate or mask rule therefore replaces
the ``__debezium.source.column.*`` parameters, and a column whose source type is propagated is not
hashed. Rules of one kind apply in the order of the properties. Mappers change values (after the
column's converter ran) and the value schema, never the key: Debezium builds key fields without
mappers.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

from connector.records.conversion import ColumnConverter, Convert
from ddl.model import Column, JdbcType
from mysql_cdc_base.connect import ConnectSchema
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertyReader, compile_regex_list
from mysql_cdc_base.table_id import TableId

# java.sql.Types that MaskStrings changes: CHAR, VARCHAR, LONGVARCHAR, CLOB, NCHAR, NVARCHAR,
# LONGNVARCHAR (-16), NCLOB (2011), DATALINK (70).
_MASKABLE_JDBC_TYPES = frozenset(
    (
        JdbcType.CHAR,
        JdbcType.VARCHAR,
        JdbcType.LONGVARCHAR,
        JdbcType.CLOB,
        JdbcType.NCHAR,
        JdbcType.NVARCHAR,
        -16,
        2011,
        70,
    )
)
SOURCE_TYPE_PARAMETER_PREFIX = "__debezium.source.column."

_TRUNCATE_KEY = re.compile(r"column\.truncate\.to\.(\d+)\.chars")
_MASK_KEY = re.compile(r"column\.mask\.with\.(\d+)\.chars")
_HASH_V2_KEY = re.compile(r"column\.mask\.hash\.v2\.([^.]+)\.with\.salt\.(.+)", re.DOTALL)
_HASH_KEY = re.compile(r"column\.mask\.hash\.([^.]+)\.with\.salt\.(.+)", re.DOTALL)

# Java MessageDigest names (and the SUN provider's aliases), matched case-insensitively -> hashlib.
_DIGESTS: dict[str, str] = {
    "MD5": "md5",
    "SHA": "sha1",
    "SHA1": "sha1",
    "SHA-1": "sha1",
    "SHA-224": "sha224",
    "SHA224": "sha224",
    "SHA-256": "sha256",
    "SHA256": "sha256",
    "SHA-384": "sha384",
    "SHA384": "sha384",
    "SHA-512": "sha512",
    "SHA512": "sha512",
    "SHA-512/224": "sha512_224",
    "SHA512/224": "sha512_224",
    "SHA-512/256": "sha512_256",
    "SHA512/256": "sha512_256",
    "SHA3-224": "sha3_224",
    "SHA3-256": "sha3_256",
    "SHA3-384": "sha3_384",
    "SHA3-512": "sha3_512",
}


# -- value functions (pure) -------------------------------------------------------------------------
def truncate_text(text: str, max_units: int) -> str:
    """Java ``String.substring(0, n)`` when longer than n UTF-16 code units. A supplementary character
    cut in half is dropped (Java would keep a lone surrogate, which no JSON encoder accepts)."""
    if len(text) <= max_units // 2:
        return text  # even if every character needed two code units
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * max_units:
        return text
    return units[: 2 * max_units].decode("utf-16-le", "ignore")


def java_serialized_string(text: str) -> bytes:
    """``ObjectOutputStream.writeObject(text)``: stream header, TC_STRING/TC_LONGSTRING, length and
    modified UTF-8 (NUL as C0 80, supplementary characters as two 3-byte surrogates)."""
    if text.isascii() and "\x00" not in text:
        data = text.encode("ascii")
    else:
        out = bytearray()
        units = text.encode("utf-16-be", "surrogatepass")
        for i in range(0, len(units), 2):
            unit = units[i] << 8 | units[i + 1]
            if 0 < unit < 0x80:
                out.append(unit)
            elif unit < 0x800:
                out += bytes((0xC0 | unit >> 6, 0x80 | unit & 0x3F))
            else:
                out += bytes((0xE0 | unit >> 12, 0x80 | unit >> 6 & 0x3F, 0x80 | unit & 0x3F))
        data = bytes(out)
    if len(data) <= 0xFFFF:
        return b"\xac\xed\x00\x05\x74" + len(data).to_bytes(2, "big") + data
    return b"\xac\xed\x00\x05\x7c" + len(data).to_bytes(8, "big") + data


def _hasher(algorithm: str, salt: str, serialize: Callable[[str], bytes]) -> Convert:
    digest = hashlib.new(_DIGESTS[algorithm.upper()])
    digest.update(salt.encode("utf-8"))

    def hash_value(value: Any) -> Any:
        if value is None:
            return None  # HashValueConverter: a null is not Serializable -> null
        h = digest.copy()
        h.update(serialize(str(value)))
        return h.hexdigest()

    return hash_value


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "replace")


# -- rules ------------------------------------------------------------------------------------------
class _Rule(NamedTuple):
    """One mapper property: which columns, and what it does to their converter."""

    key: str
    patterns: tuple[re.Pattern[str], ...]
    apply: Callable[[Column, ColumnConverter], ColumnConverter]

    def matches(self, qualified: str) -> bool:
        return any(p.fullmatch(qualified) for p in self.patterns)


def _with_parameter(schema: ConnectSchema, name: str, value: str) -> ConnectSchema:
    params = [(k, v) for k, v in schema.parameters or () if not k.startswith(SOURCE_TYPE_PARAMETER_PREFIX)]
    params.append((name, value))
    return replace(schema, parameters=tuple(params))


def _chain(converter: ColumnConverter, schema: ConnectSchema, mapper: Convert | None) -> ColumnConverter:
    if mapper is None:
        return replace(converter, schema=schema)
    base_binlog, base_snapshot = converter.from_binlog, converter.from_snapshot

    def from_binlog(value: Any) -> Any:
        return mapper(base_binlog(value))

    def from_snapshot(value: Any) -> Any:
        return mapper(base_snapshot(value))

    return replace(converter, schema=schema, from_binlog=from_binlog, from_snapshot=from_snapshot)


def _truncate(length: int) -> Callable[[Column, ColumnConverter], ColumnConverter]:
    def apply(column: Column, converter: ColumnConverter) -> ColumnConverter:
        # TruncateColumn#isTruncationPossible: length unknown (-1) or longer than the limit.
        if column.length is not None and column.length <= length:
            return _without_source_type(converter)
        schema = _with_parameter(converter.schema, "truncateLength", str(length))
        if converter.schema.type == "bytes" and converter.schema.name is None:
            # A ByteBuffer in Debezium: the raw bytes are cut (our payload is their base64 text).
            def cut_bytes(value: Any) -> Any:
                if isinstance(value, str):
                    raw = base64.b64decode(value)
                    if len(raw) > length:
                        return base64.b64encode(raw[:length]).decode("ascii")
                return value

            return _chain(converter, schema, cut_bytes)
        if converter.schema.type == "string":

            def cut_text(value: Any) -> Any:
                return truncate_text(value, length) if isinstance(value, str) else value

            return _chain(converter, schema, cut_text)
        return _chain(converter, schema, None)  # numbers, decimals, structs: unchanged values

    return apply


def _without_source_type(converter: ColumnConverter) -> ColumnConverter:
    params = tuple(
        (k, v) for k, v in converter.schema.parameters or () if not k.startswith(SOURCE_TYPE_PARAMETER_PREFIX)
    )
    if params == (converter.schema.parameters or ()):
        return converter
    return replace(converter, schema=replace(converter.schema, parameters=params or None))


def _mask(chars: int) -> Callable[[Column, ColumnConverter], ColumnConverter]:
    mask = "*" * chars

    def masked(value: Any) -> str:
        return mask

    def apply(column: Column, converter: ColumnConverter) -> ColumnConverter:
        schema = _with_parameter(converter.schema, "masked", "true")
        return _chain(converter, schema, masked if column.jdbc_type in _MASKABLE_JDBC_TYPES else None)

    return apply


def _hash(
    algorithm: str, salt: str, serialize: Callable[[str], bytes]
) -> Callable[[Column, ColumnConverter], ColumnConverter]:
    hash_value = _hasher(algorithm, salt, serialize)

    def apply(column: Column, converter: ColumnConverter) -> ColumnConverter:
        schema = _with_parameter(converter.schema, "masked", "true")
        if column.jdbc_type not in _MASKABLE_JDBC_TYPES:
            return _chain(converter, schema, None)
        if column.length is not None and column.length > 0:
            length = column.length

            def hash_and_cut(value: Any) -> Any:
                hashed = hash_value(value)
                return hashed[:length] if hashed is not None else None

            return _chain(converter, schema, hash_and_cut)
        return _chain(converter, schema, hash_value)

    return apply


class ColumnMappers:
    """The column mapper rules of a configuration, applied once per table structure."""

    def __init__(self, leading: tuple[_Rule, ...] = (), hashing: tuple[_Rule, ...] = ()) -> None:
        self.leading = leading  # truncate, then mask rules: they win over propagate.source.type
        self.hashing = hashing  # hash v1, then v2 rules: they lose to propagate.source.type

    def __bool__(self) -> bool:
        return bool(self.leading or self.hashing)

    @classmethod
    def from_config(cls, config: PropertyReader) -> ColumnMappers:
        truncates: list[_Rule] = []
        masks: list[_Rule] = []
        hashes: list[_Rule] = []
        hashes_v2: list[_Rule] = []
        for key, value in config.raw.items():
            if not key.startswith(("column.truncate.", "column.mask.")) or not value.strip():
                continue
            patterns = compile_regex_list(key, value)
            if match := _TRUNCATE_KEY.fullmatch(key):
                length = int(match.group(1))
                if length <= 0:
                    raise ConfigError(
                        key,
                        "the length to truncate to must be positive "
                        "(column.truncate.to.<N>.chars with N > 0)",
                    )
                truncates.append(_Rule(key, patterns, _truncate(length)))
            elif match := _MASK_KEY.fullmatch(key):
                masks.append(_Rule(key, patterns, _mask(int(match.group(1)))))
            elif match := _HASH_V2_KEY.fullmatch(key):
                hashes_v2.append(
                    _Rule(key, patterns, _hash(_algorithm(key, match.group(1)), match.group(2), _utf8))
                )
            elif match := _HASH_KEY.fullmatch(key):
                hashes.append(
                    _Rule(
                        key,
                        patterns,
                        _hash(_algorithm(key, match.group(1)), match.group(2), java_serialized_string),
                    )
                )
            else:
                raise ConfigError(
                    key,
                    "not a column mapper property; expected column.truncate.to.<N>.chars, "
                    "column.mask.with.<N>.chars or column.mask.hash[.v2].<algorithm>.with.salt.<salt>",
                )
        return cls((*truncates, *masks), (*hashes, *hashes_v2))

    def apply(self, table_id: TableId, column: Column, converter: ColumnConverter) -> ColumnConverter:
        """``converter`` with the first matching rule applied (``converter`` itself if none)."""
        qualified = f"{table_id.database}.{table_id.table}.{column.name}"
        for rule in self.leading:
            if rule.matches(qualified):
                return rule.apply(column, converter)
        if any(k == SOURCE_TYPE_PARAMETER_PREFIX + "type" for k, _ in converter.schema.parameters or ()):
            return converter  # the propagate-source-type mapper came first
        for rule in self.hashing:
            if rule.matches(qualified):
                return rule.apply(column, converter)
        return converter


def _algorithm(key: str, name: str) -> str:
    if name.upper() not in _DIGESTS:
        raise ConfigError(
            key,
            f"unknown hash algorithm {name!r}; use a Java MessageDigest name: "
            f"{', '.join(sorted({k for k in _DIGESTS if '-' in k or k == 'MD5'}))}",
        )
    return name
