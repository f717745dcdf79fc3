"""Helpers for the binlog file source tests: replaying files into jsonl, damaged and uncompressed
copies of sample files, schema history files written the way a server-backed connector writes them."""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from connector.binlog.files import (
    BINLOG_MAGIC,
    FORMAT_DESCRIPTION_EVENT,
    LOG_EVENT_BINLOG_IN_USE_F,
    format_description,
    read_file_events,
)
from connector.binlog.packets import HEADER_LEN, TRANSACTION_PAYLOAD_EVENT, payload_events
from connector.config import ConnectorConfig
from connector.replay import BinlogReplay
from ddl.history.record import HistoryRecord
from ddl.history.store import FileSchemaHistory

# The sample binlogs written by real MySQL 8.0-9.6 servers (see their README); read in place.
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "mysql8-binlogs"
if not SAMPLES.is_dir():
    SAMPLES = Path("/work/shared/mysql8-binlogs")

PREFIX = "replay"


def sample(relative: str) -> Path:
    return SAMPLES / relative


def replay_config(data_dir: Path, **extra: str) -> ConnectorConfig:
    """A file replay's configuration: jsonl sink and file stores in ``data_dir``; the server
    settings are required by the configuration but never used (nothing listens on port 1)."""
    props = {
        "name": "replay",
        "database.hostname": "127.0.0.1",
        "database.port": "1",
        "database.user": "nobody",
        "database.password": "unused",
        "database.server.id": "1",
        "topic.prefix": PREFIX,
        "sink.type": "jsonl",
        "data.dir": str(data_dir),
        # The samples' tables are often in the `mysql` database (the servers' test setups).
        "table.ignore.builtin": "false",
    }
    props.update(extra)
    return ConnectorConfig.from_mapping(props)


def replay(files: Sequence[Path], data_dir: Path, **extra: str) -> list[dict[str, Any]]:
    """Replays ``files`` into ``data_dir``/events.jsonl; returns every line written so far."""
    BinlogReplay(replay_config(data_dir, **extra), files).run()
    return jsonl(data_dir / "events.jsonl")


def jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def data_records(lines: Iterable[dict[str, Any]], table: str | None = None) -> list[dict[str, Any]]:
    """Change records (not schema changes, transaction metadata or tombstones) of ``table``."""
    out = []
    for line in lines:
        value = line.get("value")
        payload = value.get("payload") if isinstance(value, dict) else None
        if not isinstance(payload, dict) or "op" not in payload:
            continue
        if table is None or payload["source"].get("table") == table:
            out.append(payload)
    return out


def write_history(path: Path, statements: Sequence[tuple[str, str, str]]) -> None:
    """A schema history file as a server-backed connector with topic.prefix ``PREFIX`` writes it:
    (binlog file, database, DDL) per record, each at the file's start."""
    history = FileSchemaHistory(path)
    history.start()
    for file, database, ddl in statements:
        history.record(
            HistoryRecord(
                source={"server": PREFIX},
                position={"file": file, "pos": 4, "ts_sec": 0},
                ts_ms=0,
                ddl=ddl,
                database_name=database,
            )
        )
    history.stop()


# -- damaged and rewritten copies ----------------------------------------------------------------
def with_crc(event: bytes, is_format_description: bool = False) -> bytes:
    """``event`` (header + body, no footer) with its CRC32 footer appended, as the server writes
    it (the FDE's with the in-use flag cleared)."""
    covered = event
    if is_format_description:
        flags = struct.unpack_from("<H", event, 17)[0] & ~LOG_EVENT_BINLOG_IN_USE_F
        covered = event[:17] + struct.pack("<H", flags) + event[19:]
    return event + struct.pack("<I", zlib.crc32(covered))


def with_header(event: bytes, size: int, log_pos: int) -> bytes:
    return event[:9] + struct.pack("<II", size, log_pos) + event[17:]


def uncompressed_twin(source: Path, target: Path) -> Path:
    """A copy of ``source`` in which every TRANSACTION_PAYLOAD event is replaced by its inner
    events, each with a real header (size with footer, next position) and a CRC32 footer; every
    other event is rewritten with its new position (and CRC). The same server would have written
    this file with binlog_transaction_compression=OFF."""
    out = bytearray(BINLOG_MAGIC)
    checksum = True
    for framed in read_file_events(source):
        if framed.event_type == FORMAT_DESCRIPTION_EVENT:
            checksum = format_description(framed, source).checksum
        footer = 4 if checksum else 0
        if framed.event_type == TRANSACTION_PAYLOAD_EVENT:
            body = framed.data[HEADER_LEN : len(framed.data) - footer]
            pieces = payload_events(body, f"{source.name}:{framed.offset}")
        else:
            pieces = [framed.data[: len(framed.data) - footer]]
        for piece in pieces:
            size = len(piece) + footer
            # log_pos 0 (the FDE a dump starts with) stays 0.
            log_pos = len(out) + size if framed.log_pos else 0
            event = with_header(piece, size, log_pos)
            is_fde = framed.event_type == FORMAT_DESCRIPTION_EVENT
            out += with_crc(event, is_fde) if checksum else event
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(bytes(out))
    return target


def _event_coordinate(parent: str | None, key: str, container: dict[str, Any]) -> bool:
    if parent == "source":
        return key in ("pos", "ts_ms", "ts_us", "ts_ns")
    return key == "ts_ms" and "status" in container and "event_count" in container


_NON_GTID_ID = re.compile(r"file=[^,]+,pos=\d+")


def comparable(lines: Iterable[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    """(topic, key payload, value payload) of every line, with what an uncompressed twin changes
    taken out: positions and event times (Debezium takes both from the event it read, and inside a
    payload that is the payload event: every inner event reports its position and timestamp), i.e.
    ``source.pos``, ``source.ts_*``, a transaction record's ``ts_ms``, and the position in ids of
    transactions without a GTID (``file=...,pos=...``), replaced by their order of appearance;
    and the processing time."""
    ids: dict[str, str] = {}

    def normalise(value: Any, parent: str | None = None) -> Any:
        if isinstance(value, dict):
            return {k: normalise(v, k) for k, v in value.items() if not _event_coordinate(parent, k, value)}
        if isinstance(value, list):
            return [normalise(v, parent) for v in value]
        if isinstance(value, str) and _NON_GTID_ID.fullmatch(value):
            return ids.setdefault(value, f"transaction-{len(ids)}")
        return value

    out = []
    for line in lines:
        key = line.get("key")
        value = line.get("value")
        if isinstance(value, dict) and isinstance(value.get("payload"), dict):
            value = {**value, "payload": without_processing_time(value["payload"])}
        out.append(
            (
                line["topic"],
                normalise(key.get("payload") if isinstance(key, dict) else key),
                normalise(value.get("payload") if isinstance(value, dict) else value),
            )
        )
    return out


def without_processing_time(payload: dict[str, Any]) -> dict[str, Any]:
    """A change or schema change record's payload without the time the connector processed it
    (``ts_ms``, ``ts_us``, ``ts_ns`` beside ``source``); the event's own time (``source.ts_ms``)
    stays, and so does a transaction record's (its ``ts_ms`` is the commit's)."""
    if "source" not in payload:
        return payload
    return {k: v for k, v in payload.items() if k not in ("ts_ms", "ts_us", "ts_ns")}
