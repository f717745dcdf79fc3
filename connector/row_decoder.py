"""Reading a rows event's row images for one table structure, without touching the library's objects.

mysql-replication decodes text columns with the charset name from the binlog's table map, which it
maps poorly (MySQL latin1 as strict cp1252, utf16/utf32 in the wrong byte order, nothing for some
single-byte charsets). ``BinlogRowDecoder`` reads the rows through a private copy of the event whose
text columns carry the codec our table model says is right (``ColumnConverter.binlog_encoding``), so
the event and the table map's column objects the library shares between events stay as they were.
The images come out as lists in column order, empty SETs restored (``binlog_row_values``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from connector.converters import binlog_row_values
from connector.events import TableSchema


class BinlogRowDecoder:
    """The (before, after) images of a rows event for one ``TableSchema``."""

    __slots__ = ("encodings", "_source_columns", "_columns")

    def __init__(self, schema: TableSchema) -> None:
        self.encodings = schema.binlog_encodings
        self._source_columns: Sequence[Any] | None = None
        self._columns: list[Any] = []

    def _columns_for(self, columns: Sequence[Any]) -> list[Any]:
        # A table map (and so its column list) is usually shared by the rows events of a
        # transaction: copy the columns once per table map, sharing those that need no codec.
        if columns is not self._source_columns:
            copies = list(columns)
            for index, encoding in self.encodings:
                if index < len(copies):
                    column = copy.copy(copies[index])
                    column.character_set_name = encoding
                    copies[index] = column
            self._source_columns, self._columns = columns, copies
        return self._columns

    def rows(self, event: Any, update: bool) -> list[tuple[list[Any] | None, list[Any] | None]]:
        """``update``: the event has before and after images; otherwise one image per row (the
        caller knows whether it is the before or the after image)."""
        if self.encodings:
            view = copy.copy(event)  # reads the same packet; the event itself is left as it is
            view.columns = self._columns_for(event.columns)
            rows = view.rows
        else:
            rows = event.rows
        if update:
            return [
                (
                    binlog_row_values(row["before_values"], row["before_none_sources"]),
                    binlog_row_values(row["after_values"], row["after_none_sources"]),
                )
                for row in rows
            ]
        return [(binlog_row_values(row["values"], row["none_sources"]), None) for row in rows]
