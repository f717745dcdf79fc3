"""Debezium's snapshot, streaming and schema-history metrics (``figures``), served over HTTP
(``server``: ``/metrics`` and ``/health`` on ``metrics.port``) and logged as a streaming progress
line (``progress``: ``progress.interval.ms``).

``server`` is not imported here: it loads prometheus-client, which only a run with ``metrics.port``
needs (the engine imports it when it starts the endpoint)."""

from __future__ import annotations

from connector.metrics.endpoint import SERVER_PROPERTIES
from connector.metrics.figures import ConnectorMetrics, ContextMetrics, SchemaHistoryMetrics, SinkMetrics
from connector.metrics.progress import PROGRESS_PROPERTIES, ProgressReporter

# The endpoint's and the progress line's properties, in the order of --help.
METRICS_PROPERTIES = (*SERVER_PROPERTIES, *PROGRESS_PROPERTIES)

__all__ = [
    "METRICS_PROPERTIES",
    "ConnectorMetrics",
    "ContextMetrics",
    "ProgressReporter",
    "SchemaHistoryMetrics",
    "SinkMetrics",
]
