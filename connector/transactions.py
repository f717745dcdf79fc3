"""Transaction metadata (``provide.transaction.metadata``): BEGIN/END records and ``transaction`` blocks.

Debezium's ``TransactionMonitor``/``TransactionContext`` (reference 1.11, 3e), for one binlog stream:

* a BEGIN record on ``<prefix>.transaction`` when a transaction starts (the ``BEGIN`` query; on
  MariaDB the non-standalone GTID event), an END record when it commits, also for transactions that
  touch no captured table;
* every data change event of the transaction gets a ``transaction`` block ``{id, total_order,
  data_collection_order}`` (1-based; tombstones and skipped operations do not count);
* the counters live in the offsets (``transaction_id``, ``transaction_data_collection_order_<db.table>``)
  so that a restart inside a transaction continues the numbering, and the replayed start of the
  restored transaction does not emit a second BEGIN (Debezium main, dbz#633).

Transaction and heartbeat records carry no ``__debezium.context.*`` headers: Debezium builds them as
plain ``SourceRecord``s without headers (``TransactionMonitor#beginTransaction/endTransaction``).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from ddl.model import TableId
from sink.connect import ConnectSchema, Field, primitive, struct
from sink.records import ChangeRecord, RecordKind

TRANSACTION_KEY_SCHEMA = struct(
    "io.debezium.connector.common.TransactionMetadataKey",
    [
        Field("id", primitive("string")),
    ],
    version=1,
)
EVENT_COLLECTION_SCHEMA = struct(
    "event.collection",
    [
        Field("data_collection", primitive("string")),
        Field("event_count", primitive("int64")),
    ],
    optional=True,
    version=1,
)
TRANSACTION_VALUE_SCHEMA = struct(
    "io.debezium.connector.common.TransactionMetadataValue",
    [
        Field("status", primitive("string")),
        Field("id", primitive("string")),
        Field("event_count", primitive("int64", optional=True)),
        Field("data_collections", ConnectSchema("array", optional=True, items=EVENT_COLLECTION_SCHEMA)),
        Field("ts_ms", primitive("int64")),
    ],
    version=1,
)

OFFSET_TRANSACTION_ID = "transaction_id"
OFFSET_COLLECTION_ORDER_PREFIX = "transaction_data_collection_order_"


def non_gtid_transaction_id(file: str, begin_pos: int) -> str:
    """The id of a transaction without a GTID (``BinlogOffsetContext#NON_GTID_TRANSACTION_ID_FORMAT``)."""
    return f"file={file},pos={begin_pos}"


def _java_string_hash(text: str) -> int:
    # String.hashCode over UTF-16 code units, kept as an unsigned 32-bit value.
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hashmap_order(keys: Sequence[str]) -> list[str]:
    """Iteration order of a ``java.util.HashMap<String, ?>`` filled with ``keys`` in this order, which
    is how Debezium lists ``data_collections``: by bucket at the final capacity (16, doubled whenever
    the size passes 3/4 of it), insertion order within a bucket."""
    capacity = 16
    while len(keys) > capacity * 0.75:
        capacity *= 2

    def bucket(key: str) -> int:
        h = _java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return [key for _, key in sorted(enumerate(keys), key=lambda item: (bucket(item[1]), item[0]))]


class TransactionMetadata:
    """The transaction context of one stream: current id and event counters, kept in the offsets."""

    __slots__ = ("topic", "id", "total", "per_table")

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.id: str | None = None
        self.total = 0
        self.per_table: dict[str, int] = {}

    @classmethod
    def from_offset(cls, topic: str, offset: Mapping[str, Any]) -> TransactionMetadata:
        """The context stored in ``offset`` (``TransactionContext#load``): the total is the sum of the
        per-table counters."""
        context = cls(topic)
        txn_id = offset.get(OFFSET_TRANSACTION_ID)
        context.id = str(txn_id) if txn_id else None
        for key, value in offset.items():
            if key.startswith(OFFSET_COLLECTION_ORDER_PREFIX):
                context.per_table[key[len(OFFSET_COLLECTION_ORDER_PREFIX) :]] = int(value)
        context.total = sum(context.per_table.values())
        return context

    def store(self, offset: MutableMapping[str, Any]) -> None:
        """Adds the context to an offset map (``TransactionContext#store``)."""
        if self.id is not None:
            offset[OFFSET_TRANSACTION_ID] = self.id
        for name, count in self.per_table.items():
            offset[OFFSET_COLLECTION_ORDER_PREFIX + name] = count

    # -- transaction boundaries --------------------------------------------------------------------
    def begin(self, txn_id: str, ts_ms: int, offset: MutableMapping[str, Any]) -> ChangeRecord | None:
        """Starts ``txn_id``; the BEGIN record, or None when this is the replayed start of the
        transaction restored from the offsets (its counters continue)."""
        if self.id == txn_id:
            return None
        self.id, self.total = txn_id, 0
        self.per_table.clear()
        self.store(offset)
        return self._record(
            {"status": "BEGIN", "id": txn_id, "event_count": None, "data_collections": None, "ts_ms": ts_ms},
            offset,
        )

    def end(self, ts_ms: int) -> dict[str, Any] | None:
        """Ends the current transaction: the END record's value (None if none is in progress).
        The caller builds the record with the offset after the commit (``record``)."""
        if self.id is None:
            return None
        value = {
            "status": "END",
            "id": self.id,
            "event_count": self.total,
            "data_collections": [
                {"data_collection": name, "event_count": self.per_table[name]}
                for name in java_hashmap_order(list(self.per_table))
            ],
            "ts_ms": ts_ms,
        }
        self.id, self.total = None, 0
        self.per_table.clear()
        return value

    def record(self, value: dict[str, Any], offset: Mapping[str, Any] | None) -> ChangeRecord:
        return self._record(value, offset)

    def _record(self, value: dict[str, Any], offset: Mapping[str, Any] | None) -> ChangeRecord:
        return ChangeRecord(
            self.topic,
            TRANSACTION_KEY_SCHEMA,
            {"id": value["id"]},
            TRANSACTION_VALUE_SCHEMA,
            value,
            RecordKind.TRANSACTION,
            (),
            offset,
            None,
            None,
        )

    # -- data events -------------------------------------------------------------------------------
    def stamp(
        self, records: Sequence[ChangeRecord], table_id: TableId, offset: MutableMapping[str, Any]
    ) -> None:
        """Numbers the data change events of one row (tombstones do not count) and updates
        ``offset`` — the offset those records carry — to the counters after them."""
        if self.id is None:
            return  # outside BEGIN/COMMIT (e.g. XA): no block, as Debezium without a transaction id
        name = str(table_id)
        for record in records:
            if record.kind is RecordKind.DATA:
                self.total += 1
                order = self.per_table.get(name, 0) + 1
                self.per_table[name] = order
                record.value["transaction"] = {
                    "id": self.id,
                    "total_order": self.total,
                    "data_collection_order": order,
                }
        self.store(offset)
