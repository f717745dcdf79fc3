"""A table's identity, ``database.table``: the one piece of the table model the record model needs.

The table model (columns, tables, the schema) stays in ``ddl.model``, which imports this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, order=True)
class TableId:
    """A table's identity: ``database.table`` (MySQL has no schema level).

    Its hash is the dataclass's, ``hash((database, table))``, computed once: a streamed row looks
    its table up by it in several maps (issue 41). Pickled as its two names (the hash of a string
    differs from process to process)."""

    database: str
    table: str
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.database, self.table)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        return TableId, (self.database, self.table)

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
