"""The Spark sink's record handlers: each record of a batch, by kind (a dispatch table), becomes
its table's share of the batch (``TableBatch``): changelog rows, the net effect per key, and schema
steps from the schema change events' ``tableChanges``."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from ddl.history.serialize import table_from_history
from ddl.model import Table
from mysql_cdc_base.connect import ConnectSchema
from mysql_cdc_base.errors import SchemaHistoryError
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord, RecordKind
from mysql_cdc_base.table_id import TableId
from sink.spark.batch import SchemaInfo, TableBatch, TableState
from sink.spark.commits import is_replay
from sink.spark.evolution import add_renames, delta_row, field_of_column, renames_in_ddl
from sink.spark.settings import SparkSinkSettings
from sink.spark_mapping import row_schema_of, unwrapped_envelope

log = logging.getLogger(__name__)

Work = dict[TableId, TableBatch]


class RecordHandlers:
    """The part of ``SparkSink`` that turns records into table batches."""

    settings: SparkSinkSettings
    _replay_until: SourceOffset | None
    _schema_cache: dict[int, tuple[ConnectSchema, SchemaInfo]]
    # Tables whose records arrive unwrapped (ExtractNewRecordState): their tombstones are deletes.
    _unwrapped: set[TableId]
    _unwrapped_row_schema: dict[TableId, ConnectSchema]
    _batch_skipped: Counter[str]  # per Delta table, the replayed events of this batch it held

    def _state_for(self, table_id: TableId) -> TableState:
        raise NotImplementedError

    def handle(self, record: ChangeRecord, offset: SourceOffset | None, work: Work) -> None:
        handler = HANDLERS.get(record.kind)
        if handler is not None:
            handler(self, record, offset, work)

    def _schema_info(self, value_schema: ConnectSchema) -> SchemaInfo:
        cached = self._schema_cache.get(id(value_schema))
        if cached is not None and cached[0] is value_schema:
            return cached[1]
        node = row_schema_of(value_schema)
        row_type, convert = delta_row(node)
        info = SchemaInfo(row_type, row_type.json(), node, convert)
        self._schema_cache[id(value_schema)] = (value_schema, info)
        return info

    def _batch_of(self, table_id: TableId, work: Work) -> TableBatch:
        tb = work.get(table_id)
        if tb is None:
            tb = work[table_id] = TableBatch(self._state_for(table_id))
        return tb

    def _on_data(self, record: ChangeRecord, offset: SourceOffset | None, work: Work) -> None:
        value_schema = record.value_schema
        if value_schema is None:
            return
        if not (value_schema.name or "").endswith(".Envelope"):
            # Unwrapped by ExtractNewRecordState (transforms): the row is the value itself.
            view = unwrapped_envelope(record.value, record.key)
            if view is None or record.table_id is None:
                return
            self._unwrapped.add(record.table_id)
            self._unwrapped_row_schema[record.table_id] = value_schema
            record = replace(record, value=view)
        elif not isinstance(record.value, dict):
            return
        table_id = record.table_id or _table_of(record.value)
        if table_id is None:
            return
        tb = self._batch_of(table_id, work)
        state = tb.state
        to_changelog = to_current = True
        # Past _replay_until no table holds the event yet; events from Kafka may repeat any time.
        if self._replay_until is not None or self.settings.kafka_input:
            to_changelog = not is_replay(offset, state.changelog_offset)
            to_current = not is_replay(offset, state.current_offset)
            self._note_skipped(state, to_changelog, to_current)
            if not (to_changelog or to_current):
                return
        key: tuple[str, ...] | None = ()
        if record.key_schema is not None:
            key = tuple(f.name for f in record.key_schema.fields or ())
        if record.value.get("op") == "t":
            key = None  # truncate events carry no key
        tb.add(record, self._schema_info(value_schema), key, offset, to_changelog, to_current)

    def _note_skipped(self, state: TableState, to_changelog: bool, to_current: bool) -> None:
        if not to_changelog:
            self._batch_skipped[state.changelog_name] += 1
        if not to_current and state.keyed:
            self._batch_skipped[state.current_name] += 1

    def _on_schema_change(self, record: ChangeRecord, offset: SourceOffset | None, work: Work) -> None:
        value = record.value if isinstance(record.value, dict) else {}
        renames = renames_in_ddl(str(value.get("ddl") or ""))
        for change in value.get("tableChanges") or ():
            if change.get("type") == "DROP":
                # (Snapshots drop and re-create every table in the history; a real DROP TABLE
                # leaves the Delta tables as they were.)
                log.debug("schema change drops table %s; its Delta tables are kept", change.get("id"))
                continue
            try:
                table = table_from_history(change)
            except SchemaHistoryError as exc:
                log.warning("schema change: %s; the Delta tables follow the table's next change event", exc)
                continue
            if change.get("previousId"):
                log.info(
                    "table %s is renamed to %s: its Delta tables are kept, %s gets its own",
                    change["previousId"],
                    table.id,
                    table.id,
                )
            if self._not_snapshotted(table.id, offset):
                log.debug(
                    "schema change of %s: not snapshotted, its Delta tables come with its first change",
                    table.id,
                )
                continue
            tb = self._batch_of(table.id, work)
            tb.note_offset(offset)
            derived = self._schema_from_table(table, tb.state)
            tb.state.pending_renames = add_renames(tb.state.pending_renames, renames)
            if derived is None:
                # The table's next change event carries its columns; the renames are certain now.
                tb.rename(tb.state.pending_renames)
                continue
            info, key = derived
            # Events may use a custom key (message.key.columns): keep it while its columns exist.
            known = tb.state.key
            live = {f.name.lower() for f in info.row_type.fields}
            if known and all(k.lower() in live for k in known):
                key = known
            if info.row_type_json != tb.state.row_type_json or key != tb.state.key:
                tb.evolve(info, key)

    def _not_snapshotted(self, table_id: TableId, offset: SourceOffset | None) -> bool:
        """A snapshot's schema change of a table whose rows it does not read
        (``snapshot.include.collection.list``, ``mysql-cdc snapshot --table``) and that has no
        Delta tables yet: creating them would show an empty table that MySQL holds rows of."""
        if offset is None or not offset.in_snapshot or self.settings.snapshot_reads(table_id):
            return False
        state = self._state_for(table_id)
        return state.current_schema is None and state.changelog_schema is None

    def _schema_from_table(
        self, table: Table, state: TableState
    ) -> tuple[SchemaInfo, tuple[str, ...]] | None:
        """The row schema change events of ``table`` will carry, when the table structure alone
        makes its Spark columns certain (else None)."""
        modes = self.settings.converter_settings
        if modes is None:
            return None
        column_filter = self.settings.column_filter
        captured = [c for c in table.columns if column_filter is None or column_filter(table.id, c.name)]
        existing = (
            {f.name.lower() for f in state.current_schema.fields}
            if state.current_schema is not None
            else None
        )
        fields = []
        for column in captured:
            new = existing is not None and column.name.lower() not in existing
            node = field_of_column(column, modes, with_default=new)
            if node is None:
                log.debug(
                    "schema change of %s: column %s (%s) is applied with the table's next change event",
                    table.id,
                    column.name,
                    column.type_name,
                )
                return None
            fields.append(node)
        row = {"type": "struct", "optional": True, "fields": fields, "field": "after"}
        envelope = {"type": "struct", "optional": False, "fields": [row]}
        row_type, convert = delta_row(envelope)
        names = {c.name.lower() for c in captured}
        key = tuple(k for k in table.primary_key if k.lower() in names)
        return SchemaInfo(row_type, row_type.json(), row, convert), key


def _table_of(value: dict[str, object]) -> TableId | None:
    source = value.get("source") or {}
    if isinstance(source, dict) and source.get("db") and source.get("table"):
        return TableId(str(source["db"]), str(source["table"]))
    return None


def _ignore(sink: RecordHandlers, record: ChangeRecord, offset: SourceOffset | None, work: Work) -> None:
    """Heartbeats and transaction markers only move the offset."""


def _on_tombstone(
    sink: RecordHandlers, record: ChangeRecord, offset: SourceOffset | None, work: Work
) -> None:
    """After a delete event a tombstone only moves the offset; for a table whose records arrive
    unwrapped (``delete.tombstone.handling.mode=delete-to-tombstone``) it is the delete, of the row
    whose key it carries."""
    if record.table_id in sink._unwrapped and record.key_schema is not None:
        schema = sink._unwrapped_row_schema.get(record.table_id)
        if schema is not None:
            sink._on_data(replace(record, value_schema=schema), offset, work)


HANDLERS: dict[RecordKind, Callable[[RecordHandlers, ChangeRecord, SourceOffset | None, Work], None]] = {
    RecordKind.DATA: RecordHandlers._on_data,
    RecordKind.SCHEMA_CHANGE: RecordHandlers._on_schema_change,
    RecordKind.TOMBSTONE: _on_tombstone,
    RecordKind.TRANSACTION: _ignore,
    RecordKind.HEARTBEAT: _ignore,
    RecordKind.NOTIFICATION: _ignore,
}
