"""The coordinator: start-up checks, schema recovery or snapshot, then streaming, with delivery.

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
from dataclasses import replace
from typing import Any

from connector.config import ConnectorConfig
from connector.delivery import Delivery
from connector.dispatcher import EventDispatcher, RowForm
from connector.events import EventBuilder, SourcePosition
from connector.factories import build_offset_store, build_schema_history, build_sinks, converter_settings
from connector.filters import TableFilter
from connector.offsets import OffsetStore
from connector.schema_state import SchemaState
from connector.server import ServerInfo, ServerProbe
from connector.streaming import StreamingSource
from ddl.history import SchemaHistory
from ddl.model import TableId
from ddl.position import SNAPSHOT_INITIAL, BinlogPosition, SourceOffset
from sink.base import Sink
from sink.records import ChangeRecord

log = logging.getLogger(__name__)


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
    ) -> None:
        self.config = config
        self.sinks = list(sinks) if sinks is not None else build_sinks(config)
        self.offsets = offsets or build_offset_store(config)
        self.history = history or build_schema_history(config)
        self.filter = TableFilter.from_config(config)
        self.builder = EventBuilder(config, self.filter, converter_settings(config))
        self.probe = ServerProbe(config)
        self.delivery = Delivery(
            self.sinks,
            self.offsets,
            config.get_int("max.batch.size", 2048) or 2048,
            (config.get_int("poll.interval.ms", 500) or 500) / 1000,
            on_delivered,
            commit_interval_s=(config.get_int("offset.flush.interval.ms", 1000) or 0) / 1000,
        )
        self._stop = threading.Event()
        # Embedded-API hook: runs on the engine thread after every binlog event and heartbeat while
        # streaming, so another thread can ask for a delivery barrier (connector.embedded.api).
        self.on_progress: Callable[[], None] | None = None
        self._prepared = False
        self.info: ServerInfo | None = None
        self.schema: SchemaState | None = None
        self.streaming: StreamingSource | None = None
        self._snapshotter: Any = None

    # -- lifecycle ----------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Checks, stores, schema recovery or snapshot; leaves the engine ready to stream."""
        if self._prepared:
            return
        from ddl.parser import parser_for

        self.info = self.probe.check(need_snapshot_locks=self._wants_snapshot_locks())
        self.history.start()
        for sink in self.sinks:
            sink.start()
        parser = parser_for(
            self.info.flavor, include_comments=self.config.get_bool("include.schema.comments")
        )
        self.schema = SchemaState(self.config, parser, self.history, self.filter, self.builder)
        offset = self._starting_offset()
        start = self._plan_and_snapshot(offset)
        snapshot_taken = self._snapshotter is not None
        if start is not None:
            self.streaming = StreamingSource(
                self.config, self.info.flavor, self.schema, self.builder, self.filter, self.delivery, start
            )
            if snapshot_taken:
                # Debezium emits one heartbeat right after a snapshot (when heartbeats are on).
                self.streaming.emit_heartbeat()
        elif snapshot_taken:
            from connector.heartbeat import Heartbeat

            heartbeat = Heartbeat.from_config(self.config)
            if heartbeat is not None:
                self.delivery.emit(heartbeat.beat(self.delivery.stored_offset))
                self.delivery.flush()
        self._prepared = True

    def _plan_and_snapshot(self, offset: dict[str, Any] | None) -> dict[str, Any] | None:
        """Debezium's start-up decision (snapshot.mode) and the snapshot it calls for; returns the
        offset to stream from, or None when the mode does not stream (initial_only)."""
        from snapshot.modes import STREAM_FROM_BEGINNING, STREAM_FROM_OFFSET
        from snapshot.snapshotter import SnapshotError, connection_factory
        from snapshot.startup import (
            PinnedPositionListener,
            build_snapshotter,
            earliest_position,
            plan_start,
            position_purged,
            stored_position,
        )

        assert self.info is not None and self.schema is not None
        connect = connection_factory(self.config)
        plan = plan_start(
            self.config,
            offset,
            history_exists=self.history.exists(),
            position_purged=position_purged(connect, offset, self.info.flavor),
        )
        if plan.error:
            raise SnapshotError(plan.error)
        if plan.reset_offsets:
            log.warning(
                "the stored binlog position is no longer on the server; taking a new snapshot "
                "(snapshot.mode=when_needed)"
            )
            offset = None
        start = offset
        if plan.snapshot:
            snapshotter = build_snapshotter(self.config, self.info.flavor, self.filter, connect=connect)
            self._snapshotter = snapshotter
            listener = SnapshotEmitter(self)
            if plan.stream_from == STREAM_FROM_OFFSET and offset is not None:
                # recovery: rebuild the history at the stored offset; streaming resumes there.
                snapshotter.run(
                    PinnedPositionListener(listener, stored_position(offset)), data=plan.snapshot_data
                )
                listener.finish()
                self.delivery.advance(offset)
                self.delivery.flush()
            else:
                snapshotter.run(listener, data=plan.snapshot_data)
                start = listener.finish()
        elif plan.stream_from == STREAM_FROM_OFFSET and offset is not None:
            self._recover(offset)
        elif plan.stream_from == STREAM_FROM_BEGINNING:
            first = earliest_position(connect)
            start = {"file": first.file, "pos": first.pos}
        return start if plan.stream else None

    def _wants_snapshot_locks(self) -> bool:
        return self.config.get("snapshot.locking.mode") != "none"

    def _starting_offset(self) -> dict[str, Any] | None:
        # The offset store is never ahead of any sink (it is written after every sink flushed), so
        # it is the safe resume point for all of them; a sink that commits offsets with its data
        # (Spark) recognises and skips what it already holds. Such a sink's own offset is used only
        # when the store has none (e.g. it was lost).
        stored = self.offsets.load()
        if stored is not None:
            return stored
        for sink in self.sinks:
            committed = sink.committed_offset()
            if committed is not None:
                return dict(committed)
        return None

    def _recover(self, offset: Mapping[str, Any]) -> None:
        from ddl.recovery import recover

        assert self.schema is not None
        self.schema.model = recover(
            self.history,
            self.schema.partition,
            offset,
            self.schema.parser,
            skip_unparseable=self.schema.skip_unparseable,
            prefer_ddl=self.config.get_bool("schema.history.internal.prefer.ddl"),
            ddl_filter=self.schema.ddl_filter,
        )
        log.info(
            "recovered %d table structures from the schema history; resuming at %s:%s",
            len(self.schema.model.tables),
            offset["file"],
            offset["pos"],
        )

    def run(self) -> None:
        try:
            self.prepare()
            if self.streaming is not None:  # None: the snapshot mode does not stream
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

        def reached() -> bool:
            assert self.streaming is not None
            file, pos = self.streaming.last_end
            done = BinlogPosition(file, pos).key >= target_key
            return done or self._stop.is_set() or time.monotonic() > deadline

        self.streaming.run(reached)
        self.delivery.flush()
        if time.monotonic() > deadline and not self._stop.is_set():
            raise TimeoutError(
                f"did not reach binlog position {target} within {timeout}s (at {self.streaming.last_end})"
            )

    def stop(self) -> None:
        self._stop.set()
        snapshotter = self._snapshotter
        if snapshotter is not None:
            snapshotter.cancel()

    def close(self) -> None:
        try:
            if self.streaming is not None:
                self.streaming.close()
            self.delivery.flush()
        finally:
            for sink in self.sinks:
                sink.close()
            self.history.stop()
            self.offsets.close()


class SnapshotEmitter:
    """Receives the snapshot's schema statements and rows and dispatches them as events.

    Implements ``snapshot.listener.SnapshotListener``; every row and statement goes through an
    ``EventDispatcher`` whose emitter is this object. Like Debezium's buffering receiver it holds
    back the most recent records, so that the very last snapshot record (even a schema change, or
    the last row of a table that is not the last one, when later tables are empty) is rewritten to
    ``source.snapshot = "last"`` with the completed offset.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        assert engine.schema is not None
        self.dispatcher = EventDispatcher(engine.builder, engine.filter, engine.schema, self)
        self.position: BinlogPosition | None = None
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

    def advance(self, offset: SourceOffset) -> None:
        self.engine.delivery.advance(offset)

    def tick(self) -> None:
        self.engine.delivery.tick()

    # -- SnapshotListener ----------------------------------------------------------------------------
    def _offset(self, done: bool = False) -> SourceOffset:
        assert self.position is not None
        return SourceOffset.at(self.position, snapshot=None if done else SNAPSHOT_INITIAL)

    def _where(self, marker: str | None) -> SourcePosition:
        assert self.position is not None
        return SourcePosition(
            file=self.position.file, pos=self.position.pos, ts_ms=self.ts_ms, snapshot=marker
        )

    def on_position(self, position: BinlogPosition) -> None:
        self.position = position
        self.ts_ms = int(time.time() * 1000)
        self._row_offset = self._offset()

    def on_schema_statement(self, ddl: str, database: str | None) -> None:
        offset = self._row_offset
        assert offset is not None
        self.dispatcher.dispatch_schema_change(ddl, database, offset, self._where("true"), offset)

    def on_table_start(self, table_id: TableId, estimated_rows: int | None, source_ts_ms: int) -> None:
        self.ts_ms = source_ts_ms

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
        pass

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
        self.engine.delivery.advance(offset)
        self.engine.delivery.flush()
        return offset
