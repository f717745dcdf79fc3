"""A table's identity, ``database.table``: the one piece of the table model the record model needs.

The table model (columns, tables, the schema) stays in ``ddl.model``, which imports this.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class TableId:
    """A table's identity: ``database.table`` (MySQL has no schema level)."""

    database: str
    table: str

    def __str__(self) -> str:
        return f"{self.database}.{self.table}"

    @property
    def quoted(self) -> str:
        """Debezium's history/schema-change form: ``"db"."table"``, a ``"`` inside a name doubled."""
        return _double_quoted(self.database) + "." + _double_quoted(self.table)

    @classmethod
    def parse(cls, text: str) -> TableId:
        database, _, table = text.partition(".")
        if not table:
            raise ValueError(f"table id {text!r} must be of the form database.table")
        return cls(database, table)


def _double_quoted(name: str) -> str:
    """Debezium's ``TableId`` quoting: the name in double quotes, an inner ``"`` doubled."""
    return '"' + name.replace('"', '""') + '"'
