"""Key-ordered chunk reads of one table, for incremental snapshots (reference section 5.4).

A chunk is ``SELECT <columns> FROM t WHERE <key> > <last key> AND NOT (<key> > <maximum key>)
[AND (<additional condition>)] ORDER BY <key> LIMIT <chunk size>``. Keys may be composite (the
comparison expands to an OR chain) and nullable (MySQL sorts NULL first, so a NULL last key means
"every non-NULL value" and a NULL compares equal only with ``IS NULL``). Values are passed as query
parameters, never spliced into the SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pymysql
import pymysql.cursors

from ddl.model import Table
from mysql_cdc_base.table_id import TableId
from snapshot.errors import SnapshotError
from snapshot.policy.queries import quote_identifier, quote_table

Row = tuple[Any, ...]
Key = tuple[Any, ...]


class ChunkKeyError(SnapshotError):
    """The table has no key an incremental snapshot can order its chunks by."""


def _greater(columns: Sequence[str], values: Key) -> tuple[str, list[Any]]:
    """SQL true for rows whose key sorts after ``values`` in MySQL's ascending order (NULL first)."""
    terms: list[str] = []
    params: list[Any] = []
    for index, column in enumerate(columns):
        parts: list[str] = []
        for prior, name in enumerate(columns[:index]):
            if values[prior] is None:
                parts.append(f"{quote_identifier(name)} IS NULL")
            else:
                parts.append(f"{quote_identifier(name)} = %s")
                params.append(values[prior])
        if values[index] is None:
            parts.append(f"{quote_identifier(column)} IS NOT NULL")
        else:
            parts.append(f"{quote_identifier(column)} > %s")
            params.append(values[index])
        terms.append("(" + " AND ".join(parts) + ")")
    return ("(" + " OR ".join(terms) + ")" if terms else "FALSE"), params


@dataclass(frozen=True)
class ChunkQuery:
    """How one table is read chunk by chunk: its columns, its key and an optional filter."""

    table_id: TableId
    columns: tuple[str, ...]
    key: tuple[str, ...]
    condition: str | None = None

    @classmethod
    def for_table(
        cls, table: Table, surrogate_key: str | None = None, condition: str | None = None
    ) -> ChunkQuery:
        """The table's primary key orders the chunks, or ``surrogate_key`` (a column name) when given;
        a table with neither is refused."""
        if surrogate_key:
            column = table.column(surrogate_key)
            if column is None:
                raise ChunkKeyError(
                    f"surrogate-key {surrogate_key!r} is not a column of {table.id} "
                    f"(its columns: {', '.join(table.column_names)})"
                )
            key: tuple[str, ...] = (column.name,)
        elif table.primary_key:
            key = table.primary_key
        else:
            raise ChunkKeyError(
                f"table {table.id} has no primary key, so an incremental snapshot cannot read it in key "
                'order; give a unique column as "surrogate-key" in the execute-snapshot signal, or '
                'use a blocking snapshot ("type": "blocking")'
            )
        return cls(table.id, table.column_names, key, condition or None)

    @cached_property
    def key_indexes(self) -> tuple[int, ...]:
        lowered = [c.lower() for c in self.columns]
        return tuple(lowered.index(k.lower()) for k in self.key)

    def key_of(self, row: Row) -> Key:
        return tuple(row[i] for i in self.key_indexes)

    def _select(self) -> str:
        return f"SELECT {', '.join(map(quote_identifier, self.columns))} FROM {quote_table(self.table_id)}"

    def _order(self, descending: bool = False) -> str:
        suffix = " DESC" if descending else ""
        return " ORDER BY " + ", ".join(quote_identifier(k) + suffix for k in self.key)

    def maximum_key_sql(self) -> str:
        where = f" WHERE {self.condition}" if self.condition else ""
        keys = ", ".join(map(quote_identifier, self.key))
        return f"SELECT {keys} FROM {quote_table(self.table_id)}{where}{self._order(True)} LIMIT 1"

    def chunk_sql(self, after: Key | None, maximum: Key, limit: int | None) -> tuple[str, list[Any]]:
        """The chunk after ``after`` (None: from the first row), up to ``maximum``, at most
        ``limit`` rows (None: every row of the range), in key order."""
        where, params = self._range_where(after, maximum)
        if limit is None:
            # Without a LIMIT the scan must end at ``maximum``: "NOT greater" is no range bound for
            # the optimizer, so the first key column also bounds it (rows past it are not read).
            column = quote_identifier(self.key[0])
            if maximum[0] is None:
                where += f" AND {column} IS NULL"
            else:
                where += f" AND ({column} IS NULL OR {column} <= %s)"
                params.append(maximum[0])
        return f"{self._select()}{where}{self._order()}{_limit(limit)}", params

    def row_at_sql(self, after: Key | None, maximum: Key, offset: int) -> tuple[str, list[Any]]:
        """The row ``offset`` rows (0-based) into the range after ``after`` up to ``maximum``: the
        boundaries of a window read as several sub-ranges."""
        where, params = self._range_where(after, maximum)
        return f"{self._select()}{where}{self._order()} LIMIT 1 OFFSET {int(offset)}", params

    def _range_where(self, after: Key | None, maximum: Key) -> tuple[str, list[Any]]:
        conditions: list[str] = []
        params: list[Any] = []
        if after is not None:
            sql, values = _greater(self.key, after)
            conditions.append(sql)
            params.extend(values)
        sql, values = _greater(self.key, maximum)
        conditions.append(f"{sql} IS NOT TRUE")  # NOT would drop NULL keys: NULL > x is NULL
        params.extend(values)
        if self.condition:
            # The query goes with parameters: a % of the condition (LIKE 'a%') is doubled so that
            # the driver's parameter formatting gives it back as it is.
            conditions.append(f"({self.condition.replace('%', '%%')})")
        return " WHERE " + " AND ".join(conditions), params

    def null_key_sql(self) -> str:
        """Every row whose (single, nullable) key is NULL: they cannot be told apart by the key, so
        they are one chunk whatever its size (a LIMIT would leave the rest of them behind)."""
        conditions = [f"{quote_identifier(self.key[0])} IS NULL"]
        if self.condition:
            conditions.append(f"({self.condition})")
        return f"{self._select()} WHERE {' AND '.join(conditions)}"

    def full_sql(self) -> str:
        """Every row (matching the condition) in one streamed read: a blocking snapshot's SELECT."""
        where = f" WHERE {self.condition}" if self.condition else ""
        return f"{self._select()}{where}"


def _limit(rows: int | None) -> str:
    return "" if rows is None else f" LIMIT {int(rows)}"


def read_maximum_key(conn: pymysql.connections.Connection, query: ChunkQuery) -> Key | None:
    """The largest key of the table (None when it has no row to read)."""
    with conn.cursor() as cur:
        cur.execute(query.maximum_key_sql())
        row = cur.fetchone()
    return tuple(row) if row is not None else None


def read_chunk(
    conn: pymysql.connections.Connection, query: ChunkQuery, after: Key | None, maximum: Key, limit: int
) -> list[Row]:
    sql, params = query.chunk_sql(after, maximum, limit)
    with conn.cursor() as cur:
        cur.execute(sql, params)
        rows = [tuple(row) for row in cur.fetchall()]
        if len(query.key) == 1 and len(rows) == limit and query.key_of(rows[-1]) == (None,):
            # NULL sorts first: the next chunk starts after NULL, so every NULL-key row is read now.
            cur.execute(query.null_key_sql())
            rows = [tuple(row) for row in cur.fetchall()]
        return rows


def stream_rows(conn: pymysql.connections.Connection, query: ChunkQuery, batch: int) -> Any:
    """Every row of the table as batches of rows, streamed from the server (bounded memory)."""
    with conn.cursor(pymysql.cursors.SSCursor) as cur:
        cur.execute(query.full_sql())
        while rows := cur.fetchmany(batch):
            yield [tuple(r) for r in rows]
