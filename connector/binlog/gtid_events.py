"""MySQL 8.3+ tagged GTIDs in the binlog: GTID_TAGGED_LOG_EVENT (0x2A) and tagged PREVIOUS_GTIDS.

mysql-replication 1.0.17 reads neither: it hands a GTID_TAGGED_LOG_EVENT over as a
``NotImplementedEvent`` and a tagged PREVIOUS_GTIDS as garbage. These pure functions decode the
event bodies (after the 19-byte header, without the CRC32) into the GTID text Debezium writes.

GTID_TAGGED_LOG_EVENT uses MySQL's serialization framework (``libs/mysql/serialization``): a format
version byte (2), then a message: ``payload_size`` (counting every byte of the serialized data,
the version byte included), ``last_non_ignorable_field_id``, then ``field_id value`` pairs. Every
integer is a "varlen" integer: the number of trailing one-bits of the first byte is the number of
bytes that follow; the value is the little-endian number of all those bytes shifted right by that
count plus one (nine bytes, first byte 0xFF: the 8 bytes after it). Signed integers (gno,
logical clocks) are zig-zag encoded. The UUID is 16 varlen bytes, the tag a varlen length and text.

PREVIOUS_GTIDS: an 8-byte little-endian header whose top byte is the format (0 untagged, 1
tagged); untagged, the lower 56 bits count the UUIDs; tagged, bits 8-55 count the (UUID, tag)
pairs. Per entry: 16-byte UUID, (tagged only) varlen tag length and tag, 8-byte interval count, and
per interval start and end-exclusive as 8-byte integers.
"""

from __future__ import annotations

import struct
import uuid as uuid_module
from collections.abc import Callable
from typing import Any, NamedTuple

from connector.errors import ReplicationError
from mysql_cdc_base.position import GtidSet

GTID_TAGGED_LOG_EVENT = 0x2A
PREVIOUS_GTIDS_EVENT = 0x23
_SERIALIZATION_V2 = 2
_U64 = struct.Struct("<Q")


class GtidEventError(ReplicationError):
    """A GTID event body that cannot be decoded (the message names the field and byte offset)."""


class TaggedGtid(NamedTuple):
    """A decoded GTID_TAGGED_LOG_EVENT: its GTID and the commit metadata the connector uses."""

    uuid: str
    tag: str
    gno: int
    flags: int = 0
    immediate_commit_timestamp_us: int = 0
    transaction_length: int = 0

    @property
    def gtid(self) -> str:
        """``uuid:tag:gno``, as MySQL prints a tagged GTID and Debezium stores it."""
        return f"{self.uuid}:{self.tag}:{self.gno}"


def read_varlen_uint(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varlen integer at ``pos`` and the position after it."""
    if pos >= len(data):
        raise GtidEventError(f"varlen integer at byte {pos} runs past the end ({len(data)} bytes)")
    first = data[pos]
    extra = _trailing_ones(first)
    end = pos + extra + 1
    if end > len(data):
        raise GtidEventError(f"varlen integer at byte {pos} needs {extra + 1} bytes, {len(data) - pos} left")
    if extra == 8:
        return int.from_bytes(data[pos + 1 : end], "little"), end
    return int.from_bytes(data[pos:end], "little") >> (extra + 1), end


def read_varlen_int(data: bytes, pos: int) -> tuple[int, int]:
    """The signed (zig-zag) varlen integer at ``pos`` and the position after it."""
    raw, end = read_varlen_uint(data, pos)
    return (-(raw >> 1) - 1 if raw & 1 else raw >> 1), end


def _trailing_ones(byte: int) -> int:
    count = 0
    while byte & 1 and count < 8:
        byte >>= 1
        count += 1
    return count


def _read_uuid(data: bytes, pos: int) -> tuple[str, int]:
    raw = bytearray()
    for _ in range(16):
        value, pos = read_varlen_uint(data, pos)
        if value > 0xFF:
            raise GtidEventError(f"UUID byte {value} at byte {pos} is out of range")
        raw.append(value)
    return str(uuid_module.UUID(bytes=bytes(raw))), pos


def _read_text(data: bytes, pos: int) -> tuple[str, int]:
    length, pos = read_varlen_uint(data, pos)
    if pos + length > len(data):
        raise GtidEventError(f"text of {length} bytes at byte {pos} runs past the end")
    return data[pos : pos + length].decode("ascii").lower(), pos + length


# field id -> (TaggedGtid field or None to only pass it, reader). The ids are MySQL's
# Gtid_event field numbering (control_events.h): 0 flags, 1 uuid, 2 gno, 3 tag, 4 last committed,
# 5 sequence number, 6/7 immediate/original commit timestamp, 8 transaction length, 9/10
# immediate/original server version, 11 commit group ticket.
_Reader = Callable[[bytes, int], tuple[object, int]]
_FIELDS: dict[int, tuple[str | None, _Reader]] = {
    0: ("flags", read_varlen_uint),
    1: ("uuid", _read_uuid),
    2: ("gno", read_varlen_int),
    3: ("tag", _read_text),
    4: (None, read_varlen_int),
    5: (None, read_varlen_int),
    6: ("immediate_commit_timestamp_us", read_varlen_uint),
    7: (None, read_varlen_uint),
    8: ("transaction_length", read_varlen_uint),
    9: (None, read_varlen_uint),
    10: (None, read_varlen_uint),
    11: (None, read_varlen_uint),
}


def decode_tagged_gtid(body: bytes) -> TaggedGtid:
    """The GTID of a GTID_TAGGED_LOG_EVENT body (header and checksum removed)."""
    if not body or body[0] != _SERIALIZATION_V2:
        version = body[0] if body else None
        raise GtidEventError(f"GTID_TAGGED_LOG_EVENT with serialization version {version} (expected 2)")
    payload_size, pos = read_varlen_uint(body, 1)
    last_non_ignorable, pos = read_varlen_uint(body, pos)
    if payload_size > len(body) or payload_size < pos:
        raise GtidEventError(
            f"GTID_TAGGED_LOG_EVENT payload of {payload_size} bytes in a {len(body)}-byte body"
        )
    values: dict[str, object] = {}
    while pos < payload_size:
        field_id, value_pos = read_varlen_uint(body, pos)
        known = _FIELDS.get(field_id)
        if known is None:
            if field_id <= last_non_ignorable:
                raise GtidEventError(
                    f"GTID_TAGGED_LOG_EVENT has field {field_id} at byte {pos}, which a reader must "
                    f"understand (last non-ignorable field {last_non_ignorable}): a newer server format"
                )
            break  # ignorable newer fields come last; their length is not known
        name, reader = known
        value, pos = reader(body, value_pos)
        if name is not None:
            values[name] = value
    if "uuid" not in values or "gno" not in values or not values.get("tag"):
        raise GtidEventError(f"GTID_TAGGED_LOG_EVENT without uuid, gno or tag (fields {sorted(values)})")
    return TaggedGtid(**values)  # type: ignore[arg-type]


def decode_previous_gtids(body: bytes) -> GtidSet:
    """The GTID set of a PREVIOUS_GTIDS_EVENT body, untagged or tagged encoding."""
    if len(body) < 8:
        raise GtidEventError(f"PREVIOUS_GTIDS_EVENT of {len(body)} bytes has no header")
    header = _U64.unpack_from(body, 0)[0]
    tagged = header >> 56 != 0
    count = (header >> 8) & ((1 << 48) - 1) if tagged else header & ((1 << 56) - 1)
    pos = 8
    gtids = GtidSet()
    for _ in range(count):
        if pos + 16 > len(body):
            raise GtidEventError(f"PREVIOUS_GTIDS_EVENT: UUID at byte {pos} runs past the end")
        source = str(uuid_module.UUID(bytes=body[pos : pos + 16]))
        pos += 16
        tag = ""
        if tagged:
            tag, pos = _read_text(body, pos)
        if pos + 8 > len(body):
            raise GtidEventError(f"PREVIOUS_GTIDS_EVENT: interval count at byte {pos} runs past the end")
        intervals = _U64.unpack_from(body, pos)[0]
        pos += 8
        if pos + 16 * intervals > len(body):
            raise GtidEventError(
                f"PREVIOUS_GTIDS_EVENT: {intervals} intervals at byte {pos} run past the end"
            )
        prefix = f"{source}:{tag}:" if tag else f"{source}:"
        for _ in range(intervals):
            start, end = _U64.unpack_from(body, pos)[0], _U64.unpack_from(body, pos + 8)[0]
            pos += 16
            # Stored end-exclusive; an empty interval would not parse.
            if end > start:
                gtids = gtids.add(f"{prefix}{start}-{end - 1}")
    return gtids


def library_event_body(event: Any) -> bytes:
    """The body of an event mysql-replication did not decode (a ``NotImplementedEvent``): the
    packet's bytes after the OK byte and the 19-byte header (the CRC32, if any, stays at the end;
    the decoders here stop at their own length). An event source that holds the body itself (a
    file reader) may expose it as ``body``."""
    body = getattr(event, "body", None)
    if isinstance(body, bytes | bytearray):
        return bytes(body)
    return bytes(event.packet.packet.get_all_data()[20:])


def encode_varlen_uint(value: int) -> bytes:
    """``read_varlen_uint``'s inverse: the fewest bytes (1-9) MySQL's serialization uses."""
    if value < 0:
        raise ValueError(f"varlen unsigned integer {value} is negative")
    for size in range(1, 9):
        if value < 1 << (7 * size):
            return ((value << size) | ((1 << (size - 1)) - 1)).to_bytes(size, "little")
    return b"\xff" + value.to_bytes(8, "little")


def encode_gtid_set(gtids: GtidSet) -> bytes:
    """MySQL's binary GTID set (``Gtid_set::encode``): the body of a PREVIOUS_GTIDS_EVENT and the
    set a COM_BINLOG_DUMP_GTID request sends. Without tags the classic form; with any tag the
    tagged form (format 1), which servers since 8.3 read. Entries in MySQL's order: by UUID, then
    untagged before tags, tags in order."""
    entries = sorted((key.partition(":")[0], key.partition(":")[2], iv) for key, iv in gtids.mysql.items())
    tagged = any(tag for _, tag, _ in entries)
    header = (1 << 56) | (len(entries) << 8) | 1 if tagged else len(entries)
    out = bytearray(_U64.pack(header))
    for source, tag, intervals in entries:
        out += uuid_module.UUID(source).bytes
        if tagged:
            out += encode_varlen_uint(len(tag)) + tag.encode("ascii")
        out += _U64.pack(len(intervals))
        for low, high in intervals:
            out += _U64.pack(low) + _U64.pack(high + 1)  # end exclusive
    return bytes(out)
