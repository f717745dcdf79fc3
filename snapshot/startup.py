"""What the engine needs from the snapshot package at start-up, independent of the engine's internals.

The engine's start-up (``Engine.prepare``), after the probe, history and schema state exist::

    offset = stored offset or None
    connect = connection_factory(config)
    plan = plan_start(config, offset, history_exists=history.exists(),
                      position_purged=position_purged(connect, offset, flavor))
    if plan.error: raise SnapshotError(plan.error)             # e.g. purged binlog: says how to re-snapshot
    if plan.reset_offsets: offset = None                        # when_needed after a purge
    start = offset
    if plan.snapshot:
        snapshotter = build_snapshotter(config, flavor, table_filter, connect=connect)
        if plan.stream_from == STREAM_FROM_OFFSET:              # recovery: keep the stored offset
            snapshotter.run(PinnedPositionListener(listener, stored_position(offset)), data=plan.snapshot_data)
            (deliver, then store the unchanged stored offset again)
        else:
            snapshotter.run(listener, data=plan.snapshot_data)
            start = <the snapshot's final offset>
    elif plan.stream_from == STREAM_FROM_OFFSET: recover the schema from the history up to ``offset``
    elif plan.stream_from == STREAM_FROM_BEGINNING: start = earliest_position(connect), empty schema
    if plan.stream: stream from ``start``; else stop after the snapshot (initial_only)

``PinnedPositionListener`` serves ``snapshot.mode=recovery``: the rebuilt schema history must carry the
stored offset (streaming resumes there), not the position the schema was read at.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pymysql

from ddl.model import TableId
from ddl.position import BinlogPosition
from snapshot.binlog_status import binlog_files, position_available
from snapshot.listener import SnapshotListener
from snapshot.modes import SnapshotPlan, decide
from snapshot.progress import ProgressReporter
from snapshot.snapshotter import SnapshotSettings, Snapshotter, connection_factory

if TYPE_CHECKING:
    from connector.config import ConnectorConfig
    from connector.filters import TableFilter

Connect = Callable[[], pymysql.connections.Connection]


def snapshot_in_progress(offset: Mapping[str, Any] | None) -> bool:
    """The offset was stored while a snapshot ran (``snapshot: INITIAL``; legacy ``true``)."""
    if not offset:
        return False
    value = offset.get("snapshot")
    if isinstance(value, bool):
        return value
    return str(value).upper() in ("INITIAL", "TRUE") if value is not None else False


def stored_position(offset: Mapping[str, Any]) -> BinlogPosition:
    gtids = offset.get("gtids")
    return BinlogPosition(str(offset["file"]), int(offset["pos"]), str(gtids) if gtids else None)


def describe_offset(offset: Mapping[str, Any] | None) -> str | None:
    if not offset or "file" not in offset:
        return None
    text = f"binlog file '{offset['file']}', pos={offset.get('pos')}"
    return f"GTIDs {offset['gtids']} and {text}" if offset.get("gtids") else text


def position_purged(connect: Connect, offset: Mapping[str, Any] | None, flavor: str) -> bool:
    """True when the server can no longer serve the binlog from the stored offset. An interrupted
    snapshot's offset is never streamed from, so it is never "purged"."""
    if not offset or snapshot_in_progress(offset) or "file" not in offset:
        return False
    conn = connect()
    try:
        with conn.cursor() as cur:
            return not position_available(cur, stored_position(offset), flavor)
    finally:
        conn.close()


def earliest_position(connect: Connect) -> BinlogPosition:
    """Start of the oldest binlog on the server (``snapshot.mode=never`` without offsets)."""
    conn = connect()
    try:
        with conn.cursor() as cur:
            files = binlog_files(cur)
    finally:
        conn.close()
    if not files:
        raise RuntimeError("the server lists no binary logs (SHOW BINARY LOGS); is log_bin enabled?")
    return BinlogPosition(files[0], 4)


def plan_start(
    config: ConnectorConfig, offset: Mapping[str, Any] | None, *, history_exists: bool, position_purged: bool
) -> SnapshotPlan:
    """Debezium's start-up decision for this connector's ``snapshot.mode``."""
    settings = SnapshotSettings.from_config(config)
    return decide(
        settings.mode,
        offset is not None,
        snapshot_in_progress(offset),
        position_purged,
        history_exists=history_exists,
        position=describe_offset(offset),
        configuration=settings.configuration_based,
    )


def build_snapshotter(
    config: ConnectorConfig,
    flavor: str,
    table_filter: TableFilter,
    *,
    projection: Callable[[TableId], Sequence[str] | None] | None = None,
    progress: ProgressReporter | None = None,
    connect: Connect | None = None,
) -> Snapshotter:
    """A snapshotter configured from the connector properties and filters."""
    return Snapshotter(
        SnapshotSettings.from_config(config),
        connect or connection_factory(config),
        table_filter.table_captured,
        flavor,
        is_database_captured=table_filter.database_captured,
        projection=projection,
        progress=progress,
    )


class PinnedPositionListener:
    """Forwards every callback, but reports ``position`` instead of the snapshot's own (recovery)."""

    def __init__(self, inner: SnapshotListener, position: BinlogPosition) -> None:
        self.inner = inner
        self.position = position

    def on_schema_statement(self, ddl: str, database: str | None) -> None:
        self.inner.on_schema_statement(ddl, database)

    def on_position(self, position: BinlogPosition) -> None:
        self.inner.on_position(self.position)

    def on_table_start(self, table_id: TableId, estimated_rows: int | None, source_ts_ms: int) -> None:
        self.inner.on_table_start(table_id, estimated_rows, source_ts_ms)

    def on_row(self, table_id: TableId, values: tuple[Any, ...], marker: str) -> None:
        self.inner.on_row(table_id, values, marker)

    def on_table_end(self, table_id: TableId, rows: int) -> None:
        self.inner.on_table_end(table_id, rows)

    def on_complete(self) -> None:
        self.inner.on_complete()

    def on_sql_mode(self, sql_mode: str) -> None:
        hook = getattr(self.inner, "on_sql_mode", None)
        if callable(hook):
            hook(sql_mode)
