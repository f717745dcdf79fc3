"""The event dispatcher: the one way from a source's rows to emitted change records.

After Debezium's ``EventDispatcher``: every source (the binlog stream, the snapshot listener, the
fake connector) hands it rows with their source position and offset, and it alone

1. filters the table (``table.include.list`` & co.),
2. looks up the table's current structure and its prepared ``TableSchema``,
3. converts the row (binlog values, snapshot values, or images already converted),
4. builds the complete records (``EventBuilder``; the ``transaction`` block and offset are decided
   before construction, never patched afterwards),
5. emits them to the source's ``Emitter`` (delivery, or the snapshot's hold-back buffer).

Schema changes, truncates, transaction boundaries and heartbeats go through it too, so a feature
that touches every event (metrics, signals, incremental-snapshot de-duplication) has one place to
hook in. Sources differ only in where rows and positions come from.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any, Protocol

from connector.dispatch.schema_state import SchemaState
from connector.errors import ReplicationError
from connector.metrics import ContextMetrics
from connector.records.builder import EventBuilder, SourcePosition, TableSchema
from connector.records.filters import TableFilter
from connector.records.transactions import TransactionMetadata
from ddl.model import Table
from ddl.parsing.parser import ParsedStatement
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord
from mysql_cdc_base.table_id import TableId


class Heartbeat(Protocol):
    """A heartbeat as the dispatcher sends it (the sources' ``Heartbeat``): the records of one beat
    for an offset. A protocol, so that dispatching does not import the sources that drive it."""

    def beat(self, offset: SourceOffset | None) -> list[ChangeRecord]: ...


log = logging.getLogger(__name__)


class InconsistentSchemaError(ReplicationError):
    """A row arrived for a table whose structure the schema history does not know, or which does
    not fit the known structure."""


class EventProcessingError(ReplicationError):
    """A binlog event whose rows cannot be decoded or converted (event.processing.failure.handling.mode=fail)."""


class Emitter(Protocol):
    def emit(self, records: list[ChangeRecord]) -> None: ...

    def advance(self, offset: SourceOffset) -> None: ...

    def tick(self) -> None: ...


class RowForm(StrEnum):
    """What a source's row values are, which decides how the dispatcher converts them."""

    BINLOG = "binlog"  # as the row decoder yields them (connector.records.conversion, binlog side)
    # Binlog images the row decoder has converted as it read them (BinlogRowDecoder.payload_rows;
    # the source has checked their width): decoding errors are handled as for BINLOG.
    BINLOG_PAYLOAD = "binlog payload"
    SNAPSHOT = "snapshot"  # as pymysql returns them with SNAPSHOT_CONVERSIONS
    CONVERTED = "converted"  # payload images already converted by the table's converters (the fake)


# Row form -> the TableSchema property giving the function that converts one image of that form
# (a dispatch table).
_CONVERT: dict[RowForm, str | None] = {
    RowForm.BINLOG: "binlog_image_converter",
    RowForm.SNAPSHOT: "snapshot_image_converter",
    RowForm.BINLOG_PAYLOAD: None,
    RowForm.CONVERTED: None,
}
_FROM_BINLOG = frozenset((RowForm.BINLOG, RowForm.BINLOG_PAYLOAD))

# One row's (before, after) images in a source's row form; None where the operation has none.
RowImages = tuple[Any, Any]
ReadRows = Callable[[TableSchema], Sequence[RowImages]]


class EventDispatcher:
    def __init__(
        self,
        builder: EventBuilder,
        table_filter: TableFilter,
        schema: SchemaState,
        emitter: Emitter,
        transactions: TransactionMetadata | None = None,
        inconsistent_mode: str = "fail",
        failure_mode: str = "fail",
        metrics: ContextMetrics | None = None,
    ) -> None:
        self.failure_mode = failure_mode
        self.metrics = metrics
        self.builder = builder
        self.filter = table_filter
        self.schema = schema
        self.emitter = emitter
        self.transactions = transactions
        self.inconsistent_mode = inconsistent_mode
        self._captured: dict[TableId, bool] = {}
        # Sees every dispatched row's converted images before they are built into records: the
        # incremental snapshot's window de-duplication (connector.sources.incremental).
        self.on_rows: Callable[[TableId, Sequence[RowImages]], None] | None = None
        # skip.messages.without.change (streaming updates only, as in Debezium).
        self.skip_unchanged = False

    # -- filter and structure ---------------------------------------------------------------------
    def table(self, table_id: TableId) -> Table | None:
        """The structure the schema history knows for ``table_id`` now (None: none)."""
        return self.schema.model.table(table_id)

    def table_schema(self, table: Table) -> TableSchema:
        """The record schemas and converters of ``table``'s structure (built once per structure)."""
        return self.builder.table_schema(table)

    def is_captured(self, table_id: TableId) -> bool:
        captured = self._captured.get(table_id)
        if captured is None:
            captured = self._captured[table_id] = self.filter.table_captured(table_id)
        return captured

    # -- data change events -----------------------------------------------------------------------
    def dispatch_rows(
        self,
        table_id: TableId,
        op: str,
        read_rows: ReadRows,
        where: SourcePosition,
        offset: SourceOffset,
        *,
        form: RowForm,
        first_row: int = 0,
        number_rows: bool = True,
    ) -> bool:
        """Dispatches the rows of one rows event (or one snapshot row): filter → structure →
        ``read_rows(table schema)`` → convert → build → emit. With ``number_rows`` each row gets
        ``source.row`` = its index and the offset ``row`` = rows done (Debezium's in-event restart
        point); rows before ``first_row`` were delivered before a restart and are skipped.
        Returns False when the table is not captured or its structure is unknown."""
        if not self.is_captured(table_id):
            if self.metrics is not None:
                self.metrics.filtered += 1
            return False
        table = self.schema.model.table(table_id)
        if table is None:
            self._inconsistent(f"no structure is known for table {table_id}", where)
            return False
        ts = self.builder.table_schema(table)
        method = _CONVERT[form]
        convert: Callable[[Any], dict[str, Any]] | None = getattr(ts, method) if method else None
        width = len(table.columns) if form is RowForm.BINLOG else None
        try:
            rows = read_rows(ts)
            images: list[RowImages] = []
            if convert is None and width is None:  # payloads already
                images = rows if not first_row and type(rows) is list else list(rows[first_row:])
            else:
                for index in range(first_row, len(rows)):
                    before, after = rows[index]
                    if width is not None:
                        self.check_width(table_id, width, len(before if after is None else after), where)
                    if convert is not None:
                        before = convert(before) if before is not None else None
                        after = convert(after) if after is not None else None
                    images.append((before, after))
        except InconsistentSchemaError:
            raise
        except Exception as exc:
            if form not in _FROM_BINLOG:
                raise
            if self.metrics is not None:
                self.metrics.erroneous += 1
            self._event_failed(table_id, where, exc)
            return True
        if self.on_rows is not None:
            self.on_rows(table_id, images)
        metrics = self.metrics
        if metrics is not None:
            metrics.on_rows(table_id, op, len(images), where.ts_ms)
        # One emit per rows event (Delivery still cuts its batches where they fill).
        if op == "u" and self.skip_unchanged and any(before == after for before, after in images):
            out = self._changed_rows_records(ts, images, where, offset, first_row, number_rows)
        else:
            out = self.builder.event_change_records(
                ts, op, images, where, offset, self.transactions, first_row=first_row, number_rows=number_rows
            )
        if out:
            self.emitter.emit(out)
        return True

    def _changed_rows_records(
        self,
        ts: TableSchema,
        images: Sequence[RowImages],
        where: SourcePosition,
        offset: SourceOffset,
        first_row: int,
        number_rows: bool,
    ) -> list[ChangeRecord]:
        """``skip.messages.without.change``: the records of the updated rows whose emitted columns
        changed (Debezium compares the value structs, after column filters and mappers); each keeps
        its row number in the event."""
        out: list[ChangeRecord] = []
        for number, image in enumerate(images):
            if image[0] == image[1]:
                if self.metrics is not None:
                    self.metrics.unchanged_skipped += 1
                continue
            out += self.builder.event_change_records(
                ts,
                "u",
                [image],
                where,
                offset,
                self.transactions,
                first_row=first_row + number,
                number_rows=number_rows,
            )
        return out

    def _event_failed(self, table_id: TableId, where: SourcePosition, exc: Exception) -> None:
        """``event.processing.failure.handling.mode`` for a binlog event whose rows cannot be decoded
        or converted: fail stops naming the position, warn logs it and skips the event, skip/ignore
        skip it silently."""
        text = (
            f"cannot decode or convert the rows of the binlog event for {table_id} at "
            f"{where.file}:{where.pos} ({type(exc).__name__}: {exc})"
        )
        if self.failure_mode == "fail":
            raise EventProcessingError(
                f"{text}. Set event.processing.failure.handling.mode=warn to log and skip such events"
            ) from exc
        if self.failure_mode == "warn":
            log.warning("%s; skipped (event.processing.failure.handling.mode=warn)", text)

    def check_width(self, table_id: TableId, expected: int, width: int, where: SourcePosition) -> None:
        """Stops when a rows event's images are ``width`` columns wide where the table's known
        structure has ``expected``."""
        if width != expected:
            raise InconsistentSchemaError(
                f"row event for {table_id} at {where.file}:{where.pos} has {width} columns but the "
                f"known structure has {expected}: the schema history is out of step with the binlog. "
                "Re-create it with snapshot.mode=recovery"
            )

    def _inconsistent(self, message: str, where: SourcePosition) -> None:
        text = (
            f"{message} (row event at {where.file}:{where.pos}); the schema history lacks its DDL. "
            "Rebuild it with snapshot.mode=recovery, or set inconsistent.schema.handling.mode=warn "
            "to skip such rows"
        )
        if self.inconsistent_mode == "fail":
            raise InconsistentSchemaError(text)
        if self.inconsistent_mode == "warn":
            log.warning(text)

    # -- schema changes -----------------------------------------------------------------------------
    def dispatch_schema_change(
        self,
        ddl: str,
        database: str | None,
        history_position: SourceOffset,
        where: SourcePosition,
        record_offset: SourceOffset | None,
    ) -> list[ParsedStatement]:
        """Applies one DDL statement's text to the schema (recording it in the history), emits its
        schema change records and, for TRUNCATE, the ``t`` events of the captured tables."""
        records, statements = self.schema.apply(ddl, database, history_position, where, record_offset)
        if self.metrics is not None and self.metrics.schema_history is not None and statements:
            self.metrics.schema_history.on_applied(ddl)
        for table_id in self.schema.truncated_tables(statements):
            table = self.schema.model.table(table_id)
            if table is not None and self.is_captured(table_id):
                ts = self.builder.table_schema(table)
                records.extend(self.builder.truncate_record(ts, where, record_offset))
        if records:
            self.emitter.emit(records)
        return statements

    # -- transaction boundaries and heartbeats ------------------------------------------------------
    def dispatch_transaction_begin(self, txn_id: str, ts_ms: int, offset: SourceOffset) -> None:
        if self.transactions is not None:
            record = self.transactions.begin(txn_id, ts_ms, offset)
            if record is not None:
                self.emitter.emit([record])

    def dispatch_transaction_end(self, ts_ms: int, offset: SourceOffset) -> SourceOffset:
        """The END record, with ``offset`` (the one after the commit) cleared of the finished
        transaction's context; returns that offset. Storing it does not replay the transaction
        (Debezium's END offset still points into it, so a crash there repeats the END)."""
        if self.metrics is not None:
            self.metrics.committed_transactions += 1
        if self.transactions is None:
            return offset
        value = self.transactions.end(ts_ms)
        offset = self.transactions.apply_to(offset.with_(transaction_id=None, collection_orders=()))
        if value is not None:
            self.emitter.emit([self.transactions.record(value, offset)])
        return offset

    def dispatch_heartbeat(self, heartbeat: Heartbeat, offset: SourceOffset | None) -> None:
        records = heartbeat.beat(offset)
        if records:
            self.emitter.emit(records)
