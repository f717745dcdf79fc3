"""Debezium's snapshot, streaming and schema-history metrics (``figures``), served over HTTP
(``server``: ``/metrics`` and ``/health`` on ``metrics.port``) and logged as a streaming progress
line (``progress``: ``progress.interval.ms``)."""

from __future__ import annotations

from connector.metrics.figures import ConnectorMetrics, ContextMetrics, SchemaHistoryMetrics, SinkMetrics
from connector.metrics.progress import PROGRESS_PROPERTIES, ProgressReporter
from connector.metrics.server import PREFIX, SERVER_PROPERTIES, MetricsServer

# The endpoint's and the progress line's properties, in the order of --help.
METRICS_PROPERTIES = (*SERVER_PROPERTIES, *PROGRESS_PROPERTIES)

__all__ = [
    "METRICS_PROPERTIES",
    "PREFIX",
    "ConnectorMetrics",
    "ContextMetrics",
    "MetricsServer",
    "ProgressReporter",
    "SchemaHistoryMetrics",
    "SinkMetrics",
]
