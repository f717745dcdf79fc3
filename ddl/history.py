"""Schema history: every DDL the connector has seen, with the position it was seen at.

On restart the connector rebuilds its ``SchemaModel`` by replaying these records up to the stored
offset, so it never has to ask the server what a table looked like in the past. Records use
Debezium's history document (``source``, ``position``, ``ts_ms``, ``databaseName``, ``schemaName``,
``ddl``, ``tableChanges``) so a history written by Debezium can be read and vice versa.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class HistoryRecord:
    source: Mapping[str, Any]
    position: Mapping[str, Any]
    ts_ms: int
    ddl: str
    database_name: str | None = None
    schema_name: str | None = None
    # Debezium's tableChanges array, already in its JSON document form.
    table_changes: tuple[Mapping[str, Any], ...] = field(default=())


class SchemaHistory(ABC):
    """Append-only store of ``HistoryRecord``s."""

    def start(self) -> None:  # noqa: B027 - optional hook
        """Open/create the storage."""

    @abstractmethod
    def exists(self) -> bool:
        """True when the storage holds at least one record."""

    @abstractmethod
    def record(self, record: HistoryRecord) -> None:
        """Append durably."""

    @abstractmethod
    def records(self) -> Iterator[HistoryRecord]:
        """All records, oldest first."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        pass


class SchemaHistoryError(RuntimeError):
    pass
