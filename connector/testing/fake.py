"""A fake connector without a database: Debezium change events for rows a test supplies.

``FakeConnector`` is given CREATE TABLE statements (parsed by ``ddl.parsing.parser``) and a topic prefix, and
builds the change events the connector would emit for the rows and operations the test asks for:
``insert``/``update``/``delete`` (streaming, ``c``/``u``/``d`` plus tombstones and primary-key
changes), ``snapshot``/``read`` (``r`` with Debezium's snapshot markers), ``truncate`` (``t``),
``ddl`` (schema change events), and ``transaction()`` blocks (one GTID/timestamp; BEGIN/END records
and ``transaction`` blocks with ``provide.transaction.metadata=true``).

It is the connector's own code path, not a re-implementation: the table structures come from the
DDL parser, schema state and schema change records from ``SchemaState``, and every record from
``EventBuilder``/``TableSchema`` with the column converters of ``connector.records.conversion`` (the
``from_snapshot`` side). So the events equal, field for field, what the connector emits for the same
rows from a real server, apart from what depends on the server and the clock: ``source`` file, pos,
gtid, server_id, thread and ts_*, the envelope ts_*, and the ``runId`` header. Those are
deterministic here: generated from a fake binlog (``mysql-bin.000001``, positions counting up, one
GTID per transaction, a clock starting at ``clock_ms`` that advances one second per transaction) or
supplied per operation with ``source={...}``.

Row values: a ``dict`` of column name -> value (columns left out take the column's literal default,
or null when nullable without one), or a sequence with every column in table order. Give values as
pymysql returns them with its default conversions, i.e. as they are stored in the server:

========================== ===========================================================
column type                value
========================== ===========================================================
integers, YEAR             ``int`` (``bool`` accepted)
BOOLEAN / BIT(1)           ``bool`` or ``int``; BIT(n): ``int`` or big-endian ``bytes``
FLOAT / DOUBLE             ``float``
DECIMAL / NUMERIC          ``decimal.Decimal``, ``int``, or ``str`` (rounded half-up to the scale)
CHAR / VARCHAR / TEXT      ``str``
ENUM                       ``str`` (the member)
SET                        ``str`` (``"a,b"``) or a set/list of members
JSON                       ``str`` (the stored JSON text) or a dict/list (``json.dumps`` form)
BINARY / VARBINARY / BLOB  ``bytes`` (``str`` is UTF-8 encoded)
DATE                       ``datetime.date``
DATETIME                   ``datetime.datetime`` (microseconds as stored for the column's precision)
TIMESTAMP                  ``datetime.datetime``: naive = UTC, aware = converted to UTC
TIME                       ``datetime.timedelta`` (may be negative or > 24 h) or ``datetime.time``
spatial types              ``bytes`` in MySQL's internal form (4-byte SRID + WKB)
========================== ===========================================================

Temporal and decimal columns also take the server's text form (``"2024-01-31"``,
``"0000-00-00 00:00:00"``, ``"-838:59:59"``), which is how zero dates are written.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import fields, replace
from typing import Any

from connector.binlog.server_stream import RawEvent
from connector.config import ConnectorConfig, property_texts
from connector.dispatch.dispatcher import EventDispatcher, RowForm
from connector.dispatch.schema_state import SchemaState
from connector.embedded.events import EventLog, EventStream
from connector.factories import SINK_FACTORIES, load_factory
from connector.records.builder import EventBuilder, SourcePosition, TableSchema
from connector.records.filters import TableFilter
from connector.records.settings import converter_settings
from connector.records.topic_naming import topic_naming_strategy
from connector.records.transactions import TransactionMetadata, non_gtid_transaction_id
from connector.sources.incremental import INCREMENTAL, INCREMENTAL_OFFSET
from connector.sources.offset_context import BinlogOffsetContext
from connector.sources.settings import StreamingSettings
from connector.testing.fake_values import Normalizers, Row, row_image
from connector.transforms import build_chain
from ddl.history.store import MemorySchemaHistory
from ddl.model import Table
from ddl.parsing.parser import parser_for
from mysql_cdc_base.connect import schemas_enabled
from mysql_cdc_base.flavor import MARIADB, ServerFlavor
from mysql_cdc_base.position import SNAPSHOT_INITIAL, SourceOffset
from mysql_cdc_base.records import ChangeRecord
from mysql_cdc_base.table_id import TableId
from sink.base import Sink
from sink.jsonl import JsonlSink
from snapshot.listener import LAST, resolve_marker
from snapshot.settings import SnapshotSettings

# Connection properties the connector requires; the fake never connects.
_FAKE_CONNECTION: Mapping[str, str] = {
    "database.hostname": "fake.invalid",
    "database.user": "fake",
    "database.server.id": "1",
}
DEFAULT_CLOCK_MS = 1_700_000_000_000
DEFAULT_SERVER_UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"

# Sizes of the binlog events the fake pretends to write: only the ordering of positions matters.
_GTID_EVENT, _BEGIN_EVENT, _TABLE_MAP_EVENT, _ROWS_EVENT, _XID_EVENT, _QUERY_EVENT = 65, 80, 60, 100, 31, 200


# -- the fake -------------------------------------------------------------------------------------
_SOURCE_KEYS = frozenset(f.name for f in fields(SourcePosition))


class FakeConnector(EventStream):
    """Debezium change events without a database, built by the connector's own event code.

    ``ddl``: CREATE TABLE (and any other DDL) statements describing the tables, applied silently in
    ``database`` (as tables that existed before the connector started). ``properties``: the Debezium
    properties that shape events (``decimal.handling.mode``, ``tombstones.on.delete``,
    ``message.key.columns``, ``provide.transaction.metadata``, ``skipped.operations``,
    column filters ...). Every operation returns the records it produced, appends them to
    ``events`` and sends them to the ``sinks`` (flushed at once)."""

    def __init__(
        self,
        ddl: str | Iterable[str] = (),
        *,
        topic_prefix: str | None = None,
        database: str = "inventory",
        flavor: str = "mysql",
        properties: Mapping[str, Any] | None = None,
        sinks: Sequence[Sink] = (),
        server_id: int = 1,
        binlog_file: str = "mysql-bin.000001",
        clock_ms: int = DEFAULT_CLOCK_MS,
        gtids: bool = True,
        server_uuid: str = DEFAULT_SERVER_UUID,
        run_id: str | None = None,
        charset: str = "utf8mb4",
        collation: str = "utf8mb4_general_ci",
    ) -> None:
        props = property_texts(properties or {})
        if topic_prefix is not None:
            props["topic.prefix"] = topic_prefix
        props.setdefault("topic.prefix", "fake")
        self.config = ConnectorConfig({**_FAKE_CONNECTION, **props})
        # snapshot.mode / snapshot.query.mode and their custom plugins, as the engine loads them.
        self.snapshot_settings = SnapshotSettings.from_config(self.config)
        self.database = database
        self.flavor = ServerFlavor(flavor.lower())  # chosen once; its dialect says what differs
        self.server_id = server_id
        self.clock_ms = clock_ms
        # The fake binlog's position, GTIDs and transaction, moved as streaming moves them: from
        # after the file header, one synthetic event at a time (``_write``).
        self.context = BinlogOffsetContext(
            SourceOffset(binlog_file, 4, server_id=server_id, ts_sec=clock_ms // 1000)
        )
        self._next_gno = 1
        # The open transaction's event time and GTID as its records show them (``source={...}``
        # of ``transaction()`` may override both; the fake binlog's GTID set counts on).
        self._txn_ts_ms = clock_ms
        self._txn_gtid: str | None = None
        self.use_gtids = gtids
        self.server_uuid = server_uuid
        self.transaction_metadata = StreamingSettings.from_config(self.config).transaction_metadata
        self.transaction_topic = topic_naming_strategy(self.config).transaction_topic()
        self.filter = TableFilter.from_config(self.config)
        self._event_ts_ms = clock_ms
        self.builder = EventBuilder(
            self.config,
            self.filter,
            converter_settings(self.config),
            run_id=(
                run_id or str(uuid.uuid5(uuid.NAMESPACE_URL, f"mysql-cdc-fake:{self.config.topic_prefix}"))
            ),
            clock=self._event_clock_ns,
        )
        self.history = MemorySchemaHistory()
        self.schema = SchemaState(self.config, parser_for(flavor), self.history, self.filter, self.builder)
        # The connector's own dispatcher; this object is its emitter (publish to the sinks and log).
        self.dispatcher = EventDispatcher(
            self.builder,
            self.filter,
            self.schema,
            self,
            TransactionMetadata(self.transaction_topic, self.builder.transaction_maker)
            if self.transaction_metadata
            else None,
        )
        self.transforms = build_chain(self.config.raw)  # the same transforms as the engine's delivery
        self._emitted: list[ChangeRecord] = []
        self.sinks: list[Sink] = []
        self._log = EventLog()
        self._drain_mark = 0
        self._normalizers = Normalizers()
        self._create_schema(ddl, database, charset, collation)
        for sink in sinks:
            self.add_sink(sink)

    def _create_schema(self, ddl: str | Iterable[str], database: str, charset: str, collation: str) -> None:
        """The server's charset, ``database`` and the tables of ``ddl``, as if they existed before the
        connector started (no schema change records)."""
        statements = [ddl] if isinstance(ddl, str) else list(ddl)
        self._apply_silently(f"SET character_set_server={charset}, collation_server={collation};", "")
        self._apply_silently(
            f"CREATE DATABASE IF NOT EXISTS `{database}` CHARSET {charset} COLLATE {collation}", database
        )
        for statement in statements:
            self._apply_silently(statement, database)

    @property
    def file(self) -> str:
        """The fake binlog file."""
        return self.context.last_end[0]

    @property
    def pos(self) -> int:
        """Where the fake binlog's next event starts."""
        return self.context.last_end[1]

    # -- structure ----------------------------------------------------------------------------------
    def _apply_silently(self, ddl: str, database: str) -> None:
        where = self.context.snapshot_position("true", self.clock_ms)
        self.schema.apply(ddl, database, self.context.offset(), where, None)

    def table(self, name: str | TableId) -> Table:
        table_id = (
            name
            if isinstance(name, TableId)
            else (TableId.parse(name) if "." in name else TableId(self.database, name))
        )
        table = self.schema.model.table(table_id)
        if table is None:
            known = ", ".join(str(t) for t in self.schema.model.table_ids()) or "none"
            raise KeyError(
                f"table {table_id} is not defined (known tables: {known}); pass its CREATE "
                "TABLE statement to FakeConnector or ddl()"
            )
        return table

    def table_schema(self, name: str | TableId) -> TableSchema:
        return self.builder.table_schema(self.table(name))

    # -- sinks --------------------------------------------------------------------------------------
    def add_sink(self, sink: Sink) -> Sink:
        """Publish every record produced from now on to ``sink`` too (sent and flushed per call)."""
        sink.start()
        self.sinks.append(sink)
        return sink

    def publish_to_jsonl(self, path: str | os.PathLike[str]) -> Sink:
        """Also write records to a JSON-lines file, exactly as ``sink.type=jsonl`` does."""
        return self.add_sink(
            JsonlSink(
                path,
                *schemas_enabled(self.config),
                fsync=False,
            )
        )

    def publish_to_kafka(self, bootstrap_servers: str, **properties: Any) -> Sink:
        """Also produce records to Kafka, exactly as ``sink.type=kafka`` does. ``properties`` are
        further ``sink.kafka.*`` / ``topic.creation.*`` connector properties."""
        config = ConnectorConfig(
            {
                **self.config.raw,
                "sink.kafka.bootstrap.servers": bootstrap_servers,
                **property_texts(properties),
            }
        )
        return self.add_sink(load_factory(SINK_FACTORIES["kafka"])(config))

    def close(self) -> None:
        """Close the sinks; the recorded events stay readable."""
        sinks, self.sinks = self.sinks, []
        try:
            for sink in sinks:
                sink.flush()
        finally:
            for sink in sinks:
                sink.close()
            self._log.close()

    def __enter__(self) -> FakeConnector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the dispatcher's emitter ------------------------------------------------------------------
    def emit(self, records: list[ChangeRecord]) -> None:
        if self.transforms:
            records = self.transforms.apply(records)
        if records:
            for sink in self.sinks:
                sink.send(records)
            for sink in self.sinks:
                sink.flush()
            self._log.append(records)
            self._emitted.extend(records)

    def advance(self, offset: SourceOffset) -> None:
        pass

    def tick(self) -> None:
        pass

    def _event_clock_ns(self) -> int:
        # Deterministic envelope and schema change time: the current operation's event time.
        return self._event_ts_ms * 1_000_000

    @contextlib.contextmanager
    def _operation(self, ts_ms: int) -> Iterator[list[ChangeRecord]]:
        """Collects what the dispatcher emits during one operation, at event time ``ts_ms``."""
        self._event_ts_ms = ts_ms
        emitted, self._emitted = self._emitted, []
        try:
            yield self._emitted
        finally:
            self._emitted = emitted

    # -- rows -----------------------------------------------------------------------------------------
    def row_image(
        self, table: str | TableId, row: Row, base: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The ``before``/``after`` payload of ``row`` (a full row, or with ``base`` a partial one
        over ``base``'s payload)."""
        t = self.table(table)
        return row_image(t, self.builder.table_schema(t), self._normalizers.of(t), row, base)

    # -- positions, transactions ------------------------------------------------------------------------
    def _gtid(self, number: int) -> str | None:
        if not self.use_gtids:
            return None
        if self.flavor is MARIADB:
            return f"0-{self.server_id}-{number}"
        return f"{self.server_uuid}:{number}"

    def _write(self, size: int) -> RawEvent:
        """Appends one event of ``size`` bytes to the fake binlog; the context sees it arrive."""
        file, pos = self.context.last_end
        raw = RawEvent(None, file, pos, pos + size, self.clock_ms // 1000, self.server_id, 0)
        self.context.on_event(raw)
        self.context.event_done(raw)
        return raw

    def _begin(self, source: Mapping[str, Any] | None, metadata: bool = True) -> None:
        overrides = dict(source or {})
        ts_ms = int(overrides.get("ts_ms", self.clock_ms))
        # The GTID event and (on MySQL) the BEGIN query count as one event of the transaction.
        raw = self._write(_GTID_EVENT + (_BEGIN_EVENT if self.flavor.dialect.begin_query_event else 0))
        context = self.context
        txn = context.begin(raw)
        txn.gtid = self._gtid(self._next_gno)
        txn.thread = overrides.get("thread")
        context.count()
        self._txn_ts_ms, self._txn_gtid = ts_ms, overrides.get("gtid", txn.gtid)
        if metadata:
            txn_id = self._txn_gtid or non_gtid_transaction_id(txn.file, txn.pos)
            with self._operation(ts_ms):
                self.dispatcher.dispatch_transaction_begin(txn_id, ts_ms, context.offset())

    def _commit(self, metadata: bool = True) -> None:
        context = self.context
        if not context.in_transaction():
            return
        ts_ms = self._txn_ts_ms
        self.clock_ms = max(self.clock_ms, ts_ms) + 1000
        raw = self._write(_XID_EVENT)
        context.count()
        context.commit(raw)
        self._next_gno += 1
        if metadata:
            with self._operation(ts_ms):
                self.dispatcher.dispatch_transaction_end(ts_ms, context.offset())

    @contextlib.contextmanager
    def transaction(self, source: Mapping[str, Any] | None = None) -> Iterator[FakeConnector]:
        """Operations inside share one transaction: one GTID, one event time, consecutive
        ``transaction`` orders (and BEGIN/END records with ``provide.transaction.metadata``)."""
        if self.context.in_transaction():
            raise RuntimeError("transactions do not nest")
        self._begin(source)
        try:
            yield self
        finally:
            self._commit()

    def _where(self, raw: RawEvent, source: Mapping[str, Any] | None) -> SourcePosition:
        """The ``source`` block of ``raw``'s first row, at the transaction's event time."""
        where = replace(self.context.position(raw), ts_ms=self._txn_ts_ms, gtid=self._txn_gtid)
        overrides = {k: v for k, v in (source or {}).items() if k in _SOURCE_KEYS}
        unknown = set(source or {}) - _SOURCE_KEYS
        if unknown:
            raise KeyError(f"unknown source field(s) {sorted(unknown)}; use {sorted(_SOURCE_KEYS)}")
        return replace(where, **overrides) if overrides else where

    def _rows_event(
        self,
        table: str | TableId,
        op: str,
        images: list[tuple[dict[str, Any] | None, dict[str, Any] | None]],
        source: Mapping[str, Any] | None,
    ) -> list[ChangeRecord]:
        table_id = self.table(table).id
        context = self.context
        implicit = not context.in_transaction()
        if implicit:
            self._begin(source)
        try:
            self._write(_TABLE_MAP_EVENT)
            context.count()
            raw = self._write(_ROWS_EVENT)
            where = self._where(raw, source)
            with self._operation(where.ts_ms or self._txn_ts_ms) as out:
                self.dispatcher.dispatch_rows(
                    table_id, op, lambda _schema: images, where, context.offset(), form=RowForm.CONVERTED
                )
            context.count()
            return out
        finally:
            if implicit:
                self._commit()

    # -- operations -------------------------------------------------------------------------------------
    def insert(
        self, table: str | TableId, *rows: Row, source: Mapping[str, Any] | None = None
    ) -> list[ChangeRecord]:
        """``c`` events for rows inserted by one statement (one rows event: ``source.row`` 0, 1 ...)."""
        return self._rows_event(table, "c", [(None, self.row_image(table, r)) for r in rows], source)

    def update(
        self, table: str | TableId, before: Row, after: Row, *, source: Mapping[str, Any] | None = None
    ) -> list[ChangeRecord]:
        """A ``u`` event; ``after`` may hold only the changed columns. A changed primary key gives
        Debezium's delete + tombstone + create with ``__debezium.newkey``/``oldkey`` headers."""
        before_image = self.row_image(table, before)
        after_image = self.row_image(table, after, base=before_image)
        return self._rows_event(table, "u", [(before_image, after_image)], source)

    def delete(
        self, table: str | TableId, *rows: Row, source: Mapping[str, Any] | None = None
    ) -> list[ChangeRecord]:
        """``d`` events (each followed by a tombstone unless ``tombstones.on.delete=false``)."""
        return self._rows_event(table, "d", [(self.row_image(table, r), None) for r in rows], source)

    def truncate(
        self, table: str | TableId, *, source: Mapping[str, Any] | None = None
    ) -> list[ChangeRecord]:
        """``TRUNCATE TABLE``: a ``t`` event, which Debezium skips by default
        (``skipped.operations=t``): set ``skipped.operations=none`` to see it."""
        t = self.table(table)
        return self.ddl(
            f"TRUNCATE TABLE `{t.id.database}`.`{t.id.table}`", database=t.id.database, source=source
        )

    def ddl(
        self, statement: str, *, database: str | None = None, source: Mapping[str, Any] | None = None
    ) -> list[ChangeRecord]:
        """Apply a DDL statement as if it arrived in the binlog: the model changes, and the schema
        change record(s) (``include.schema.changes``) and truncate records are emitted."""
        context = self.context
        if context.in_transaction():
            raise RuntimeError("DDL commits implicitly: run it outside transaction()")
        # A DDL statement has no BEGIN: no transaction metadata records (those cover DML only).
        self._begin(source, metadata=False)
        try:
            raw = self._write(_QUERY_EVENT)
            where = self._where(raw, source)
            history_position = context.offset()
            context.count()
            # The fake's commit offset does not yet count the statement's own GTID.
            commit_offset = context.offset_after_commit(raw, None)
            db = database if database is not None else self.database
            with self._operation(where.ts_ms or self._txn_ts_ms) as out:
                self.dispatcher.dispatch_schema_change(statement, db, history_position, where, commit_offset)
            return out
        finally:
            self._commit(metadata=False)

    def read(
        self,
        table: str | TableId,
        *rows: Row,
        marker: str = "true",
        source: Mapping[str, Any] | None = None,
        last: bool = False,
    ) -> list[ChangeRecord]:
        """Snapshot ``r`` events with one ``source.snapshot`` marker; ``snapshot()`` picks markers
        the way Debezium does. ``last=True`` gives the offset of the snapshot's final record."""
        return self._reads(table, rows, marker, source, None if last else SNAPSHOT_INITIAL)

    def incremental_snapshot(
        self, table: str | TableId, *rows: Row, source: Mapping[str, Any] | None = None
    ) -> list[ChangeRecord]:
        """The ``r`` events an incremental snapshot (an ``execute-snapshot`` signal) gives for
        ``rows`` of ``table``: ``source.snapshot = "incremental"``, offset ``snapshot: INCREMENTAL``.
        The fake holds no table rows, so the rows a real connector would read are passed here;
        streamed changes made "during" the snapshot are simply the other calls, in order."""
        return self._reads(table, rows, INCREMENTAL, source, INCREMENTAL_OFFSET)

    def _reads(
        self,
        table: str | TableId,
        rows: Sequence[Row],
        marker: str,
        source: Mapping[str, Any] | None,
        offset_snapshot: str | None,
    ) -> list[ChangeRecord]:
        ts = self.table_schema(table)
        where = self.context.snapshot_position(marker, self.clock_ms)
        overrides = {k: v for k, v in (source or {}).items() if k in _SOURCE_KEYS}
        if overrides:
            where = replace(where, **overrides)
        offset = self.context.snapshot_offset(offset_snapshot)
        images = [(None, self.row_image(table, row)) for row in rows]
        with self._operation(where.ts_ms or self.clock_ms) as out:
            self.dispatcher.dispatch_rows(
                ts.table.id,
                "r",
                lambda _schema: images,
                where,
                offset,
                form=RowForm.CONVERTED,
                number_rows=False,
            )
        return out

    def snapshot(
        self,
        tables: Mapping[str, Sequence[Row]] | Sequence[tuple[str, Sequence[Row]]],
        *,
        source: Mapping[str, Any] | None = None,
    ) -> list[ChangeRecord]:
        """An initial snapshot of ``tables`` (in this order): ``r`` events with Debezium's markers
        (``first``, ``first_in_data_collection``, ``true``, ``last_in_data_collection``, ``last``;
        the very last record is ``last`` even when the last table is empty). Source: the current
        fake binlog position, ``server_id`` 0, no GTID; offsets carry ``snapshot: INITIAL`` until the
        last record. The snapshot's schema change records (SET/DROP/CREATE DATABASE/USE/SHOW CREATE
        TABLE, marker ``true``) are not produced: they need the server's own DDL text. The snapshot
        plugins of ``properties`` apply as at an engine's first start: no rows unless
        ``should_snapshot_data(False, False)``, none of a table whose SELECT is None (a SELECT's WHERE
        is not applied: pass the rows it returns), then ``snapshot_completed()``."""
        settings = self.snapshot_settings
        items = list(tables.items()) if isinstance(tables, Mapping) else list(tables)
        if not settings.snapshotter.should_snapshot_data(False, False):
            items = []
        items = [(t, rows) for t, rows in items if settings.select_for(self.table(t).id, ["*"]) is not None]
        plan: list[tuple[str, Row, str]] = []
        for table_index, (table, rows) in enumerate(items):
            for row_index, row in enumerate(rows):
                first_table, last_table = table_index == 0, table_index == len(items) - 1
                first_row, last_row = row_index == 0, row_index == len(rows) - 1
                plan.append(
                    (
                        table,
                        row,
                        resolve_marker(
                            first_table and first_row, last_table and last_row, first_row, last_row
                        ),
                    )
                )
        if plan:
            table, row, _ = plan[-1]
            plan[-1] = (table, row, LAST)
        out: list[ChangeRecord] = []
        for index, (table, row, marker) in enumerate(plan):
            out.extend(self.read(table, row, marker=marker, source=source, last=index == len(plan) - 1))
        self.clock_ms += 1000
        settings.snapshotter.snapshot_completed()
        return out

    # -- EventStream ------------------------------------------------------------------------------------
    def _catch_up(self, timeout: float) -> None:
        """Events are built synchronously: everything produced is already in the log."""
