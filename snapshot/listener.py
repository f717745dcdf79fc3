"""The snapshotter's only output: callbacks on a ``SnapshotListener``.

The snapshotter knows SQL and locking; the engine knows schemas, records, offsets and sinks. This
protocol is the seam between them, so each can be tested against a real server on its own.

Call order for one run (single thread)::

    on_position
    on_schema_statement ...            (SET, DROP TABLE ..., per database DROP/CREATE/USE, SHOW CREATE TABLE)
    on_table_start, on_row ..., on_table_end     (per captured table, in snapshot order)
    on_schema_statement ...            (table-lock workflow only: tables whose structure could not be
                                        read under the table locks, read after they were released)
    on_complete

With ``snapshot.max.threads`` > 1 (chunked, ``snapshot/rows/chunked.py``) the calls are those of one
thread: tables one after the other, each table's rows in primary-key order. With
``legacy.snapshot.max.threads=true`` (or a ``connect`` that cannot be pickled for the reader
processes) the per-table callbacks of different tables interleave (each table's own start → rows →
end order still holds). Every callback runs on the thread that called ``Snapshotter.run``.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from mysql_cdc_base.position import BinlogPosition
from mysql_cdc_base.table_id import TableId

# ``source.snapshot`` values of snapshot rows (Debezium ``SnapshotRecord``, lower-cased).
FIRST: Final = "first"
FIRST_IN_DATA_COLLECTION: Final = "first_in_data_collection"
TRUE: Final = "true"
LAST_IN_DATA_COLLECTION: Final = "last_in_data_collection"
LAST: Final = "last"


def resolve_marker(
    first_in_snapshot: bool, last_in_snapshot: bool, first_in_table: bool, last_in_table: bool
) -> str:
    """Debezium's ``SnapshotMarkerResolver``: "last" wins over "first", table-level over "true"."""
    if last_in_snapshot:
        return LAST
    if first_in_snapshot:
        return FIRST
    if last_in_table:
        return LAST_IN_DATA_COLLECTION
    if first_in_table:
        return FIRST_IN_DATA_COLLECTION
    return TRUE


class SnapshotListener(Protocol):
    def on_schema_statement(self, ddl: str, database: str | None) -> None:
        """One schema statement, in Debezium's snapshot order.

        ``SET character_set_server=..., collation_server=...;`` (database ``""``), then
        ``DROP TABLE IF EXISTS `db`.`t``` for every table whose schema is captured, then per database
        ``DROP DATABASE IF EXISTS `db```, ``CREATE DATABASE `db` CHARSET .. COLLATE ..``, ``USE `db```,
        and the ``SHOW CREATE TABLE`` text of each of its tables. The engine parses each statement,
        records it in the schema history (at the position given to ``on_position``) and emits the
        schema change event (``source.snapshot`` "true").
        """

    def on_position(self, position: BinlogPosition) -> None:
        """The consistent point, read while writes to the captured tables were blocked. Streaming
        continues from here; every snapshot record carries it."""

    def on_table_start(self, table_id: TableId, estimated_rows: int | None, source_ts_ms: int) -> None:
        """A table's scan begins. ``source_ts_ms`` is the server clock read just before the table's
        SELECT (second precision, as Debezium's ``SELECT CURRENT_TIMESTAMP``): ``source.ts_ms`` of
        all its rows. ``estimated_rows`` comes from ``SHOW TABLE STATUS`` (None for overrides)."""

    def on_row(self, table_id: TableId, values: tuple[Any, ...], marker: str) -> None:
        """One row, values in table column order (or the projection's / override's columns), as
        pymysql returned them with the connection's ``conv``.

        ``marker`` is the row's ``source.snapshot`` per Debezium's rules: ``first`` (first row of the
        first table), ``last`` (last row of the last table), ``first_in_data_collection``,
        ``last_in_data_collection``, else ``true``. When the last table is empty no row carries
        ``last``: like Debezium, the engine then rewrites its buffered last snapshot record to
        ``last`` on ``on_complete`` (it must hold that record back anyway, to drop ``snapshot`` from
        its offset)."""

    def on_table_end(self, table_id: TableId, rows: int) -> None:
        """A table's scan finished after ``rows`` rows."""

    def on_complete(self) -> None:
        """Everything was read and every lock released; the snapshot transaction is over."""


class OptionalListenerHooks(Protocol):
    """Extra hooks a listener may define; the snapshotter calls them only when present."""

    def on_sql_mode(self, sql_mode: str) -> None:
        """The server's global ``sql_mode`` (for ANSI_QUOTES in the DDL parser), read before the
        first schema statement."""


class PinnedPositionListener:
    """Forwards every callback to ``inner``, but reports ``position`` instead of the snapshot's own.

    Serves ``snapshot.mode=recovery``: the rebuilt schema history must carry the stored offset
    (streaming resumes there), not the position the schema was read at.
    """

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
