"""``mysql-cdc spark-apply``: run the Kafka → Delta Structured Streaming job until stopped.

SIGTERM/SIGINT stop the query after its current micro-batch; a crash (SIGKILL) is safe too: the
job restarts from its checkpoint (``sink/spark/apply.py``). Progress (Spark's own
``StreamingQuery.lastProgress``) is logged every ``--progress-interval`` seconds.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Mapping
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

log = logging.getLogger("mysql_cdc.spark_apply")


def spark_apply_command(props: Mapping[str, str], progress_interval: float) -> int:
    # pyspark is loaded only for this command.
    from sink.spark.apply import apply_settings, apply_stream, job_session

    settings = apply_settings(props)
    spark = job_session(settings)
    query = apply_stream(spark, settings)
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        log.info("signal %d received; stopping after the current micro-batch", signum)
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info(
        "spark-apply %s: %s from %s into %s (checkpoint %s)",
        settings.query_name,
        ",".join(settings.topics) or f"topics matching {settings.topics_regex}",
        settings.bootstrap_servers,
        settings.warehouse,
        settings.checkpoint_location,
    )
    try:
        _watch(query, stopping, progress_interval)
    except Exception as exc:
        # The query's failure as Spark reports it wraps the job's own error (a bad record, named):
        # that one is reported.
        cause = getattr(getattr(query, "applier", None), "error", None)
        if cause is not None:
            raise cause from None
        raise RuntimeError(f"the streaming query failed: {exc}") from exc
    if stopping.is_set():
        query.stop()
        log.info("stopped cleanly")
        return 0
    cause = getattr(getattr(query, "applier", None), "error", None)
    if cause is not None:
        raise cause
    error = query.exception()
    if error is not None:
        raise RuntimeError(f"the streaming query failed: {error}")
    return 0


def _watch(query: StreamingQuery, stopping: threading.Event, progress_interval: float) -> None:
    """Until the query ends or a signal asks to stop: Spark's progress once per micro-batch."""
    logged = None
    while query.isActive and not stopping.is_set():
        query.awaitTermination(max(1, int(progress_interval)))
        progress = query.lastProgress
        if progress and progress.get("batchId") != logged:
            logged = progress.get("batchId")
            log.info(
                "progress: micro-batch %s, %s Kafka records (%.1f/s arriving, %.1f/s applied), "
                "batch took %s ms (%s)",
                logged,
                progress.get("numInputRows"),
                float(progress.get("inputRowsPerSecond") or 0.0),
                float(progress.get("processedRowsPerSecond") or 0.0),
                (progress.get("durationMs") or {}).get("triggerExecution"),
                ", ".join(f"{k} {v}" for k, v in sorted((progress.get("durationMs") or {}).items())),
            )
