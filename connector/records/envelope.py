"""The change-event envelope (``before``, ``after``, ``source``, ``transaction``, ``op``, ``ts_*``) and
the one place a table's change record (data event, tombstone, truncate) is built."""

from __future__ import annotations

from typing import Any

from connector.records.table_schema import TableSchema
from mysql_cdc_base.connect import ConnectSchema
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord, Header, RecordKind

_DATA, _TOMBSTONE = RecordKind.DATA, RecordKind.TOMBSTONE


def envelope(
    before: Any, after: Any, source: dict[str, Any], transaction: Any, op: str, now_ns: int
) -> dict[str, Any]:
    """A data change event's value; ``now_ns`` the wall clock of its ``ts_*`` fields."""
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


def table_record(
    ts: TableSchema,
    key_schema: ConnectSchema | None,
    key: Any,
    value: dict[str, Any] | None,
    headers: tuple[Header, ...],
    offset: SourceOffset | None,
) -> ChangeRecord:
    """The one place a table's change record (data event, tombstone when ``value`` is None,
    truncate) is built."""
    if value is None:
        return ChangeRecord(
            ts.topic, key_schema, key, None, None, _TOMBSTONE, headers, offset, None, ts.table.id
        )
    return ChangeRecord(
        ts.topic, key_schema, key, ts.envelope_schema, value, _DATA, headers, offset, None, ts.table.id
    )
