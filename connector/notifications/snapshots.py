"""Debezium's snapshot notifications, worded as ``InitialSnapshotNotificationService`` and
``IncrementalSnapshotNotificationService`` word them (aggregate types, statuses, the
``additional_data`` keys and values).

Initial snapshot: STARTED, then per table IN_PROGRESS (``data_collections``: the tables whose rows
are read, in Java ``HashSet`` order) and TABLE_SCAN_COMPLETED (``data_collections``: every captured
table, sorted), then COMPLETED (or ABORTED). Incremental snapshot (the signal's id is the
notification id): STARTED, IN_PROGRESS per chunk read, TABLE_SCAN_COMPLETED per table, COMPLETED;
ABORTED for stopped tables, PAUSED and RESUMED.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from connector.notifications.java_order import hashset_copy_order
from connector.notifications.service import NotificationService, notification
from mysql_cdc_base.table_id import TableId

INITIAL = "Initial Snapshot"
INCREMENTAL = "Incremental Snapshot"
SUCCEEDED = "SUCCEEDED"
EMPTY = "EMPTY"


def key_text(key: Sequence[Any] | None) -> str:
    """A chunk key as Debezium prints it: its values joined by ``,``, ``<null>`` for a null."""
    if key is None:
        return '"<null>"'
    return ",".join("<null>" if v is None else str(v) for v in key)


def _names(tables: Iterable[TableId]) -> str:
    return ",".join(str(t) for t in tables)


class InitialSnapshotNotifier:
    def __init__(self, service: NotificationService) -> None:
        self.service = service

    def _send(self, type_: str, data: Sequence[tuple[str, str]] = ()) -> None:
        if self.service.enabled:
            self.service.send(notification(INITIAL, type_, self.service.connector, data))

    def started(self) -> None:
        self._send("STARTED")

    def table_in_progress(self, table: TableId, read: Sequence[TableId]) -> None:
        tables = ",".join(hashset_copy_order([str(t) for t in read]))
        self._send(
            "IN_PROGRESS", (("current_collection_in_progress", str(table)), ("data_collections", tables))
        )

    def table_completed(self, table: TableId, rows: int, captured: Iterable[TableId]) -> None:
        self._send(
            "TABLE_SCAN_COMPLETED",
            (
                ("scanned_collection", str(table)),
                ("total_rows_scanned", str(rows)),
                # status before data_collections: the two share a HashMap bucket; the order is
                # that of Debezium's recordings.
                ("status", SUCCEEDED),
                ("data_collections", _names(sorted(captured, key=str))),
            ),
        )

    def completed(self) -> None:
        self._send("COMPLETED")

    def aborted(self) -> None:
        self._send("ABORTED")


class IncrementalSnapshotNotifier:
    def __init__(self, service: NotificationService) -> None:
        self.service = service

    def _send(self, id_: str | None, type_: str, data: Sequence[tuple[str, str]] = ()) -> None:
        if self.service.enabled:
            self.service.send(notification(INCREMENTAL, type_, self.service.connector, data, id_))

    def started(self, id_: str | None, tables: Sequence[TableId]) -> None:
        self._send(id_, "STARTED", (("data_collections", _names(tables)),))

    def paused(self, id_: str | None, tables: Sequence[TableId]) -> None:
        self._send(id_, "PAUSED", (("data_collections", _names(tables)),))

    def resumed(self, id_: str | None, tables: Sequence[TableId]) -> None:
        self._send(id_, "RESUMED", (("data_collections", _names(tables)),))

    def aborted(self, id_: str | None, stopped: Sequence[TableId]) -> None:
        self._send(id_, "ABORTED", (("data_collections", _names(stopped)),))

    def in_progress(
        self,
        id_: str | None,
        tables: Sequence[TableId],
        current: TableId,
        maximum_key: Sequence[Any] | None,
        last_key: Sequence[Any] | None,
    ) -> None:
        self._send(
            id_,
            "IN_PROGRESS",
            (
                ("data_collections", _names(tables)),
                ("current_collection_in_progress", str(current)),
                ("maximum_key", key_text(maximum_key)),
                ("last_processed_key", key_text(last_key)),
            ),
        )

    def table_completed(
        self, id_: str | None, tables: Sequence[TableId], scanned: TableId, rows: int, status: str
    ) -> None:
        self._send(
            id_,
            "TABLE_SCAN_COMPLETED",
            (
                ("scanned_collection", str(scanned)),
                ("total_rows_scanned", str(rows)),
                ("status", status),
                ("data_collections", _names(tables)),
            ),
        )

    def completed(self, id_: str | None) -> None:
        self._send(id_, "COMPLETED")
