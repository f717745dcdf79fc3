"""Transaction metadata (``provide.transaction.metadata``): BEGIN/END records and ``transaction`` blocks.

Debezium's ``TransactionMonitor``/``TransactionContext``, for one binlog stream:

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

from connector.records.struct_makers import TRANSACTION_MAKER, TransactionStructMaker, plugin_schema
from mysql_cdc_base.debezium_schemas import TRANSACTION_KEY_SCHEMA, TRANSACTION_VALUE_SCHEMA
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord, RecordKind
from mysql_cdc_base.table_id import TableId


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
    """The transaction context of one stream (Debezium's ``TransactionContext``): the current id and
    event counters, kept in the offsets. The dispatcher asks it for the ``transaction`` blocks of a
    row's data events before it builds them, so records are complete at construction."""

    __slots__ = ("topic", "id", "total", "per_table", "maker", "value_schema")

    def __init__(self, topic: str, maker: TransactionStructMaker | None = None) -> None:
        self.topic = topic
        self.id: str | None = None
        self.total = 0
        self.per_table: dict[str, int] = {}
        # transaction.metadata.factory: a plugin that may add fields (None: Debezium's default).
        self.maker = maker
        self.value_schema = TRANSACTION_VALUE_SCHEMA
        if maker is not None:
            self.value_schema = plugin_schema(TRANSACTION_MAKER, maker.value_schema(TRANSACTION_VALUE_SCHEMA))

    @classmethod
    def from_offset(
        cls, topic: str, stored: Mapping[str, Any] | None, maker: TransactionStructMaker | None = None
    ) -> TransactionMetadata:
        """The context stored in ``offset`` (``TransactionContext#load``): the total is the sum of the
        per-table counters."""
        context = cls(topic, maker)
        offset = SourceOffset.coerce(stored)
        if offset is not None:
            context.id = offset.transaction_id
            context.per_table = dict(offset.collection_orders)
            context.total = sum(context.per_table.values())
        return context

    def apply_to(self, offset: SourceOffset) -> SourceOffset:
        """``offset`` carrying this context (``TransactionContext#store``); unchanged outside a
        transaction."""
        if self.id is None:
            return offset
        return offset.with_(transaction_id=self.id, collection_orders=tuple(self.per_table.items()))

    def store(self, offset: MutableMapping[str, Any]) -> None:
        """Adds the context to a plain offset map (``TransactionContext#store``)."""
        offset.update(self.apply_to(SourceOffset("", 0)).transaction_map())

    # -- transaction boundaries --------------------------------------------------------------------
    def begin(self, txn_id: str, ts_ms: int, offset: Mapping[str, Any]) -> ChangeRecord | None:
        """Starts ``txn_id``; the BEGIN record, or None when this is the replayed start of the
        transaction restored from the offsets (its counters continue)."""
        if self.id == txn_id:
            return None
        self.id, self.total = txn_id, 0
        self.per_table.clear()
        value = {
            "status": "BEGIN",
            "id": txn_id,
            "event_count": None,
            "data_collections": None,
            "ts_ms": ts_ms,
        }
        if self.maker is not None:
            value = self.maker.begin_value(value)
        return self.record(value, self.apply_to(SourceOffset.from_map(offset)))

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
        return value if self.maker is None else self.maker.end_value(value)

    def record(self, value: dict[str, Any], offset: SourceOffset | None) -> ChangeRecord:
        return ChangeRecord(
            self.topic,
            TRANSACTION_KEY_SCHEMA,
            {"id": value["id"]},
            self.value_schema,
            value,
            RecordKind.TRANSACTION,
            (),
            offset,
            None,
            None,
        )

    # -- data events -------------------------------------------------------------------------------
    def next_blocks(self, table_id: TableId, count: int) -> list[dict[str, Any]] | None:
        """The ``transaction`` blocks of the next ``count`` data change events of ``table_id``
        (tombstones do not count), advancing the counters; None outside BEGIN/COMMIT (e.g. XA),
        where Debezium writes no block."""
        if self.id is None:
            return None
        name = str(table_id)
        blocks = []
        for _ in range(count):
            self.total += 1
            order = self.per_table.get(name, 0) + 1
            self.per_table[name] = order
            blocks.append({"id": self.id, "total_order": self.total, "data_collection_order": order})
        if self.maker is not None:
            return [self.maker.block(b) for b in blocks]
        return blocks
