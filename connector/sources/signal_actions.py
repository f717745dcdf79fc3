"""What signals do while the connector streams: the action table and on-demand snapshots.

``SignalActions`` belongs to the streaming source and runs on its thread: the stream hands it the
signal table's rows (the ``source`` channel) and calls ``poll`` after every event and idle tick (the
other channels). Actions (Debezium's names):

* ``execute-snapshot``: ``type: incremental`` (default) queues an incremental snapshot
  (``connector.sources.incremental``); ``type: blocking`` pauses the stream, reads the listed tables (with
  ``additional-conditions`` as WHERE filters) at the current streaming offset, marked like a
  snapshot with offset ``snapshot: BLOCKING``, then the stream goes on where it paused;
* ``stop-snapshot``, ``pause-snapshot``, ``resume-snapshot``: the incremental snapshot;
* ``log``: logs ``data.message`` with the current offset;
* ``set-binlog-position``: moves the stream to ``binlog_filename``/``binlog_position`` or
  ``gtid_set`` at once (Debezium stores it and applies it at the next restart).
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from connector.dispatch.dispatcher import EventDispatcher, RowForm
from connector.records.builder import SourcePosition
from connector.sources.incremental import INSERT_INSERT, IncrementalSnapshot
from connector.sources.incremental_state import additional_conditions
from connector.sources.settings import IncrementalSettings, SignalSettings
from connector.sources.signals import (
    EXECUTE_SNAPSHOT,
    LOG,
    PAUSE_SNAPSHOT,
    RESUME_SNAPSHOT,
    SET_BINLOG_POSITION,
    SOURCE,
    STOP_SNAPSHOT,
    InProcessSignalChannel,
    SignalError,
    SignalProcessor,
    SignalRecord,
    build_channels,
    data_collections,
    parse_data,
    signal_table,
)
from connector.sources.snapshot_connection import snapshot_connection_factory
from mysql_cdc_base.errors import InvalidGtidSetError
from mysql_cdc_base.flavor import MARIADB, ServerFlavor
from mysql_cdc_base.position import BLOCKING_SNAPSHOT, BinlogPosition, GtidSet, SourceOffset
from mysql_cdc_base.properties import PropertyReader
from mysql_cdc_base.table_id import TableId
from snapshot.binlog_status import gtids_at, position_problem, stream_start_problem
from snapshot.policy.queries import quote_table
from snapshot.progress import LogProgress
from snapshot.rows.chunks import ChunkQuery
from snapshot.rows.scan import TableJob, TableScan
from snapshot.server_sql import server_time_zone, show_create_table

log = logging.getLogger(__name__)

_BINLOG_NAME = re.compile(r"^.+\.\d+$")


class Stream(Protocol):
    """What the actions use of the streaming source."""

    dispatcher: EventDispatcher

    @property
    def gtids(self) -> GtidSet | None: ...

    def offset(self, row: int = 0) -> SourceOffset: ...

    def in_transaction(self) -> bool: ...

    def current_position(self) -> SourcePosition: ...

    def reposition(self, file: str | None, pos: int | None, gtids: GtidSet | None) -> None: ...


class SignalActions:
    def __init__(
        self,
        config: PropertyReader,
        stream: Stream,
        flavor: ServerFlavor,
        in_process: InProcessSignalChannel | None = None,
    ) -> None:
        self.config = config
        self.stream = stream
        self.flavor = flavor
        self.table = signal_table(config)
        signals = SignalSettings.from_config(config)
        incremental = IncrementalSettings.from_config(config)
        self.source_enabled = SOURCE in signals.channels and self.table is not None
        self.read_only = incremental.read_only
        self.incremental = IncrementalSnapshot(
            stream.dispatcher,
            snapshot_connection_factory(config),
            self.table,
            chunk_size=incremental.chunk_size,
            threads=incremental.threads,
            strategy=incremental.strategy or INSERT_INSERT,
            read_only=self.read_only,
            allow_schema_changes=incremental.allow_schema_changes,
            flavor=flavor,
            position=self._position,
            is_captured=stream.dispatcher.is_captured,
            emit_retries=incremental.emit_retries,
            emit_backoff_s=incremental.emit_backoff_s,
        )
        self.connect = snapshot_connection_factory(config)
        self.processor = SignalProcessor(
            build_channels(signals, in_process),
            {
                EXECUTE_SNAPSHOT: self.execute_snapshot,
                STOP_SNAPSHOT: self.incremental.stop,
                PAUSE_SNAPSHOT: self.incremental.pause,
                RESUME_SNAPSHOT: self.incremental.resume_signal,
                LOG: self.log_message,
                SET_BINLOG_POSITION: self.set_binlog_position,
            },
            signals.poll_interval_s,
        )
        self._started = False
        # The offset a source-channel signal was read at (a restart from it reads the signal again).
        self._signal_offset: SourceOffset | None = None
        # Where the last signal-table row was read (file number, position, row): rows at or before
        # it are read again only after set-binlog-position moved the stream back.
        self._last_signal_row: tuple[int, int, int] | None = None
        # Blocking snapshots wait for the end of the transaction they were signalled in.
        self._blocking: list[tuple[SignalRecord, SourceOffset | None]] = []

    # -- the stream's calls ---------------------------------------------------------------------------
    def start(self, offset: SourceOffset) -> None:
        """Once, before the first event: an incremental snapshot the offset was taken in resumes."""
        if self._started:
            return
        self._started = True
        self.incremental.restore(offset)
        self.incremental.resume()
        self.processor.poll(force=True)

    def poll(self) -> None:
        self.processor.poll()
        if self._blocking and not self.stream.in_transaction():
            self._run_blocking()

    def offset_items(self) -> tuple[tuple[str, Any], ...]:
        return self.incremental.offset_items()

    def on_signal_rows(self, op: str, rows: Sequence[tuple[Any, Any]], first_row: int = 0) -> None:
        """The signal table's rows from one rows event (raw values: id, type, data)."""
        for index, (before, after) in enumerate(rows[first_row:], first_row):
            if op == "d" and before is not None:
                self.incremental.on_marker(_text(before[0]), _text(before[1]), deleted=True)
                continue
            if op != "c" or after is None or len(after) < 3:
                continue
            signal_id, kind, data = _text(after[0]), _text(after[1]), after[2]
            if self.incremental.on_marker(signal_id, kind, deleted=False):
                continue
            if not self.source_enabled or self._read_before(signal_id, kind, index):
                continue
            try:
                record = SignalRecord(
                    signal_id, kind, parse_data(_text(data) if data is not None else None), SOURCE
                )
            except SignalError as exc:
                log.warning("signal %s (%s) in %s skipped: %s", signal_id, kind, self.table, exc)
                continue
            self._signal_offset = self.stream.offset(row=index)
            try:
                self.processor.process(record)
            finally:
                self._signal_offset = None

    def _read_before(self, signal_id: str, kind: str, row: int) -> bool:
        """Is this signal row one this run has read already? Only set-binlog-position moves the
        stream back (a reconnect skips what it has handled), and a signal is carried out once:
        moved back past its own row, a set-binlog-position would otherwise move it back again
        and again."""
        where = self.stream.current_position()
        at = (*BinlogPosition(where.file, where.pos).key, row)
        if self._last_signal_row is not None and at <= self._last_signal_row:
            log.info(
                "signal %s (%s) at %s:%d skipped: already carried out (set-binlog-position moved the "
                "stream back)",
                signal_id,
                kind,
                where.file,
                where.pos,
            )
            return True
        self._last_signal_row = at
        return False

    def on_commit(self) -> None:
        if self.read_only:
            self.incremental.on_gtids(self.stream.gtids)
        if self._blocking:
            self._run_blocking()

    def on_schema_change(self, tables: Sequence[TableId]) -> None:
        self.incremental.on_schema_change(tables)

    def close(self) -> None:
        self.processor.close()
        self.incremental.close()

    def _position(self) -> tuple[SourcePosition, SourceOffset]:
        return self.stream.current_position(), self.stream.offset()

    # -- actions ------------------------------------------------------------------------------------
    def execute_snapshot(self, signal: SignalRecord) -> None:
        kind = str(signal.data.get("type") or "incremental").lower()
        if kind == "incremental":
            if not self.read_only and self.table is None:
                raise SignalError(
                    "an incremental snapshot writes its watermarks to the signal table: set "
                    "signal.data.collection, or read.only=true (GTID watermarks)"
                )
            self.incremental.execute(signal)
        elif kind == "blocking":
            self.blocking_snapshot(signal)
        else:
            raise SignalError(f"unknown snapshot type {kind!r}: expected incremental or blocking")

    def log_message(self, signal: SignalRecord) -> None:
        message = signal.data.get("message")
        if not message:
            raise SignalError("a log signal needs data.message")
        log.info("%s (signal %s) at %s", message, signal.id, self.stream.offset().describe())

    def set_binlog_position(self, signal: SignalRecord) -> None:
        """Checked with the server first: a position it cannot stream from is refused here, not
        found by the stream, which would fail on it. A stream that follows GTIDs moves by GTID: to
        a file and position it goes by the GTIDs of the transactions before that position."""
        data = signal.data
        file, pos, gtids = data.get("binlog_filename"), data.get("binlog_position"), data.get("gtid_set")
        if gtids and (file or pos is not None):
            raise SignalError("give either binlog_filename and binlog_position, or gtid_set, not both")
        if gtids:
            self._set_gtid_position(str(gtids))
            return
        if not file or pos is None:
            raise SignalError("set-binlog-position needs binlog_filename and binlog_position, or gtid_set")
        if not _BINLOG_NAME.match(str(file)):
            raise SignalError(f"binlog_filename {file!r} is not a binlog file name (name.NNNNNN)")
        try:
            position = int(pos)
        except (TypeError, ValueError):
            raise SignalError(f"binlog_position {pos!r} is not a number") from None
        if position < 4:
            raise SignalError(f"binlog_position {position} is before the first event (4)")
        with contextlib.closing(self.connect()) as conn, conn.cursor() as cur:
            problem = stream_start_problem(cur, str(file), position)
            if problem is not None:
                raise SignalError(f"the server cannot stream from {file}:{position}: {problem}")
            at = gtids_at(cur, self.flavor, str(file), position) if self.stream.gtids is not None else None
        self.stream.reposition(str(file), position, at)

    def _set_gtid_position(self, text: str) -> None:
        try:
            wanted = GtidSet.parse(text)
        except InvalidGtidSetError as exc:
            raise SignalError(f"gtid_set {text!r} is not a GTID set ({exc})") from None
        if bool(wanted.mariadb_positions) != (self.flavor == MARIADB) or not text.strip():
            raise SignalError(f"gtid_set {text!r} is not a {self.flavor} GTID set")
        with contextlib.closing(self.connect()) as conn, conn.cursor() as cur:
            problem = position_problem(cur, BinlogPosition("", 0, str(wanted)), self.flavor)
        if problem is not None:
            raise SignalError(f"the server cannot stream from GTIDs {wanted}: {problem}")
        self.stream.reposition(None, None, wanted)

    def blocking_snapshot(self, signal: SignalRecord) -> None:
        """Queues a blocking snapshot: it runs once the signal's transaction has ended."""
        if not data_collections(signal.data):
            raise SignalError("a blocking snapshot needs a non-empty data-collections list")
        additional_conditions(signal.data)  # a bad entry is refused now, not after the pause
        self._blocking.append((signal, self._signal_offset))

    def _run_blocking(self) -> None:
        pending, self._blocking = self._blocking, []
        for signal, signalled_at in pending:
            self._blocking_snapshot(signal, signalled_at)

    def _blocking_snapshot(self, signal: SignalRecord, signalled_at: SourceOffset | None) -> None:
        """Reads the listed tables now, while the stream waits; it resumes where it paused. The rows
        carry the offset the signal was read at, marked ``BLOCKING``: a restart during the snapshot
        reads a source-channel signal again, and so runs the snapshot again."""
        dispatcher = self.stream.dispatcher
        conditions = additional_conditions(signal.data)
        wanted = []
        for table_id in data_collections(signal.data):
            if not dispatcher.is_captured(table_id) or dispatcher.table(table_id) is None:
                log.warning("blocking snapshot of %s skipped: the table is not captured", table_id)
            else:
                wanted.append(table_id)
        jobs = []
        for order, table_id in enumerate(wanted):
            table = dispatcher.table(table_id)
            assert table is not None
            query = ChunkQuery(table_id, table.column_names, (), conditions.get(table_id))
            jobs.append(TableJob(table_id, query.full_sql(), None, order, len(wanted)))
        if not jobs:
            log.warning("signal %s: blocking snapshot has no captured table to read", signal.id)
            return
        paused_at = self.stream.offset()
        log.info(
            "blocking snapshot of %s; streaming paused at %s",
            ", ".join(str(j.table_id) for j in jobs),
            paused_at.describe(),
        )
        offset = (signalled_at or paused_at).with_(snapshot=BLOCKING_SNAPSHOT)
        where = self.stream.current_position()  # the event the stream paused at
        listener = _BlockingListener(dispatcher, offset, where)
        conn = self.connect()
        started = time.monotonic()
        try:
            with conn.cursor() as cur:
                # Each table's structure first, as a snapshot's schema changes (DROP, then CREATE).
                for job in jobs:
                    with server_time_zone(cur):
                        ddl = show_create_table(cur, job.table_id)
                    if ddl is None:
                        continue
                    schema_where = replace(where, snapshot="true")
                    for statement in (f"DROP TABLE IF EXISTS {quote_table(job.table_id)}", ddl):
                        dispatcher.dispatch_schema_change(
                            statement, job.table_id.database, offset, schema_where, offset
                        )
            counts = TableScan(jobs, listener, LogProgress(), 1024, threading.Event()).serial(conn)
        finally:
            conn.close()
        dispatcher.emitter.advance(paused_at)
        log.info(
            "blocking snapshot completed: %d rows in %.1fs; streaming resumes at %s",
            sum(counts.values()),
            time.monotonic() - started,
            paused_at.describe(),
        )


class _BlockingListener:
    """Snapshot rows of a blocking snapshot, dispatched through the streaming dispatcher with the
    paused stream's offset marked ``snapshot: BLOCKING``."""

    def __init__(self, dispatcher: EventDispatcher, offset: SourceOffset, where: SourcePosition) -> None:
        self.dispatcher = dispatcher
        self.offset = offset
        self.where = where

    def on_table_start(self, table_id: TableId, estimated_rows: int | None, source_ts_ms: int) -> None:
        pass

    def on_row(self, table_id: TableId, values: tuple[Any, ...], marker: str) -> None:
        where = replace(self.where, snapshot=marker)
        self.dispatcher.dispatch_rows(
            table_id,
            "r",
            lambda _s: ((None, values),),
            where,
            self.offset,
            form=RowForm.SNAPSHOT,
            number_rows=False,
        )

    def on_table_end(self, table_id: TableId, rows: int) -> None:
        pass

    # The rest of SnapshotListener: a blocking snapshot reads no position and no structure.
    def on_schema_statement(self, ddl: str, database: str | None) -> None:
        pass

    def on_position(self, position: Any) -> None:
        pass

    def on_complete(self) -> None:
        pass


def _text(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    return "" if value is None else str(value)
