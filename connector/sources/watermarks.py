"""An incremental snapshot's watermarks: the open and close markers of a chunk's window written into
the signal table (``insert_insert``: two inserts; ``insert_delete``: the open row deleted to close),
or with ``read.only`` the server's executed GTID set as the high watermark; failed writes retried as
Debezium's ``RetryingRunnable`` does (``connector.sources.incremental``)."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
from collections.abc import Callable

import pymysql

from connector.errors import ReplicationError
from connector.sources.signals import WINDOW_CLOSE, WINDOW_OPEN
from mysql_cdc_base.flavor import ServerFlavor
from mysql_cdc_base.position import GtidSet
from mysql_cdc_base.table_id import TableId
from snapshot.binlog_status import executed_gtids
from snapshot.policy.queries import quote_table

log = logging.getLogger(__name__)

INSERT_INSERT, INSERT_DELETE = "insert_insert", "insert_delete"


def _reopen_if_lost(conn: pymysql.connections.Connection) -> None:
    """Debezium's auto-heal before a retry: the same connection object, opened again if it was lost."""
    try:
        conn.ping(reconnect=False)
    except pymysql.MySQLError:
        with contextlib.suppress(pymysql.MySQLError):
            conn.connect()


class WatermarkWriteError(ReplicationError):
    """An incremental snapshot's watermark could not be written into the signal table."""


class Watermarks:
    """Writes a chunk's window markers (the ``incremental.snapshot.watermarking.strategy``)."""

    def __init__(
        self,
        signal_table: TableId | None,
        strategy: str,
        read_only: bool,
        flavor: ServerFlavor,
        emit_retries: int,
        emit_backoff_s: float,
    ) -> None:
        self.signal_table = signal_table
        self.strategy = strategy
        self.read_only = read_only
        self.flavor = flavor
        self.emit_retries = emit_retries
        self.emit_backoff_s = emit_backoff_s
        self._opened_at = ""

    def open(self, conn: pymysql.connections.Connection, chunk_id: str) -> None:
        if self.read_only:
            return
        self._opened_at = _now_text()
        data = {"openWindowTimestamp": self._opened_at}
        self._emit(conn, "open", lambda: self._insert_marker(conn, f"{chunk_id}-open", WINDOW_OPEN, data))

    def close(self, conn: pymysql.connections.Connection, chunk_id: str) -> GtidSet | None:
        if self.read_only:
            return self._executed_gtids(conn)
        assert self.signal_table is not None
        if self.strategy == INSERT_DELETE:
            self._emit(conn, "close", lambda: self._delete_marker(conn, f"{chunk_id}-open"))
        else:
            data = {"openWindowTimestamp": self._opened_at, "closeWindowTimestamp": _now_text()}
            self._emit(
                conn, "close", lambda: self._insert_marker(conn, f"{chunk_id}-close", WINDOW_CLOSE, data)
            )
        return None

    def _emit(self, conn: pymysql.connections.Connection, window: str, write: Callable[[], None]) -> None:
        """A watermark write, retried as Debezium's ``RetryingRunnable`` does: up to
        ``signal.emit.failure.max.retries`` times (-1: without limit), ``backoff.ms`` apart, the
        connection re-opened before each retry (Debezium's auto-heal)."""
        attempt = 0
        while True:
            try:
                write()
                return
            except pymysql.MySQLError as exc:
                if 0 <= self.emit_retries <= attempt:
                    raise WatermarkWriteError(
                        f"could not write the incremental snapshot's window {window} watermark into "
                        f"{self.signal_table} ({exc}); check the connector user's INSERT/DELETE grant on "
                        "it, or let signal.emit.failure.max.retries retry such writes"
                    ) from exc
                attempt += 1
                log.warning(
                    "window %s watermark write into %s failed (%s); retry %d in %.1fs "
                    "(signal.emit.failure.max.retries, signal.emit.failure.backoff.ms)",
                    window,
                    self.signal_table,
                    exc,
                    attempt,
                    self.emit_backoff_s,
                )
                time.sleep(self.emit_backoff_s)
                _reopen_if_lost(conn)

    def _delete_marker(self, conn: pymysql.connections.Connection, marker: str) -> None:
        assert self.signal_table is not None
        with conn.cursor() as cur:
            cur.execute(f"DELETE FROM {quote_table(self.signal_table)} WHERE id = %s", (marker,))

    def _insert_marker(
        self, conn: pymysql.connections.Connection, marker: str, kind: str, data: dict[str, str]
    ) -> None:
        """A watermark row, its data as Debezium writes it (``{"openWindowTimestamp": ...}``)."""
        assert self.signal_table is not None
        text = ", ".join(f'"{k}": "{v}"' for k, v in data.items())
        with conn.cursor() as cur:
            cur.execute(
                f"INSERT INTO {quote_table(self.signal_table)} VALUES (%s, %s, %s)",
                (marker, kind, "{" + text + "}"),
            )

    def _executed_gtids(self, conn: pymysql.connections.Connection) -> GtidSet:
        with conn.cursor() as cur:
            return executed_gtids(cur, self.flavor)


def _now_text() -> str:
    """An ISO-8601 UTC instant as Java's ``Instant.toString`` prints it (the markers' timestamps)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
