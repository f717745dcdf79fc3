"""MySQL 9 column types mysql-replication 1.0.17 does not know, taught to its table-map parser.

``VECTOR`` (MySQL 9.0, column type 242) carries one metadata byte in TABLE_MAP, the size of the
value's length prefix (4), like a BLOB; the value is that many bytes of little-endian float32s. The
library reads no metadata for a type it does not know, so every later column's metadata, and the
optional metadata after them, would be read from the wrong bytes. ``teach_the_library`` wraps the
library's column-definition parser once (idempotent) so that it reads VECTOR's byte; the row images
are read by ``connector.row_decoder``'s generated reader, which has a VECTOR reader of its own.
"""

from __future__ import annotations

from typing import Any

from pymysqlreplication import column as library_column

VECTOR = 242
_PARSER_NAME = "_Column__parse_column_definition"  # Column.__parse_column_definition, name-mangled


def teach_the_library() -> None:
    """Make mysql-replication's ``Column`` read the TABLE_MAP metadata of MySQL 9 types."""
    original = getattr(library_column.Column, _PARSER_NAME)
    if getattr(original, "mysql_cdc_vector", False):
        return

    def parse_column_definition(self: Any, column_type: int, packet: Any) -> None:
        original(self, column_type, packet)
        if column_type == VECTOR:
            self.length_size = packet.read_uint8()

    parse_column_definition.mysql_cdc_vector = True  # type: ignore[attr-defined]
    setattr(library_column.Column, _PARSER_NAME, parse_column_definition)


teach_the_library()
