"""The snapshot source's side of the dispatcher: snapshot rows and statements become events.

``snapshot`` reads rows under the chosen lock and hands them to a ``SnapshotListener``; this listener
dispatches them through the one ``EventDispatcher`` (filter, structure, convert with the snapshot
converters, build, emit) into a hold-back buffer in front of the engine's delivery.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

from connector.delivery.batches import Delivery
from connector.dispatch.dispatcher import EventDispatcher, RowForm
from connector.dispatch.schema_state import SchemaState
from connector.metrics import ConnectorMetrics
from connector.notifications import NotificationService
from connector.notifications.snapshots import InitialSnapshotNotifier
from connector.records.builder import EventBuilder, SourcePosition
from connector.records.filters import TableFilter
from connector.sources.offset_context import BinlogOffsetContext
from mysql_cdc_base.position import SNAPSHOT_INITIAL, BinlogPosition, SourceOffset
from mysql_cdc_base.records import ChangeRecord, RecordKind
from mysql_cdc_base.table_id import TableId


class EngineParts(Protocol):
    """What the snapshot listener uses of the engine."""

    builder: EventBuilder
    filter: TableFilter
    delivery: Delivery

    @property
    def schema(self) -> SchemaState | None: ...


class SnapshotEmitter:
    """Receives the snapshot's schema statements and rows and dispatches them as events.

    Implements ``snapshot.listener.SnapshotListener``; every row and statement goes through an
    ``EventDispatcher`` whose emitter is this object. Like Debezium's buffering receiver it holds
    back the most recent records, so that the very last snapshot record (even a schema change, or
    the last row of a table that is not the last one, when later tables are empty) is rewritten to
    ``source.snapshot = "last"`` with the completed offset.
    """

    def __init__(
        self,
        engine: EngineParts,
        notifications: NotificationService | None = None,
        planned: Callable[[], Sequence[TableId]] = tuple,
        captured: Callable[[], Sequence[TableId]] = tuple,
    ) -> None:
        """``notifications`` gets the initial snapshot's notifications; ``planned`` answers the
        tables they report on (Debezium's leave the signal table out), ``captured`` every captured
        table (TABLE_SCAN_COMPLETED's ``data_collections``)."""
        self.engine = engine
        enabled = notifications is not None and notifications.enabled
        self.notifier = InitialSnapshotNotifier(notifications) if notifications and enabled else None
        # Notification records go between the snapshot's records (the sink channel).
        self._records_between = bool(notifications and notifications.sends_records)
        self._planned = planned
        self._captured = captured
        assert engine.schema is not None
        self.metrics: ConnectorMetrics | None = getattr(engine, "metrics", None)
        self.dispatcher = EventDispatcher(
            engine.builder,
            engine.filter,
            engine.schema,
            self,
            metrics=self.metrics.snapshot if self.metrics is not None else None,
        )
        self.context: BinlogOffsetContext | None = None  # once the snapshot's position is known
        self._row_offset: SourceOffset | None = None  # while the snapshot runs
        self.ts_ms = 0
        self.rows = 0
        self._held: list[ChangeRecord] = []

    # -- Emitter: hold back the newest records --------------------------------------------------------
    def emit(self, records: list[ChangeRecord]) -> None:
        if not records:
            return
        held, self._held = self._held, records
        if held:
            self.engine.delivery.emit(held)

    def _release_schema_changes(self) -> None:
        """Delivers held-back schema changes before a table's IN_PROGRESS notification (a table's
        rows follow, so none of them is the snapshot's last record; Debezium holds back rows only)."""
        if not self._records_between:
            return
        if self._held and all(r.kind is RecordKind.SCHEMA_CHANGE for r in self._held):
            held, self._held = self._held, []
            self.engine.delivery.emit(held)

    def advance(self, offset: SourceOffset) -> None:
        self.engine.delivery.advance(offset)

    def tick(self) -> None:
        self.engine.delivery.tick()

    # -- SnapshotListener ----------------------------------------------------------------------------
    def _offset(self, done: bool = False) -> SourceOffset:
        assert self.context is not None
        return self.context.snapshot_offset(None if done else SNAPSHOT_INITIAL)

    def _where(self, marker: str | None) -> SourcePosition:
        assert self.context is not None
        return self.context.snapshot_position(marker, self.ts_ms)

    def on_position(self, position: BinlogPosition) -> None:
        self.context = BinlogOffsetContext.at_snapshot(position)
        self.ts_ms = int(time.time() * 1000)
        self._row_offset = self._offset()
        if self.notifier is not None:
            self.notifier.started()

    def on_schema_statement(self, ddl: str, database: str | None) -> None:
        offset = self._row_offset
        assert offset is not None
        self.dispatcher.dispatch_schema_change(ddl, database, offset, self._where("true"), offset)

    def on_table_start(self, table_id: TableId, estimated_rows: int | None, source_ts_ms: int) -> None:
        self.ts_ms = source_ts_ms
        if self.notifier is not None and table_id in self._planned():
            self._release_schema_changes()
            self.notifier.table_in_progress(table_id, self._planned())

    def on_row(self, table_id: TableId, values: tuple[Any, ...], marker: str) -> None:
        assert self._row_offset is not None
        if self.dispatcher.dispatch_rows(
            table_id,
            "r",
            lambda _schema: ((None, values),),
            self._where(marker),
            self._row_offset,
            form=RowForm.SNAPSHOT,
            number_rows=False,
        ):
            self.rows += 1

    def on_table_end(self, table_id: TableId, rows: int) -> None:
        if self.metrics is not None:
            self.metrics.tables_done += 1
        if self.notifier is not None and table_id in self._planned():
            self.notifier.table_completed(table_id, rows, self._captured())

    def on_complete(self) -> None:
        pass

    def finish(self) -> SourceOffset:
        """Deliver the held-back records, the last one marked ``last``; returns the final offset."""
        offset = self._offset(done=True)
        held, self._held = self._held, []
        if held:
            *head, last = held
            value = last.value
            if isinstance(value, dict) and isinstance(value.get("source"), dict):
                value = {**value, "source": {**value["source"], "snapshot": "last"}}
            self.engine.delivery.emit([*head, replace(last, value=value, offset=offset)])
        if self.notifier is not None:
            self.notifier.completed()
        self.engine.delivery.advance(offset)
        self.engine.delivery.flush()
        return offset

    def aborted(self) -> None:
        if self.notifier is not None:
            self.notifier.aborted()
