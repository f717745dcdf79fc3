"""Immutable in-memory model of the captured server's schema.

Everything that needs to know a table's structure (the event builder, the snapshotter, the schema
history, the sinks) reads these objects; only the DDL parser produces new versions of them.
Objects are frozen: a DDL statement yields a *new* ``SchemaModel`` so that an event decoded before
the statement keeps the structure it was written with.

Field meanings follow Debezium's relational model (``io.debezium.relational.Column`` / ``Table``),
because the schema history and the schema change events serialise them field for field.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType

from ddl.mysql_types import Family, TypeAttributes, spellings_of
from ddl.mysql_types import JdbcType as JdbcType
from mysql_cdc_base.table_id import TableId

# Type names by family, as column data types name them (upper case, every spelling), for code that
# must know a column's family from its type name alone.
CHARACTER_TYPES = spellings_of(Family.CHARACTER, Family.ENUM)
BINARY_TYPES = spellings_of(Family.BINARY)
# Spatial types other than POINT (which has its own Debezium schema).
GEOMETRY_TYPES = spellings_of(Family.SPATIAL)


@dataclass(frozen=True, slots=True)
class Column(TypeAttributes):
    """One column as the DDL declared it.

    ``data_type`` is the bare upper-case MySQL type keyword (``INT``, ``VARCHAR``, ``ENUM``,
    ``DOUBLE`` ...) as it appears in the DDL; ``type_name`` adds Debezium's suffixes
    (`` UNSIGNED``, `` UNSIGNED ZEROFILL``), which is what history and schema events show.
    ``length`` is the display width, character length, precision or temporal fsp; ``None`` when the
    DDL gave none (Debezium writes -1 / omits it). ``enum_values`` are the unquoted ENUM/SET members
    in definition order.
    """

    name: str
    position: int
    data_type: str
    jdbc_type: int
    optional: bool = True
    auto_increment: bool = False
    generated: bool = False
    comment: str | None = None
    has_default: bool = False
    default_expression: str | None = None
    enum_values: tuple[str, ...] = ()
    # Set when the column is a stored/virtual generated column (``AS (expr)``).
    generation_expression: str | None = None
    # The DDL said SIGNED (``TINYINT SIGNED``): Debezium's type name keeps the word, only for
    # streamed DDL (SHOW CREATE TABLE never writes it).
    signed: bool = False
    # MySQL 8.0.23+ INVISIBLE: in row images and records, but not in ``SELECT *`` (the snapshot
    # names its columns for such tables). Not part of Debezium's history or schema documents.
    invisible: bool = False

    @property
    def type_name(self) -> str:
        if self.zerofill:
            return f"{self.data_type} UNSIGNED ZEROFILL"
        if self.unsigned:
            return f"{self.data_type} UNSIGNED"
        if self.signed:
            return f"{self.data_type} SIGNED"
        return self.data_type

    def with_(self, **changes: object) -> Column:
        return replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Table:
    """A table's structure at one point of the binlog."""

    id: TableId
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    unique_keys: tuple[tuple[str, ...], ...] = ()
    # Index names of ``unique_keys`` (same order), so DROP INDEX can find them; may be empty. An
    # explicit primary key is listed there too, as MySQL does, under the name ``PRIMARY``.
    unique_key_names: tuple[str, ...] = ()
    default_charset: str | None = None
    comment: str | None = None
    # Table options Debezium keeps as ``attributes`` in history (currently none for MySQL).
    attributes: tuple[tuple[str, str], ...] = ()
    _by_name: Mapping[str, Column] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )

    def __post_init__(self) -> None:
        # MySQL column names are case-insensitive; look-ups use the lower-cased name.
        object.__setattr__(self, "_by_name", MappingProxyType({c.name.lower(): c for c in self.columns}))

    def column(self, name: str) -> Column | None:
        return self._by_name.get(name.lower())

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def with_(self, **changes: object) -> Table:
        return replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Database:
    name: str
    default_charset: str | None = None
    default_collation: str | None = None


class ChangeType(StrEnum):
    CREATE = "CREATE"
    ALTER = "ALTER"
    DROP = "DROP"


@dataclass(frozen=True, slots=True)
class TableChange:
    """One entry of Debezium's ``tableChanges``: what a DDL statement did to one table."""

    type: ChangeType
    id: TableId
    table: Table | None  # None for DROP
    previous_id: TableId | None = None  # set for renames


@dataclass(frozen=True)
class SchemaModel:
    """All known databases and tables at one binlog position. Copy-on-write."""

    databases: Mapping[str, Database] = field(default_factory=lambda: MappingProxyType({}))
    tables: Mapping[TableId, Table] = field(default_factory=lambda: MappingProxyType({}))
    # Server-level defaults, from ``SET character_set_server=...`` in the history.
    server_charset: str | None = None
    server_collation: str | None = None

    def table(self, table_id: TableId) -> Table | None:
        return self.tables.get(table_id)

    def __iter__(self) -> Iterator[Table]:
        return iter(self.tables.values())

    def table_ids(self, database: str | None = None) -> list[TableId]:
        return sorted(t for t in self.tables if database is None or t.database == database)

    def with_tables(self, put: Iterable[Table] = (), remove: Iterable[TableId] = ()) -> SchemaModel:
        tables = dict(self.tables)
        for table_id in remove:
            tables.pop(table_id, None)
        for table in put:
            tables[table.id] = table
        return replace(self, tables=MappingProxyType(tables))

    def with_database(self, database: Database | None, drop: str | None = None) -> SchemaModel:
        databases = dict(self.databases)
        tables: Mapping[TableId, Table] = self.tables
        if drop is not None:
            databases.pop(drop, None)
            tables = MappingProxyType({k: v for k, v in self.tables.items() if k.database != drop})
        if database is not None:
            databases[database.name] = database
        return replace(self, databases=MappingProxyType(databases), tables=tables)

    def charset_for(self, database: str) -> str | None:
        db = self.databases.get(database)
        if db is not None and db.default_charset:
            return db.default_charset
        return self.server_charset
