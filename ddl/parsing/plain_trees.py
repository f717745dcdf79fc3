"""The statement trees of the database-level statements and DROP TABLE: what ``ddl.parsing.simple``
reads without the grammar (the grammar gives them too; ``ddl.parsing.statements`` has the rest).

They are apart from the other trees so that a run which only replays a schema history's SET, USE
and CREATE/DROP DATABASE records, or streams rows, does not build the two dozen dataclasses of the
table statements at start-up, nor import their handlers (issue 41: they were about a twentieth of
the time to the first event).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class QualifiedName:
    database: str | None
    name: str


@dataclass(frozen=True, slots=True)
class DropTable:
    names: tuple[QualifiedName, ...]
    temporary: bool = False
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class CreateDatabase:
    name: str
    if_not_exists: bool = False
    charset: str | None = None
    collation: str | None = None


@dataclass(frozen=True, slots=True)
class AlterDatabase:
    name: str | None  # None: the current database
    charset: str | None = None
    collation: str | None = None


@dataclass(frozen=True, slots=True)
class DropDatabase:
    name: str
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class UseDatabase:
    name: str


@dataclass(frozen=True, slots=True)
class SetVariables:
    """Assignments of a SET statement: (scope, lower-case variable name, value text)."""

    assignments: tuple[tuple[str, str, str], ...] = ()


PlainStatement = DropTable | CreateDatabase | AlterDatabase | DropDatabase | UseDatabase | SetVariables
