"""JSON lines sinks: one ``{"topic","key","value","headers"}`` object per line, in emission order."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from mysql_cdc_base.connect import schemas_enabled
from mysql_cdc_base.properties import Property, prop
from mysql_cdc_base.records import ChangeRecord, jsonl_chunks, jsonl_lines
from sink.base import Sink, SinkConfig, SinkError
from sink.settings import jsonl_settings

log = logging.getLogger(__name__)

# The jsonl sink's file (sink.type=stdout writes the same lines to standard output).
JSONL_PROPERTIES: tuple[Property, ...] = (
    prop("sink.jsonl.path", doc="JSON lines output file (default <data.dir>/events.jsonl)."),
)


class JsonlSink(Sink):
    """Appends to a file; ``flush`` fsyncs, so a stored offset never points past unwritten lines."""

    name = "jsonl"
    # An fsync of the file descriptor covers every line written to it before the call.
    flushes_off_thread = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        key_schemas: bool = True,
        value_schemas: bool = True,
        fsync: bool = True,
    ) -> None:
        self.path = Path(path)
        self.key_schemas = key_schemas
        self.value_schemas = value_schemas
        self.fsync = fsync
        self._fh: IO[bytes] | None = None

    @classmethod
    def from_config(cls, config: SinkConfig) -> JsonlSink:
        settings = jsonl_settings(config)
        return cls(settings.path, settings.key_schemas, settings.value_schemas)

    def start(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            repair_torn_tail(self.path)
            # Unbuffered: send() writes each batch with one gathering write per chunk of lines.
            self._fh = self.path.open("ab", buffering=0)
        except OSError as exc:
            raise SinkError(f"cannot open sink.jsonl.path {self.path}: {exc}") from exc

    def send(self, records: Sequence[ChangeRecord]) -> None:
        if self._fh is None:
            self.start()
        assert self._fh is not None
        ks, vs = self.key_schemas, self.value_schemas
        fd = self._fh.fileno()
        try:
            # One gathering write per chunk, made just before it (see jsonl_chunks).
            for chunk in jsonl_chunks(records, ks, vs, _CHUNK_PIECES):
                write_all(fd, chunk)
        except OSError as exc:
            raise SinkError(f"cannot write sink.jsonl.path {self.path}: {exc}") from exc

    def flush(self) -> None:
        if self._fh is None:
            return
        try:
            self._fh.flush()
            if self.fsync:
                os.fsync(self._fh.fileno())
        except OSError as exc:
            raise SinkError(f"cannot write sink.jsonl.path {self.path}: {exc}") from exc

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


_IOV_MAX = os.sysconf("SC_IOV_MAX") if hasattr(os, "sysconf") else 1024
# Pieces per chunk: a chunk may overrun by one line's pieces, and still fits one writev.
_CHUNK_PIECES = _IOV_MAX - 8


def write_all(fd: int, parts: list[bytes]) -> None:
    """Write every piece, in order, with ``os.writev`` (a short write continues where it stopped)."""
    start = 0
    while start < len(parts):
        chunk = parts[start : start + _IOV_MAX]
        written = os.writev(fd, chunk)
        if written == sum(map(len, chunk)):  # the usual case: all of it, no piece to walk
            start += len(chunk)
            continue
        for part in chunk:
            if written < len(part):
                # A short write ended inside this piece: its rest goes first next time.
                parts[start] = part[written:]
                break
            written -= len(part)
            start += 1


def repair_torn_tail(path: Path, chunk: int = 1 << 16) -> int:
    """Cut a last line without its newline (a write torn by a crash) off ``path``; returns the
    number of bytes removed. Nothing a stored offset covers can be in it: offsets are stored only
    after ``flush`` has fsynced whole lines."""
    if not path.is_file():
        return 0  # nothing written yet, or not a regular file (a pipe, /dev/stdout): nothing to cut
    try:
        fh = path.open("r+b")
    except FileNotFoundError:
        return 0
    with fh:
        size = fh.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            start = max(0, end - chunk)
            fh.seek(start)
            block = fh.read(end - start)
            if end == size and block.endswith(b"\n"):
                return 0
            newline = block.rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        fh.truncate(end)
        fh.flush()
        os.fsync(fh.fileno())
    log.warning(
        "sink.jsonl.path %s ended in a torn line (an interrupted write); removed its %d bytes, "
        "which no stored offset covers",
        path,
        size - end,
    )
    return size - end


class StdoutSink(Sink):
    name = "stdout"

    def __init__(
        self, key_schemas: bool = True, value_schemas: bool = True, stream: IO[bytes] | None = None
    ) -> None:
        self.key_schemas = key_schemas
        self.value_schemas = value_schemas
        self.stream = stream

    @classmethod
    def from_config(cls, config: SinkConfig) -> StdoutSink:
        return cls(*schemas_enabled(config))

    def send(self, records: Sequence[ChangeRecord]) -> None:
        out = self.stream or sys.stdout.buffer
        out.write(jsonl_lines(records, self.key_schemas, self.value_schemas))

    def flush(self) -> None:
        (self.stream or sys.stdout.buffer).flush()
