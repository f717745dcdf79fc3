"""Start-up, from the first server check to the offset streaming starts at.

Debezium's ``ChangeEventSourceCoordinator`` (with ``BaseSourceTask#validateSchemaHistory`` and the
snapshot mode's ``Snapshotter``): ``StartupCoordinator.start`` runs the steps in order, and reads
top to bottom as the start-up itself. The ``snapshot.mode`` decision is ``snapshot.policy.modes.decide``
(pure, asking the mode's ``snapshot.spi.Snapshotter``, built in or custom); this module gathers its
inputs, carries it out, and tells the snapshotter how the snapshot ended (``snapshot_completed`` /
``snapshot_aborted``, once).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from connector.config import ConnectorConfig
from connector.delivery.batches import Delivery
from connector.dispatch.schema_state import SchemaState
from connector.log_format import set_context
from connector.metrics import ConnectorMetrics
from connector.records.builder import EventBuilder
from connector.records.filters import TableFilter
from connector.server.connection import ServerInfo, ServerProbe
from connector.sources.settings import StartupDelays
from connector.sources.snapshot_connection import snapshot_connection_factory
from connector.stores.offsets import OffsetStore
from connector.stores.settings import StoreSettings
from ddl.history.recovery import recover
from ddl.history.store import SchemaHistory
from ddl.parsing.parser import parser_for
from mysql_cdc_base.position import BLOCKING_SNAPSHOT, SourceOffset
from sink.base import Sink
from snapshot import spi
from snapshot.binlog_status import Connect, earliest_position, position_unavailable
from snapshot.errors import SnapshotCancelled, SnapshotError
from snapshot.listener import PinnedPositionListener, SnapshotListener
from snapshot.policy.modes import STREAM_FROM_BEGINNING, STREAM_FROM_OFFSET, SnapshotPlan, decide
from snapshot.snapshotter import SnapshotSettings, Snapshotter

log = logging.getLogger(__name__)


class SnapshotReceiver(SnapshotListener, Protocol):
    """The snapshot's listener on the connector side (the engine's ``SnapshotEmitter``)."""

    def finish(self) -> SourceOffset:
        """Delivers what it held back and stores the final offset; returns that offset."""
        ...

    def aborted(self) -> None:
        """The snapshot failed or was cancelled (the ABORTED notification)."""
        ...


class StartupCoordinator:
    """Runs the connector's start-up once (``start``) and keeps what it found for the engine.

    ``new_snapshot_receiver`` builds the listener a snapshot reports to; it is called only after
    ``schema`` is set.
    """

    def __init__(
        self,
        config: ConnectorConfig,
        *,
        probe: ServerProbe,
        history: SchemaHistory,
        offsets: OffsetStore,
        sinks: Sequence[Sink],
        table_filter: TableFilter,
        builder: EventBuilder,
        delivery: Delivery,
        new_snapshot_receiver: Callable[[], SnapshotReceiver],
        metrics: ConnectorMetrics | None = None,
    ) -> None:
        self.metrics = metrics
        self.config = config
        self.stores = StoreSettings.from_config(config)
        self.delays = StartupDelays.from_config(config)
        self.probe = probe
        self.history = history
        self.offsets = offsets
        self.sinks = sinks
        self.filter = table_filter
        self.builder = builder
        self.delivery = delivery
        self.new_snapshot_receiver = new_snapshot_receiver
        self.info: ServerInfo | None = None
        self.schema: SchemaState | None = None
        # Why the stored position cannot be read from this server (``plan``), or None.
        self.position_problem: str | None = None
        # Set before a snapshot runs, so that another thread can cancel it.
        self.snapshotter: Snapshotter | None = None
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        """From another thread: end a ``snapshot.delay.ms`` or ``streaming.delay.ms`` wait and a
        running snapshot."""
        self._cancelled.set()
        if self.snapshotter is not None:
            self.snapshotter.cancel()

    @property
    def snapshot_taken(self) -> bool:
        return self.snapshotter is not None

    def start(self) -> SourceOffset | None:
        """Checks, stores, schema, then the snapshot mode's decision carried out. Returns the offset
        streaming starts at, or None when the snapshot mode does not stream (``initial_only``)."""
        # First: the snapshot properties and the custom snapshot plugins they name (a plugin that
        # cannot be loaded stops the start-up before anything connects).
        settings = SnapshotSettings.from_config(self.config)
        self.info = self.probe.check(need_snapshot_locks=settings.strategy.locking)
        self.history.start()
        if self.metrics is not None:
            self.metrics.schema_history.status = "RUNNING"
        for sink in self.sinks:
            sink.start()
        self.schema = self.schema_state(self.info)
        offset = self.starting_offset()

        connect = snapshot_connection_factory(self.config)
        plan = self.plan(settings, offset, connect)
        if plan.reset_offsets:
            log.warning(
                "the stored position %s cannot be read from this server (%s); taking a new snapshot "
                "(snapshot.mode=when_needed)",
                offset.describe() if offset is not None else "?",
                self.position_problem,
            )
            offset = None

        start: SourceOffset | None
        if plan.snapshot:
            start = self.snapshot(settings, plan, offset, connect)
        elif plan.stream_from == STREAM_FROM_OFFSET and offset is not None:
            self.recover(offset)
            start = offset
        elif plan.stream_from == STREAM_FROM_BEGINNING:
            start = SourceOffset.at(earliest_position(connect))  # an empty schema
        else:
            start = None  # the mode does not stream
        if not plan.stream:
            return None
        self.delay_streaming()
        return start

    def delay_streaming(self) -> None:
        """``streaming.delay.ms``: Debezium waits this long after the snapshot (or at a start
        without one) before it streams; a stop ends the wait."""
        delay_s = self.delays.streaming_s
        if delay_s:
            log.info("waiting %.1fs before streaming (streaming.delay.ms)", delay_s)
            self._cancelled.wait(delay_s)

    # -- the steps, in order ----------------------------------------------------------------------
    def schema_state(self, info: ServerInfo) -> SchemaState:
        include_comments = self.builder.settings.include_schema_comments
        parser = parser_for(info.flavor, include_comments=include_comments)
        return SchemaState(self.config, parser, self.history, self.filter, self.builder)

    def starting_offset(self) -> SourceOffset | None:
        """The offset store's offset, else the first offset a sink committed with its data."""
        # The offset store is never ahead of any sink (it is written after every sink flushed), so
        # it is the safe resume point for all of them; a sink that commits offsets with its data
        # (Spark) recognises and skips what it already holds. Such a sink's own offset is used only
        # when the store has none (e.g. it was lost).
        stored = self.offsets.load()
        if stored is not None:
            return _after_blocking_snapshot(SourceOffset.from_map(stored))
        for sink in self.sinks:
            committed = sink.committed_offset()
            if committed is not None:
                return _after_blocking_snapshot(SourceOffset.from_map(committed))
        return None

    def plan(self, settings: SnapshotSettings, offset: SourceOffset | None, connect: Connect) -> SnapshotPlan:
        """Debezium's start-up decision for ``snapshot.mode``; raises ``SnapshotError`` when the
        mode cannot start from what is stored (the message says what to do)."""
        assert self.info is not None
        stored = offset is not None
        in_snapshot = offset is not None and offset.in_snapshot
        # An interrupted snapshot's offset is never streamed from, so it is never "purged".
        problem = self.position_problem = (
            position_unavailable(connect, offset.binlog_position, self.info.flavor)
            if offset is not None and offset.has_position and not offset.in_snapshot
            else None
        )
        plan = decide(
            settings.mode,
            stored,
            in_snapshot,
            problem is not None,
            history_exists=self.history.exists(),
            position=offset.describe() if offset is not None and offset.has_position else None,
            configuration=settings.configuration_based,
            purge_reason=problem,
            custom=settings.custom_snapshotter,
        )
        if plan.error:
            raise SnapshotError(plan.error)
        return plan

    def snapshot(
        self, settings: SnapshotSettings, plan: SnapshotPlan, offset: SourceOffset | None, connect: Connect
    ) -> SourceOffset:
        """Takes the snapshot the plan calls for; returns the offset streaming continues from."""
        assert self.info is not None
        delay_s = self.delays.snapshot_s
        if delay_s:
            log.info("waiting %.1fs before the snapshot (snapshot.delay.ms)", delay_s)
            if self._cancelled.wait(delay_s):
                raise SnapshotCancelled("stopped during snapshot.delay.ms, before the snapshot started")
        self.snapshotter = Snapshotter(
            settings,
            connect,
            self.filter.table_captured,
            self.info.flavor,
            is_database_captured=self.filter.database_captured,
        )
        if self._cancelled.is_set():
            self.snapshotter.cancel()
        receiver = self.new_snapshot_receiver()
        set_context("snapshot")
        if self.metrics is not None:
            snapshotter = self.snapshotter
            self.metrics.total_tables = lambda: len(snapshotter.planned_tables)
            self.metrics.snapshot_started()
        hooks = settings.snapshotter
        try:
            start = self._run_snapshot(plan, offset, receiver)
        except BaseException:
            if self.metrics is not None:
                self.metrics.snapshot_ended(completed=False)
            receiver.aborted()
            _snapshot_aborted(hooks)
            raise
        hooks.snapshot_completed()
        return start

    def _run_snapshot(
        self, plan: SnapshotPlan, offset: SourceOffset | None, receiver: SnapshotReceiver
    ) -> SourceOffset:
        assert self.snapshotter is not None
        if plan.stream_from == STREAM_FROM_OFFSET and offset is not None:
            # recovery: the rebuilt schema history carries the stored offset; streaming resumes there.
            self.snapshotter.run(
                PinnedPositionListener(receiver, offset.binlog_position), data=plan.snapshot_data
            )
            receiver.finish()
            self.delivery.advance(offset)
            self.delivery.flush()
            self._snapshot_done()
            return offset
        self.snapshotter.run(receiver, data=plan.snapshot_data)
        done = receiver.finish()
        self._snapshot_done()
        return done

    def _snapshot_done(self) -> None:
        if self.metrics is not None:
            self.metrics.snapshot_ended(completed=True)

    def recover(self, offset: SourceOffset) -> None:
        """The table structures at ``offset``, replayed from the schema history."""
        assert self.schema is not None
        if self.metrics is not None:
            self.metrics.schema_history.status = "RECOVERING"
            self.metrics.schema_history.recovery_start_ms = int(time.time() * 1000)
        self.schema.model = recover(
            self.history,
            self.schema.partition,
            offset,
            self.schema.parser,
            skip_unparseable=self.schema.settings.skip_unparseable,
            prefer_ddl=self.stores.prefer_ddl,
            ddl_filter=self.schema.settings.ddl_filter,
        )
        if self.metrics is not None:
            self.metrics.schema_history.status = "RUNNING"
        log.info(
            "recovered %d table structures from the schema history; resuming at %s",
            len(self.schema.model.tables),
            offset.describe(),
        )


def _snapshot_aborted(hooks: spi.Snapshotter) -> None:
    """``snapshot_aborted``; its own failure is logged, never raised over the snapshot's error."""
    try:
        hooks.snapshot_aborted()
    except Exception:
        log.exception("the snapshotter %s failed in snapshot_aborted()", hooks.name())


def _after_blocking_snapshot(offset: SourceOffset) -> SourceOffset:
    """A blocking snapshot's offset is the stream's offset where its signal was read, marked
    ``BLOCKING``: streaming resumes there (a source-channel signal is read, and run, again)."""
    if offset.snapshot != BLOCKING_SNAPSHOT:
        return offset
    log.warning(
        "the connector stopped during a blocking snapshot; streaming resumes at %s, where it was "
        "signalled (a signal from the signal table runs it again; send others again)",
        offset.describe(),
    )
    return offset.with_(snapshot=None)
