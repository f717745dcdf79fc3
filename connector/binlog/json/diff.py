"""MySQL partial JSON updates (``binlog_row_value_options=PARTIAL_JSON``): decode and apply.

With PARTIAL_JSON, MySQL 8.0+ logs an UPDATE of a JSON column made with JSON_SET, JSON_REPLACE or
JSON_REMOVE as a PARTIAL_UPDATE_ROWS_EVENT (0x27) whose after image holds, for that column, a list
of diffs instead of the document. Each diff is (as MySQL's ``Json_diff`` serialises it):

* one byte, the operation: 0 REPLACE (the value at the path is replaced), 1 INSERT (a new member of
  an object, or a new element of an array at that index, the later elements moving up), 2 REMOVE
  (the member or element at the path goes);
* the path as MySQL prints it (``$.a."b c"[2]``), a length-encoded string;
* except for REMOVE: a length-encoded byte count and the value in MySQL's binary JSON.

The list is the column's whole value (its length prefix in the row image bounds it). The diffs
apply in order to the document the before image holds; the result is the document MySQL holds
after the statement. These functions are pure: ``decode_json_diffs`` reads the bytes,
``apply_json_diffs`` returns a new document and never changes its input.

Documents are the values ``connector.binlog.json.binary`` returns (objects as dicts with bytes keys,
strings as bytes): the converter renders them as Debezium's binlog client would
(``connector.binlog.json.render``). MySQL keeps object members
sorted by key length, then bytes; an inserted member takes its place in that order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from connector.binlog.json.binary import parse_mysql_json
from connector.errors import ReplicationError

REPLACE, INSERT, REMOVE = "REPLACE", "INSERT", "REMOVE"
_OPERATIONS = {0: REPLACE, 1: INSERT, 2: REMOVE}

PathLeg = bytes | int  # an object member (UTF-8 key) or an array index


class PartialJsonError(ReplicationError):
    """A JSON diff that cannot be decoded or does not fit the document (names path and offset)."""


@dataclass(frozen=True, slots=True)
class JsonDiff:
    """One logged change of a JSON document: operation, path text, new value (None for REMOVE)."""

    operation: str
    path: str
    value: Any = None

    @property
    def legs(self) -> tuple[PathLeg, ...]:
        return parse_path(self.path)


def read_length_encoded(data: bytes, pos: int) -> tuple[int, int]:
    """MySQL's length-encoded integer at ``pos`` and the position after it."""
    if pos >= len(data):
        raise PartialJsonError(f"JSON diff: length at byte {pos} runs past the end ({len(data)} bytes)")
    first = data[pos]
    width = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first, 0)
    if first == 0xFB or first == 0xFF:
        raise PartialJsonError(f"JSON diff: invalid length prefix 0x{first:02X} at byte {pos}")
    if pos + 1 + width > len(data):
        raise PartialJsonError(f"JSON diff: length at byte {pos} runs past the end")
    if not width:
        return first, pos + 1
    return int.from_bytes(data[pos + 1 : pos + 1 + width], "little"), pos + 1 + width


def decode_json_diffs(data: bytes) -> tuple[JsonDiff, ...]:
    """The diffs of one partial JSON column value (without the column's own length prefix)."""
    diffs: list[JsonDiff] = []
    pos = 0
    while pos < len(data):
        start = pos
        operation = _OPERATIONS.get(data[pos])
        if operation is None:
            raise PartialJsonError(f"JSON diff at byte {pos}: unknown operation {data[pos]}")
        length, pos = read_length_encoded(data, pos + 1)
        path = data[pos : pos + length].decode("utf-8")
        pos += length
        value = None
        if operation != REMOVE:
            length, pos = read_length_encoded(data, pos)
            if length < 1 or pos + length > len(data):
                raise PartialJsonError(
                    f"JSON diff at byte {start} ({path}): value of {length} bytes runs past the end"
                )
            value = parse_mysql_json(data[pos : pos + length])
            pos += length
        diffs.append(JsonDiff(operation, path, value))
    return tuple(diffs)


# -- paths --------------------------------------------------------------------------------------


def parse_path(path: str) -> tuple[PathLeg, ...]:
    """``$.a."b c"[2]`` → ``(b"a", b"b c", 2)``: the forms MySQL prints (member names, quoted
    member names with JSON escapes, array indexes; no wildcards: diffs name one location)."""
    if not path.startswith("$"):
        raise PartialJsonError(f"JSON diff path {path!r} does not start with '$'")
    legs: list[PathLeg] = []
    pos = 1
    while pos < len(path):
        char = path[pos]
        if char == ".":
            pos += 1
            if pos < len(path) and path[pos] == '"':
                decoded, end = json.JSONDecoder().raw_decode(path, pos)
                legs.append(str(decoded).encode("utf-8"))
                pos = end
            else:
                end = pos
                while end < len(path) and path[end] not in '.["':
                    end += 1
                if end == pos:
                    raise PartialJsonError(f"JSON diff path {path!r}: empty member name at {pos}")
                legs.append(path[pos:end].encode("utf-8"))
                pos = end
        elif char == "[":
            end = path.find("]", pos)
            index = path[pos + 1 : end].strip() if end > 0 else ""
            if not index.isdigit():
                raise PartialJsonError(f"JSON diff path {path!r}: array leg at {pos} is not an index")
            legs.append(int(index))
            pos = end + 1
        elif char.isspace():
            pos += 1
        else:
            raise PartialJsonError(f"JSON diff path {path!r}: unexpected {char!r} at {pos}")
    return tuple(legs)


# -- applying -----------------------------------------------------------------------------------


def _key_order(key: bytes) -> tuple[int, bytes]:
    return (len(key), key)


def _sorted_object(members: dict[bytes, Any]) -> dict[bytes, Any]:
    return dict(sorted(members.items(), key=lambda item: _key_order(_key_bytes(item[0]))))


def _key_bytes(key: Any) -> bytes:
    return key if isinstance(key, bytes) else str(key).encode("utf-8")


def _find_key(members: dict[Any, Any], key: bytes) -> Any:
    for existing in members:
        if _key_bytes(existing) == key:
            return existing
    return None


def _fail(diff: JsonDiff, why: str) -> PartialJsonError:
    return PartialJsonError(f"JSON diff {diff.operation} {diff.path}: {why}")


# -- the last leg: one function per operation and container kind. Each gets a copy to change.
def _array_replace(items: list[Any], index: int, diff: JsonDiff) -> list[Any]:
    if index >= len(items):
        raise _fail(diff, f"no element [{index}]")
    items[index] = diff.value
    return items


def _array_insert(items: list[Any], index: int, diff: JsonDiff) -> list[Any]:
    items.insert(min(index, len(items)), diff.value)  # past the end: appended (JSON_ARRAY_APPEND)
    return items


def _array_remove(items: list[Any], index: int, diff: JsonDiff) -> list[Any]:
    if index >= len(items):
        raise _fail(diff, f"no element [{index}]")
    del items[index]
    return items


def _object_replace(members: dict[Any, Any], key: bytes, diff: JsonDiff) -> dict[Any, Any]:
    members[_existing_key(members, key, diff)] = diff.value
    return members


def _object_insert(members: dict[Any, Any], key: bytes, diff: JsonDiff) -> dict[Any, Any]:
    if _find_key(members, key) is not None:
        raise _fail(diff, "the member exists already")
    members[key] = diff.value
    return _sorted_object(members)


def _object_remove(members: dict[Any, Any], key: bytes, diff: JsonDiff) -> dict[Any, Any]:
    del members[_existing_key(members, key, diff)]
    return members


_ARRAY_OPERATIONS = {REPLACE: _array_replace, INSERT: _array_insert, REMOVE: _array_remove}
_OBJECT_OPERATIONS = {REPLACE: _object_replace, INSERT: _object_insert, REMOVE: _object_remove}


def _existing_key(members: dict[Any, Any], key: bytes, diff: JsonDiff) -> Any:
    existing = _find_key(members, key)
    if existing is None:
        raise _fail(diff, f"no member {key.decode('utf-8', 'replace')!r}")
    return existing


def _apply_one(document: Any, legs: Sequence[PathLeg], diff: JsonDiff) -> Any:
    """A copy of ``document`` with ``diff`` applied at ``legs`` (copies along the path only)."""
    if not legs:
        if diff.operation != REPLACE:
            raise _fail(diff, "only REPLACE can name the root '$'")
        return diff.value
    leg, rest = legs[0], legs[1:]
    if isinstance(leg, int):
        if not isinstance(document, list):
            raise _fail(diff, f"[{leg}] of a non-array")
        items = list(document)
        if not rest:
            return _ARRAY_OPERATIONS[diff.operation](items, leg, diff)
        if leg >= len(items):
            raise _fail(diff, f"no element [{leg}]")
        items[leg] = _apply_one(items[leg], rest, diff)
        return items
    if not isinstance(document, dict):
        raise _fail(diff, "member of a non-object")
    members = dict(document)
    if not rest:
        return _OBJECT_OPERATIONS[diff.operation](members, leg, diff)
    existing = _existing_key(members, leg, diff)
    members[existing] = _apply_one(members[existing], rest, diff)
    return members


def apply_json_diffs(document: Any, diffs: Sequence[JsonDiff]) -> Any:
    """The document after ``diffs`` (in order), as MySQL's JSON_REPLACE / JSON_SET / JSON_INSERT /
    JSON_ARRAY_INSERT / JSON_REMOVE leave it. Raises ``PartialJsonError`` naming the path when a
    diff does not fit (the before image is not the document the diffs were made against)."""
    for diff in diffs:
        document = _apply_one(document, diff.legs, diff)
    return document
