"""Debezium's ``ReselectColumnsPostProcessor``: re-reads, by key, the columns of a change event that
arrive as ``unavailable.value.placeholder`` (what ``binlog_row_image=NOBLOB`` leaves out of an
image) or as null, and puts the row's current values into the event's ``after``.

Options (under ``post.processors.<alias>.``, Debezium's names and defaults):
``reselect.columns.include.list`` / ``reselect.columns.exclude.list`` (regular expressions matched,
case-insensitively, against ``<db>.<table>:<column>``), ``reselect.unavailable.values`` (true),
``reselect.null.values`` (true), ``reselect.use.event.key`` (false: the table's primary key; true:
the event key's fields, for ``message.key.columns``), ``reselect.error.handling.mode`` (warn: log a
row that is gone or a failed query and leave the event as it is; fail: stop).

As Debezium's: snapshot reads (``op: r``) and deletes are left alone, so are signal-table events;
the re-read uses a connection like the incremental snapshot's (the snapshot's user, session time
zone and value conversions) and converts the values as a snapshot row's. A row deleted before the
re-read keeps its placeholders (they state that the value could not be re-read) and its nulls.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import pymysql

from connector.post_processors.settings import FAIL, ReselectSettings
from connector.records.builder import TableSchema
from connector.transforms.base import Options
from ddl.model import Table
from mysql_cdc_base.errors import MysqlCdcError
from mysql_cdc_base.records import ChangeRecord, RecordKind
from mysql_cdc_base.table_id import TableId
from snapshot.policy.queries import quote_identifier, quote_table

log = logging.getLogger(__name__)


class ReselectError(MysqlCdcError, RuntimeError):
    """``reselect.error.handling.mode=fail`` and a row could not be re-read."""


def placeholder_forms(placeholder: str) -> frozenset[str]:
    """The placeholder as a payload holds it: the text (string columns), or its UTF-8 bytes as
    ``binary.handling.mode`` writes them (base64, base64-url-safe, hex)."""
    data = placeholder.encode()
    return frozenset(
        (placeholder, base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode(), data.hex())
    )


class ReselectColumns:
    """One ``ReselectColumnsPostProcessor`` (module docstring); ``apply`` as a transform's."""

    def __init__(
        self,
        options: Options,
        placeholder: str,
        connect: Callable[[], pymysql.connections.Connection],
        table_of: Callable[[TableId], Table | None],
        schema_of: Callable[[Table], TableSchema],
        signal_tables: frozenset[TableId] = frozenset(),
    ) -> None:
        self.settings = ReselectSettings.from_options(options)
        if not (self.settings.unavailable or self.settings.nulls):
            log.warning("%s: neither null nor unavailable values are re-selected", options.prefix.rstrip("."))
        self.placeholders = placeholder_forms(placeholder)
        self._connect = connect
        self._table_of = table_of
        self._schema_of = schema_of
        self._signal_tables = signal_tables
        self._conn: pymysql.connections.Connection | None = None

    def selected(self, table: TableId, column: str) -> bool:
        name = f"{table}:{column}"
        if self.settings.include:
            return any(p.fullmatch(name) for p in self.settings.include)
        return not any(p.fullmatch(name) for p in self.settings.exclude)

    def _needs(self, value: Any) -> bool:
        if value is None:
            return self.settings.nulls
        return self.settings.unavailable and isinstance(value, str) and value in self.placeholders

    def apply(self, record: ChangeRecord) -> ChangeRecord | None:
        value = record.value
        table_id = record.table_id
        if record.kind is not RecordKind.DATA or not isinstance(value, dict) or table_id is None:
            return record
        after = value.get("after")
        if not isinstance(after, dict) or value.get("op") in ("r", "d") or table_id in self._signal_tables:
            return record
        columns = [c for c, v in after.items() if self._needs(v) and self.selected(table_id, c)]
        table = self._table_of(table_id) if columns else None
        if table is None:
            return record
        found = self._reselect(table, self._key(table, record, after))
        if found is None:
            return record
        return replace(
            record, value={**value, "after": {**after, **{c: found[c] for c in columns if c in found}}}
        )

    def _key(self, table: Table, record: ChangeRecord, after: Mapping[str, Any]) -> dict[str, Any]:
        if self.settings.use_event_key and isinstance(record.key, dict):
            return dict(record.key)
        return {name: after.get(name) for name in table.primary_key}

    def _reselect(self, table: Table, key: Mapping[str, Any]) -> dict[str, Any] | None:
        """The row's current value payload (every column, converted as a snapshot row), or None
        when it is gone or could not be read (warn mode)."""
        if not key:
            self._failed(f"table {table.id} has no primary key; set reselect.use.event.key", None)
            return None
        where = " AND ".join(f"{quote_identifier(k)} <=> %s" for k in key)
        sql = f"SELECT {', '.join(map(quote_identifier, table.column_names))} FROM {quote_table(table.id)} WHERE {where} LIMIT 1"
        try:
            with self._connection().cursor() as cur:
                cur.execute(sql, list(key.values()))
                row = cur.fetchone()
            self._connection().rollback()  # no snapshot view kept between re-reads
        except pymysql.err.Error as exc:
            self._close()
            self._failed(f"Failed to re-select columns for table {table.id} and key {dict(key)}", exc)
            return None
        if row is None:
            self._failed(f"Failed to find row in table {table.id} with key {dict(key)}.", None)
            return None
        return self._schema_of(table).value_from_snapshot(row)

    def _failed(self, message: str, exc: BaseException | None) -> None:
        if self.settings.mode == FAIL:
            raise ReselectError(message + (f": {exc}" if exc else ""))
        log.warning("%s%s", message, f" ({exc})" if exc else "")
        return None

    def _connection(self) -> pymysql.connections.Connection:
        if self._conn is None or not self._conn.open:
            self._conn = self._connect()
        return self._conn

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and conn.open:
            conn.close()

    def close(self) -> None:
        self._close()
