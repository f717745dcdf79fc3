"""The connector's Kafka records read back: JsonConverter bytes (schema + payload) into the same
``ChangeRecord`` objects the connector emits, for ``mysql-cdc spark-apply``.

Schemas come from the records themselves (``value.converter.schemas.enable=true``), so reading
needs no connection to MySQL. Each record gets a source offset rebuilt from its ``source`` block,
which orders one server's events and tells a repeated event from a new one:

* streaming events: ``(file, pos, event=1, row)`` with ``row = 2 * source.row + 1`` (+1 for the
  ``c`` half of a key change, whose ``d`` half shares its position);
* snapshot rows: ``(file, pos of the snapshot, event=0, row = Kafka offset + 1)`` (all rows of a
  snapshot share one binlog position; a table's topic orders them);
* schema changes: ``row=0`` at their position, so they sort before the rows after them.

Records without a schema, values that are not Debezium change events, and key schemas that change
incompatibly raise :class:`BadRecordError`, naming the topic, partition and offset and the setting
to fix.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import orjson

from mysql_cdc_base.connect import ConnectSchema, schema_from_json
from mysql_cdc_base.position import SourceOffset, binlog_file_key
from mysql_cdc_base.records import ChangeRecord, RecordKind
from mysql_cdc_base.table_id import TableId
from sink.base import SinkError
from sink.spark_mapping import field_mapping, row_schema_of, widen

ENVELOPE_SUFFIX = ".Envelope"
SCHEMA_CHANGE = "io.debezium.connector.mysql.SchemaChangeValue"
SKIPPED_SCHEMAS = frozenset(
    {"io.debezium.connector.common.TransactionMetadataValue", "io.debezium.connector.common.Heartbeat"}
)
_OPS = ("c", "r", "u", "d", "t")
_SCHEMA_HEAD = b'{"schema":'
_PAYLOAD_HEAD = b',"payload":'


class BadRecordError(SinkError):
    """A Kafka record the job cannot apply; ``str()`` names where it is and what to change."""

    def __init__(self, row: KafkaRow, problem: str, fix: str) -> None:
        super().__init__(
            f"topic {row.topic}, partition {row.partition}, offset {row.offset}: {problem}; {fix}"
        )
        self.topic, self.partition, self.offset = row.topic, row.partition, row.offset


@dataclass(frozen=True, slots=True)
class KafkaRow:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """One record to apply: the connector (``source.name``, its ``topic.prefix``) it came from,
    where it sorts among that connector's records, and the record."""

    source: str
    order: tuple[Any, ...]
    record: ChangeRecord


_NO_SCHEMA_FIX = (
    "the job reads each record's own schema: set key.converter.schemas.enable=true and "
    "value.converter.schemas.enable=true on the connector that writes this topic, or leave the "
    "topic out of topics/topics.regex"
)
_NOT_DEBEZIUM_FIX = (
    "the job applies the MySQL connector's change event envelopes: write this topic without "
    "value transforms such as ExtractNewRecordState (transforms=...), or leave it out of "
    "topics/topics.regex"
)


class RecordReader:
    """Turns Kafka rows into ``SourceRecord``s; keeps the schemas it has built (one object per
    distinct schema, so the sink's per-schema caches work) and each table's key schema."""

    def __init__(self) -> None:
        self._schemas: dict[bytes, ConnectSchema] = {}
        self._keys: dict[tuple[str, TableId], ConnectSchema] = {}
        self._tables: dict[tuple[Any, Any, Any], TableId] = {}  # (source.name, db, table)

    def read(self, row: KafkaRow) -> SourceRecord | None:
        """The record, or None for what only moves offsets (tombstones, heartbeats, transaction
        markers)."""
        if row.value is None:
            return None  # a tombstone: the delete event before it did the work
        value_schema, value = self._envelope(row, row.value, "value")
        if value_schema is None:
            raise BadRecordError(row, "the value has a null schema", _NO_SCHEMA_FIX)
        name = value_schema.name or ""
        if name in SKIPPED_SCHEMAS:
            return None
        if name.endswith(ENVELOPE_SUFFIX):
            kind = RecordKind.DATA
        elif name == SCHEMA_CHANGE:
            kind = RecordKind.SCHEMA_CHANGE
        else:
            raise BadRecordError(
                row,
                f"the value is not a Debezium change event (schema {name or 'without a name'})",
                _NOT_DEBEZIUM_FIX,
            )
        source = value.get("source") if isinstance(value, dict) else None
        if not isinstance(source, dict) or not source.get("name"):
            raise BadRecordError(row, "the value has no source block naming its connector", _NOT_DEBEZIUM_FIX)
        key_schema, key = (None, None) if row.key is None else self._envelope(row, row.key, "key")
        table_id = None
        if kind is RecordKind.DATA:
            if value.get("op") not in _OPS:
                raise BadRecordError(
                    row, f"the change event has no valid op ({value.get('op')!r})", _NOT_DEBEZIUM_FIX
                )
            table_id = self._table_of(row, source, key_schema, value_schema)
        offset, order = _position(row, kind, value, source)
        record = ChangeRecord(
            topic=row.topic,
            key_schema=key_schema,
            key=key,
            value_schema=value_schema,
            value=value,
            kind=kind,
            offset=offset,
            partition=row.partition,
            table_id=table_id,
        )
        return SourceRecord(str(source["name"]), order, record)

    def _table_of(
        self, row: KafkaRow, source: dict[str, Any], key: ConnectSchema | None, value: ConnectSchema
    ) -> TableId:
        """The change event's table (one ``TableId`` object per connector and table), its key
        schema checked when it is not the one last seen."""
        where = (source["name"], source.get("db"), source.get("table"))
        try:
            known = self._tables.get(where)
        except TypeError:  # (names that are not JSON scalars)
            raise BadRecordError(row, "the source block's names are not text", _NOT_DEBEZIUM_FIX) from None
        if known is None:
            if not where[1] or not where[2]:
                raise BadRecordError(row, "the change event's source block names no table", _NOT_DEBEZIUM_FIX)
            known = self._tables[where] = TableId(str(where[1]), str(where[2]))
        if key is not None:
            self._check_key(row, str(where[0]), known, key, value)
        return known

    # -- JsonConverter envelopes -------------------------------------------------------------------
    def _envelope(self, row: KafkaRow, data: bytes, part: str) -> tuple[ConnectSchema | None, Any]:
        # The connector writes {"schema":...,"payload":...} without spaces: the schema's bytes key
        # the cache, and only the payload is parsed (a cut inside a string is not valid JSON, so it
        # falls back to parsing the whole record).
        if data.startswith(_SCHEMA_HEAD):
            cut = data.find(_PAYLOAD_HEAD)
            if cut > 0 and data.endswith(b"}"):
                head = data[len(_SCHEMA_HEAD) : cut]
                schema = self._schemas.get(head)
                try:
                    payload = orjson.loads(data[cut + len(_PAYLOAD_HEAD) : -1])
                    if schema is None:
                        schema = self._schema(row, orjson.loads(head), part)
                        if schema is not None:
                            self._schemas[head] = schema
                    return schema, payload
                except orjson.JSONDecodeError:
                    pass
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise BadRecordError(row, f"the {part} is not JSON ({exc})", _NOT_DEBEZIUM_FIX) from None
        if not isinstance(doc, dict) or set(doc) != {"schema", "payload"}:
            raise BadRecordError(
                row, f"the {part} carries no schema (no schema/payload envelope)", _NO_SCHEMA_FIX
            )
        return self._schema(row, doc["schema"], part), doc["payload"]

    def _schema(self, row: KafkaRow, node: Any, part: str) -> ConnectSchema | None:
        if node is None:
            return None
        try:
            return schema_from_json(node)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise BadRecordError(
                row, f"the {part} schema is not a Connect schema ({exc})", _NO_SCHEMA_FIX
            ) from None

    # -- keys ----------------------------------------------------------------------------------------
    def _check_key(
        self, row: KafkaRow, source: str, table_id: TableId, key: ConnectSchema, value: ConnectSchema
    ) -> None:
        """A key must name columns of the row, and a key column keeps a type its earlier values
        widen to (a key column whose type narrows or changes kind would split one row's history
        over two keys)."""
        where = (source, table_id)
        known = self._keys.get(where)
        if known is key:
            return
        row_fields = {f["field"].lower(): f for f in row_schema_of(value).get("fields") or ()}
        fix = (
            f"the key of {table_id} changed incompatibly; apply the table to a new warehouse "
            "(sink.spark.warehouse) and spark.apply.checkpoint.location, or re-snapshot it upstream"
        )
        old_types = {f.name.lower(): _spark_type(f.schema) for f in (known.fields or ())} if known else {}
        for f in key.fields or ():
            if f.name.lower() not in row_fields:
                raise BadRecordError(row, f"key column {f.name} is not a column of the row", fix)
            new = _spark_type(f.schema)
            old = old_types.get(f.name.lower())
            if old is not None and widen(old, new) != new:
                raise BadRecordError(
                    row,
                    f"key column {f.name} changes type from {old.simpleString()} to {new.simpleString()}",
                    fix,
                )
        self._keys[where] = key


def _spark_type(schema: ConnectSchema) -> Any:
    return field_mapping(schema.to_json()).spark_type


def _position(
    row: KafkaRow, kind: RecordKind, value: dict[str, Any], source: dict[str, Any]
) -> tuple[SourceOffset | None, tuple[Any, ...]]:
    """The record's rebuilt source offset and its sort key among its connector's records."""
    file = source.get("file") or ""
    try:
        pos = int(source.get("pos") or 0)
        src_row = int(source.get("row") or 0)
        server_id = source.get("server_id")
        if server_id is not None:
            server_id = int(server_id)
    except (TypeError, ValueError):
        raise BadRecordError(row, "the source block's pos/row are not numbers", _NOT_DEBEZIUM_FIX) from None
    snapshot = source.get("snapshot")
    in_snapshot = bool(snapshot) and str(snapshot).lower() != "false"
    if kind is RecordKind.SCHEMA_CHANGE:
        rank, event, seq = 0, (0 if in_snapshot else 1), 0
    elif in_snapshot:
        rank, event, seq = 1, 0, row.offset + 1
    else:
        rank, event, seq = 1, 1, 2 * src_row + (1 if value.get("op") != "d" else 0) + 1
    if not file:
        return None, ("", 0, 0, 0, 0, rank, row.topic, row.partition, row.offset)
    file = str(file)
    offset = SourceOffset(file, pos, event=event, row=seq, server_id=server_id)
    base, number = _file_key(file)
    return offset, (base, number, pos, event, seq, rank, row.topic, row.partition, row.offset)


@functools.lru_cache(maxsize=1024)
def _file_key(file: str) -> tuple[str, int]:
    """``binlog_file_key``, once per binlog file name (every record of a file names it)."""
    return binlog_file_key(file)
