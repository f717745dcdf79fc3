"""Binlog files as an event source: the same ``RawEvent``s ``BinlogReader`` yields, read from files.

``BinlogFileReader`` reads the files in the order given (a ROTATE at a file's end continues with
the next one), verifies every event's CRC32 as the server computes it, parses each event with
mysql-replication's own parser (``connector.binlog.packets``), expands compressed transactions, and
yields ``RawEvent``s whose positions are the ones a server dump of the same file reports:
``start_pos = log_pos - event_size``, ``end_pos = log_pos``, the file's base name as the file. So
StreamingSource, the dispatcher, transforms and sinks run unchanged, and the offsets it stores are
ones a server-backed run can resume from.

Nothing in a file is skipped: a file that is not a binlog, is truncated inside an event, or holds
an event whose checksum is wrong stops the replay with ``BinlogFileError`` naming the file and the
byte offset.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from connector.binlog.packets import (
    CHECKSUM_LEN,
    HEADER_LEN,
    TRANSACTION_PAYLOAD_EVENT,
    ControlStandIn,
    ParserState,
    expand_payload,
    parse_event,
)
from connector.binlog.server_stream import RawEvent
from connector.errors import ReplicationError
from mysql_cdc_base.flavor import MARIADB, ServerFlavor, flavor_of
from mysql_cdc_base.position import BinlogPosition

log = logging.getLogger(__name__)

BINLOG_MAGIC = b"\xfebin"
FORMAT_DESCRIPTION_EVENT = 0x0F
ROTATE_EVENT = 0x04
# Set in the FDE's flags while the server has the file open; the server computes the FDE's CRC32
# before setting it (and clears it on close), so the check must clear it too.
LOG_EVENT_BINLOG_IN_USE_F = 0x1
BINLOG_CHECKSUM_ALG_OFF = 0
BINLOG_CHECKSUM_ALG_CRC32 = 1
# FDE body: binlog version (2), server version (50), create timestamp (4), header length (1).
_FDE_FIXED_LEN = 2 + 50 + 4 + 1


class BinlogFileError(ReplicationError):
    """A binlog file cannot be read as one: the message names the file and the byte offset."""


@dataclass(frozen=True, slots=True)
class FileEvent:
    """One event's bytes as stored, with where it is in its file."""

    offset: int
    data: bytes

    @property
    def event_type(self) -> int:
        return self.data[4]

    @property
    def timestamp(self) -> int:
        return int(struct.unpack_from("<I", self.data, 0)[0])

    @property
    def server_id(self) -> int:
        return int(struct.unpack_from("<I", self.data, 5)[0])

    @property
    def log_pos(self) -> int:
        return int(struct.unpack_from("<I", self.data, 13)[0])


@dataclass(frozen=True, slots=True)
class FormatDescription:
    """What a file's FORMAT_DESCRIPTION event says about the events after it."""

    server_version: str
    checksum: bool
    post_header_lengths: tuple[int, ...]

    @property
    def dbms(self) -> ServerFlavor:
        return flavor_of(self.server_version)

    @property
    def version_tuple(self) -> tuple[int, ...]:
        digits = self.server_version.split("-")[0].split(".")
        return tuple(int(part) for part in digits if part.isdigit())


def read_file_events(path: Path) -> Iterator[FileEvent]:
    """The events of one binlog file, framed by their headers' sizes (nothing is parsed here)."""
    with open(path, "rb") as handle:
        magic = handle.read(len(BINLOG_MAGIC))
        if magic != BINLOG_MAGIC:
            raise BinlogFileError(
                f"{path} is not a binlog file: it starts with {magic.hex() or 'nothing'} at byte offset 0, "
                f"not the binlog magic {BINLOG_MAGIC.hex()}"
            )
        offset = len(BINLOG_MAGIC)
        while True:
            event = _read_event(handle, path, offset)
            if event is None:
                return
            yield event
            offset += len(event.data)


def _read_event(handle: BinaryIO, path: Path, offset: int) -> FileEvent | None:
    header = handle.read(HEADER_LEN)
    if not header:
        return None
    if len(header) < HEADER_LEN:
        raise BinlogFileError(
            f"{path} is truncated: the event at byte offset {offset} has {len(header)} of the "
            f"{HEADER_LEN} header bytes"
        )
    size = int(struct.unpack_from("<I", header, 9)[0])
    if size < HEADER_LEN:
        raise BinlogFileError(
            f"{path} is damaged: the event at byte offset {offset} declares {size} bytes, less than its header"
        )
    body = handle.read(size - HEADER_LEN)
    if len(body) < size - HEADER_LEN:
        raise BinlogFileError(
            f"{path} is truncated: the event at byte offset {offset} declares {size} bytes, the file "
            f"holds {HEADER_LEN + len(body)} of them"
        )
    return FileEvent(offset, header + body)


def checksum_matches(data: bytes, is_format_description: bool) -> bool:
    """The event's CRC32 footer equals the CRC32 of its header and body, as the server computes
    it (for the FDE: with LOG_EVENT_BINLOG_IN_USE_F cleared)."""
    covered = data[:-CHECKSUM_LEN]
    if is_format_description:
        flags = struct.unpack_from("<H", covered, 17)[0] & ~LOG_EVENT_BINLOG_IN_USE_F
        covered = covered[:17] + struct.pack("<H", flags) + covered[19:]
    return zlib.crc32(covered) == struct.unpack_from("<I", data, len(data) - CHECKSUM_LEN)[0]


def format_description(event: FileEvent, path: Path) -> FormatDescription:
    """Server version, checksum algorithm and post-header lengths from an FDE (checksum verified)."""
    data = event.data
    body = data[HEADER_LEN:]
    if len(body) < _FDE_FIXED_LEN:
        raise BinlogFileError(
            f"{path}: the FORMAT_DESCRIPTION event at byte offset {event.offset} is too short"
        )
    version = body[2:52].rstrip(b"\0").decode("ascii", "replace")
    fde = FormatDescription(version, False, ())
    # Servers since MySQL 5.6.1 / MariaDB 5.3 end the FDE with the checksum algorithm (one byte)
    # and a 4-byte checksum field.
    aware = fde.version_tuple >= (5, 6, 1) or fde.dbms is MARIADB
    tail = 1 + CHECKSUM_LEN if aware else 0
    algorithm = data[-tail] if aware else BINLOG_CHECKSUM_ALG_OFF
    if algorithm not in (BINLOG_CHECKSUM_ALG_OFF, BINLOG_CHECKSUM_ALG_CRC32):
        raise BinlogFileError(
            f"{path}: the FORMAT_DESCRIPTION event at byte offset {event.offset} names checksum "
            f"algorithm {algorithm}; the connector verifies CRC32 (binlog_checksum=CRC32) or none"
        )
    if algorithm == BINLOG_CHECKSUM_ALG_CRC32 and not checksum_matches(data, True):
        raise _checksum_error(path, event)
    lengths = tuple(body[_FDE_FIXED_LEN : len(body) - tail])
    return FormatDescription(version, algorithm == BINLOG_CHECKSUM_ALG_CRC32, lengths)


def _checksum_error(path: Path, event: FileEvent) -> BinlogFileError:
    return BinlogFileError(
        f"{path} is damaged: the event at byte offset {event.offset} (type 0x{event.event_type:02X}, "
        f"{len(event.data)} bytes) has a wrong CRC32 checksum"
    )


class BinlogFileReader:
    """Yields the RawEvents of ``files`` (in the order given) from ``file``/``pos`` on: the event
    that starts at ``pos`` in the file whose base name is ``file``, or, when no given file has that
    name and every given file comes after it, the first file's first event."""

    def __init__(self, files: Sequence[Path], file: str, pos: int) -> None:
        self.files = [Path(f) for f in files]
        self.file = file
        self.pos = pos
        self.finished = False  # every event of every file was yielded
        self._closed = False

    def _start_index(self) -> int:
        """Where to start in ``files``; ``len(files)`` when every file comes before the start (a
        replay already done: nothing left)."""
        names = [f.name for f in self.files]
        if self.file in names:
            return names.index(self.file)
        if not self.file:
            return 0
        start_key = BinlogPosition(self.file, self.pos).key
        keys = [BinlogPosition(name, 0).key for name in names]
        if all(key > start_key for key in keys):
            return 0
        if all(key < start_key for key in keys):
            log.info(
                "the stored offset %s:%d comes after every file given: nothing left to replay",
                self.file,
                self.pos,
            )
            return len(names)
        raise BinlogFileError(
            f"the stored offset {self.file}:{self.pos} is in none of the files given "
            f"({', '.join(names)}), and they do not all come before or after it: give the file "
            f"{self.file} and the ones after it, or delete the stored offsets to replay from the start"
        )

    def events(self) -> Iterator[RawEvent]:
        index = self._start_index()
        resume_pos = self.pos if index < len(self.files) and self.files[index].name == self.file else 0
        for path in self.files[index:]:
            yield from self._file_events(path, resume_pos)
            if self._closed:
                return
            resume_pos = 0
        self.finished = True

    def _file_events(self, path: Path, resume_pos: int) -> Iterator[RawEvent]:
        name = path.name
        fde: FormatDescription | None = None
        state = ParserState(ControlStandIn("mysql"))
        found_start = resume_pos <= len(BINLOG_MAGIC)
        last_end = 0
        for framed in read_file_events(path):
            if self._closed:
                return
            if framed.event_type == FORMAT_DESCRIPTION_EVENT:
                fde = format_description(framed, path)
                state = ParserState(
                    ControlStandIn(fde.dbms), fde.version_tuple, fde.post_header_lengths, state.table_map
                )
            elif fde is None:
                raise BinlogFileError(
                    f"{path}: the event at byte offset {framed.offset} (type 0x{framed.event_type:02X}) "
                    "comes before any FORMAT_DESCRIPTION event, so it cannot be decoded"
                )
            elif fde.checksum and not checksum_matches(framed.data, False):
                raise _checksum_error(path, framed)
            raw = self._raw_event(framed, name, state, fde)
            last_end = raw.end_pos or last_end
            if not found_start:
                # A restart point: events before it only set the parser state up (the FDE);
                # it must be an event boundary, as on a server.
                if raw.start_pos < resume_pos:
                    continue
                if raw.start_pos != resume_pos:
                    raise BinlogFileError(
                        f"{path}: no event starts at the stored position {resume_pos} (events start at "
                        f"{raw.start_pos} and before); the offset does not belong to this file"
                    )
                found_start = True
            if framed.event_type == TRANSACTION_PAYLOAD_EVENT:
                body = framed.data[HEADER_LEN : len(framed.data) - (CHECKSUM_LEN if fde.checksum else 0)]
                yield from expand_payload(raw, body, state)
            else:
                yield raw
        # The stored position may be the end of the file's last event (a file without a closing
        # ROTATE, e.g. copied while the server had it open): nothing left in it.
        if not found_start and resume_pos != last_end:
            raise BinlogFileError(
                f"{path}: the stored position {resume_pos} is past the file's last event (which ends at "
                f"{last_end}); the offset does not belong to this file"
            )

    def _raw_event(
        self, framed: FileEvent, name: str, state: ParserState, fde: FormatDescription | None
    ) -> RawEvent:
        size = len(framed.data)
        end_pos = framed.log_pos
        # The FDE a dump starts with (log_pos 0) stays artificial; a real event without a server
        # position (log_pos 0) gets its place in the file.
        if end_pos == 0 and framed.event_type != FORMAT_DESCRIPTION_EVENT:
            end_pos = framed.offset + size
        start_pos = end_pos - size if end_pos else 0
        if framed.event_type == TRANSACTION_PAYLOAD_EVENT:
            event = None  # expanded by the caller
        else:
            has_checksum = fde.checksum if fde is not None else False
            try:
                event = parse_event(state, framed.data, has_checksum=has_checksum)
            except ReplicationError:
                raise
            except Exception as exc:  # noqa: BLE001 - the parser fails in many ways on bytes it cannot read
                raise BinlogFileError(
                    f"{self._path_of(name)}: the event at byte offset {framed.offset} (type "
                    f"0x{framed.event_type:02X}, binlog position {start_pos}) cannot be decoded: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            if framed.event_type == ROTATE_EVENT and event is not None:
                # A new file starts with new table ids (as BinLogStreamReader clears its map).
                state.table_map.clear()
        return RawEvent(
            event, name, start_pos, end_pos, framed.timestamp, framed.server_id, framed.event_type
        )

    def _path_of(self, name: str) -> Path:
        return next((f for f in self.files if f.name == name), Path(name))

    def close(self) -> None:
        self._closed = True


def binlog_files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The given paths, checked to exist (the order is the caller's: it is the replay order)."""
    missing = [str(p) for p in paths if not Path(p).is_file()]
    if missing:
        raise BinlogFileError(f"binlog files not found: {', '.join(missing)}")
    return [Path(p) for p in paths]
