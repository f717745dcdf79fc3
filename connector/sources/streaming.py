"""Streaming: binlog events → the one dispatcher, with the stream's position kept in one offset
context (``connector.sources.offset_context``: Debezium's restart bookkeeping, the ``source`` block
and the offset). A restart (after a crash, or a dropped connection) re-reads the current transaction
from its start, replays the bookkeeping of the events already done without emitting, skips the rows
already emitted, and continues: nothing lost, nothing repeated.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pymysqlreplication.event import (
    FormatDescriptionEvent,
    GtidEvent,
    HeartbeatLogEvent,
    MariadbAnnotateRowsEvent,
    MariadbGtidEvent,
    RotateEvent,
    RowsQueryLogEvent,
    XidEvent,
)
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    PartialUpdateRowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from connector.binlog.gtid_events import (
    GTID_TAGGED_LOG_EVENT,
    GtidEventError,
    decode_tagged_gtid,
    library_event_body,
)
from connector.binlog.guard import EventGuard, incomplete_image, statement_problem, unreadable_event
from connector.binlog.json.diff import PartialJsonError
from connector.binlog.row_decoder import BinlogRowDecoder
from connector.binlog.server_stream import (
    BinlogReader,
    EventReader,
    RawEvent,
    ReplicationLost,
    StreamDropped,
    describe_cause,
)
from connector.dispatch.dispatcher import Emitter, EventDispatcher, InconsistentSchemaError, RowForm
from connector.dispatch.schema_state import SchemaState
from connector.metrics import ConnectorMetrics
from connector.records.builder import EventBuilder, SourcePosition, TableSchema
from connector.records.filters import TableFilter, gtid_source_filter
from connector.records.transactions import TransactionMetadata, non_gtid_transaction_id
from connector.server.connection import connect
from connector.sources.heartbeat import Heartbeat
from connector.sources.offset_context import BinlogOffsetContext
from connector.sources.settings import StreamingSettings
from connector.sources.signal_actions import SignalActions
from connector.sources.signals import InProcessSignalChannel
from connector.sources.transaction_buffer import QueryStatement, TransactionBuffer
from mysql_cdc_base.flavor import ServerFlavor
from mysql_cdc_base.position import GtidSet, SourceOffset
from mysql_cdc_base.properties import PropertyReader
from mysql_cdc_base.table_id import TableId
from snapshot.binlog_status import executed_gtids

__all__ = ["InconsistentSchemaError", "StreamingSource"]

log = logging.getLogger(__name__)


ReaderFactory = Callable[[str, int], EventReader]


# A partial JSON update (MySQL PARTIAL_JSON) is an update whose after image the decoder rebuilds.
_OPS = {WriteRowsEvent: "c", UpdateRowsEvent: "u", PartialUpdateRowsEvent: "u", DeleteRowsEvent: "d"}
# MariaDB GTID event flag: a statement without BEGIN/COMMIT (DDL), not a transaction start.
_FL_STANDALONE = 0x01
# Rotate, format description and heartbeat: sent on every (re)connect, they prove nothing.
_CONTROL_EVENT_TYPES = frozenset({0x04, 0x0F, 0x1B})


def _dispatcher(
    settings: StreamingSettings,
    builder: EventBuilder,
    table_filter: TableFilter,
    schema: SchemaState,
    emitter: Emitter,
    transactions: TransactionMetadata | None,
    metrics: ConnectorMetrics | None,
) -> EventDispatcher:
    """The stream's dispatcher, with the schema and failure handling modes and
    ``skip.messages.without.change``."""
    dispatcher = EventDispatcher(
        builder,
        table_filter,
        schema,
        emitter,
        transactions,
        settings.inconsistent_schema_mode,
        settings.event_failure_mode,
        metrics.streaming if metrics is not None else None,
    )
    if settings.skip_unchanged:
        dispatcher.skip_unchanged = True
        if metrics is not None:
            metrics.streaming.unchanged_skipped = 0
    return dispatcher


class StreamingSource:
    """Follows the binlog from ``offset`` and hands every captured row, DDL statement, transaction
    boundary and heartbeat to the one ``EventDispatcher``."""

    def __init__(
        self,
        config: PropertyReader,
        flavor: ServerFlavor,
        schema: SchemaState,
        builder: EventBuilder,
        table_filter: TableFilter,
        emitter: Emitter,
        offset: Mapping[str, Any],
        metrics: ConnectorMetrics | None = None,
        in_process_signals: InProcessSignalChannel | None = None,
        reader_factory: ReaderFactory | None = None,
        settings: StreamingSettings | None = None,
    ) -> None:
        start = self._start = SourceOffset.from_map(offset)
        self.settings = settings = settings or StreamingSettings.from_config(config)
        self.metrics = metrics
        self.config = config
        self.flavor = flavor
        self.emitter = emitter
        self.include_query = settings.include_query
        self.max_attempts = settings.max_attempts
        self.heartbeat_s = settings.poll_interval_s
        # Debezium heartbeats (heartbeat.interval.ms), not the server's binlog heartbeat events.
        self.heartbeat = Heartbeat.from_config(config)
        transactions = None
        if settings.transaction_metadata:
            transactions = TransactionMetadata.from_offset(
                builder.naming.transaction_topic(), start, builder.transaction_maker
            )
        self.dispatcher = _dispatcher(settings, builder, table_filter, schema, emitter, transactions, metrics)
        self._decoders: dict[int, tuple[TableSchema, BinlogRowDecoder]] = {}
        # One TableId per (schema, table) of the rows events: the lookups keyed by it find the
        # very object, not an equal one (issue 41).
        self._table_ids: dict[tuple[Any, Any], TableId] = {}
        # Signals and on-demand snapshots (connector.sources.signal_actions), on this thread.
        self.signals = SignalActions(config, self, flavor, in_process_signals)
        self.dispatcher.on_rows = self.signals.incremental.on_streamed
        self._raw: RawEvent | None = None  # the event being handled (where window rows come from)
        self.guard = EventGuard.from_config(config)
        # binlog_row_image=NOBLOB with the reselect post-processor: the BLOB/TEXT columns an image
        # leaves out read as the placeholder, which the post-processor re-reads.
        self._left_out = settings.left_out_placeholder
        self.gtid_filter = gtid_source_filter(settings.capture)
        self.filter_dml = settings.filter_dml
        # Where the stream is: produces the source blocks and the offsets.
        self.context = BinlogOffsetContext(start, transactions, self.gtid_filter)
        self.context.extra_items = self._incremental_offset_items
        self.file = start.file
        # Where events come from (file, pos) -> reader: the server by default, binlog files for
        # ``mysql-cdc replay-binlog`` (connector.replay).
        self._reader_factory: ReaderFactory = reader_factory or self._server_reader
        self._reader: EventReader | None = None
        self._events: Iterator[RawEvent] | None = None
        self._reposition = False  # reconnect at the restart point after this event
        self._reposition_to: tuple[str | None, int | None, GtidSet | None] | None = None
        self._handlers: dict[type, Callable[[RawEvent], None]] = {
            GtidEvent: self._on_gtid,
            MariadbGtidEvent: self._on_gtid,
            XidEvent: self._on_xid,
            WriteRowsEvent: self._on_rows,
            UpdateRowsEvent: self._on_rows,
            DeleteRowsEvent: self._on_rows,
            PartialUpdateRowsEvent: self._on_rows,
            RowsQueryLogEvent: self._on_rows_query,
            MariadbAnnotateRowsEvent: self._on_annotate_rows,
            TableMapEvent: self._on_table_map,
        }
        # Events mysql-replication does not decode (it hands them over as NotImplementedEvent).
        self._handlers_by_type: dict[int, Callable[[RawEvent], None]] = {
            GTID_TAGGED_LOG_EVENT: self._on_tagged_gtid,
        }
        # binlog.buffer.size: holds each transaction until its end, dropping what it rolls back.
        self._buffer = TransactionBuffer(settings.buffer_size, self._handle)

    @property
    def txmeta(self) -> TransactionMetadata | None:
        return self.dispatcher.transactions

    # -- offsets (the context's) --------------------------------------------------------------------
    def offset(self, row: int = 0) -> SourceOffset:
        """Debezium's restart point now (``BinlogOffsetContext.offset``)."""
        return self.context.offset(row)

    @property
    def gtids(self) -> GtidSet | None:
        return self.context.gtids

    @property
    def last_end(self) -> tuple[str, int]:
        return self.context.last_end

    def in_transaction(self) -> bool:
        return self.context.in_transaction()

    def current_position(self) -> SourcePosition:
        """Where the event being handled is (an idle tick: the last event's end)."""
        raw = self._raw
        return self.context.idle_position() if raw is None else self.context.position(raw)

    def _incremental_offset_items(self) -> tuple[tuple[str, Any], ...]:
        return self.signals.offset_items() if self.signals.incremental.running else ()

    def reposition(self, file: str | None, pos: int | None, gtids: GtidSet | None) -> None:
        """``set-binlog-position``: the stream continues from this position once the current
        transaction has ended (its commit would otherwise move the restart point on again, past the
        position: a signal row's own transaction), and the offset says so at once."""
        self._reposition_to = (file, pos, gtids)
        if not self.context.in_transaction():
            self._apply_reposition()

    def _apply_reposition(self) -> None:
        if self._reposition_to is None:
            return
        (file, pos, gtids), self._reposition_to = self._reposition_to, None
        self.context.reposition(file, pos, gtids)
        self._reposition = True
        log.info("set-binlog-position: streaming continues from %s", self.offset().describe())
        self.emitter.advance(self.offset())

    # -- the loop ---------------------------------------------------------------------------------
    def run(self, stopping: Callable[[], bool]) -> None:
        """Process events until ``stopping()`` is true (checked after every event and heartbeat)."""
        attempt = 0
        self.signals.start(self._start)
        while not stopping():
            if self._events is None:
                self._open()
            assert self._events is not None
            heartbeat = self.heartbeat
            signals = self.signals
            context = self.context
            feed = self._buffer.feed
            try:
                for raw in self._events:
                    feed(raw)
                    signals.poll()
                    if self._reposition and not context.in_transaction():
                        self._reposition = False
                        self._reopen()
                        break
                    # Debezium checks the heartbeat timer after every event (idle ticks included);
                    # not while replaying skipped events, whose offsets lag behind the stored one.
                    if heartbeat is not None and not context.skip_events and heartbeat.due():
                        self.emit_heartbeat()
                    if raw.end_pos and raw.event_type not in _CONTROL_EVENT_TYPES:
                        attempt = 0  # a real event arrived: the connection works again
                    if stopping():
                        return
            except StreamDropped as exc:
                self._events = None
                if self.metrics is not None:
                    self.metrics.connected = False
                    self.metrics.disconnects += 1
                attempt += 1
                # Where the stream broke: the end of the last event read (the reconnect resumes at
                # the restart point, the start of the transaction it was in).
                lost_at = "{}:{}".format(*self.context.last_end)
                if attempt > self.max_attempts:
                    raise ReplicationLost(
                        f"lost the replication connection to {self.config.hostname}:{self.config.port} "
                        f"after binlog position {lost_at} and could not restore it after "
                        f"{self.max_attempts} attempts (connect.max."
                        f"attempts); last error: {describe_cause(self.config, exc.cause)}. The stored "
                        "offset is intact: restart the connector once the server is reachable"
                    ) from None
                delay = min(10.0, 0.2 * 2 ** (attempt - 1))
                log.warning(
                    "replication connection lost after binlog position %s (%s); reconnecting in %.1fs "
                    "(attempt %d of %d)",
                    lost_at,
                    describe_cause(self.config, exc.cause),
                    delay,
                    attempt,
                    self.max_attempts,
                )
                time.sleep(delay)

    def _open(self) -> None:
        # Reconnect at the restart point: the current transaction's start, skipping what is done.
        file, pos = self.context.restart_point()
        self._buffer.discard()
        self._reader = self._reader_factory(file, pos)
        self._events = self._reader.events()
        self.file = file

    def _server_reader(self, file: str, pos: int) -> EventReader:
        # With GTIDs, the first transaction not in the set is the one the restart point is in.
        return BinlogReader(
            self.config,
            file,
            pos,
            heartbeat_s=self.heartbeat_s,
            gtids=self._restart_gtids(),
            flavor=self.flavor,
        )

    def _restart_gtids(self) -> GtidSet | None:
        """The GTID set to read from: the offset's, plus, for the sources gtid.source.includes/
        excludes leave out, everything the server has executed (Debezium's merged set)."""
        gtids = self.context.gtids
        if not gtids or self.gtid_filter is None:
            return gtids
        with connect(self.config) as conn, conn.cursor() as cur:
            executed = executed_gtids(cur, self.flavor)
        return gtids.with_sources_of(executed, self.gtid_filter)

    def _reopen(self) -> None:
        """Reconnect at the restart point (after ``reposition``)."""
        if self._reader is not None:
            self._reader.close()
        self._reader = None
        self._events = None

    def close(self) -> None:
        self.signals.close()
        if self._reader is not None:
            self._reader.close()
        self._events = None
        if self.metrics is not None:
            self.metrics.connected = False
        if self.heartbeat is not None:
            self.heartbeat.close()

    def emit_heartbeat(self) -> None:
        """A heartbeat record with the current offset now (and the action query), if heartbeats are
        on; the engine also calls this right after a snapshot completes, as Debezium does."""
        if self.heartbeat is not None:
            self.dispatcher.dispatch_heartbeat(self.heartbeat, self.offset())

    # -- event handling ----------------------------------------------------------------------------
    def _handle(self, raw: RawEvent, statement: QueryStatement | None = None) -> None:
        """One event from the buffer; a QUERY event comes with its statement, read once there."""
        event = raw.event
        handler = self._handlers.get(type(event))
        if handler is not None and raw.end_pos and raw.event_type not in self._handlers_by_type:
            # The events of every transaction (GTID, TABLE_MAP, rows, XID): none is a heartbeat,
            # rotate or format description, so straight to their handler (issue 41), with the
            # context's ``on_event`` and ``event_done`` inline.
            context = self.context
            context.server_id = raw.server_id
            if raw.timestamp:
                context.ts_sec = raw.timestamp
            self._raw = raw
            handler(raw)
            context.last_end = (raw.file, raw.end_pos)
            return
        if isinstance(event, HeartbeatLogEvent):
            if self.metrics is not None:
                self.metrics.streaming.on_idle()
            self._raw = None
            if not self.context.in_transaction():
                self.signals.on_commit()  # read.only: an idle stream has passed every watermark it will
            self.emitter.tick()
            return
        if isinstance(event, RotateEvent):
            if self.metrics is not None:
                self.metrics.connected = True  # sent first on every (re)connect
            self.file = event.next_binlog
            self.context.rotate(raw, event.next_binlog, int(event.position))
            return
        if raw.end_pos == 0 or isinstance(event, FormatDescriptionEvent):
            return  # artificial events sent at the start of a dump
        context = self.context
        context.on_event(raw)
        handler = self._handlers_by_type.get(raw.event_type) or self._handlers.get(type(event))
        self._raw = raw
        if statement is not None:
            self._on_query(raw, statement)
        elif handler is not None:
            handler(raw)
        else:
            if not context.skip_events:
                problem = unreadable_event(event, raw.event_type, self.dispatcher.is_captured)
                if problem is not None:
                    self.guard.reject(problem, f"{raw.file}:{raw.start_pos}")
            context.count()
            if not context.in_transaction():
                context.advance_restart(raw)
        context.event_done(raw)

    def _commit(self, raw: RawEvent) -> None:
        self.context.commit(raw)
        offset = self.dispatcher.dispatch_transaction_end(raw.timestamp * 1000, self.offset())
        self.emitter.advance(offset)
        self.signals.on_commit()
        self._apply_reposition()  # a set-binlog-position signalled in this transaction

    def _on_gtid(self, raw: RawEvent) -> None:
        self._start_gtid(raw, raw.event.gtid)
        if isinstance(raw.event, MariadbGtidEvent) and not raw.event.flags & _FL_STANDALONE:
            self._transaction_started(raw)  # MariaDB has no BEGIN query: this GTID event starts it

    def _on_tagged_gtid(self, raw: RawEvent) -> None:
        """MySQL 8.3+ GTID_TAGGED_LOG_EVENT: a GTID event whose GTID is ``uuid:tag:gno``."""
        try:
            gtid = decode_tagged_gtid(library_event_body(raw.event)).gtid
        except GtidEventError as exc:
            raise GtidEventError(f"binlog event at {raw.file}:{raw.start_pos}: {exc}") from None
        self._start_gtid(raw, gtid)

    def _start_gtid(self, raw: RawEvent, gtid: str) -> None:
        txn = self.context.begin(raw)
        txn.gtid = gtid
        if self.gtid_filter is not None:
            txn.filtered = not self.gtid_filter(GtidSet.source_of(gtid))
        self.context.count()

    def _transaction_started(self, raw: RawEvent) -> None:
        """BEGIN metadata record (the offset includes the begin event itself, so a restart from it
        does not replay the begin; a replayed begin of the restored transaction emits nothing)."""
        if self.dispatcher.transactions is None:
            return  # provide.transaction.metadata is off: no BEGIN record, no offset needed
        txn = self.context.txn
        assert txn is not None
        txn_id = txn.gtid or non_gtid_transaction_id(raw.file, raw.start_pos)
        self.dispatcher.dispatch_transaction_begin(txn_id, raw.timestamp * 1000, self.offset())

    def _on_query(self, raw: RawEvent, statement: QueryStatement) -> None:
        event = raw.event
        sql = statement.sql
        upper = statement.keyword
        context = self.context
        if upper == "BEGIN" or upper.startswith("XA START"):
            txn = context.txn or context.begin(raw)
            txn.thread = int(event.slave_proxy_id)
            context.count()
            if upper == "BEGIN":  # Debezium ignores XA statements
                self._transaction_started(raw)
            return
        if upper.startswith(("SAVEPOINT ", "ROLLBACK TO ")) and context.in_transaction():
            # Neither ends the transaction: the buffer (connector.sources.transaction_buffer) has
            # dropped what a ROLLBACK TO undid, or stopped. Not a schema change either (Debezium's
            # DDL path records ROLLBACK TO as one without table changes: test_golden_modes).
            context.count()
            return
        if upper in ("COMMIT", "ROLLBACK") or upper.startswith("XA COMMIT") or upper.startswith("XA END"):
            context.count()
            if upper.startswith("XA END"):
                return
            self._commit(raw)
            return
        if not context.skip_events:
            database = event.schema.decode() if isinstance(event.schema, bytes) else str(event.schema or "")
            problem = statement_problem(sql, database or None, self.dispatcher.is_captured)
            if problem is not None:
                self.guard.reject(problem, f"{raw.file}:{raw.start_pos}")
                context.count()
                if not context.in_transaction():
                    context.advance_restart(raw)
                return
        self._on_ddl(raw, sql)

    def _on_ddl(self, raw: RawEvent, sql: str) -> None:
        event = raw.event
        database = event.schema.decode() if isinstance(event.schema, bytes) else str(event.schema or "")
        context = self.context
        txn = context.txn or context.begin(raw)
        if context.skip_events:
            # Already applied before the restart (cannot normally happen: DDL commits at once).
            context.count()
            self._commit(raw)
            return
        history_position = context.offset()
        where = context.position(raw)
        context.count()
        commit_offset = context.offset_after_commit(raw, None if txn.filtered else txn.gtid)
        statements = self.dispatcher.dispatch_schema_change(
            sql, database or None, history_position, where, commit_offset
        )
        changed = [c.id for s in statements for c in s.table_changes] + [
            c.previous_id for s in statements for c in s.table_changes if c.previous_id is not None
        ]
        if changed:
            # A chunk of an incremental snapshot read in the old structure may wait for its window.
            self.signals.on_schema_change(changed)
        self._commit(raw)

    def _on_xid(self, raw: RawEvent) -> None:
        self.context.count()
        self._commit(raw)

    def _on_table_map(self, raw: RawEvent) -> None:
        # One before every rows event: counted as every event without a handler of its own is
        # (the guard has nothing to say of a table map), without asking the guard.
        context = self.context
        context.count()
        if context.txn is None:
            context.advance_restart(raw)

    def _on_rows_query(self, raw: RawEvent) -> None:
        txn = self.context.txn
        if txn is not None and self.include_query:
            txn.query = raw.event.query
        self.context.count()

    def _on_annotate_rows(self, raw: RawEvent) -> None:
        # MariaDB sends these only when asked for (include.query, see connector.binlog.server_stream), so they are
        # not counted in the offset's ``event``: a restart with include.query toggled still skips the
        # right events.
        txn = self.context.txn
        if txn is not None and self.include_query:
            statement = raw.event.sql_statement
            txn.query = (
                statement.decode("utf-8", "replace") if isinstance(statement, bytes) else str(statement)
            )

    def _on_rows(self, raw: RawEvent) -> None:
        event = raw.event
        context = self.context
        txn = context.txn
        if context.skip_events or (self.filter_dml and txn is not None and txn.filtered):
            context.count()
            return
        names = (event.schema, event.table)
        table_id = self._table_ids.get(names)
        if table_id is None:
            table_id = self._table_ids[names] = TableId(str(event.schema), str(event.table))
        op = _OPS[type(event)]
        if self.dispatcher.is_captured(table_id):
            problem = incomplete_image(event, table_id, blobs_left_out=self._left_out is not None)
            if problem is not None:
                self.guard.reject(problem, f"{raw.file}:{raw.start_pos}")
                context.count()
                return
        skip = context.take_skipped_rows()
        if table_id == self.signals.table:
            self._on_signal_table_rows(raw, table_id, op, skip)
            return

        where = context.position(raw)

        def read_rows(schema: TableSchema) -> list[tuple[Any, Any]]:
            decoder = self._decoder(schema)
            self.dispatcher.check_width(
                table_id, len(schema.table.columns), decoder.image_width(event), where
            )
            try:
                return decoder.payload_rows(event, op == "u", after=op == "c")
            except PartialJsonError as exc:
                raise PartialJsonError(f"binlog event at {raw.file}:{raw.start_pos}: {exc}") from None

        self.dispatcher.dispatch_rows(
            table_id,
            op,
            read_rows,
            where,
            context.offset(),
            form=RowForm.BINLOG_PAYLOAD,
            first_row=skip,
        )
        context.count()

    def _on_signal_table_rows(self, raw: RawEvent, table_id: TableId, op: str, skip: int) -> None:
        """The signal table's rows: signals and window markers act first (Debezium emits the rows a
        closing window releases before the marker's own record), then the rows are dispatched."""
        table = self.dispatcher.table(table_id)
        if table is None:
            self.dispatcher.dispatch_rows(  # no structure known: the dispatcher reports it
                table_id, op, lambda _s: [], self.context.position(raw), self.offset(), form=RowForm.BINLOG
            )
            self.context.count()
            return
        rows = self._decoder(self.dispatcher.table_schema(table)).rows(raw.event, op == "u")
        images = rows if op != "c" else [(None, image) for image, _ in rows]
        self.signals.on_signal_rows(op, images, first_row=skip)
        self.dispatcher.dispatch_rows(
            table_id,
            op,
            lambda _s: images,
            self.context.position(raw),
            self.offset(),
            form=RowForm.BINLOG,
            first_row=skip,
        )
        self.context.count()

    def _decoder(self, schema: TableSchema) -> BinlogRowDecoder:
        cached = self._decoders.get(id(schema))
        if cached is None or cached[0] is not schema:
            cached = (schema, BinlogRowDecoder(schema, self._left_out))
            self._decoders[id(schema)] = cached
        return cached[1]
