"""The event builder: row images + table structure → Debezium change records.

Snapshot and streaming both hand rows to one ``EventBuilder``. Per table structure it builds a
``TableSchema`` once (key, value and envelope Connect schemas plus the per-column converters), so
the per-row work is a list comprehension over prepared converter functions. The parts live by
concept: ``table_schema`` (schemas and compiled converters), ``source_info`` (the ``source`` block),
``envelope`` (the event value and record), ``schema_changes``, ``message_keys`` and ``topic_naming``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from connector.records.column_mappers import ColumnMappers
from connector.records.conversion import ColumnConverter, ConverterSettings, column_converter
from connector.records.envelope import envelope, table_record
from connector.records.filters import TableFilter
from connector.records.message_keys import key_column_indexes, parse_message_key_columns
from connector.records.schema_changes import schema_change_record
from connector.records.settings import RecordSettings
from connector.records.source_info import SourceInfo, SourcePosition
from connector.records.struct_makers import made_structs, with_field_schema
from connector.records.table_schema import (
    DetachedKeyTableSchema,
    TableSchema,
    key_field_schema,
    payload_display,
)
from connector.records.topic_naming import (
    field_name_adjuster,
    schema_name_adjuster,
    topic_name,
    topic_naming_strategy,
)
from connector.records.transactions import TransactionMetadata
from ddl.model import Table
from mysql_cdc_base.connect import ConnectSchema, Field, primitive, struct
from mysql_cdc_base.debezium_schemas import SCHEMA_CHANGE_VALUE_SCHEMA, TRANSACTION_BLOCK_SCHEMA
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.properties import PropertyReader
from mysql_cdc_base.records import ChangeRecord, Header
from mysql_cdc_base.table_id import TableId

# Importable from here as before the split.
__all__ = [
    "EventBuilder",
    "SourcePosition",
    "TableSchema",
    "payload_display",
    "schema_change_record",
    "topic_name",
]


class EventBuilder:
    """Builds every change record the connector emits. Pure apart from the injected clock."""

    def __init__(
        self,
        config: PropertyReader,
        table_filter: TableFilter | None = None,
        converter_settings: ConverterSettings | None = None,
        run_id: str | None = None,
        clock: Callable[[], int] = time.time_ns,
        settings: RecordSettings | None = None,
    ) -> None:
        self.config = config
        self.record_settings = record = settings or RecordSettings.from_config(config)
        # Wall clock in nanoseconds (envelope ts_*, schema change ts_ms, source ts when the event
        # time is unknown); the fake connector injects a deterministic one.
        self.clock = clock
        self.prefix = config.topic_prefix
        self.delimiter = record.delimiter
        self.naming = topic_naming_strategy(config)
        self.schema_names = schema_name_adjuster(config)
        self.field_names = field_name_adjuster(config)
        made = made_structs(config, TRANSACTION_BLOCK_SCHEMA)
        self.source_maker, self.source_schema, self.transaction_maker, self.transaction_schema = made
        self._schema_change_schema: ConnectSchema | None = None
        self.filter = table_filter or TableFilter.from_config(config)
        self.settings = converter_settings or ConverterSettings()
        self.tombstones = record.tombstones
        self.skipped_ops = record.skipped_operations
        self._cache: dict[int, tuple[Table, TableSchema]] = {}
        self.sources = SourceInfo(self.prefix, clock, self.source_maker)
        self.headers: tuple[Header, ...] = ()
        if record.extended_headers:
            self.headers = (
                Header("__debezium.context.connectorLogicalName", self.prefix),
                Header("__debezium.context.taskId", "0"),
                Header("__debezium.context.connectorName", "mysql"),
                Header("__debezium.context.runId", run_id or str(uuid.uuid4())),
            )
        self._custom_keys = parse_message_key_columns(record.message_key_columns)
        self.mappers = ColumnMappers.from_config(config)

    # -- schemas ----------------------------------------------------------------------------------
    def table_schema(self, table: Table) -> TableSchema:
        cached = self._cache.get(id(table))
        if cached is not None and cached[0] is table:
            return cached[1]
        schema = self._build_table_schema(table)
        self._cache[id(table)] = (table, schema)
        return schema

    def _build_table_schema(self, table: Table) -> TableSchema:
        tid = table.id
        topic = self.naming.data_change_topic(tid)
        field_name = self.field_names.adjust
        plain: dict[int, ColumnConverter] = {}

        def converter(index: int) -> ColumnConverter:
            if index not in plain:
                plain[index] = column_converter(table.columns[index], table, self.settings)
            return plain[index]

        columns = []
        for index, column in enumerate(table.columns):
            if not self.filter.column_captured(tid, column.name):
                continue
            conv = converter(index)
            if self.mappers:
                conv = self.mappers.apply(tid, column, conv)
            columns.append((index, field_name(column.name), conv))
        schema_name = self.schema_names.adjust
        value_schema = struct(
            schema_name(f"{topic}.Value"), [Field(n, c.schema) for _, n, c in columns], optional=True
        )
        key_columns = tuple(
            (i, field_name(table.columns[i].name), converter(i))
            for i in key_column_indexes(table, self._custom_keys)
        )
        key_schema = None
        if key_columns:
            key_schema = struct(
                schema_name(f"{topic}.Key"),
                [Field(n, key_field_schema(c.schema)) for _, n, c in key_columns],
            )
        envelope = struct(
            schema_name(f"{topic}.Envelope"),
            [
                Field("before", value_schema),
                Field("after", value_schema),
                Field("source", self.source_schema),
                Field("transaction", self.transaction_schema),
                Field("op", primitive("string")),
                Field("ts_ms", primitive("int64", optional=True)),
                Field("ts_us", primitive("int64", optional=True)),
                Field("ts_ns", primitive("int64", optional=True)),
            ],
            version=2,
        )
        key_fields = tuple(n for _, n, _ in key_columns)
        in_value = {i: c for i, _, c in columns}
        if all(in_value.get(i) is c for i, _, c in key_columns):
            # Usual case: the key is a projection of the value.
            return TableSchema(table, topic, key_schema, value_schema, envelope, tuple(columns), key_fields)
        return DetachedKeyTableSchema(
            table,
            topic,
            key_schema,
            value_schema,
            envelope,
            tuple(columns),
            key_fields,
            key_columns=key_columns,
        )

    def schema_change_value_schema(self) -> ConnectSchema:
        """``SchemaChangeValue`` with this connector's ``source`` schema (sourceinfo.struct.maker)."""
        if self._schema_change_schema is None:
            self._schema_change_schema = with_field_schema(
                SCHEMA_CHANGE_VALUE_SCHEMA, "source", self.source_schema
            )
        return self._schema_change_schema

    # -- source block -----------------------------------------------------------------------------
    def source(
        self, table_id: TableId | None, where: SourcePosition, table_names: str | None = None
    ) -> dict[str, Any]:
        return self.sources.block(table_id, where, table_names)

    # -- data records -----------------------------------------------------------------------------
    def change_records(
        self,
        ts: TableSchema,
        op: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        where: SourcePosition,
        offset: Mapping[str, Any] | None,
        transactions: TransactionMetadata | None = None,
        row: int | None = None,
    ) -> list[ChangeRecord]:
        """Records for one row change: 1 for c/r/u, 2 for d (+tombstone), 3-4 for a key change.
        ``row``: the row's index in its rows event (``source.row``), when not ``where.row``.

        With ``transactions`` each data change event gets its ``transaction`` block and every record
        the offset with the counters up to its own data event (a tombstone: its delete's), as
        Debezium counts each record (``TransactionMonitor.dataEvent``) just before building it with
        the current offset; all decided before any record is built."""
        if op in self.skipped_ops:
            return []
        rows = None if row is None else (row,)
        return self._records(
            ts, op, ((before, after),), where, SourceOffset.coerce(offset), None, rows, transactions
        )

    def event_change_records(
        self,
        ts: TableSchema,
        op: str,
        images: Sequence[tuple[dict[str, Any] | None, dict[str, Any] | None]],
        where: SourcePosition,
        offset: SourceOffset,
        transactions: TransactionMetadata | None = None,
        *,
        first_row: int = 0,
        number_rows: bool = True,
    ) -> list[ChangeRecord]:
        """``change_records`` of every row of one rows event, in order: ``images[i]`` (before, after)
        is row ``first_row + i``. With ``number_rows`` its records get ``source.row`` = that index
        and the offset ``at_row(index + 1)`` (rows done); without, ``where.row`` and ``offset``.
        What the rows share (topic, schemas, headers, the offsets' fields) is found once."""
        if op in self.skipped_ops:
            return []
        if not number_rows:
            return self._records(ts, op, images, where, offset, None, None, transactions)
        rows = range(first_row, first_row + len(images))
        offsets = offset.at_rows(range(rows.start + 1, rows.stop + 1))
        return self._records(ts, op, images, where, offset, offsets, rows, transactions)

    def _records(
        self,
        ts: TableSchema,
        op: str,
        images: Sequence[tuple[dict[str, Any] | None, dict[str, Any] | None]],
        where: SourcePosition,
        offset: SourceOffset | None,
        offsets: Sequence[SourceOffset] | None,
        rows: Sequence[int] | None,
        transactions: TransactionMetadata | None,
    ) -> list[ChangeRecord]:
        """The one change-record path: row ``i`` of ``images`` gets ``offsets[i]`` (else ``offset``)
        and ``source.row`` = ``rows[i]`` (else ``where.row``). A row with one data event (and its
        tombstone) is built here; a key change or a transaction's row goes through ``_row_records``."""
        if transactions is not None and transactions.id is None:
            transactions = None
        key_of, key_schema, clock, headers = ts.key_of, ts.key_schema, self.clock, self.headers
        keyed_update = op == "u" and key_schema is not None
        tombstone = op == "d" and self.tombstones
        row_source = self.sources.row_blocks(ts.table.id, where)
        out: list[ChangeRecord] = []
        append = out.append
        for number, (before, after) in enumerate(images):
            record_offset = offsets[number] if offsets is not None else offset
            if keyed_update:
                key = key_of(after or {})
                simple = key_of(before or {}) == key and transactions is None
            else:
                key = key_of(after if after is not None else before or {})
                simple = transactions is None
            source = row_source()
            if rows is not None:
                source["row"] = rows[number]
            if not simple:
                out += self._row_records(ts, op, before, after, source, record_offset, transactions)
                continue
            append(
                table_record(
                    ts,
                    key_schema,
                    key,
                    envelope(before, after, source, None, op, clock()),
                    headers,
                    record_offset,
                )
            )
            if tombstone:
                append(table_record(ts, key_schema, key, None, headers, record_offset))
        return out

    def _row_records(
        self,
        ts: TableSchema,
        op: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        source: dict[str, Any],
        record_offset: SourceOffset | None,
        transactions: TransactionMetadata | None,
    ) -> list[ChangeRecord]:
        """The records of a row with a key change (delete, tombstone, create) or in a transaction."""
        events = self._row_events(ts, op, before, after)
        blocks: list[dict[str, Any]] | None = None
        offsets: list[SourceOffset | None] | None = None
        if transactions is not None:
            blocks, offsets = [], []
            for event in events:
                if event[0] is not None:
                    blocks.extend(transactions.next_blocks(ts.table.id, 1) or ())
                offsets.append(transactions.apply_to(record_offset) if record_offset is not None else None)
        now = self.clock()
        out = []
        data_index = 0
        for index, (event_op, key, image_before, image_after, headers) in enumerate(events):
            value = None
            if event_op is not None:
                block = blocks[data_index] if blocks is not None else None
                data_index += 1
                value = envelope(image_before, image_after, source, block, event_op, now)
            own_offset = offsets[index] if offsets is not None else record_offset
            out.append(table_record(ts, ts.key_schema, key, value, headers, own_offset))
        return out

    # (op or None for a tombstone, key, before, after, headers) per record of one row change.
    _RowEvent = tuple[str | None, Any, Any, Any, tuple[Header, ...]]

    def _row_events(
        self, ts: TableSchema, op: str, before: dict[str, Any] | None, after: dict[str, Any] | None
    ) -> list[_RowEvent]:
        if op == "u" and ts.key_schema is not None:
            old_key, new_key = ts.key_of(before or {}), ts.key_of(after or {})
            if old_key != new_key:
                return self._key_change(ts, before, after, old_key, new_key)
        key = ts.key_of(after if after is not None else before or {})
        events: list[EventBuilder._RowEvent] = [(op, key, before, after, self.headers)]
        if op == "d" and self.tombstones:
            events.append((None, key, None, None, self.headers))
        return events

    def _key_change(
        self, ts: TableSchema, before: Any, after: Any, old_key: Any, new_key: Any
    ) -> list[_RowEvent]:
        # Debezium: DELETE(old key, header newkey) + tombstone + CREATE(new key, header oldkey).
        # Debezium adds the key headers before the __debezium.context.* ones.
        delete_headers = (Header("__debezium.newkey", new_key, ts.key_schema), *self.headers)
        create_headers = (Header("__debezium.oldkey", old_key, ts.key_schema), *self.headers)
        events: list[EventBuilder._RowEvent] = []
        if "d" not in self.skipped_ops:
            events.append(("d", old_key, before, None, delete_headers))
            if self.tombstones:
                events.append((None, old_key, None, None, delete_headers))
        if "c" not in self.skipped_ops:
            events.append(("c", new_key, None, after, create_headers))
        return events

    def truncate_record(
        self,
        ts: TableSchema,
        where: SourcePosition,
        offset: Mapping[str, Any] | None,
        transactions: TransactionMetadata | None = None,
    ) -> list[ChangeRecord]:
        if "t" in self.skipped_ops:
            return []
        record_offset = SourceOffset.coerce(offset)
        block = None
        if transactions is not None:
            blocks = transactions.next_blocks(ts.table.id, 1)
            block = blocks[0] if blocks else None
            if record_offset is not None:
                record_offset = transactions.apply_to(record_offset)
        value = envelope(None, None, self.source(ts.table.id, where), block, "t", self.clock())
        return [table_record(ts, None, None, value, self.headers, record_offset)]  # no key
