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

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import orjson
import pymysql

from connector.dispatch.dispatcher import EventDispatcher, RowForm
from connector.notifications.snapshots import IncrementalSnapshotNotifier
from connector.records.builder import SourcePosition, TableSchema
from connector.sources.incremental_state import (
    COLLECTIONS,
    CORRELATION_ID,
    MAXIMUM_KEY,
    PRIMARY_KEY,
    Chunk,
    Collection,
    ForeignKeyEncoding,
    Progress,
    additional_conditions,
    decode_key,
    encode_key,
    window_fields,
)
from connector.sources.signals import WINDOW_CLOSE, WINDOW_OPEN, SignalError, SignalRecord, data_collections
from connector.sources.watermarks import INSERT_INSERT, Watermarks
from mysql_cdc_base.flavor import MYSQL, ServerFlavor
from mysql_cdc_base.position import GtidSet, SourceOffset
from mysql_cdc_base.table_id import TableId
from snapshot.rows.chunks import ChunkKeyError, ChunkQuery, Key, read_chunk, read_maximum_key

if TYPE_CHECKING:
    from connector.sources.incremental_readers import WindowReaders

log = logging.getLogger(__name__)


INCREMENTAL = "incremental"  # source.snapshot of the rows
INCREMENTAL_OFFSET = "INCREMENTAL"  # the offset's snapshot marker on those rows
# Server errors of a chunk read in a structure the server no longer has (ER_BAD_FIELD_ERROR,
# ER_NO_SUCH_TABLE): the DDL that changed it is still ahead of the stream.
_STRUCTURE_AHEAD = frozenset({1054, 1146})
PROGRESS_LOG_INTERVAL_S = 10.0  # a progress log line at most this often while chunks close
OffsetItems = tuple[tuple[str, Any], ...]


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
        self._connect = connect
        self.signal_table = signal_table
        self.chunk_size = chunk_size
        # incremental.snapshot.max.threads > 1: each window reads that many chunks on reader
        # processes (connector.sources.incremental_readers); 1 reads one chunk on this connection.
        self._readers = _window_readers(connect, threads, chunk_size) if threads > 1 else None
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
        self.chunk: Chunk | None = None
        self.progress = Progress()
        self._conn: pymysql.connections.Connection | None = None
        # A table whose structure changed on the server before the stream reached the change: its
        # chunk is read once the stream applies the DDL (the model and the server agree again).
        self._waiting_for_ddl: TableId | None = None
        self._encodings: list[tuple[Any, str] | None] = [None, None]  # see _encoded
        # signal.emit.failure.max.retries / .backoff.ms: a failed watermark write is retried.
        self.watermarks = Watermarks(signal_table, strategy, read_only, flavor, emit_retries, emit_backoff_s)
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
                self.watermarks.open(conn, chunk_id)
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
            chunk = Chunk(
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
            chunk.high = self.watermarks.close(conn, chunk_id)
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


def _window_readers(connect: Callable[[], Any], threads: int, chunk_size: int) -> WindowReaders:
    """The reader processes of incremental.snapshot.max.threads > 1. Their module (with the chunked
    snapshot's multiprocessing readers) is loaded only then, not at every start (issue 41)."""
    from connector.sources.incremental_readers import WindowReaders  # noqa: PLC0415

    return WindowReaders(connect, threads, chunk_size)
