"""The event builder: row images + table structure → Debezium change records.

Snapshot and streaming both hand rows to one ``EventBuilder``. Per table structure it builds a
``TableSchema`` once (key, value and envelope Connect schemas plus the per-column converters), so
the per-row work is a list comprehension over prepared converter functions.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from connector.config import ConfigError, ConnectorConfig
from connector.dispatch.filters import TableFilter
from connector.records.column_mappers import SOURCE_TYPE_PARAMETER_PREFIX, ColumnMappers
from connector.records.conversion import (
    ColumnConverter,
    ConverterSettings,
    column_converter,
    identity,
    null_rule_of,
)
from connector.records.struct_makers import made_structs, with_field_schema
from connector.records.topic_naming import field_name_adjuster, schema_name_adjuster, topic_naming_strategy
from connector.records.transactions import TransactionMetadata
from connector.version import __version__
from ddl.model import Table, TableId
from ddl.position import SourceOffset
from sink.connect import ConnectSchema, Field, primitive, struct
from sink.debezium_schemas import SOURCE_SCHEMA
from sink.records import ChangeRecord, Header, RecordKind

TRANSACTION_BLOCK_SCHEMA = struct(
    "event.block",
    [
        Field("id", primitive("string")),
        Field("total_order", primitive("int64")),
        Field("data_collection_order", primitive("int64")),
    ],
    optional=True,
    version=1,
)


@dataclass(frozen=True, slots=True)
class SourcePosition:
    """Where a row came from: everything the ``source`` block needs besides db/table."""

    file: str
    pos: int
    server_id: int = 0
    ts_ms: int = 0  # event time in the server; 0 = unknown (now is used)
    ts_us: int = 0
    gtid: str | None = None
    row: int = 0
    thread: int | None = None
    query: str | None = None
    snapshot: str | None = None  # None in streaming → the schema default "false" is written


@dataclass(frozen=True)
class TableSchema:
    """Connect schemas and converters for one table structure."""

    table: Table
    topic: str
    key_schema: ConnectSchema | None
    value_schema: ConnectSchema
    envelope_schema: ConnectSchema
    # (index into the table's columns, field name, converter) for each emitted column.
    value_columns: tuple[tuple[int, str, ColumnConverter], ...]
    key_fields: tuple[str, ...]
    # (column index, Python codec) that mysql-replication must decode text columns with.
    binlog_encodings: tuple[tuple[int, str], ...] = field(default=(), repr=False)
    _binlog: tuple[tuple[int, str, Callable[[Any], Any]], ...] = field(default=(), repr=False)
    _snapshot: tuple[tuple[int, str, Callable[[Any], Any]], ...] = field(default=(), repr=False)
    _convert_binlog: Callable[[Sequence[Any]], dict[str, Any]] = field(default=dict, repr=False)
    _convert_snapshot: Callable[[Sequence[Any]], dict[str, Any]] = field(default=dict, repr=False)
    _key_from_value: Callable[[Mapping[str, Any]], dict[str, Any]] = field(default=dict, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "binlog_encodings",
            tuple((i, c.binlog_encoding) for i, _, c in self.value_columns if c.binlog_encoding),
        )
        object.__setattr__(self, "_binlog", tuple((i, n, c.from_binlog) for i, n, c in self.value_columns))
        object.__setattr__(
            self, "_snapshot", tuple((i, n, c.from_snapshot) for i, n, c in self.value_columns)
        )
        object.__setattr__(self, "_convert_binlog", compile_image_converter(self._binlog))
        object.__setattr__(self, "_convert_snapshot", compile_image_converter(self._snapshot))
        object.__setattr__(self, "_key_from_value", compile_key_extractor(self.key_fields))

    # Converters get nulls too: a NOT NULL column's null (a zero date) becomes its default/fallback.
    def value_from_binlog(self, values: Sequence[Any]) -> dict[str, Any]:
        return self._convert_binlog(values)

    def value_from_snapshot(self, values: Sequence[Any]) -> dict[str, Any]:
        return self._convert_snapshot(values)

    def key_of(self, value: Mapping[str, Any]) -> dict[str, Any] | None:
        if self.key_schema is None:
            return None
        return self._key_from_value(value)

    # ``value_from_binlog``/``value_from_snapshot`` as the function that does the work, for a loop
    # over an event's rows (one call per image instead of two).
    @property
    def binlog_image_converter(self) -> Callable[[Sequence[Any]], dict[str, Any]]:
        return self._convert_binlog

    @property
    def snapshot_image_converter(self) -> Callable[[Sequence[Any]], dict[str, Any]]:
        return self._convert_snapshot

    @property
    def binlog_payload_columns(self) -> tuple[tuple[int, str, Callable[[Any], Any]], ...] | None:
        """(column index, field name, binlog converter) per emitted column, for a row decoder that
        builds the payload as it reads an image (``payload_display``); None when the payload is
        built another way (``binlog_image_converter`` then converts the decoded image)."""
        return self._binlog


def compile_key_extractor(fields: Sequence[str]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """One function building a row's key payload from its value payload (a dict display of the key
    fields in key order), generated once per table structure like ``compile_image_converter``."""
    namespace: dict[str, Any] = {}
    items = ", ".join(f"{name!r}: value.get({name!r})" for name in fields)
    exec(compile(f"def key_of(value):\n    return {{{items}}}", "<row key extractor>", "exec"), namespace)  # noqa: S102
    extractor: Callable[[Mapping[str, Any]], dict[str, Any]] = namespace["key_of"]
    return extractor


def compile_image_converter(
    columns: Sequence[tuple[int, str, Callable[[Any], Any]]],
) -> Callable[[Sequence[Any]], dict[str, Any]]:
    """One function turning a row image (values in table column order) into its value payload:
    a dict display with every emitted column in order, calling only the converters that are not
    ``identity``. Generated once per table structure; per row it saves a loop, a call per column
    and a tuple unpacking per column over the equivalent dict comprehension."""
    namespace: dict[str, Any] = {}
    display = payload_display(namespace, columns, "values[{}]".format)
    exec(
        compile(f"def convert_image(values):\n    return {display}", "<row image converter>", "exec"),
        namespace,
    )  # noqa: S102
    converter: Callable[[Sequence[Any]], dict[str, Any]] = namespace["convert_image"]
    return converter


def payload_display(
    namespace: dict[str, Any],
    columns: Sequence[tuple[int, str, Callable[[Any], Any]]],
    value_of: Callable[[int], str],
) -> str:
    """The dict display (Python source) of a row's value payload: each emitted column's converted
    value in order, where ``value_of(index)`` is the expression holding the image's value of column
    ``index``. The converters it calls are put into ``namespace`` (as ``convert<n>`` and
    ``when_null<n>``, n the emitted column's number); the display assigns the local ``v``. Shared
    by ``compile_image_converter`` and the row decoder, which converts as it reads."""
    items = [
        f"{name!r}: {_converted_value(namespace, number, value_of(index), convert)}"
        for number, (index, name, convert) in enumerate(columns)
    ]
    return "{" + ", ".join(items) + "}"


def _converted_value(
    namespace: dict[str, Any], number: int, value: str, convert: Callable[[Any], Any]
) -> str:
    """The expression converting ``value`` (an expression) in a generated payload display; the
    constants it names go into ``namespace``. A guarded converter's null rule (``NullRule``) is
    written out in line, so a column costs one call (its conversion), or none for a null."""
    if convert is identity:
        return value
    rule = null_rule_of(convert)
    if rule is None:
        namespace[f"convert{number}"] = convert
        return f"convert{number}({value})"
    namespace[f"when_null{number}"] = rule.when_null
    converted = "v" if rule.convert is identity else f"convert{number}(v)"
    if rule.convert is not identity:
        namespace[f"convert{number}"] = rule.convert
    if rule.may_invalidate:  # an invalid value (None from the conversion) is a null too
        return f"(when_null{number} if (v := {value}) is None or (v := {converted}) is None else v)"
    return f"(when_null{number} if (v := {value}) is None else {converted})"


class RowImage(dict[str, Any]):
    """A row's value payload that also carries its message key, for tables whose key cannot be read
    from the value (a key column excluded by the column filters or changed by a column mapper)."""

    __slots__ = ("key",)

    def __init__(self, value: dict[str, Any], key: dict[str, Any]) -> None:
        super().__init__(value)
        self.key = key


@dataclass(frozen=True)
class DetachedKeyTableSchema(TableSchema):
    """A ``TableSchema`` whose key columns are converted on their own (Debezium builds key fields from
    the table's key columns, without column filters or mappers)."""

    # (column index, field name, converter without mappers) per key field.
    key_columns: tuple[tuple[int, str, ColumnConverter], ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        # Key columns outside the value need their text codec set on the library's columns too.
        known = {i for i, _ in self.binlog_encodings}
        extra = tuple(
            (i, c.binlog_encoding) for i, _, c in self.key_columns if c.binlog_encoding and i not in known
        )
        object.__setattr__(self, "binlog_encodings", self.binlog_encodings + extra)

    def value_from_binlog(self, values: Sequence[Any]) -> dict[str, Any]:
        return RowImage(
            {name: conv(values[i]) for i, name, conv in self._binlog},
            {name: c.from_binlog(values[i]) for i, name, c in self.key_columns},
        )

    def value_from_snapshot(self, values: Sequence[Any]) -> dict[str, Any]:
        return RowImage(
            {name: conv(values[i]) for i, name, conv in self._snapshot},
            {name: c.from_snapshot(values[i]) for i, name, c in self.key_columns},
        )

    @property
    def binlog_image_converter(self) -> Callable[[Sequence[Any]], dict[str, Any]]:
        return self.value_from_binlog

    @property
    def binlog_payload_columns(self) -> None:
        return None  # the payload carries the key converted on its own (RowImage)

    @property
    def snapshot_image_converter(self) -> Callable[[Sequence[Any]], dict[str, Any]]:
        return self.value_from_snapshot

    def key_of(self, value: Mapping[str, Any]) -> dict[str, Any] | None:
        if isinstance(value, RowImage):
            return value.key
        return super().key_of(value)  # an image built by hand: the best the value can tell


_TOPIC_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def sanitized_topic_name(name: str) -> str:
    """Debezium's ``TopicNamingStrategy.sanitizedTopicName``: every character Kafka does not accept in
    a topic name (anything but ASCII letters, digits, ``.``, ``_`` and ``-``) becomes ``_``, one for
    one (``dbz5743中文`` -> ``dbz5743__``)."""
    if all(ch in _TOPIC_CHARACTERS for ch in name):
        return name
    return "".join(ch if ch in _TOPIC_CHARACTERS else "_" for ch in name)


def topic_name(prefix: str, delimiter: str, *parts: str) -> str:
    return sanitized_topic_name(delimiter.join([prefix, *parts]))


class EventBuilder:
    """Builds every change record the connector emits. Pure apart from the injected clock."""

    def __init__(
        self,
        config: ConnectorConfig,
        table_filter: TableFilter | None = None,
        converter_settings: ConverterSettings | None = None,
        run_id: str | None = None,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.config = config
        # Wall clock in nanoseconds (envelope ts_*, schema change ts_ms, source ts when the event
        # time is unknown); the fake connector injects a deterministic one.
        self.clock = clock
        self.prefix = config.topic_prefix
        self.delimiter = config.get("topic.delimiter") or "."
        self.naming = topic_naming_strategy(config)
        self.schema_names = schema_name_adjuster(config)
        self.field_names = field_name_adjuster(config)
        made = made_structs(config, TRANSACTION_BLOCK_SCHEMA)
        self.source_maker, self.source_schema, self.transaction_maker, self.transaction_schema = made
        self._schema_change_schema: ConnectSchema | None = None
        self.filter = table_filter or TableFilter.from_config(config)
        self.settings = converter_settings or ConverterSettings()
        self.tombstones = config.get_bool("tombstones.on.delete")
        skipped = {s.lower() for s in config.get_list("skipped.operations")}
        self.skipped_ops = frozenset() if skipped == {"none"} else frozenset(skipped)
        self._cache: dict[int, tuple[Table, TableSchema]] = {}
        self._source_block: tuple[SourcePosition, TableSchema, dict[str, Any]] | None = None
        self.headers: tuple[Header, ...] = ()
        if config.get_bool("extended.headers.enabled"):
            self.headers = (
                Header("__debezium.context.connectorLogicalName", self.prefix),
                Header("__debezium.context.taskId", "0"),
                Header("__debezium.context.connectorName", "mysql"),
                Header("__debezium.context.runId", run_id or str(uuid.uuid4())),
            )
        self._custom_keys = parse_message_key_columns(config.get("message.key.columns"))
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
            (i, field_name(table.columns[i].name), converter(i)) for i in self._key_column_indexes(table)
        )
        key_schema = None
        if key_columns:
            key_schema = struct(
                schema_name(f"{topic}.Key"),
                [Field(n, _key_field_schema(c.schema)) for _, n, c in key_columns],
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

    def _key_column_indexes(self, table: Table) -> list[int]:
        """Debezium's ``Key``: the columns ``message.key.columns`` selects for the table (in rule
        order, then column order), else the primary key; filters and mappers do not apply."""
        indexes: list[int] = []
        if self._custom_keys:
            prefix = f"{table.id.database}.{table.id.table}."
            for pattern in self._custom_keys:
                for index, column in enumerate(table.columns):
                    if index not in indexes and pattern.fullmatch(prefix + column.name):
                        indexes.append(index)
        if not indexes:
            by_name = {c.name.lower(): i for i, c in enumerate(table.columns)}
            indexes = [by_name[n.lower()] for n in table.primary_key if n.lower() in by_name]
        return indexes

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
        if where.ts_us:
            ts_us = where.ts_us
        elif where.ts_ms:
            ts_us = where.ts_ms * 1000
        else:
            ts_us = self.clock() // 1000
        block = {
            "version": __version__,
            "connector": "mysql",
            "name": self.prefix,
            "ts_ms": ts_us // 1000,
            "snapshot": where.snapshot,
            "db": table_id.database if table_id is not None else "",
            "sequence": None,
            "ts_us": ts_us,
            "ts_ns": ts_us * 1000,
            "table": table_names if table_names is not None else (table_id.table if table_id else None),
            "server_id": where.server_id,
            "gtid": where.gtid,
            "file": where.file,
            "pos": where.pos,
            "row": where.row,
            "thread": where.thread,
            "query": where.query,
        }
        return block if self.source_maker is None else self.source_maker.struct(block)

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
        events = self._row_events(ts, op, before, after)
        record_offset = SourceOffset.coerce(offset)
        blocks: list[dict[str, Any]] | None = None
        offsets: list[SourceOffset | None] | None = None
        if transactions is not None and transactions.id is not None:
            blocks, offsets = [], []
            for event in events:
                if event[0] is not None:
                    blocks.extend(transactions.next_blocks(ts.table.id, 1) or ())
                offsets.append(transactions.apply_to(record_offset) if record_offset is not None else None)
        source = self._row_source(ts, where)
        if row is not None:
            source["row"] = row
        now = self.clock()
        out = []
        data_index = 0
        for index, (event_op, key, image_before, image_after, headers) in enumerate(events):
            value = None
            if event_op is not None:
                block = blocks[data_index] if blocks is not None else None
                data_index += 1
                value = self._envelope(image_before, image_after, source, block, event_op, now)
            own_offset = offsets[index] if offsets is not None else record_offset
            out.append(self._record(ts, ts.key_schema, key, value, headers, own_offset))
        return out

    def _row_source(self, ts: TableSchema, where: SourcePosition) -> dict[str, Any]:
        """A row's own ``source`` block. The rows of one event share their position: its block is
        built once and copied per row (not when the block takes the clock's time, which moves from
        row to row)."""
        cached = self._source_block
        if cached is not None and cached[0] is where and cached[1] is ts:
            return cached[2].copy()
        fresh = self.source(ts.table.id, where)
        if not (where.ts_ms or where.ts_us):
            return fresh
        self._source_block = (where, ts, fresh)
        return fresh.copy()

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

        The same records as one ``change_records`` call per row, with what the rows share found once
        (topic, schemas, headers, the offsets' fields); a row that needs more than one data event
        and its tombstone (a key change, or a transaction's ``transaction`` blocks and counters)
        goes through ``change_records`` itself."""
        if op in self.skipped_ops:
            return []
        rows = range(first_row, first_row + len(images))
        offsets = offset.at_rows(range(rows.start + 1, rows.stop + 1)) if number_rows else None
        if transactions is not None and transactions.id is not None:
            return [
                record
                for number, (before, after) in enumerate(images)
                for record in self.change_records(
                    ts,
                    op,
                    before,
                    after,
                    where,
                    offsets[number] if offsets is not None else offset,
                    transactions,
                    row=rows[number] if number_rows else None,
                )
            ]
        key_of, key_schema, clock, headers = ts.key_of, ts.key_schema, self.clock, self.headers
        topic, envelope_schema, table_id = ts.topic, ts.envelope_schema, ts.table.id
        keyed_update = op == "u" and key_schema is not None
        tombstone = op == "d" and self.tombstones
        if where.ts_ms or where.ts_us:  # the rows share the event's source block: a copy each
            row_source: Callable[[], dict[str, Any]] = self._row_source(ts, where).copy
        else:  # each block takes the clock's time
            row_source = partial(self.source, table_id, where)
        data, tombstone_kind = RecordKind.DATA, RecordKind.TOMBSTONE
        out: list[ChangeRecord] = []
        append = out.append
        for number, (before, after) in enumerate(images):
            record_offset = offsets[number] if offsets is not None else offset
            if keyed_update:
                key = key_of(after or {})
                if key_of(before or {}) != key:  # a key change: delete, tombstone and create
                    out += self.change_records(
                        ts, op, before, after, where, record_offset, row=rows[number] if number_rows else None
                    )
                    continue
            else:
                key = key_of(after if after is not None else before or {})
            source = row_source()
            if number_rows:
                source["row"] = rows[number]
            # _envelope's and _record's layouts, written out: this runs for every streamed row
            # (tests/connector/dispatch/test_event_records.py holds it to what change_records builds).
            now = clock()
            value = {
                "before": before,
                "after": after,
                "source": source,
                "transaction": None,
                "op": op,
                "ts_ms": now // 1_000_000,
                "ts_us": now // 1000,
                "ts_ns": now,
            }
            append(
                ChangeRecord(
                    topic,
                    key_schema,
                    key,
                    envelope_schema,
                    value,
                    data,
                    headers,
                    record_offset,
                    None,
                    table_id,
                )
            )
            if tombstone:
                append(
                    ChangeRecord(
                        topic,
                        key_schema,
                        key,
                        None,
                        None,
                        tombstone_kind,
                        headers,
                        record_offset,
                        None,
                        table_id,
                    )
                )
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
        value = self._envelope(None, None, self.source(ts.table.id, where), block, "t", self.clock())
        return [self._record(ts, None, None, value, self.headers, record_offset)]  # no key

    def _envelope(
        self, before: Any, after: Any, source: dict[str, Any], transaction: Any, op: str, now_ns: int
    ) -> dict[str, Any]:
        return {
            "before": before,
            "after": after,
            "source": source,
            "transaction": transaction,
            "op": op,
            "ts_ms": now_ns // 1_000_000,
            "ts_us": now_ns // 1000,
            "ts_ns": now_ns,
        }

    @staticmethod
    def _record(
        ts: TableSchema,
        key_schema: ConnectSchema | None,
        key: Any,
        value: dict[str, Any] | None,
        headers: tuple[Header, ...],
        offset: SourceOffset | None,
    ) -> ChangeRecord:
        """The one place a table's change record (data event, tombstone when ``value`` is None,
        truncate) is built."""
        kind = RecordKind.DATA if value is not None else RecordKind.TOMBSTONE
        value_schema = ts.envelope_schema if value is not None else None
        return ChangeRecord(
            ts.topic, key_schema, key, value_schema, value, kind, headers, offset, None, ts.table.id
        )


_MESSAGE_KEY_PART = re.compile(r"^\s*([^\s:]+):([^:\s]+)\s*$")


def parse_message_key_columns(text: str | None) -> tuple[re.Pattern[str], ...]:
    """``message.key.columns`` (``db.t:c1,c2;(.*).t2:c``) as Debezium's ``CustomKeyMapper`` reads it:
    one regex ``<table regex>.<column>`` per column, matched case-insensitively against the whole of
    ``db.table.column``."""
    patterns: list[re.Pattern[str]] = []
    if not text:
        return ()
    for part in text.split(";"):
        if not part.strip():
            continue
        match = _MESSAGE_KEY_PART.match(part)
        if match is None:
            raise ConfigError(
                "message.key.columns",
                f"{part.strip()!r} is not <table>:<column>[,<column>...] "
                "(e.g. inventory.customers:pk1,pk2;(.*).purchaseorders:pk3)",
            )
        table, columns = match.groups()
        for column in columns.split(","):
            if not column:
                continue
            try:
                patterns.append(re.compile(f"{table}.{column}", re.IGNORECASE))
            except re.error as exc:
                raise ConfigError(
                    "message.key.columns", f"{table}.{column!r} is not a valid regular expression ({exc})"
                ) from None
    return tuple(patterns)


def _key_field_schema(schema: ConnectSchema) -> ConnectSchema:
    # Key fields are built without column mappers, so without propagated source-type parameters.
    params = schema.parameters
    if not params or not any(k.startswith(SOURCE_TYPE_PARAMETER_PREFIX) for k, _ in params):
        return schema
    kept = tuple((k, v) for k, v in params if not k.startswith(SOURCE_TYPE_PARAMETER_PREFIX))
    return replace(schema, parameters=kept or None)


# -- schema change records (Debezium 3d) ----------------------------------------------------------
def _opt(kind: str) -> ConnectSchema:
    return primitive(kind, optional=True)


_STRING_ARRAY_OPT = ConnectSchema("array", optional=True, items=primitive("string"))
SCHEMA_COLUMN_SCHEMA = struct(
    "io.debezium.connector.schema.Column",
    [
        Field("name", primitive("string")),
        Field("jdbcType", primitive("int32")),
        Field("nativeType", _opt("int32")),
        Field("typeName", primitive("string")),
        Field("typeExpression", _opt("string")),
        Field("charsetName", _opt("string")),
        Field("length", _opt("int32")),
        Field("scale", _opt("int32")),
        Field("position", primitive("int32")),
        Field("optional", _opt("boolean")),
        Field("autoIncremented", _opt("boolean")),
        Field("generated", _opt("boolean")),
        Field("comment", _opt("string")),
        Field("defaultValueExpression", _opt("string")),
        Field("enumValues", _STRING_ARRAY_OPT),
    ],
    version=1,
)
SCHEMA_TABLE_SCHEMA = struct(
    "io.debezium.connector.schema.Table",
    [
        Field("defaultCharsetName", _opt("string")),
        Field("primaryKeyColumnNames", _STRING_ARRAY_OPT),
        Field("columns", ConnectSchema("array", items=SCHEMA_COLUMN_SCHEMA)),
        Field("comment", _opt("string")),
    ],
    optional=True,
    version=1,
)
SCHEMA_CHANGE_SCHEMA = struct(
    "io.debezium.connector.schema.Change",
    [
        Field("type", primitive("string")),
        Field("id", primitive("string")),
        Field("table", SCHEMA_TABLE_SCHEMA),
    ],
    version=1,
)
SCHEMA_CHANGE_KEY_SCHEMA = struct(
    "io.debezium.connector.mysql.SchemaChangeKey",
    [
        Field("databaseName", primitive("string")),
    ],
    version=1,
)
SCHEMA_CHANGE_VALUE_SCHEMA = struct(
    "io.debezium.connector.mysql.SchemaChangeValue",
    [
        Field("source", SOURCE_SCHEMA),
        Field("ts_ms", primitive("int64")),
        Field("databaseName", _opt("string")),
        Field("schemaName", _opt("string")),
        Field("ddl", _opt("string")),
        Field("tableChanges", ConnectSchema("array", items=SCHEMA_CHANGE_SCHEMA)),
    ],
    version=1,
)


def schema_change_record(
    builder: EventBuilder,
    database: str,
    ddl: str,
    table_changes: Sequence[Mapping[str, Any]],
    source: dict[str, Any],
    offset: Mapping[str, Any] | None,
    ts_ms: int,
) -> ChangeRecord:
    """One record on the ``<topic.prefix>`` topic for one DDL statement and database."""
    value = {
        "source": source,
        "ts_ms": ts_ms,
        "databaseName": database,
        "schemaName": None,
        "ddl": ddl,
        "tableChanges": list(table_changes),
    }
    return ChangeRecord(
        builder.naming.schema_change_topic(),
        SCHEMA_CHANGE_KEY_SCHEMA,
        {"databaseName": database},
        builder.schema_change_value_schema(),
        value,
        RecordKind.SCHEMA_CHANGE,
        builder.headers,
        SourceOffset.coerce(offset),
        0,
        None,
    )
