"""The engine: start-up (``connector.coordinator``), then streaming, with delivery; stop and close.

Data flows one way: sources (snapshot, streaming) → ``EventBuilder`` → ``Delivery`` → sinks. The
``Delivery`` batches records, hands them to every sink, waits for every sink's ``flush`` and only
then stores the offset of the last delivered record (at-least-once; with record-level offsets a
restart repeats nothing whose offset was stored).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from connector.config import ConnectorConfig
from connector.coordinator import StartupCoordinator
from connector.delivery.batches import Delivery
from connector.delivery.exactly_once import OffsetTransactions, exactly_once_from_config
from connector.delivery.settings import BatchSettings
from connector.dispatch.schema_state import SchemaState
from connector.factories import (
    build_offset_store,
    build_schema_history,
    build_server_probe,
    build_sinks,
)
from connector.log_format import set_context
from connector.metrics import ConnectorMetrics, ProgressReporter
from connector.metrics.settings import MetricsSettings
from connector.notifications import NotificationService
from connector.notifications.snapshots import IncrementalSnapshotNotifier
from connector.post_processors.chain import build_post_processors, with_post_processors
from connector.records.builder import EventBuilder
from connector.records.filters import TableFilter
from connector.records.settings import converter_settings
from connector.server.connection import ServerInfo
from connector.sources.heartbeat import Heartbeat
from connector.sources.initial_snapshot import SnapshotEmitter
from connector.sources.signals import IN_PROCESS, InProcessSignalChannel, enabled_channels
from connector.sources.snapshot_connection import snapshot_connection_factory
from connector.sources.streaming import StreamingSource
from connector.stores.offsets import OffsetStore
from connector.stores.settings import StoreSettings
from connector.transforms import build_chain
from ddl.history.store import SchemaHistory
from ddl.model import Table
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.position import BinlogPosition
from mysql_cdc_base.records import ChangeRecord
from mysql_cdc_base.table_id import TableId
from sink.base import Sink
from snapshot.snapshotter import Snapshotter

if TYPE_CHECKING:
    from connector.delivery.instance_guard import InstanceGuard
    from connector.metrics.server import MetricsServer

log = logging.getLogger(__name__)


def instance_guard(config: ConnectorConfig) -> InstanceGuard | None:
    """The guard against a second running instance: a Kafka consumer group, so only where the
    connector uses Kafka (a kafka sink, or offset.storage=kafka), else None."""
    uses_kafka = (
        "kafka" in [s.lower() for s in config.sink_types]
        or StoreSettings.from_config(config).offset_storage == "kafka"
    )
    if not uses_kafka:
        return None
    # Imported here: the guard loads kafka-python, which a connector without Kafka does not pay for
    # at start-up. InstanceGuard.from_config decides the rest (the brokers, the client identity).
    from connector.delivery.instance_guard import InstanceGuard  # noqa: PLC0415

    return InstanceGuard.from_config(config)


class Engine:
    """Runs the connector in-process. ``run()`` blocks; ``stop()`` may be called from any thread."""

    def __init__(
        self,
        config: ConnectorConfig,
        sinks: Sequence[Sink] | None = None,
        *,
        offsets: OffsetStore | None = None,
        history: SchemaHistory | None = None,
        on_delivered: Callable[[Sequence[ChangeRecord]], None] | None = None,
        progress_interval_ms: int = 0,
    ) -> None:
        """``progress_interval_ms``: the progress line's interval when ``progress.interval.ms`` is
        not set (``mysql-cdc run`` passes 10000; embedded, the line is off unless configured)."""
        self.config = config
        self.sinks = list(sinks) if sinks is not None else build_sinks(config)
        self.offsets = offsets or build_offset_store(config)
        self.history = history or build_schema_history(config)
        self.filter = TableFilter.from_config(config)
        self.builder = EventBuilder(config, self.filter, converter_settings(config))
        self.probe = build_server_probe(config)
        # Debezium's metrics (connector.metrics): always kept, served over HTTP when metrics.port is set.
        self.metrics = ConnectorMetrics(config.topic_prefix, BatchSettings.from_config(config).max_queue_size)
        self._metrics_server: MetricsServer | None = None
        self.metrics_settings = MetricsSettings.from_config(config)
        configured = self.metrics_settings.progress_interval_ms
        self._progress_interval_ms = configured if configured is not None else progress_interval_ms
        self._progress: ProgressReporter | None = None
        # exactly.once.support: the Kafka sink made transactional, the offset committed with its records.
        self.exactly_once, transaction = exactly_once_from_config(config, self.sinks, self.offsets)
        # post.processors (connector.post_processors): before the transforms, on the engine thread.
        self.post_processors = build_post_processors(
            config,
            snapshot_connection_factory(config),
            self._table_of,
            self.builder.table_schema,
            self.filter.always,
        )
        # Without exactly-once, a second instance on the same Kafka is refused at start-up.
        self.instance_guard = None if self.exactly_once.enabled else instance_guard(config)
        self.delivery = self._delivery(on_delivered, transaction)
        self.metrics.queued = lambda: self.delivery.queued
        # notification.enabled.channels: the snapshots' notifications (connector.notifications).
        self.notifications = NotificationService(config)
        self.notifications.emitter = self.delivery
        self.metrics.notifications = self.notifications.jmx_json
        self._stop = threading.Event()
        # signal.enabled.channels=in-process: ``signal()`` (the embedded API and tests send through it).
        self.signals = InProcessSignalChannel()
        # Embedded-API hook: runs on the engine thread after every binlog event and heartbeat while
        # streaming, so another thread can ask for a delivery barrier (connector.embedded.api).
        self.on_progress: Callable[[], None] | None = None
        self._prepared = False
        self.streaming: StreamingSource | None = None
        self.coordinator = StartupCoordinator(
            config,
            probe=self.probe,
            history=self.history,
            offsets=self.offsets,
            sinks=self.sinks,
            table_filter=self.filter,
            builder=self.builder,
            delivery=self.delivery,
            new_snapshot_receiver=lambda: SnapshotEmitter(
                self, self.notifications, self._scanned_tables, self._planned_tables
            ),
            metrics=self.metrics,
        )

    def _delivery(
        self,
        on_delivered: Callable[[Sequence[ChangeRecord]], None] | None,
        transaction: OffsetTransactions | None,
    ) -> Delivery:
        """The delivery stage: batches to the sinks through the post processors and transforms, the
        offset committed at the interval (or, exactly once, with each transaction's records)."""
        batches = BatchSettings.from_config(self.config)
        commit_interval_ms = batches.offset_flush_interval_ms
        if self.exactly_once.enabled and self.exactly_once.boundary == "interval":
            commit_interval_ms = self.exactly_once.interval_ms
        return Delivery(
            self.sinks,
            self.offsets,
            batches.max_batch_size,
            batches.poll_interval_s,
            on_delivered,
            commit_interval_s=commit_interval_ms / 1000,
            transforms=with_post_processors(build_chain(self.config.raw), self.post_processors),
            max_queue=batches.max_queue_size,
            metrics=self.metrics,
            transaction=transaction,
            commit_each_batch=self.exactly_once.enabled and self.exactly_once.boundary == "poll",
        )

    # -- lifecycle ----------------------------------------------------------------------------------
    @property
    def info(self) -> ServerInfo | None:
        return self.coordinator.info

    @property
    def schema(self) -> SchemaState | None:
        return self.coordinator.schema

    @property
    def _snapshotter(self) -> Snapshotter | None:
        return self.coordinator.snapshotter

    def _table_of(self, table_id: TableId) -> Table | None:
        schema = self.coordinator.schema
        return schema.model.table(table_id) if schema is not None else None

    def _planned_tables(self) -> tuple[TableId, ...]:
        snapshotter = self.coordinator.snapshotter
        return snapshotter.planned_tables if snapshotter is not None else ()

    def _scanned_tables(self) -> tuple[TableId, ...]:
        """The snapshot's tables as Debezium's notifications count them: without the signal table."""
        signals = self.filter.always
        return tuple(t for t in self._planned_tables() if t not in signals)

    def prepare(self) -> None:
        """The start-up (``connector.coordinator``); leaves the engine ready to stream."""
        if self._prepared:
            return
        self.metrics.running = True
        endpoint = self.metrics_settings
        if endpoint.port and self._metrics_server is None:
            # Imported only here: the endpoint loads prometheus-client, which a run without
            # metrics.port does not pay for at start-up.
            from connector.metrics.server import MetricsServer  # noqa: PLC0415

            self._metrics_server = MetricsServer(self.metrics, endpoint.port, endpoint.host)
            log.info(
                "metrics and /health on http://%s:%d/", self._metrics_server.host, self._metrics_server.port
            )
        if self.instance_guard is not None:
            self.instance_guard.acquire()
        start = self.coordinator.start()
        assert self.info is not None and self.schema is not None
        if start is not None:
            self.streaming = StreamingSource(
                self.config,
                self.info.flavor,
                self.schema,
                self.builder,
                self.filter,
                self.delivery,
                start,
                self.metrics,
                self.signals,
            )
            streaming = self.streaming
            streaming.signals.incremental.notifier = IncrementalSnapshotNotifier(self.notifications)
            self.metrics.binlog_position = lambda: _position(streaming)
            self.metrics.incremental_progress = lambda: streaming.signals.incremental.progress.describe()
            if self.coordinator.snapshot_taken:
                # Debezium emits one heartbeat right after a snapshot (when heartbeats are on).
                self.streaming.emit_heartbeat()
        elif self.coordinator.snapshot_taken:
            heartbeat = Heartbeat.from_config(self.config)
            if heartbeat is not None:
                self.delivery.emit(heartbeat.beat(self.delivery.stored_offset))
                self.delivery.flush()
        self._prepared = True

    def run(self) -> None:
        try:
            self.prepare()
            if self.streaming is not None:  # None: the snapshot mode does not stream
                set_context("streaming")
                log.info("streaming from %s", self.streaming.offset().describe())
                if self._progress_interval_ms > 0:
                    self._progress = ProgressReporter(
                        self.metrics, lambda: self.delivery.delivered, self._progress_interval_ms / 1000
                    )
                self.streaming.run(self._stopping)
        finally:
            self.close()

    def _stopping(self) -> bool:
        if self.on_progress is not None:
            self.on_progress()
        return self._stop.is_set()

    def catch_up(self, timeout: float = 60.0) -> None:
        """Stream until everything the server had written when called is delivered (for tests)."""
        self.prepare()
        if self.streaming is None:
            self.delivery.flush()
            return
        assert self.info is not None
        target = self.probe.current_position(self.info)
        deadline = time.monotonic() + timeout
        target_key = target.key
        streaming = self.streaming

        def reached() -> bool:
            file, pos = streaming.context.last_end
            # In the target's file the position alone orders them (no file-name parse per event).
            done = pos >= target.pos if file == target.file else BinlogPosition(file, pos).key >= target_key
            return done or self._stop.is_set() or time.monotonic() > deadline

        self.streaming.run(reached)
        self.delivery.flush()
        if time.monotonic() > deadline and not self._stop.is_set():
            raise TimeoutError(
                f"did not reach binlog position {target} within {timeout}s (at {self.streaming.last_end})"
            )

    def signal(self, type_: str, data: Mapping[str, Any] | str | None = None, id_: str | None = None) -> str:
        """Sends a signal through the in-process channel (``signal.enabled.channels`` must list
        ``in-process``); the streaming thread carries it out. Returns the signal's id."""
        if IN_PROCESS not in enabled_channels(self.config):
            raise ConfigError(
                "signal.enabled.channels", "add in-process to the list to send signals from this process"
            )
        return self.signals.send(type_, data, id_)

    def stop(self) -> None:
        self._stop.set()
        self.coordinator.cancel()

    def close(self) -> None:
        self.metrics.running = False
        if self._progress is not None:
            self._progress.close()
            self._progress = None
        if self._metrics_server is not None:
            self._metrics_server.close()
            self._metrics_server = None
        try:
            if self.streaming is not None:
                self.streaming.close()
            self.delivery.flush()
        finally:
            self.delivery.close()  # a background flush still running ends before its sinks close
            for sink in self.sinks:
                sink.close()
            self.history.stop()
            self.offsets.close()
            for processor in self.post_processors:
                processor.close()
            if self.instance_guard is not None:
                self.instance_guard.release()


def _position(streaming: StreamingSource) -> tuple[str, int, str]:
    """BinlogFilename, BinlogPosition and GtidSet of the last event read (metrics)."""
    file, pos = streaming.last_end
    return file, pos, str(streaming.gtids) if streaming.gtids is not None else ""
