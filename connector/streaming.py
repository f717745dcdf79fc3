"""Streaming: binlog events → change records, with Debezium's restart bookkeeping.

Offsets follow Debezium (reference 3b): outside a transaction the restart point is the end of the
last committed event; inside one it is the transaction's first event (the GTID event, or BEGIN
without GTIDs) plus ``event`` = events of the transaction already fully processed and ``row`` = rows
of the current rows event already emitted. A restart (after a crash, or a dropped connection)
re-reads the transaction from its start, replays the bookkeeping of the first ``event`` events
without emitting, skips ``row`` rows, and continues: nothing lost, nothing repeated.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pymysqlreplication.event import (
    FormatDescriptionEvent,
    GtidEvent,
    HeartbeatLogEvent,
    MariadbAnnotateRowsEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    RowsQueryLogEvent,
    XidEvent,
)
from pymysqlreplication.gtid import GtidSet
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from connector.binlog import BinlogReader, RawEvent, ReplicationLost, StreamDropped, describe_cause
from connector.config import ConnectorConfig
from connector.converters import restore_empty_sets
from connector.errors import ReplicationError
from connector.events import EventBuilder, SourcePosition, topic_name
from connector.filters import TableFilter
from connector.heartbeat import Heartbeat
from connector.schema_state import SchemaState
from connector.transactions import TransactionMetadata, non_gtid_transaction_id
from ddl.model import TableId
from sink.records import ChangeRecord

log = logging.getLogger(__name__)


class InconsistentSchemaError(ReplicationError):
    pass


class Emitter(Protocol):
    def emit(self, records: list[ChangeRecord]) -> None: ...

    def advance(self, offset: Mapping[str, Any]) -> None: ...

    def tick(self) -> None: ...


class GtidTracker:
    """The set of completed GTIDs, in the server flavour's own notation."""

    def __init__(self, flavor: str, initial: str | None) -> None:
        self.flavor = flavor
        self._mysql: GtidSet | None = None
        self._mariadb: dict[int, str] = {}
        if flavor == "mysql":
            self._mysql = GtidSet(initial) if initial else None
        elif initial:
            for part in initial.split(","):
                part = part.strip()
                if part:
                    self._mariadb[int(part.split("-")[0])] = part

    def add(self, gtid: str) -> None:
        if self.flavor == "mysql":
            self._mysql = (self._mysql + GtidSet(gtid)) if self._mysql is not None else GtidSet(gtid)
        else:
            self._mariadb[int(gtid.split("-")[0])] = gtid

    def text(self) -> str | None:
        if self.flavor == "mysql":
            return str(self._mysql).replace("\n", "") if self._mysql is not None else None
        return ",".join(self._mariadb[d] for d in sorted(self._mariadb)) or None


_OPS = {WriteRowsEvent: "c", UpdateRowsEvent: "u", DeleteRowsEvent: "d"}
# MariaDB GTID event flag: a statement without BEGIN/COMMIT (DDL), not a transaction start.
_FL_STANDALONE = 0x01
# Rotate, format description and heartbeat: sent on every (re)connect, they prove nothing.
_CONTROL_EVENT_TYPES = frozenset({0x04, 0x0F, 0x1B})


@dataclass
class _Transaction:
    file: str
    pos: int
    gtid: str | None = None
    thread: int | None = None
    events_done: int = 0
    query: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


class StreamingSource:
    def __init__(
        self,
        config: ConnectorConfig,
        flavor: str,
        schema: SchemaState,
        builder: EventBuilder,
        table_filter: TableFilter,
        emitter: Emitter,
        offset: Mapping[str, Any],
    ) -> None:
        self.config = config
        self.schema = schema
        self.builder = builder
        self.filter = table_filter
        self.emitter = emitter
        self.restart_file = str(offset["file"])
        self.restart_pos = int(offset["pos"])
        self.skip_events = int(offset.get("event", 0) or 0)
        self.skip_rows = int(offset.get("row", 0) or 0)
        self.gtids = GtidTracker(flavor, offset.get("gtids"))
        self.server_id = int(offset.get("server_id", 0) or 0)
        self.ts_sec = int(offset.get("ts_sec", 0) or 0)
        self.include_query = config.get_bool("include.query")
        self.inconsistent_mode = config.get_choice("inconsistent.schema.handling.mode")
        self.max_attempts = config.get_int("connect.max.attempts", 5) or 5
        self.heartbeat_s = (config.get_int("poll.interval.ms", 500) or 500) / 1000
        # Debezium heartbeats (heartbeat.interval.ms), not the server's binlog heartbeat events.
        self.heartbeat = Heartbeat.from_config(config)
        self.txmeta: TransactionMetadata | None = None
        if config.get_bool("provide.transaction.metadata"):
            self.txmeta = TransactionMetadata.from_offset(
                topic_name(
                    config.topic_prefix, builder.delimiter, config.get("topic.transaction") or "transaction"
                ),
                offset,
            )
        self.txn: _Transaction | None = None
        self.file = self.restart_file
        self.last_end: tuple[str, int] = (self.restart_file, self.restart_pos)
        self._reader: BinlogReader | None = None
        self._events: Iterator[RawEvent] | None = None
        self._handlers: dict[type, Callable[[RawEvent], None]] = {
            GtidEvent: self._on_gtid,
            MariadbGtidEvent: self._on_gtid,
            QueryEvent: self._on_query,
            XidEvent: self._on_xid,
            WriteRowsEvent: self._on_rows,
            UpdateRowsEvent: self._on_rows,
            DeleteRowsEvent: self._on_rows,
            RowsQueryLogEvent: self._on_rows_query,
            MariadbAnnotateRowsEvent: self._on_annotate_rows,
        }

    # -- offsets ----------------------------------------------------------------------------------
    def offset(self, row: int = 0) -> dict[str, Any]:
        out: dict[str, Any] = {"ts_sec": self.ts_sec}
        if self.txn is not None:
            out["file"], out["pos"] = self.txn.file, self.txn.pos
        else:
            out["file"], out["pos"] = self.restart_file, self.restart_pos
        gtids = self.gtids.text()
        if gtids:
            out["gtids"] = gtids
        if self.txn is not None and self.txn.events_done:
            out["event"] = self.txn.events_done
        if row:
            out["row"] = row
        if self.server_id:
            out["server_id"] = self.server_id
        txmeta = self.txmeta
        if txmeta is not None and txmeta.id is not None:
            txmeta.store(out)
        return out

    # -- the loop ---------------------------------------------------------------------------------
    def run(self, stopping: Callable[[], bool]) -> None:
        """Process events until ``stopping()`` is true (checked after every event and heartbeat)."""
        attempt = 0
        while not stopping():
            if self._events is None:
                self._open()
            assert self._events is not None
            heartbeat = self.heartbeat
            try:
                for raw in self._events:
                    self._handle(raw)
                    # Debezium checks the heartbeat timer after every event (idle ticks included);
                    # not while replaying skipped events, whose offsets lag behind the stored one.
                    if heartbeat is not None and not self.skip_events and heartbeat.due():
                        self.emit_heartbeat()
                    if raw.end_pos and raw.event_type not in _CONTROL_EVENT_TYPES:
                        attempt = 0  # a real event arrived: the connection works again
                    if stopping():
                        return
            except StreamDropped as exc:
                self._events = None
                attempt += 1
                if attempt > self.max_attempts:
                    raise ReplicationLost(
                        f"lost the replication connection to {self.config.hostname}:{self.config.port} "
                        f"and could not restore it after {self.max_attempts} attempts (connect.max."
                        f"attempts); last error: {describe_cause(self.config, exc.cause)}. The stored "
                        "offset is intact: restart the connector once the server is reachable"
                    ) from None
                delay = min(10.0, 0.2 * 2 ** (attempt - 1))
                log.warning(
                    "replication connection lost (%s); reconnecting in %.1fs (attempt %d of %d)",
                    describe_cause(self.config, exc.cause),
                    delay,
                    attempt,
                    self.max_attempts,
                )
                time.sleep(delay)

    def _open(self) -> None:
        # Reconnect at the restart point: the current transaction's start, skipping what is done.
        if self.txn is not None:
            self.skip_events, self.skip_rows = self.txn.events_done, 0
            file, pos = self.txn.file, self.txn.pos
            self.txn = None
        else:
            file, pos = self.restart_file, self.restart_pos
        self._reader = BinlogReader(self.config, file, pos, heartbeat_s=self.heartbeat_s)
        self._events = self._reader.events()
        self.file = file

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
        self._events = None
        if self.heartbeat is not None:
            self.heartbeat.close()

    def emit_heartbeat(self) -> None:
        """A heartbeat record with the current offset now (and the action query), if heartbeats are
        on; the engine also calls this right after a snapshot completes, as Debezium does."""
        if self.heartbeat is not None:
            records = self.heartbeat.beat(self.offset())
            if records:
                self.emitter.emit(records)

    # -- event handling ----------------------------------------------------------------------------
    def _handle(self, raw: RawEvent) -> None:
        event = raw.event
        if isinstance(event, HeartbeatLogEvent):
            self.emitter.tick()
            return
        if isinstance(event, RotateEvent):
            self.file = event.next_binlog
            if self.txn is None:
                self.restart_file, self.restart_pos = event.next_binlog, int(event.position)
            return
        if raw.end_pos == 0 or isinstance(event, FormatDescriptionEvent):
            return  # artificial events sent at the start of a dump
        self.server_id = raw.server_id
        if raw.timestamp:
            self.ts_sec = raw.timestamp
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(raw)
        else:
            self._count()
            if self.txn is None:
                self._advance_restart(raw)
        self.last_end = (raw.file, raw.end_pos)

    def _count(self) -> None:
        if self.txn is not None:
            self.txn.events_done += 1
            if self.skip_events:
                self.skip_events -= 1

    def _advance_restart(self, raw: RawEvent) -> None:
        self.restart_file, self.restart_pos = raw.file, raw.end_pos

    def _begin(self, raw: RawEvent) -> None:
        self.txn = _Transaction(raw.file, raw.start_pos)

    def _commit(self, raw: RawEvent) -> None:
        txn, self.txn = self.txn, None
        if txn is not None and txn.gtid:
            self.gtids.add(txn.gtid)
        self._advance_restart(raw)
        self.skip_events = self.skip_rows = 0
        end = self.txmeta.end(raw.timestamp * 1000) if self.txmeta is not None else None
        offset = self.offset()
        if end is not None:
            # Its offset is the one after the commit: storing it must not replay the transaction
            # (Debezium's END offset still points into it, so a crash right there repeats the END).
            assert self.txmeta is not None
            self.emitter.emit([self.txmeta.record(end, offset)])
        self.emitter.advance(offset)

    def _on_gtid(self, raw: RawEvent) -> None:
        self._begin(raw)
        assert self.txn is not None
        self.txn.gtid = raw.event.gtid
        self._count()
        if (
            self.txmeta is not None
            and isinstance(raw.event, MariadbGtidEvent)
            and not raw.event.flags & _FL_STANDALONE
        ):
            self._transaction_started(raw)  # MariaDB has no BEGIN query: this GTID event starts it

    def _transaction_started(self, raw: RawEvent) -> None:
        """BEGIN metadata record (the offset includes the begin event itself, so a restart from it
        does not replay the begin; a replayed begin of the restored transaction emits nothing)."""
        assert self.txmeta is not None and self.txn is not None
        txn_id = self.txn.gtid or non_gtid_transaction_id(raw.file, raw.start_pos)
        record = self.txmeta.begin(txn_id, raw.timestamp * 1000, self.offset())
        if record is not None:
            self.emitter.emit([record])

    def _on_query(self, raw: RawEvent) -> None:
        event = raw.event
        sql = event.query.strip()
        upper = sql.upper()
        if upper == "BEGIN" or upper.startswith("XA START"):
            if self.txn is None:
                self._begin(raw)
            assert self.txn is not None
            self.txn.thread = int(event.slave_proxy_id)
            self._count()
            if self.txmeta is not None and upper == "BEGIN":  # Debezium ignores XA statements
                self._transaction_started(raw)
            return
        if upper in ("COMMIT", "ROLLBACK") or upper.startswith("XA COMMIT") or upper.startswith("XA END"):
            self._count()
            if upper.startswith("XA END"):
                return
            self._commit(raw)
            return
        self._on_ddl(raw, sql)

    def _on_ddl(self, raw: RawEvent, sql: str) -> None:
        event = raw.event
        database = event.schema.decode() if isinstance(event.schema, bytes) else str(event.schema or "")
        if self.txn is None:
            self._begin(raw)
        assert self.txn is not None
        if self.skip_events:
            # Already applied before the restart (cannot normally happen: DDL commits at once).
            self._count()
            self._commit(raw)
            return
        history_position = self.offset()
        where = self._where(raw, 0)
        self._count()
        gtid = self.txn.gtid
        commit_offset = self._offset_after_commit(raw, gtid)
        records, statements = self.schema.apply(sql, database or None, history_position, where, commit_offset)
        for table_id in self.schema.truncated_tables(statements):
            table = self.schema.model.table(table_id)
            if table is not None and self.filter.table_captured(table_id):
                records.extend(
                    self.builder.truncate_record(self.builder.table_schema(table), where, commit_offset)
                )
        if records:
            self.emitter.emit(records)
        self._commit(raw)

    def _offset_after_commit(self, raw: RawEvent, gtid: str | None) -> dict[str, Any]:
        saved = (self.txn, self.restart_file, self.restart_pos)
        tracker_text = self.gtids.text()
        self.txn = None
        self.restart_file, self.restart_pos = raw.file, raw.end_pos
        offset = self.offset()
        if gtid:
            probe = GtidTracker(self.gtids.flavor, tracker_text)
            probe.add(gtid)
            offset["gtids"] = probe.text()
        self.txn, self.restart_file, self.restart_pos = saved
        return offset

    def _on_xid(self, raw: RawEvent) -> None:
        self._count()
        self._commit(raw)

    def _on_rows_query(self, raw: RawEvent) -> None:
        if self.txn is not None and self.include_query:
            self.txn.query = raw.event.query
        self._count()

    def _on_annotate_rows(self, raw: RawEvent) -> None:
        # MariaDB sends these only when asked for (include.query, see connector.binlog), so they are
        # not counted in the offset's ``event``: a restart with include.query toggled still skips the
        # right events.
        if self.txn is not None and self.include_query:
            statement = raw.event.sql_statement
            self.txn.query = (
                statement.decode("utf-8", "replace") if isinstance(statement, bytes) else str(statement)
            )

    def _where(self, raw: RawEvent, row: int) -> SourcePosition:
        txn = self.txn
        return SourcePosition(
            file=raw.file,
            pos=raw.start_pos,
            server_id=raw.server_id,
            ts_ms=raw.timestamp * 1000,
            gtid=txn.gtid if txn else None,
            row=row,
            thread=txn.thread if txn else None,
            query=txn.query if txn else None,
        )

    def _on_rows(self, raw: RawEvent) -> None:
        event = raw.event
        if self.skip_events:
            self._count()
            return
        table_id = TableId(str(event.schema), str(event.table))
        if not self.filter.table_captured(table_id):
            self._count()
            return
        table = self.schema.model.table(table_id)
        if table is None:
            self._inconsistent(raw, f"no structure is known for table {table_id}")
            self._count()
            return
        schema = self.builder.table_schema(table)
        op = _OPS[type(event)]
        # The library decodes text with the charset name from the binlog metadata, which it maps
        # poorly (e.g. MySQL latin1 is cp1252); give it the codec our model says is right.
        library_columns = event.columns
        for index, encoding in schema.binlog_encodings:
            if index < len(library_columns):
                library_columns[index].character_set_name = encoding
        rows = event.rows
        count = len(rows)
        skip, self.skip_rows = self.skip_rows, 0
        txmeta = self.txmeta
        for index in range(skip, count):
            row = rows[index]
            where = self._where(raw, index)
            offset = self.offset(row=index + 1)
            before: dict[str, Any] | None
            after: dict[str, Any] | None
            if op == "u":
                # An empty SET arrives as None; none_sources tells it from NULL (converters).
                restore_empty_sets(row["before_values"], row["before_none_sources"])
                restore_empty_sets(row["after_values"], row["after_none_sources"])
                before_values, after_values = (
                    list(row["before_values"].values()),
                    list(row["after_values"].values()),
                )
                self._check_width(raw, table_id, len(table.columns), len(after_values))
                before = schema.value_from_binlog(before_values)
                after = schema.value_from_binlog(after_values)
            else:
                restore_empty_sets(row["values"], row["none_sources"])
                values = list(row["values"].values())
                self._check_width(raw, table_id, len(table.columns), len(values))
                image = schema.value_from_binlog(values)
                before, after = (image, None) if op == "d" else (None, image)
            records = self.builder.change_records(schema, op, before, after, where, offset)
            if records:
                if txmeta is not None:
                    txmeta.stamp(records, table_id, offset)
                self.emitter.emit(records)
        self._count()

    def _check_width(self, raw: RawEvent, table_id: TableId, expected: int, actual: int) -> None:
        if expected != actual:
            raise InconsistentSchemaError(
                f"row event for {table_id} at {raw.file}:{raw.start_pos} has {actual} columns but the "
                f"known structure has {expected}: the schema history is out of step with the binlog. "
                "Re-create it with snapshot.mode=recovery"
            )

    def _inconsistent(self, raw: RawEvent, message: str) -> None:
        text = (
            f"{message} (row event at {raw.file}:{raw.start_pos}); the schema history lacks its DDL. "
            "Rebuild it with snapshot.mode=recovery, or set inconsistent.schema.handling.mode=warn "
            "to skip such rows"
        )
        if self.inconsistent_mode == "fail":
            raise InconsistentSchemaError(text)
        if self.inconsistent_mode == "warn":
            log.warning(text)
