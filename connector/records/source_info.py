"""The ``source`` block of every change record (Debezium's ``SourceInfo``): where a row came from, as
the offset context tells it, and the connector that read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from connector.records.struct_makers import SourceInfoStructMaker
from connector.version import __version__
from mysql_cdc_base.table_id import TableId


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


class SourceInfo:
    """Builds ``source`` blocks for the connector named ``prefix``; ``clock`` (nanoseconds) gives the
    time of a block whose event time is unknown; ``maker`` (``sourceinfo.struct.maker``) reshapes it."""

    def __init__(self, prefix: str, clock: Callable[[], int], maker: SourceInfoStructMaker | None) -> None:
        self.prefix = prefix
        self.clock = clock
        self.maker = maker
        self._shared: tuple[SourcePosition, TableId, dict[str, Any]] | None = None

    def block(
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
        return block if self.maker is None else self.maker.struct(block)

    def row_block(self, table_id: TableId, where: SourcePosition) -> dict[str, Any]:
        """A row's own ``source`` block. The rows of one event share their position: its block is
        built once and copied per row (not when the block takes the clock's time, which moves from
        row to row)."""
        shared = self._shared
        if shared is not None and shared[0] is where and shared[1] is table_id:
            return shared[2].copy()
        fresh = self.block(table_id, where)
        if not (where.ts_ms or where.ts_us):
            return fresh
        self._shared = (where, table_id, fresh)
        return fresh.copy()

    def row_blocks(self, table_id: TableId, where: SourcePosition) -> Callable[[], dict[str, Any]]:
        """A function giving each row of one event its ``source`` block (see ``row_block``)."""
        if not (where.ts_ms or where.ts_us):
            return partial(self.block, table_id, where)  # each block takes the clock's time
        # The rows share the event's source block: a copy each (of the one ``row_block`` keeps).
        shared = self._shared
        if shared is None or shared[0] is not where or shared[1] is not table_id:
            shared = self._shared = (where, table_id, self.block(table_id, where))
        return shared[2].copy
