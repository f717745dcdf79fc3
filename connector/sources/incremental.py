"""Incremental snapshots: DBLog's DDD-3 watermark algorithm while streaming goes on
(docs/guides/snapshots-signals.md).

An ``execute-snapshot`` signal (``type: incremental``) queues tables. Each table is read in chunks
in key order. Around each chunk read the connector writes two watermarks, and everything happens on
the streaming thread:

1. open the window: insert ``<chunk id>-open`` into the signal table;
2. read the chunk (``snapshot.rows.chunks``) into the window, keyed by the row's key;
3. close the window: insert ``<chunk id>-close`` (``insert_delete``: delete the open row;
   ``read.only``: remember the server's executed GTID set, the high watermark).

``read.only`` writes nothing, so there is no open marker: the window opens at once, where the
stream is when the chunk is read, and closes once the stream has processed the high watermark. The
stream is at or before the server's GTID position at the read (a low watermark), so the window is
open for every event that could be newer than the chunk. Waiting for the stream to pass a low
watermark instead loses updates: the window would open only at the first commit after it, after
that transaction's rows, and on MariaDB ``gtid_binlog_pos`` names transactions whose InnoDB commit
a concurrent read may not see yet. Opening early only lets streamed events replace window rows
whose keys changed meanwhile; those events are delivered anyway.

The stream meets the markers later, in binlog order. Between them, a streamed change of a row whose
key is in the window removes that key: the streamed event is newer than (or as new as) the chunk's
read. When the stream reaches the close marker the rows left in the window are emitted as ``op: r``
with ``source.snapshot = "incremental"``, and the next chunk is read.

Progress lives in the offset (``incremental_snapshot_*`` keys, each record carries it): the key of
the last chunk *emitted*, so a restart re-reads the chunk whose window had not closed yet and never
starts over. Debezium writes the keys as hex of Java-serialized arrays; here they are JSON text
(docs/guides/snapshots-signals.md): a list of key values, bytes as ``{"hex": ...}``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
import pymysql

from connector.dispatch.dispatcher import EventDispatcher, RowForm
from connector.errors import ReplicationError
from connector.notifications.snapshots import IncrementalSnapshotNotifier
from connector.records.builder import SourcePosition, TableSchema
from connector.sources.incremental_readers import WindowReaders
from connector.sources.signals import WINDOW_CLOSE, WINDOW_OPEN, SignalError, SignalRecord, data_collections
from ddl.errors import OffsetError
from ddl.flavor import MYSQL, ServerFlavor
from ddl.model import TableId
from ddl.position import GtidSet, SourceOffset
from snapshot.binlog_status import executed_gtids
from snapshot.rows.chunks import ChunkKeyError, ChunkQuery, Key, read_chunk, read_maximum_key
from snapshot.snapshotter import quote_table

log = logging.getLogger(__name__)

COLLECTIONS = "incremental_snapshot_collections"
PRIMARY_KEY = "incremental_snapshot_primary_key"
MAXIMUM_KEY = "incremental_snapshot_maximum_key"
CORRELATION_ID = "incremental_snapshot_correlation_id"
OFFSET_KEYS = (COLLECTIONS, PRIMARY_KEY, MAXIMUM_KEY, CORRELATION_ID)

INSERT_INSERT, INSERT_DELETE = "insert_insert", "insert_delete"
INCREMENTAL = "incremental"  # source.snapshot of the rows
INCREMENTAL_OFFSET = "INCREMENTAL"  # the offset's snapshot marker on those rows
# Server errors of a chunk read in a structure the server no longer has (ER_BAD_FIELD_ERROR,
# ER_NO_SUCH_TABLE): the DDL that changed it is still ahead of the stream.
_STRUCTURE_AHEAD = frozenset({1054, 1146})
PROGRESS_LOG_INTERVAL_S = 10.0  # a progress log line at most this often while chunks close
OffsetItems = tuple[tuple[str, Any], ...]


# -- key encoding in the offset ---------------------------------------------------------------------
def _encode_value(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return {"hex": bytes(value).hex()}
    return value


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict) and "hex" in value:
        return bytes.fromhex(value["hex"])
    return value


def encode_key(key: Key | None) -> str | None:
    return None if key is None else orjson.dumps([_encode_value(v) for v in key]).decode()


def _reopen_if_lost(conn: pymysql.connections.Connection) -> None:
    """Debezium's auto-heal before a retry: the same connection object, opened again if it was lost."""
    try:
        conn.ping(reconnect=False)
    except pymysql.MySQLError:
        with contextlib.suppress(pymysql.MySQLError):
            conn.connect()


class WatermarkWriteError(ReplicationError):
    """An incremental snapshot's watermark could not be written into the signal table."""


class ForeignKeyEncoding(OffsetError, ValueError):
    """A stored key that is not ours: Debezium's hex of a Java-serialized array."""


def decode_key(text: Any) -> Key | None:
    if not text:
        return None
    try:
        values = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise ForeignKeyEncoding(str(text)[:40]) from None
    if not isinstance(values, list):
        raise ForeignKeyEncoding(str(text)[:40])
    return tuple(_decode_value(v) for v in values)


@dataclass(frozen=True)
class Collection:
    """One table queued for an incremental snapshot, as Debezium keeps it in the offset."""

    table: TableId
    condition: str | None = None
    surrogate_key: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "incremental_snapshot_collections_id": str(self.table),
            "incremental_snapshot_collections_additional_condition": self.condition,
            "incremental_snapshot_collections_surrogate_key": self.surrogate_key,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Collection:
        return cls(
            TableId.parse(str(data["incremental_snapshot_collections_id"])),
            data.get("incremental_snapshot_collections_additional_condition") or None,
            data.get("incremental_snapshot_collections_surrogate_key") or None,
        )


@dataclass
class _Chunk:
    """The chunk read last: its window of rows (key → converted image) until it closes."""

    id: str
    collection: Collection
    schema: TableSchema
    last_key: Key | None  # the chunk's largest key (None: the chunk was empty)
    done: bool  # the table has no row after this chunk
    fields: tuple[str, ...] = ()  # the payload fields of the window's keys
    # payload key fields → (the row's key as read, its converted image), in key order
    window: dict[Key, tuple[Key, dict[str, Any]]] = field(default_factory=dict)
    open: bool = False
    high: GtidSet | None = None  # read.only: the server's GTID position after the read


@dataclass
class Progress:
    """Per-table figures for logs, the progress line and the metrics."""

    rows: dict[TableId, int] = field(default_factory=dict)
    scanned: dict[TableId, int] = field(default_factory=dict)  # rows read (emitted or not)
    chunks_by_table: dict[TableId, int] = field(default_factory=dict)
    chunks: int = 0
    started: float = field(default_factory=time.monotonic)
    logged: float = field(default_factory=time.monotonic)
    current: TableId | None = None  # the table being read (None: no snapshot running)

    def on_chunk(self, table: TableId) -> None:
        self.chunks += 1
        self.chunks_by_table[table] = self.chunks_by_table.get(table, 0) + 1

    def describe(self) -> str | None:
        """``db.t 12000 rows/12 chunks (reading), db.u 300 rows/1 chunk``; None when nothing ran."""
        if not self.chunks_by_table:
            return None
        parts = []
        for table, chunks in self.chunks_by_table.items():
            state = " (reading)" if table == self.current else ""
            parts.append(f"{table} {self.rows.get(table, 0)} rows/{chunks} chunks{state}")
        return ", ".join(parts)


class IncrementalSnapshot:
    """The incremental snapshot state and the DDD-3 steps, driven by the streaming source.

    ``position`` gives the streaming source's current (SourcePosition, SourceOffset): emitted rows
    take the position of the event that closed the window. ``connect`` opens a client connection
    with the snapshot's value conversions (chunk reads and watermark writes, autocommit).
    """

    def __init__(
        self,
        dispatcher: EventDispatcher,
        connect: Callable[[], pymysql.connections.Connection],
        signal_table: TableId | None,
        *,
        chunk_size: int,
        threads: int = 1,
        strategy: str = INSERT_INSERT,
        read_only: bool = False,
        allow_schema_changes: bool = False,
        flavor: ServerFlavor = MYSQL,
        position: Callable[[], tuple[SourcePosition, SourceOffset]],
        is_captured: Callable[[TableId], bool],
        emit_retries: int = 0,
        emit_backoff_s: float = 10.0,
    ) -> None:
        self.dispatcher = dispatcher
        # signal.emit.failure.max.retries / .backoff.ms: a failed watermark write is retried.
        self.emit_retries = emit_retries
        self.emit_backoff_s = emit_backoff_s
        self._connect = connect
        self.signal_table = signal_table
        self.chunk_size = chunk_size
        # incremental.snapshot.max.threads > 1: each window reads that many chunks on reader
        # processes (connector.sources.incremental_readers); 1 reads one chunk on this connection.
        self._readers = WindowReaders(connect, threads, chunk_size) if threads > 1 else None
        self.strategy = strategy
        self.read_only = read_only
        self.allow_schema_changes = allow_schema_changes
        self.flavor = flavor
        self.position = position
        self.is_captured = is_captured
        self.collections: list[Collection] = []
        self.emitted_key: Key | None = None  # the last key emitted of the current table
        self.maximum_key: Key | None = None
        self.correlation_id: str | None = None
        self.paused = False
        self.chunk: _Chunk | None = None
        self.progress = Progress()
        self._conn: pymysql.connections.Connection | None = None
        # A table whose structure changed on the server before the stream reached the change: its
        # chunk is read once the stream applies the DDL (the model and the server agree again).
        self._waiting_for_ddl: TableId | None = None
        self._encodings: list[tuple[Any, str] | None] = [None, None]  # see _encoded
        self._opened_at = ""
        self.notifier: IncrementalSnapshotNotifier | None = None  # notification.enabled.channels
        self._aborted: list[TableId] = []  # stopped tables whose ABORTED waits for the window's close

    # -- offset ------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return bool(self.collections)

    def offset_items(self) -> tuple[tuple[str, Any], ...]:
        if not self.collections:
            return ()
        before, after = self._offset_items_around_key()
        if self.emitted_key is None:
            return before + after
        return (*before, (PRIMARY_KEY, encode_key(self.emitted_key)), *after)

    def _offset_items_around_key(self) -> tuple[OffsetItems, OffsetItems]:
        """The offset entries before and after the emitted key's: the same for every row of a
        window, so a window's rows build only the key's entry."""
        before: OffsetItems = ((COLLECTIONS, self._encoded(self.collections)),)
        after: list[tuple[str, Any]] = []
        if self.maximum_key is not None:
            after.append((MAXIMUM_KEY, self._encoded(self.maximum_key)))
        if self.correlation_id is not None:
            after.append((CORRELATION_ID, self.correlation_id))
        return before, tuple(after)

    def _encoded(self, value: list[Collection] | Key) -> str:
        """The offset text of the collections list or the maximum key, made once per value (every
        snapshot row's offset carries both)."""
        slot = 0 if isinstance(value, list) else 1
        cached = self._encodings[slot]
        if cached is not None and cached[0] == value:
            return cached[1]
        if isinstance(value, list):
            text = orjson.dumps([c.to_json() for c in value]).decode()
            value = list(value)  # a copy: the list itself changes as tables finish
        else:
            text = encode_key(value) or ""
        self._encodings[slot] = (value, text)
        return text

    def restore(self, offset: SourceOffset) -> None:
        """The snapshot a stored offset was taken in (its chunk is read again by ``resume``)."""
        extra = dict(offset.extra)
        text = extra.get(COLLECTIONS)
        if not text:
            return
        self.collections = [Collection.from_json(c) for c in orjson.loads(text)]
        try:
            self.emitted_key = decode_key(extra.get(PRIMARY_KEY))
            self.maximum_key = decode_key(extra.get(MAXIMUM_KEY))
        except ForeignKeyEncoding as exc:
            # An offset Debezium stored mid-snapshot: its keys are Java-serialized, so the table it
            # was reading is read again from its first key (finished tables are not in the list).
            log.warning(
                "the stored incremental snapshot key %s... is not this connector's encoding "
                "(an offset written by Debezium?): %s is read again from its first key",
                exc,
                self.collections[0].table if self.collections else "the current table",
            )
            self.emitted_key = self.maximum_key = None
        self.correlation_id = extra.get(CORRELATION_ID)
        log.info(
            "incremental snapshot of %s resumes after key %s",
            ", ".join(str(c.table) for c in self.collections),
            encode_key(self.emitted_key),
        )

    def resume(self) -> None:
        """After a restart: read the chunk after the last one emitted."""
        if self.collections and self.chunk is None:
            self.next_chunk()

    # -- actions -------------------------------------------------------------------------------------
    def execute(self, signal: SignalRecord) -> None:
        tables = data_collections(signal.data)
        if not tables:
            raise SignalError('execute-snapshot needs a non-empty "data-collections" list')
        conditions = additional_conditions(signal.data)
        surrogate = signal.data.get("surrogate-key") or None
        added = []
        for table_id in tables:
            if not self.is_captured(table_id):
                log.warning("incremental snapshot of %s skipped: the table is not captured", table_id)
                continue
            table = self.dispatcher.table(table_id)
            if table is None:
                log.warning("incremental snapshot of %s skipped: no such table is known", table_id)
                continue
            try:
                ChunkQuery.for_table(table, surrogate)
                window_fields(self.dispatcher.table_schema(table), Collection(table_id, None, surrogate))
            except ChunkKeyError as exc:
                log.error("incremental snapshot of %s refused: %s", table_id, exc)
                continue
            added.append(Collection(table_id, conditions.get(table_id), surrogate))
        if not added:
            return
        idle = not self.collections
        self.collections.extend(added)
        log.info("incremental snapshot queued: %s", ", ".join(str(c.table) for c in added))
        if idle:
            self.emitted_key = self.maximum_key = None
            self.correlation_id = signal.id
            self.progress = Progress()
            if self.notifier is not None:
                self.notifier.started(self.correlation_id, self._tables())
            self.next_chunk()

    def stop(self, signal: SignalRecord) -> None:
        tables = set(data_collections(signal.data))
        current = self.collections[0] if self.collections else None
        stopped = [c for c in self.collections if not tables or c.table in tables]
        self.collections = [c for c in self.collections if tables and c.table not in tables]
        log.info("incremental snapshot stopped for %s", ", ".join(str(c.table) for c in stopped) or "nothing")
        if stopped and self.notifier is not None:
            # Debezium applies a stop when the open window closes: ABORTED is told then.
            self._aborted.extend(c.table for c in stopped)
            if self.chunk is None or current in stopped:
                self._notify_aborted()
        if current is not None and current in stopped:
            # The current table was stopped: its open window is dropped, the next table starts.
            self.chunk = None
            self._waiting_for_ddl = None
            self.emitted_key = self.maximum_key = None
            if self.collections:
                self.next_chunk()
            else:
                self.correlation_id = None
                if self._readers is not None:
                    self._readers.close()

    def pause(self, signal: SignalRecord) -> None:
        if self.collections:
            log.info("incremental snapshot paused")
            if self.notifier is not None:
                self.notifier.paused(self.correlation_id, self._tables())
        self.paused = True

    def resume_signal(self, signal: SignalRecord) -> None:
        if not self.paused:
            return
        self.paused = False
        log.info("incremental snapshot resumed")
        if self.collections and self.notifier is not None:
            self.notifier.resumed(self.correlation_id, self._tables())
        if self.chunk is None:
            self.next_chunk()

    # -- DDD-3 ----------------------------------------------------------------------------------------
    def _connection(self) -> pymysql.connections.Connection:
        if self._conn is None or not self._conn.open:
            self._conn = self._connect()
            self._conn.autocommit(True)
        return self._conn

    def close(self) -> None:
        if self._readers is not None:
            self._readers.close()
        if self._conn is not None and self._conn.open:
            self._conn.close()
        self._conn = None

    def next_chunk(self) -> None:
        """Reads the next chunk between two watermarks (or finishes the tables that have no more)."""
        while self.collections and not self.paused and self.chunk is None and self._waiting_for_ddl is None:
            collection = self.collections[0]
            table = self.dispatcher.table(collection.table)
            if table is None:
                log.warning("incremental snapshot of %s ends: the table no longer exists", collection.table)
                self._notify_scanned(collection.table, "UNKNOWN_SCHEMA")
                self._table_done()
                continue
            query = ChunkQuery.for_table(table, collection.surrogate_key, collection.condition)
            conn = self._connection()
            try:
                if self.maximum_key is None:
                    self.maximum_key = read_maximum_key(conn, query)
                    if self.maximum_key is None:
                        log.info("incremental snapshot of %s: no rows", collection.table)
                        self._notify_scanned(collection.table, "EMPTY")
                        self._table_done()
                        continue
                chunk_id = str(uuid.uuid4())
                self._open_watermark(conn, chunk_id)
                rows = self._read_window(conn, query, self.maximum_key)
            except pymysql.err.MySQLError as exc:
                if not exc.args or exc.args[0] not in _STRUCTURE_AHEAD:
                    raise
                log.info(
                    "incremental snapshot of %s waits: the table changed on the server before the "
                    "stream reached the change (%s); its chunk is read once the stream applies it",
                    collection.table,
                    exc.args[1] if len(exc.args) > 1 else exc,
                )
                self._waiting_for_ddl = collection.table
                return
            schema = self.dispatcher.table_schema(table)
            chunk = _Chunk(
                chunk_id,
                collection,
                schema,
                query.key_of(rows[-1]) if rows else None,
                done=not rows,  # Debezium reads until a chunk comes back empty
                fields=window_fields(schema, collection),
                open=self.read_only,  # read.only: open from where the stream is (module docstring)
            )
            for row in rows:
                image = schema.value_from_snapshot(row)
                known_as: tuple[Any, ...] = tuple(image.get(f) for f in chunk.fields)
                while known_as in chunk.window:
                    # Only a keyless table's surrogate key repeats (NULLs): never drop a row read.
                    known_as = (*known_as, len(chunk.window))
                chunk.window[known_as] = (query.key_of(row), image)
            chunk.high = self._close_watermark(conn, chunk_id)
            self.chunk = chunk
            self._notify_read(collection.table, len(rows), chunk.last_key)
            self.progress.on_chunk(collection.table)
            self.progress.current = collection.table
            log.debug("incremental snapshot chunk %s of %s: %d rows", chunk_id, collection.table, len(rows))
            if self.read_only:
                return  # the window closes once the stream has passed the high watermark

    def _read_window(
        self, conn: pymysql.connections.Connection, query: ChunkQuery, maximum: Key
    ) -> list[tuple[Any, ...]]:
        """The window's rows in key order: one chunk, or one per reader process."""
        if self._readers is None:
            return read_chunk(conn, query, self.emitted_key, maximum, self.chunk_size)
        return self._readers.read(conn, query, self.emitted_key, maximum)

    def _open_watermark(self, conn: pymysql.connections.Connection, chunk_id: str) -> None:
        if self.read_only:
            return
        self._opened_at = _now_text()
        data = {"openWindowTimestamp": self._opened_at}
        self._emit(conn, "open", lambda: self._insert_marker(conn, f"{chunk_id}-open", WINDOW_OPEN, data))

    def _close_watermark(self, conn: pymysql.connections.Connection, chunk_id: str) -> GtidSet | None:
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

    # -- what the stream tells ----------------------------------------------------------------------
    def on_marker(self, marker_id: str, kind: str, deleted: bool) -> bool:
        """A signal-table row the stream met: opens or closes the current window when it is its
        marker. Returns True for a window marker (of any chunk)."""
        chunk = self.chunk
        if deleted:
            if kind != WINDOW_OPEN:
                return False
            if chunk is not None and chunk.open and marker_id == f"{chunk.id}-open":
                self._close_window()
            return True
        if kind == WINDOW_OPEN:
            if chunk is not None and marker_id == f"{chunk.id}-open":
                chunk.open = True
            return True
        if kind == WINDOW_CLOSE:
            if chunk is not None and chunk.open and marker_id == f"{chunk.id}-close":
                self._close_window()
            return True
        return False

    def on_streamed(self, table_id: TableId, images: Sequence[tuple[Any, Any]]) -> None:
        """Streamed rows (converted): a key in the open window is newer in the stream."""
        chunk = self.chunk
        if chunk is None or not chunk.open or table_id != chunk.collection.table or not chunk.window:
            return
        fields = chunk.fields
        for before, after in images:
            for image in (before, after):
                if image is not None:
                    chunk.window.pop(tuple(image.get(f) for f in fields), None)

    def on_schema_change(self, tables: Sequence[TableId]) -> None:
        """A DDL statement of the current table while a chunk waits for its window: with
        ``incremental.snapshot.allow.schema.changes`` the chunk is read again."""
        if self._waiting_for_ddl is not None and self._waiting_for_ddl in tables:
            self._waiting_for_ddl = None
            self.next_chunk()
            return
        chunk = self.chunk
        if chunk is None or chunk.collection.table not in tables:
            return
        if self.allow_schema_changes:
            log.info(
                "the structure of %s changed during a chunk window; reading the chunk again",
                chunk.collection.table,
            )
            self.chunk = None
            self.next_chunk()

    def on_gtids(self, executed: GtidSet | None) -> None:
        """``read.only``: the stream has processed ``executed``; the window closes once that
        holds the high watermark."""
        chunk = self.chunk
        if not self.read_only or chunk is None or executed is None:
            return
        if chunk.high is not None and executed.contains(chunk.high):
            self._close_window()

    def _close_window(self) -> None:
        """Emits the rows left in the window, each with the offset of the event that closed it plus
        ``snapshot: INCREMENTAL`` and its own key as the progress (as Debezium's records carry)."""
        chunk = self.chunk
        assert chunk is not None
        self.chunk = None
        table_id = chunk.collection.table
        if chunk.window:
            where, offset = self.position()
            where = replace(where, snapshot=INCREMENTAL, row=0)
            offset = offset.with_(snapshot=INCREMENTAL_OFFSET)
            before, after = self._offset_items_around_key()
            dispatch = self.dispatcher.dispatch_rows
            for key, image in chunk.window.values():
                self.emitted_key = key
                row_offset = offset.with_(extra=(*before, (PRIMARY_KEY, encode_key(key)), *after))
                dispatch(
                    table_id,
                    "r",
                    _one_row(image),
                    where,
                    row_offset,
                    form=RowForm.CONVERTED,
                    number_rows=False,
                )
            self.progress.rows[table_id] = self.progress.rows.get(table_id, 0) + len(chunk.window)
        if time.monotonic() - self.progress.logged >= PROGRESS_LOG_INTERVAL_S:
            self.progress.logged = time.monotonic()
            log.info("incremental snapshot progress: %s", self.progress.describe())
        if self._aborted:
            self._notify_aborted()
        if chunk.last_key is not None:
            self.emitted_key = chunk.last_key
        if chunk.done:
            self._table_done()
        self.next_chunk()

    # -- notifications (Debezium's: at the chunk's read, not at its window's close) -----------------
    def _tables(self) -> list[TableId]:
        return [c.table for c in self.collections]

    def _notify_read(self, table: TableId, rows: int, last_key: Key | None) -> None:
        self.progress.scanned[table] = self.progress.scanned.get(table, 0) + rows
        if self.notifier is None:
            return
        if rows:
            self.notifier.in_progress(self.correlation_id, self._tables(), table, self.maximum_key, last_key)
        else:  # the empty chunk that ends the table
            self._notify_scanned(table, "SUCCEEDED")

    def _notify_aborted(self) -> None:
        stopped, self._aborted = self._aborted, []
        if self.notifier is not None:
            self.notifier.aborted(self.correlation_id, stopped)

    def _notify_scanned(self, table: TableId, status: str) -> None:
        """TABLE_SCAN_COMPLETED, and COMPLETED when it was the last table."""
        if self.notifier is None:
            return
        rows = self.progress.scanned.get(table, 0)
        self.notifier.table_completed(self.correlation_id, self._tables(), table, rows, status)
        if len(self.collections) == 1:
            self.notifier.completed(self.correlation_id)

    def _table_done(self) -> None:
        done = self.collections.pop(0)
        log.info(
            "incremental snapshot of %s completed: %d rows in %.1fs",
            done.table,
            self.progress.rows.get(done.table, 0),
            time.monotonic() - self.progress.started,
        )
        self.emitted_key = self.maximum_key = None
        if not self.collections:
            self.correlation_id = None
            self.progress.current = None
            if self._readers is not None:
                self._readers.close()  # no reader processes idle between snapshots


def _one_row(image: dict[str, Any]) -> Callable[[TableSchema], Sequence[tuple[Any, Any]]]:
    return lambda _schema: ((None, image),)


def window_fields(schema: TableSchema, collection: Collection) -> tuple[str, ...]:
    """The payload fields a row is known by in the window: the primary key (what streamed changes
    are matched by), else the surrogate key (a key column the payload leaves out could not tell
    rows apart: refused)."""
    names = schema.table.primary_key or ((collection.surrogate_key,) if collection.surrogate_key else ())
    emitted = {name.lower(): name for _, name, _ in schema.value_columns}
    fields = tuple(emitted.get(name.lower()) for name in names)
    missing = [n for n, f in zip(names, fields, strict=True) if f is None]
    if missing:
        raise ChunkKeyError(
            f"key column(s) {', '.join(missing)} of {collection.table} are excluded from the events "
            "(column.exclude.list), so streamed changes cannot be matched with snapshot rows"
        )
    return tuple(f for f in fields if f is not None)


def additional_conditions(data: Mapping[str, Any]) -> dict[TableId, str]:
    entries = data.get("additional-conditions") or []
    if not isinstance(entries, list):
        raise SignalError('additional-conditions must be a JSON list of {"data-collection", "filter"}')
    out: dict[TableId, str] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("data-collection") or not entry.get("filter"):
            raise SignalError(f'additional-conditions entry {entry!r} needs "data-collection" and "filter"')
        try:
            # Kept as Debezium keeps it in the offset: in parentheses.
            out[TableId.parse(str(entry["data-collection"]))] = f"({entry['filter']})"
        except ValueError:
            raise SignalError(
                f"additional-conditions names {entry['data-collection']!r}, not a db.table"
            ) from None
    return out


def _now_text() -> str:
    """An ISO-8601 UTC instant as Java's ``Instant.toString`` prints it (the markers' timestamps)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
