"""``snapshot.query.mode``: the SELECT that reads each table's rows.

The built-in ``select_all`` (Debezium's ``SelectAllSnapshotQuery``) implements the same
``snapshot.spi.SnapshotQuery`` protocol as a custom plugin (``snapshot.query.mode=custom``).
``snapshot.select.statement.overrides.<db>.<table>`` still wins over either, as in Debezium.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from mysql_cdc_base.table_id import TableId
from snapshot.spi import SnapshotQuery

QUERY_MODE_KEY: Final = "snapshot.query.mode"
SELECT_ALL: Final = "select_all"
CUSTOM_QUERY: Final = "custom"  # a snapshot.spi.SnapshotQuery named by snapshot.query.mode.custom.name


def quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def quote_table(table_id: TableId) -> str:
    return f"{quote_identifier(table_id.database)}.{quote_identifier(table_id.table)}"


class SelectAllQuery:
    """``snapshot.query.mode=select_all``: every captured column, every row."""

    def name(self) -> str:
        return SELECT_ALL

    def configure(self, properties: Mapping[str, str]) -> None:
        """Takes no properties of its own."""

    def snapshot_query(self, table_id: TableId, columns: Sequence[str]) -> str | None:
        return f"SELECT {', '.join(columns) or '*'} FROM {quote_table(table_id)}"


QUERY_MODES: Final[Mapping[str, SnapshotQuery]] = {SELECT_ALL: SelectAllQuery()}
