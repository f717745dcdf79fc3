"""``mysql-cdc status --config FILE``: the stored offset, the server's current binlog position and
how far the connector is behind it, in bytes of binlog and in transactions.

Nothing is changed: the offset is read from the configured store (``offset.storage``) and the
server is asked for ``SHOW MASTER STATUS`` (or ``SHOW BINARY LOG STATUS``) and ``SHOW BINARY LOGS``.
Exit status 0, or 1 when no offset is stored yet (the connector never ran, or ran with memory
offsets).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from connector.config import ConnectorConfig
from connector.factories import build_offset_store, build_server_probe
from connector.server.connection import connect
from connector.stores.settings import StoreSettings
from mysql_cdc_base.position import BinlogPosition, GtidSet, SourceOffset, binlog_file_key


@dataclass(frozen=True)
class Lag:
    """How far a stored offset is behind the server; None: not measurable (and why)."""

    bytes: int | None
    transactions: int | None
    bytes_note: str = ""
    transactions_note: str = ""


def byte_lag(stored: SourceOffset, server: BinlogPosition, logs: Sequence[tuple[str, int]]) -> int | None:
    """Bytes of binlog between the stored offset and the server's position: the difference in one
    file; across files the rest of the stored file, the files in between and the server's file up
    to its position (sizes from ``SHOW BINARY LOGS``). None when the stored file is not listed
    (purged, or another server's log)."""
    if stored.file == server.file:
        return max(0, server.pos - stored.pos)
    sizes = dict(logs)
    if stored.file not in sizes or binlog_file_key(stored.file)[0] != binlog_file_key(server.file)[0]:
        return None
    if binlog_file_key(stored.file) > binlog_file_key(server.file):
        return 0
    start, end = binlog_file_key(stored.file), binlog_file_key(server.file)
    between = sum(size for name, size in logs if start < binlog_file_key(name) < end)
    return max(0, sizes[stored.file] - stored.pos) + between + server.pos


def measure_lag(stored: SourceOffset, server: BinlogPosition, logs: Sequence[tuple[str, int]]) -> Lag:
    lag_bytes = byte_lag(stored, server, logs)
    bytes_note = (
        "" if lag_bytes is not None else f"unknown: binlog file '{stored.file}' is no longer on the server"
    )
    if not server.gtids:
        return Lag(lag_bytes, None, bytes_note, "unknown: the server has no GTIDs (gtid_mode=OFF)")
    if stored.gtids is None:
        return Lag(lag_bytes, None, bytes_note, "unknown: the stored offset has no GTIDs")
    return Lag(lag_bytes, stored.gtids.count_missing(GtidSet.parse(server.gtids)), bytes_note)


def stored_offset(config: ConnectorConfig) -> SourceOffset | None:
    """The offset the configured store holds (None: nothing stored)."""
    store = build_offset_store(config)
    try:
        return store.load()
    finally:
        store.close()


def server_binlogs(config: ConnectorConfig) -> tuple[BinlogPosition, list[tuple[str, int]]]:
    """The server's current binlog position and its binlog files with their sizes."""
    probe = build_server_probe(config)
    info = probe.check(need_snapshot_locks=False)
    with connect(config) as conn, conn.cursor() as cur:
        server = probe.current_position(info, cur)
        cur.execute("SHOW BINARY LOGS")
        return server, [(str(row[0]), int(row[1])) for row in cur.fetchall()]


def status_command(config: ConnectorConfig, *, out: TextIO | None = None) -> int:
    """Print the status; returns the process exit status."""
    out = out or sys.stdout
    stored = stored_offset(config)
    if stored is None or not stored.has_position:
        print(
            f"mysql-cdc: no offset is stored for connector {config.connector_name!r} "
            f"(topic.prefix={config.topic_prefix}, offset.storage={StoreSettings.from_config(config).offset_storage}): "
            "the connector has not run yet, or its offsets are kept in memory",
            file=sys.stderr,
        )
        return 1
    server, logs = server_binlogs(config)
    lag = measure_lag(stored, server, logs)
    snapshot_note = " (a snapshot is in progress)" if stored.in_snapshot else ""
    lines = {
        "stored offset": f"{stored.describe()}{snapshot_note}",
        "server position": SourceOffset.at(server).describe(),
        "lag bytes": lag.bytes if lag.bytes is not None else lag.bytes_note,
        "lag transactions": lag.transactions if lag.transactions is not None else lag.transactions_note,
    }
    for label, value in lines.items():
        out.write(f"{label + ':':<18}{value}\n")
    out.flush()
    return 0
