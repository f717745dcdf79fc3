"""The streaming progress log line (``progress.interval.ms``), read from ``ConnectorMetrics``."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from connector.metrics.figures import ConnectorMetrics
from mysql_cdc_base.properties import Property, prop

# The line keeps the logger it always had (log filters and tests select it by name).
log = logging.getLogger("connector.metrics")

PROGRESS_PROPERTIES: tuple[Property, ...] = (
    prop(
        "progress.interval.ms",
        "0",
        "Interval of the streaming progress log line (events/s, records delivered, "
        "MilliSecondsBehindSource, binlog position); 0: off. mysql-cdc run uses 10000 when unset.",
        kind="int",
        minimum=0,
    ),
)


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
