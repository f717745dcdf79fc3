"""Reading the MySQL 8/9 sample binlogs (``shared/mysql8-binlogs``) at unit level.

The samples were written by real MySQL servers; the tests read them where they lie (never copied
into the project). This walker is deliberately minimal: the 4-byte magic, then events of a 19-byte
header (timestamp, type, server id, event size, next position, flags) and a body; when the format
description event says CRC32, the last 4 bytes of every event are the checksum and are cut off here
(f29's file source verifies them; these tests only need the bodies).
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

MAGIC = b"\xfebin"
HEADER = struct.Struct("<IBIIIH")
FORMAT_DESCRIPTION = 0x0F
_CHECKSUM_CRC32 = 1


@dataclass(frozen=True)
class SampleEvent:
    """One event of a sample file: its offset in the file, type and body (header and CRC cut off)."""

    offset: int
    event_type: int
    body: bytes


def samples_dir() -> Path:
    """``shared/mysql8-binlogs``: ``$MYSQL8_BINLOGS``, else the first ``shared`` folder beside the
    checkout or one of its parents (worktrees live below the main checkout's parent)."""
    configured = os.environ.get("MYSQL8_BINLOGS")
    if configured:
        return Path(configured)
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "mysql8-binlogs"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("shared/mysql8-binlogs not found above the checkout: set MYSQL8_BINLOGS")


def sample(name: str) -> Path:
    return samples_dir() / name


@cache
def events(name: str) -> tuple[SampleEvent, ...]:
    """Every event of the sample file ``name`` (relative to ``shared/mysql8-binlogs``)."""
    data = sample(name).read_bytes()
    if data[:4] != MAGIC:
        raise ValueError(f"{name}: not a binlog file (magic {data[:4]!r})")
    out: list[SampleEvent] = []
    offset, checksum = 4, 0
    while offset + HEADER.size <= len(data):
        _ts, event_type, _server, size, _next, _flags = HEADER.unpack_from(data, offset)
        body = data[offset + HEADER.size : offset + size]
        if event_type == FORMAT_DESCRIPTION:
            # The checksum algorithm is the byte before the FDE's own 4-byte checksum.
            checksum = 4 if len(body) > 5 and body[-5] == _CHECKSUM_CRC32 else 0
        out.append(SampleEvent(offset, event_type, body[: len(body) - checksum] if checksum else body))
        offset += size
    return tuple(out)


def bodies(name: str, event_type: int) -> list[bytes]:
    """The bodies of the events of one type, in file order."""
    return [event.body for event in events(name) if event.event_type == event_type]


@dataclass(frozen=True)
class RowsEventParts:
    """A v2 rows event body split as MySQL lays it out: post-header (table id, flags), the extra
    data, the column count, the column bitmaps (two for updates), then the row images."""

    table_id: int
    columns: int
    before_bitmap: int
    after_bitmap: int | None
    rows: bytes


def rows_event_parts(body: bytes, update: bool) -> RowsEventParts:
    table_id = int.from_bytes(body[0:6], "little")
    extra = int.from_bytes(body[8:10], "little")  # counts its own two bytes
    pos = 8 + extra
    columns = body[pos]  # a length-encoded integer; the samples have fewer than 251 columns
    pos += 1
    size = (columns + 7) // 8
    before = int.from_bytes(body[pos : pos + size], "little")
    pos += size
    after = None
    if update:
        after = int.from_bytes(body[pos : pos + size], "little")
        pos += size
    return RowsEventParts(table_id, columns, before, after, body[pos:])


@dataclass(frozen=True)
class SampleTableMap:
    """A TABLE_MAP event: names, and the columns as mysql-replication's ``Column`` parses them
    from the event's column types and metadata block (the optional metadata is not read)."""

    table_id: int
    database: str
    table: str
    columns: tuple[Any, ...]


def table_map(body: bytes) -> SampleTableMap:
    from pymysql.protocol import MysqlPacket
    from pymysqlreplication.column import Column

    import connector.binlog.library_support  # noqa: F401  (teaches the library MySQL 9's column types)

    table_id = int.from_bytes(body[0:6], "little")
    pos = 8
    database = body[pos + 1 : pos + 1 + body[pos]].decode()
    pos += 1 + body[pos] + 1
    table = body[pos + 1 : pos + 1 + body[pos]].decode()
    pos += 1 + body[pos] + 1
    count = body[pos]  # length-encoded; the samples have fewer than 251 columns
    types = body[pos + 1 : pos + 1 + count]
    pos += 1 + count
    metadata_size = body[pos]
    metadata = MysqlPacket(body[pos + 1 : pos + 1 + metadata_size], "utf8")
    columns = tuple(Column(column_type, metadata) for column_type in types)
    return SampleTableMap(table_id, database, table, columns)


# -- a FULL-image partial JSON copy of json.binlog.000001 --------------------------------------------
PARTIAL_JSON_SAMPLE = "rust_mysql_common/json.binlog.000001"


def full_image_partial_json_copy(target: Path) -> Path:
    """``json.binlog.000001`` as the same server would have written it with binlog_row_image=FULL
    (no such sample was found): its PARTIAL_UPDATE_ROWS event gets, per row, the row's whole
    before image (the preceding full UPDATE's after image of that id, i.e. the row as it was) and
    an after image holding the id plus the event's own diff, name and age columns. Every event is
    rewritten with its new position and CRC32, as in ``binlog_file_support.uncompressed_twin``."""
    from connector.binlog.files import read_file_events
    from connector.binlog.image_reader import compile_image_reader
    from connector.binlog.json.diff import read_length_encoded
    from tests.connector.binlog_file_support import with_crc, with_header

    source = sample(PARTIAL_JSON_SAMPLE)
    (update_body,) = bodies(PARTIAL_JSON_SAMPLE, 0x1F)
    (partial_body,) = bodies(PARTIAL_JSON_SAMPLE, 0x27)
    columns = table_map(bodies(PARTIAL_JSON_SAMPLE, 0x13)[-1]).columns  # id, json_col, name, age
    for column in columns:
        column.character_set_name = "utf8mb4"
    full_reader = compile_image_reader(columns, {})
    # The current full image of every row, by id: the full UPDATE's after images.
    current: dict[int, bytes] = {}
    rows, p = rows_event_parts(update_body, update=True).rows, 0
    while p < len(rows):
        _, p = full_reader(rows, p)
        start = p
        image, p = full_reader(rows, p)
        current[image[0]] = rows[start:p]
    # The partial event's rows: MINIMAL before (id), after = options, partial bits, the columns.
    parts = rows_event_parts(partial_body, update=True)
    id_reader = compile_image_reader(columns[:1], {})
    after_reader = compile_image_reader(columns[1:], {}, raw_json=True)
    new_rows = bytearray()
    data, p = parts.rows, 0
    while p < len(data):
        (row_id,), p = id_reader(data, p)
        options, p = read_length_encoded(data, p)
        partial_bits = data[p]
        p += 1
        start = p + 1  # after the null bitmap of the three after-image columns
        _, p = after_reader(data, p)
        new_rows += current[row_id]
        new_rows += bytes([options, partial_bits]) + b"\x00" + row_id.to_bytes(4, "little") + data[start:p]
    extra = int.from_bytes(partial_body[8:10], "little")
    header = partial_body[: 8 + extra]
    new_body = header + bytes([4, 0x0F, 0x0F]) + bytes(new_rows)
    out = bytearray(MAGIC)
    for framed in read_file_events(source):
        body = new_body if framed.event_type == 0x27 else framed.data[HEADER.size : len(framed.data) - 4]
        piece = framed.data[: HEADER.size] + body
        size = len(piece) + 4
        event = with_header(piece, size, len(out) + size if framed.log_pos else 0)
        out += with_crc(event, framed.event_type == FORMAT_DESCRIPTION)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(bytes(out))
    return target
