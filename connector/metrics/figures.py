"""Debezium's snapshot, streaming and schema-history metrics as Python objects.

The figures are Debezium's MBean attributes (``debezium.mysql:type=connector-metrics,
context=snapshot|streaming|schema-history,server=<topic.prefix>``) under the same names. The hot path
only bumps plain attributes of ``ContextMetrics`` (set by the dispatcher, the coordinator and the
delivery); everything derived — lag, queue capacity, table counts — is computed when read, so
metrics cost nothing between scrapes.
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mysql_cdc_base.table_id import TableId


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class ContextMetrics:
    """One Debezium metrics context (snapshot or streaming): counters bumped by the dispatcher."""

    context: str
    events_seen: int = 0
    creates: int = 0
    updates: int = 0
    deletes: int = 0
    filtered: int = 0
    erroneous: int = 0
    # skip.messages.without.change: updates skipped; -1 while the property is off (as Debezium's).
    unchanged_skipped: int = -1
    committed_transactions: int = 0
    # The last change seen, (op, table): formatted as LastEvent when the figures are read, not per
    # rows event (issue 41).
    last_change: tuple[str, TableId] | None = None
    last_event_wall_ms: int = 0  # when the last event was processed
    last_event_source_ms: int = 0  # the source timestamp of that event
    caught_up: bool = True  # nothing read is older than a server heartbeat
    rows_scanned: dict[TableId, int] = field(default_factory=dict)
    events_by_table: dict[TableId, int] = field(default_factory=dict)  # events/s per table
    schema_history: SchemaHistoryMetrics | None = None

    def on_rows(self, table: TableId, op: str, count: int, source_ts_ms: int) -> None:
        self.events_seen += count
        self.events_by_table[table] = self.events_by_table.get(table, 0) + count
        if op == "c":
            self.creates += count
        elif op == "u":
            self.updates += count
        elif op == "d":
            self.deletes += count
        if self.context == "snapshot":
            self.rows_scanned[table] = self.rows_scanned.get(table, 0) + count
        self.last_change = (op, table)
        self.last_event_wall_ms = _now_ms()
        self.last_event_source_ms = source_ts_ms
        self.caught_up = False

    @property
    def last_event(self) -> str:
        """LastEvent: the op and table of the last change seen ("" before any)."""
        return "" if self.last_change is None else f"{self.last_change[0]} {self.last_change[1]}"

    def on_idle(self) -> None:
        """The server sent a heartbeat: everything it had written was read."""
        self.caught_up = True

    def lag_ms(self) -> int:
        """MilliSecondsBehindSource: how far the last event read is behind the wall clock, while the
        connector has not caught up (0 once the server says it is idle)."""
        if self.caught_up or not self.last_event_source_ms:
            return 0
        return max(0, _now_ms() - self.last_event_source_ms)


@dataclass
class SchemaHistoryMetrics:
    status: str = "STOPPED"
    recovery_start_ms: int = 0
    changes_recovered: int = 0
    changes_applied: int = 0
    last_applied_change: str = ""
    last_applied_ms: int = 0

    def on_applied(self, ddl: str) -> None:
        self.changes_applied += 1
        self.last_applied_change = ddl[:200]
        self.last_applied_ms = _now_ms()


# Upper bounds (seconds) of the flush-time histogram: a Kafka transaction commits in milliseconds, a
# Delta batch in a second or more.
FLUSH_BUCKETS: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@dataclass
class SinkMetrics:
    records: int = 0
    flushes: int = 0
    flush_seconds: float = 0.0
    failures: int = 0
    # flushes per FLUSH_BUCKETS bound (not cumulative; the last entry: longer than every bound)
    flush_counts: list[int] = field(default_factory=lambda: [0] * (len(FLUSH_BUCKETS) + 1))
    # live readers, set by the delivery from the sink: how long it has been waiting on its target
    # (brokers that do not acknowledge) and how many such waits there have been
    waiting_seconds: Callable[[], float] = lambda: 0.0
    waits: Callable[[], int] = lambda: 0

    def on_flush(self, seconds: float, records: int) -> None:
        """A flush (a Kafka transaction's commit, a Delta batch's commit, a file's fsync) of ``records``."""
        self.flush_seconds += seconds
        self.flushes += 1
        self.records += records
        self.flush_counts[bisect.bisect_left(FLUSH_BUCKETS, seconds)] += 1

    def flush_histogram(self) -> list[tuple[str, float]]:
        """Prometheus buckets: (upper bound, cumulative count), ending with +Inf."""
        bounds = [*map(str, FLUSH_BUCKETS), "+Inf"]
        return list(zip(bounds, itertools.accumulate(self.flush_counts), strict=True))


class ConnectorMetrics:
    """All of a connector's figures. ``state`` is set by the engine; ``sources`` (set by the engine)
    reads the live values that are not counters (queue, binlog position, table plan)."""

    def __init__(self, server: str, queue_capacity: int) -> None:
        self.server = server
        self.queue_capacity = queue_capacity
        self.schema_history = SchemaHistoryMetrics()
        self.snapshot = ContextMetrics("snapshot", schema_history=self.schema_history)
        self.streaming = ContextMetrics("streaming", schema_history=self.schema_history)
        self.sinks: dict[str, SinkMetrics] = {}
        # snapshot lifecycle (coordinator)
        self.snapshot_running = False
        self.snapshot_completed = False
        self.snapshot_aborted = False
        self.snapshot_started_ms = 0
        self.snapshot_ended_ms = 0
        self.tables_done = 0
        # streaming
        self.connected = False
        self.disconnects = 0
        self.running = False  # the engine thread is in run()
        # live readers, set by the engine
        self.queued: Callable[[], int] = lambda: 0
        self.total_tables: Callable[[], int] = lambda: 0
        self.binlog_position: Callable[[], tuple[str, int, str]] = lambda: ("", 0, "")
        # rows and chunks per table of the incremental snapshot (None: none has run)
        self.incremental_progress: Callable[[], str | None] = lambda: None
        # notification.enabled.channels=jmx: the kept notifications (served on /notifications)
        self.notifications: Callable[[], list[dict[str, Any]]] = list

    # -- hooks -------------------------------------------------------------------------------------
    def snapshot_started(self) -> None:
        self.snapshot_running, self.snapshot_started_ms = True, _now_ms()

    def snapshot_ended(self, completed: bool) -> None:
        self.snapshot_running = False
        self.snapshot_completed, self.snapshot_aborted = completed, not completed
        self.snapshot_ended_ms = _now_ms()

    def sink(self, name: str) -> SinkMetrics:
        metrics = self.sinks.get(name)
        if metrics is None:
            metrics = self.sinks[name] = SinkMetrics()
        return metrics

    # -- reading -----------------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self.running and (self.snapshot_running or self.connected)

    def snapshot_figures(self) -> dict[str, Any]:
        s = self.snapshot
        end = self.snapshot_ended_ms or (_now_ms() if self.snapshot_running else 0)
        total = self.total_tables()
        return {
            **self._common(s),
            "TotalTableCount": total,
            "RemainingTableCount": max(0, total - self.tables_done),
            "SnapshotRunning": self.snapshot_running,
            "SnapshotCompleted": self.snapshot_completed,
            "SnapshotAborted": self.snapshot_aborted,
            "SnapshotPaused": False,
            "SnapshotDurationInSeconds": (end - self.snapshot_started_ms) // 1000
            if self.snapshot_started_ms
            else 0,
            "RowsScanned": {str(t): n for t, n in s.rows_scanned.items()},
        }

    def streaming_figures(self) -> dict[str, Any]:
        s = self.streaming
        file, pos, gtids = self.binlog_position()
        return {
            **self._common(s),
            "Connected": self.connected,
            "MilliSecondsBehindSource": s.lag_ms(),
            "NumberOfCommittedTransactions": s.committed_transactions,
            "NumberOfUnchangedEventsSkipped": s.unchanged_skipped,
            "NumberOfDisconnects": self.disconnects,
            "BinlogFilename": file,
            "BinlogPosition": pos,
            "GtidSet": gtids,
            "IsGtidModeEnabled": bool(gtids),
        }

    def schema_history_figures(self) -> dict[str, Any]:
        h = self.schema_history
        return {
            "Status": h.status,
            "RecoveryStartTime": h.recovery_start_ms,
            "ChangesRecovered": h.changes_recovered,
            "ChangesApplied": h.changes_applied,
            "MilliSecondsSinceLastAppliedChange": _now_ms() - h.last_applied_ms if h.last_applied_ms else -1,
            "LastAppliedChange": h.last_applied_change,
        }

    def _common(self, s: ContextMetrics) -> dict[str, Any]:
        since = _now_ms() - s.last_event_wall_ms if s.last_event_wall_ms else -1
        return {
            "LastEvent": s.last_event,
            "MilliSecondsSinceLastEvent": since,
            "SecondsSinceLastEvent": since // 1000 if since >= 0 else -1,
            "TotalNumberOfEventsSeen": s.events_seen,
            "TotalNumberOfCreateEventsSeen": s.creates,
            "TotalNumberOfUpdateEventsSeen": s.updates,
            "TotalNumberOfDeleteEventsSeen": s.deletes,
            "NumberOfEventsFiltered": s.filtered,
            "NumberOfErroneousEvents": s.erroneous,
            "QueueTotalCapacity": self.queue_capacity,
            "QueueRemainingCapacity": max(0, self.queue_capacity - self.queued()),
        }

    def figures(self) -> dict[str, dict[str, Any]]:
        """Every figure by context, as the embedded engine exposes them."""
        return {
            "snapshot": self.snapshot_figures(),
            "streaming": self.streaming_figures(),
            "schema-history": self.schema_history_figures(),
        }
