"""The statement trees the grammar produces: what one DDL statement *says*, before it is applied.

Those of the database-level statements and DROP TABLE are defined in ``ddl.parsing.plain_trees``
(the statements read without the grammar) and imported here with the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from ddl.mysql_types import TypeAttributes
from ddl.parsing.plain_trees import AlterDatabase as AlterDatabase
from ddl.parsing.plain_trees import CreateDatabase as CreateDatabase
from ddl.parsing.plain_trees import DropDatabase as DropDatabase
from ddl.parsing.plain_trees import DropTable as DropTable
from ddl.parsing.plain_trees import QualifiedName as QualifiedName
from ddl.parsing.plain_trees import SetVariables as SetVariables
from ddl.parsing.plain_trees import UseDatabase as UseDatabase
from mysql_cdc_base.errors import DdlError


class DdlSyntaxError(DdlError, ValueError):
    """The statement does not follow the grammar; ``offset`` is the character offset of the problem."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


# --- statement tree ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DataTypeSpec(TypeAttributes):
    """A column's declared type. ``name`` is the upper-case type as Debezium names it
    (``VARCHAR``, ``DOUBLE PRECISION``, ``CHAR BINARY``), without UNSIGNED/ZEROFILL."""

    key: str  # canonical type key used for the jdbc mapping (``CHAR VARYING`` -> ``VARCHAR`` ...)
    name: str
    values: tuple[str, ...] = ()  # ENUM/SET members, unquoted
    signed: bool = False  # the DDL said SIGNED (Debezium keeps it in the type name)


@dataclass(frozen=True, slots=True)
class DefaultValue:
    """A column's DEFAULT clause as Debezium keeps it: ``expression`` is the literal text (string
    literals without their outer quotes, CURRENT_TIMESTAMP/NOW() as ``1970-01-01 00:00:00``), or
    None for computed defaults; ``is_null`` for ``DEFAULT NULL`` (which means "no default")."""

    expression: str | None
    is_null: bool = False
    # Hexadecimal literals are not kept by Debezium's default value listener: no default at all.
    ignored: bool = False


@dataclass(frozen=True, slots=True)
class ColumnDefinition:
    name: str
    type: DataTypeSpec
    nullable: bool | None = None  # None: not said
    default: DefaultValue | None = None
    auto_increment: bool = False
    primary_key: bool = False
    unique: bool = False
    comment: str | None = None
    generation_expression: str | None = None
    serial: bool = False  # SERIAL type or SERIAL DEFAULT VALUE: NOT NULL AUTO_INCREMENT UNIQUE
    invisible: bool = False  # MySQL 8.0.23+ INVISIBLE: left out of SELECT *, still in row images


@dataclass(frozen=True, slots=True)
class KeyDefinition:
    """A table-level key/constraint: ``kind`` is primary|unique|index|fulltext|spatial|foreign|check|period."""

    kind: str
    name: str | None
    columns: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TableOptions:
    charset: str | None = None
    collation: str | None = None
    comment: str | None = None
    system_versioning: bool = False  # MariaDB WITH SYSTEM VERSIONING


@dataclass(frozen=True, slots=True)
class CreateTable:
    name: QualifiedName
    temporary: bool = False
    if_not_exists: bool = False
    or_replace: bool = False
    columns: tuple[ColumnDefinition, ...] = ()
    keys: tuple[KeyDefinition, ...] = ()
    options: TableOptions = TableOptions()
    like: QualifiedName | None = None


# ALTER TABLE specifications ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ColumnPosition:
    first: bool = False
    after: str | None = None


@dataclass(frozen=True, slots=True)
class AddColumns:
    columns: tuple[ColumnDefinition, ...]
    position: ColumnPosition | None = None
    if_not_exists: bool = False


@dataclass(frozen=True, slots=True)
class DropColumn:
    name: str
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class ChangeColumn:
    """CHANGE old new def / MODIFY col def (``old_name == column.name`` for MODIFY)."""

    old_name: str
    column: ColumnDefinition
    position: ColumnPosition | None = None
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class RenameColumn:
    old_name: str
    new_name: str


@dataclass(frozen=True, slots=True)
class AlterColumnDefault:
    name: str
    default: DefaultValue | None  # None: DROP DEFAULT


@dataclass(frozen=True, slots=True)
class AlterColumnVisibility:
    """ALTER COLUMN c SET VISIBLE|INVISIBLE (MySQL 8.0.23+)."""

    name: str
    invisible: bool


@dataclass(frozen=True, slots=True)
class AddKey:
    key: KeyDefinition


@dataclass(frozen=True, slots=True)
class DropKey:
    """DROP PRIMARY KEY (``name`` None, ``kind`` primary) / DROP INDEX|KEY name / DROP FOREIGN KEY ..."""

    kind: str
    name: str | None


@dataclass(frozen=True, slots=True)
class RenameKey:
    old_name: str
    new_name: str


@dataclass(frozen=True, slots=True)
class RenameTo:
    name: QualifiedName


@dataclass(frozen=True, slots=True)
class ConvertCharset:
    charset: str | None  # None: DEFAULT
    collation: str | None


@dataclass(frozen=True, slots=True)
class SetTableOptions:
    options: TableOptions


@dataclass(frozen=True, slots=True)
class SystemVersioning:
    """MariaDB ADD SYSTEM VERSIONING (``enable``) / DROP SYSTEM VERSIONING."""

    enable: bool


AlterSpec = (
    AddColumns
    | DropColumn
    | ChangeColumn
    | RenameColumn
    | AlterColumnDefault
    | AlterColumnVisibility
    | AddKey
    | DropKey
    | RenameKey
    | RenameTo
    | ConvertCharset
    | SetTableOptions
    | SystemVersioning
)


@dataclass(frozen=True, slots=True)
class AlterTable:
    name: QualifiedName
    specs: tuple[AlterSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class RenameTable:
    pairs: tuple[tuple[QualifiedName, QualifiedName], ...]


@dataclass(frozen=True, slots=True)
class TruncateTable:
    name: QualifiedName


@dataclass(frozen=True, slots=True)
class CreateIndex:
    table: QualifiedName
    key: KeyDefinition


@dataclass(frozen=True, slots=True)
class DropIndex:
    table: QualifiedName
    name: str


@dataclass(frozen=True, slots=True)
class Ignored:
    """A statement that never changes table structure (GRANT, DML, CREATE VIEW, ...)."""

    what: str


Statement = (
    CreateTable
    | AlterTable
    | DropTable
    | RenameTable
    | TruncateTable
    | CreateIndex
    | DropIndex
    | CreateDatabase
    | AlterDatabase
    | DropDatabase
    | UseDatabase
    | SetVariables
    | Ignored
)
