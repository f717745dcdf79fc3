"""The library's own row decoding, for what the generated reader does not read.

Columns missing from an image (``binlog_row_image=MINIMAL/NOBLOB``), partial JSON and column
types without a generated reader are read by mysql-replication, through a private copy of the event
whose text columns carry our codecs and whose ENUM/SET columns and integer signedness come from our
table model where the table map carries none; the values are brought to the converters' forms by
``connector.binlog.library_values``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from pymysqlreplication.constants import FIELD_TYPE

from connector.binlog.image_reader import Rows, RowSchema
from connector.binlog.library_values import library_image, value_adapters


class LibraryRows:
    """The library's own row decoding, through a private copy of the event whose text columns carry
    our codecs, and ENUM/SET columns our labels where the table map has none (the event and the table
    map's shared column objects stay as they were)."""

    __slots__ = (
        "encodings",
        "labels",
        "left_out",
        "_source_columns",
        "_columns",
        "_adapted_columns",
        "_adapters",
    )

    def __init__(
        self,
        encodings: tuple[tuple[int, str], ...],
        labels: LabelsFromModel | None = None,
        left_out: bytes | None = None,
    ) -> None:
        self.encodings = encodings
        self.labels = labels
        self.left_out = left_out  # what a column an image leaves out (NOBLOB) reads as
        self._source_columns: Sequence[Any] | None = None
        self._columns: list[Any] = []
        self._adapted_columns: Sequence[Any] | None = None
        self._adapters: tuple[Any, ...] = ()

    def _columns_for(self, columns: Sequence[Any]) -> list[Any]:
        if columns is not self._source_columns:
            copies = list(self.labels.columns(columns) if self.labels else columns)
            for index, encoding in self.encodings:
                if index < len(copies):
                    column = copy.copy(copies[index])
                    column.character_set_name = encoding
                    copies[index] = column
            self._source_columns, self._columns = columns, copies
        return self._columns

    def rows(self, event: Any, update: bool) -> Rows:
        if self.encodings or (self.labels and self.labels.needed(event.columns)):
            view = copy.copy(event)  # reads the same packet; the event itself is left as it is
            view.columns = self._columns_for(event.columns)
            rows = view.rows
            columns = view.columns
        else:
            rows = event.rows
            columns = event.columns
        adapters = self._adapters_for(columns)
        left_out = self._left_out_values(len(columns))
        if update:
            return [
                (
                    library_image(row["before_values"], row["before_none_sources"], adapters, left_out),
                    library_image(row["after_values"], row["after_none_sources"], adapters, left_out),
                )
                for row in rows
            ]
        return [(library_image(row["values"], row["none_sources"], adapters, left_out), None) for row in rows]

    def _left_out_values(self, count: int) -> tuple[Any, ...] | None:
        """Per column, what it reads as when an image leaves it out: the placeholder as text for a
        text column (one with a character set), as bytes for a binary one."""
        if self.left_out is None:
            return None
        text = self.left_out.decode()
        texts = {index for index, encoding in self.encodings if encoding != "binary"}
        return tuple(text if i in texts else self.left_out for i in range(count))

    def _adapters_for(self, columns: Sequence[Any]) -> tuple[Any, ...]:
        if columns is not self._adapted_columns:
            self._adapted_columns, self._adapters = columns, value_adapters(columns)
        return self._adapters


class LabelsFromModel:
    """ENUM/SET labels and integer signedness from our table model for table maps that carry none.

    mysql-replication takes ENUM/SET labels and the UNSIGNED flags from the TABLE_MAP's optional
    metadata, which it reads only with ``binlog_row_metadata=FULL``; without them the library (and
    a reader compiled from its columns) yields None for every ENUM, an empty SET, and unsigned integers
    read as signed (BIGINT UNSIGNED 2^64-1 as -1). A server connection refuses MINIMAL metadata, but a
    replayed binlog file may have it, with the structure from the file's DDL or a schema history: then
    these come from that structure (table-map columns are the table's columns, in order, as for
    ``binlog_encodings``)."""

    __slots__ = ("_facts", "_source", "_patched")

    def __init__(self, schema: RowSchema) -> None:
        self._facts = tuple(
            (index, column.data_type.upper(), tuple(column.enum_values), column.unsigned, column.name)
            for index, column in enumerate(schema.table.columns)
            if column.data_type.upper() in ("ENUM", "SET") or column.unsigned
        )
        self._source: Sequence[Any] | None = None
        self._patched: Sequence[Any] = ()

    def needed(self, columns: Sequence[Any]) -> bool:
        return self.columns(columns) is not columns

    def columns(self, columns: Sequence[Any]) -> Sequence[Any]:
        """``columns``, or copies of them with the model's facts where the table map had none."""
        if columns is self._source:
            return self._patched
        patched = list(columns)
        changed = False
        for index, kind, options, unsigned, name in self._facts:
            if index >= len(patched):
                continue
            column = patched[index]
            if kind == "ENUM" and column.type == FIELD_TYPE.ENUM and not getattr(column, "enum_values", None):
                column = copy.copy(column)
                column.enum_values = ["", *options]  # the library's list: index 0 is ''
                column.name = column.name or name  # for messages (the library names values itself)
            elif kind == "SET" and column.type == FIELD_TYPE.SET and not getattr(column, "set_values", None):
                column = copy.copy(column)
                column.set_values = list(options)
            elif unsigned and column.type in _INTEGER_TYPES and not getattr(column, "unsigned", False):
                column = copy.copy(column)
                column.unsigned = True
            else:
                continue
            patched[index] = column
            changed = True
        self._source, self._patched = columns, patched if changed else columns
        return self._patched


_INTEGER_TYPES = frozenset(
    (FIELD_TYPE.TINY, FIELD_TYPE.SHORT, FIELD_TYPE.INT24, FIELD_TYPE.LONG, FIELD_TYPE.LONGLONG)
)
