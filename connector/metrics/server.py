"""The metrics over HTTP: ``MetricsServer`` serves ``ConnectorMetrics`` on ``metrics.port``.

With ``prometheus-client`` as ``debezium_metrics_<Attribute>{context=..., server=..., plugin="mysql"}``
(text values such as ``BinlogFilename`` as a label of a gauge set to 1, per-table ``RowsScanned``
with a ``table`` label), plus ``mysql_cdc_sink_*`` delivery counters, flush latency and waits for
the sink's target, and ``/health`` (live: the engine thread runs; ready: connected and snapshotting
or streaming; 503 when not ready).
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from connector.metrics.figures import ConnectorMetrics

PREFIX = "debezium_metrics_"


class _Collector(Collector):
    def __init__(self, metrics: ConnectorMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Any]:
        m = self.metrics
        for context, figures in m.figures().items():
            labels = {"context": context, "server": m.server, "plugin": "mysql"}
            yield from _families(figures, labels)
        yield _events_by_table(m)
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
            flush = HistogramMetricFamily(
                "mysql_cdc_sink_flush_duration_seconds",
                "Time of each flush: a Kafka transaction's or a Delta batch's commit, a file's fsync.",
                labels=["sink"],
            )
            flush.add_metric([name], sink.flush_histogram(), sink.flush_seconds)
            yield flush


def _events_by_table(m: ConnectorMetrics) -> CounterMetricFamily:
    family = CounterMetricFamily(
        "mysql_cdc_events", "Change events read, per table.", labels=["context", "server", "table"]
    )
    for context in (m.snapshot, m.streaming):
        for table, count in sorted(context.events_by_table.items(), key=lambda item: str(item[0])):
            family.add_metric([context.context, m.server, str(table)], count)
    return family


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
            if environ.get("PATH_INFO") == "/notifications":
                # notification.enabled.channels=jmx: Debezium's MBean attribute Notifications
                start_response("200 OK", [("Content-Type", "application/json")])
                return [json.dumps(metrics.notifications()).encode()]
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
