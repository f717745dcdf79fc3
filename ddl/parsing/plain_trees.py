"""The statement trees of the database-level statements and DROP TABLE: what ``ddl.parsing.simple``
reads without the grammar (the grammar gives them too; ``ddl.parsing.statements`` has the rest).

They are apart from the other trees so that a run which only replays a schema history's SET, USE
and CREATE/DROP DATABASE records, or streams rows, does not build the two dozen dataclasses of the
table statements at start-up, nor import their handlers (issue 41: they were about a twentieth of
the time to the first event).
"""

from __future__ import annotations

from typing import NamedTuple


class QualifiedName(NamedTuple):
    database: str | None
    name: str


class DropTable(NamedTuple):
    names: tuple[QualifiedName, ...]
    temporary: bool = False
    if_exists: bool = False


class CreateDatabase(NamedTuple):
    name: str
    if_not_exists: bool = False
    charset: str | None = None
    collation: str | None = None


class AlterDatabase(NamedTuple):
    name: str | None  # None: the current database
    charset: str | None = None
    collation: str | None = None


class DropDatabase(NamedTuple):
    name: str
    if_exists: bool = False


class UseDatabase(NamedTuple):
    name: str


class SetVariables(NamedTuple):
    """Assignments of a SET statement: (scope, lower-case variable name, value text)."""

    assignments: tuple[tuple[str, str, str], ...] = ()


PlainStatement = DropTable | CreateDatabase | AlterDatabase | DropDatabase | UseDatabase | SetVariables
