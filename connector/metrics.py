"""Debezium's snapshot, streaming and schema-history metrics, as a Python object and over HTTP.

The figures are Debezium's MBean attributes (``debezium.mysql:type=connector-metrics,
context=snapshot|streaming|schema-history,server=<topic.prefix>``) under the same names. The hot path
only bumps plain attributes of ``ContextMetrics`` (set by the dispatcher, the coordinator and the
delivery); everything derived — lag, queue capacity, table counts — is computed when read, so
metrics cost nothing between scrapes.

``MetricsServer`` serves them on ``metrics.port`` with ``prometheus-client`` as
``debezium_metrics_<Attribute>{context=..., server=..., plugin="mysql"}`` (text values such as
``BinlogFilename`` as a label of a gauge set to 1, per-table ``RowsScanned`` with a ``table`` label),
plus ``mysql_cdc_sink_*`` delivery counters, flush latency and waits for the sink's target, and ``/health`` (live: the engine
thread runs; ready: connected and snapshotting or streaming; 503 when not ready).
"""

from __future__ import annotations

import json
import logging
import socketserver
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from ddl.model import TableId
from ddl.properties import Property, prop

PREFIX = "debezium_metrics_"

# The HTTP endpoint and the streaming progress log line.
METRICS_PROPERTIES: tuple[Property, ...] = (
    prop(
        "metrics.port",
        "0",
        "Port of the HTTP endpoint with Debezium's metrics (/metrics) and /health; 0: off.",
        kind="int",
        minimum=0,
    ),
    prop("metrics.host", "127.0.0.1", "Address the metrics endpoint binds."),
    prop(
        "progress.interval.ms",
        "0",
        "Interval of the streaming progress log line (events/s, records delivered, "
        "MilliSecondsBehindSource, binlog position); 0: off. mysql-cdc run uses 10000 when unset.",
        kind="int",
        minimum=0,
    ),
)

log = logging.getLogger(__name__)


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
    committed_transactions: int = 0
    last_event: str = ""
    last_event_wall_ms: int = 0  # when the last event was processed
    last_event_source_ms: int = 0  # the source timestamp of that event
    caught_up: bool = True  # nothing read is older than a server heartbeat
    rows_scanned: dict[TableId, int] = field(default_factory=dict)
    schema_history: SchemaHistoryMetrics | None = None

    def on_rows(self, table: TableId, op: str, count: int, source_ts_ms: int) -> None:
        self.events_seen += count
        if op == "c":
            self.creates += count
        elif op == "u":
            self.updates += count
        elif op == "d":
            self.deletes += count
        if self.context == "snapshot":
            self.rows_scanned[table] = self.rows_scanned.get(table, 0) + count
        self.last_event = f"{op} {table}"
        self.last_event_wall_ms = _now_ms()
        self.last_event_source_ms = source_ts_ms
        self.caught_up = False

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


@dataclass
class SinkMetrics:
    records: int = 0
    flushes: int = 0
    flush_seconds: float = 0.0
    failures: int = 0
    # live readers, set by the delivery from the sink: how long it has been waiting on its target
    # (brokers that do not acknowledge) and how many such waits there have been
    waiting_seconds: Callable[[], float] = lambda: 0.0
    waits: Callable[[], int] = lambda: 0


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


class _Collector(Collector):
    def __init__(self, metrics: ConnectorMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Any]:
        m = self.metrics
        for context, figures in m.figures().items():
            labels = {"context": context, "server": m.server, "plugin": "mysql"}
            yield from _families(figures, labels)
        for name, sink in sorted(m.sinks.items()):
            yield _counter("mysql_cdc_sink_records", "Records flushed to the sink.", name, sink.records)
            yield _counter("mysql_cdc_sink_flushes", "Flushes of the sink.", name, sink.flushes)
            yield _counter(
                "mysql_cdc_sink_flush_seconds", "Time spent in the sink's flush.", name, sink.flush_seconds
            )
            yield _counter("mysql_cdc_sink_failures", "Failed sends or flushes.", name, sink.failures)
            waiting = GaugeMetricFamily(
                "mysql_cdc_sink_waiting_seconds",
                "How long the sink has been waiting for its target while retrying (0: not waiting).",
                labels=["sink"],
            )
            waiting.add_metric([name], sink.waiting_seconds())
            yield waiting
            yield _counter(
                "mysql_cdc_sink_waits", "Waits for the sink's target while retrying.", name, sink.waits()
            )


def _counter(name: str, doc: str, sink: str, value: float) -> CounterMetricFamily:
    family = CounterMetricFamily(name, doc, labels=["sink"])
    family.add_metric([sink], value)
    return family


def _families(figures: dict[str, Any], labels: dict[str, str]) -> Iterable[GaugeMetricFamily]:
    keys, values = list(labels), list(labels.values())
    for attribute, value in figures.items():
        if isinstance(value, dict):  # RowsScanned: per table
            family = GaugeMetricFamily(PREFIX + attribute, attribute, labels=[*keys, "table"])
            for table, rows in sorted(value.items()):
                family.add_metric([*values, table], rows)
        elif isinstance(value, str):  # text attributes: a label of a gauge set to 1
            family = GaugeMetricFamily(PREFIX + attribute, attribute, labels=[*keys, "value"])
            family.add_metric([*values, value], 1)
        else:
            family = GaugeMetricFamily(PREFIX + attribute, attribute, labels=keys)
            family.add_metric(values, float(value))
        yield family


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


class MetricsServer:
    """``/metrics`` (Prometheus text) and ``/health`` on ``host:port`` in a daemon thread."""

    def __init__(self, metrics: ConnectorMetrics, port: int, host: str = "127.0.0.1") -> None:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Collector(metrics))
        prometheus = make_wsgi_app(registry)

        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            if environ.get("PATH_INFO") == "/health":
                body = {"live": metrics.running, "ready": metrics.ready}
                status = "200 OK" if metrics.ready else "503 Service Unavailable"
                start_response(status, [("Content-Type", "application/json")])
                return [json.dumps(body).encode()]
            return prometheus(environ, start_response)

        self.httpd = make_server(host, port, app, _ThreadingWSGIServer, handler_class=_QuietHandler)
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="mysql-cdc-metrics", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class ProgressReporter:
    """Logs a streaming progress line every ``interval_s`` (``progress.interval.ms``) in a daemon
    thread: events/s since the previous line, records delivered, MilliSecondsBehindSource and the
    binlog position, all read from ``metrics`` (nothing on the hot path)."""

    def __init__(self, metrics: ConnectorMetrics, delivered: Callable[[], int], interval_s: float) -> None:
        self.metrics = metrics
        self.delivered = delivered
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._seen = metrics.streaming.events_seen
        self._at = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="mysql-cdc-progress", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.report()

    def report(self) -> None:
        now, seen = time.monotonic(), self.metrics.streaming.events_seen
        rate = (seen - self._seen) / max(now - self._at, 1e-9)
        self._seen, self._at = seen, now
        file, pos, _ = self.metrics.binlog_position()
        incremental = self.metrics.incremental_progress()
        log.info(
            "streaming: %.1f events/s, %d events seen, %d records delivered, "
            "MilliSecondsBehindSource=%d, binlog %s:%d%s",
            rate,
            seen,
            self.delivered(),
            self.metrics.streaming.lag_ms(),
            file,
            pos,
            f"; incremental snapshot: {incremental}" if incremental else "",
        )

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
